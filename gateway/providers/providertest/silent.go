package providertest

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// SilentServer stands for a provider that fails below HTTP. It accepts connections and never
// answers; with hangUp it reads the request and closes without a word (with reset: with a TCP
// RST). It returns the address it listens on; the test's end closes everything.
func SilentServer(t testing.TB, hangUp, reset bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !hangUp {
				mu.Lock()
				conns = append(conns, c) // held open, never answered, until the test ends
				mu.Unlock()
				continue
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf)
			if reset {
				_ = c.(*net.TCPConn).SetLinger(0)
			}
			_ = c.Close()
		}
	}()
	return ln.Addr().String()
}

// ClosedPort is an address on which nothing listens: a port that was just listened on.
func ClosedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
