package chserver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/require"
)

func connect(t *testing.T, s *Server) driver.Conn {
	t.Helper()
	opts, err := clickhouse.ParseDSN(s.URL())
	require.NoError(t, err)
	opts.Protocol = clickhouse.Native
	opts.DialTimeout = time.Second
	conn, err := clickhouse.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func count(t *testing.T, conn driver.Conn) uint64 {
	t.Helper()
	var n uint64
	require.NoError(t, conn.QueryRow(context.Background(), "SELECT count() FROM kept").Scan(&n))
	return n
}

func TestChServerRestartKeepsDataAndPorts(t *testing.T) {
	s := New(t)
	url := s.URL()
	require.Equal(t, fmt.Sprintf("clickhouse://127.0.0.1:%d/default", s.TCPPort), url)
	require.True(t, s.Running())

	ctx := context.Background()
	conn := connect(t, s)
	require.NoError(t, conn.Exec(ctx, "CREATE TABLE kept (n UInt64) ENGINE = MergeTree() ORDER BY n"))
	require.NoError(t, conn.Exec(ctx, "INSERT INTO kept (n) SELECT number FROM system.numbers LIMIT 1000"))
	require.EqualValues(t, 1000, count(t, conn))

	s.Stop()
	require.False(t, s.Running())
	ctx2, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	require.Error(t, conn.Ping(ctx2), "a stopped server must not answer")
	s.Stop() // stopping a stopped server is harmless

	s.Start()
	require.Equal(t, url, s.URL())
	require.True(t, s.Running())
	require.Eventually(t, func() bool { return conn.Ping(ctx) == nil }, 10*time.Second, 50*time.Millisecond,
		"the old connection pool reconnects to the restarted server")
	require.EqualValues(t, 1000, count(t, conn), "the data survives the restart")
	s.Start() // starting a running server is harmless
}

func TestChServerRunsAsClickHouseUserWhenRoot(t *testing.T) {
	cred, owner, err := runAs()
	require.NoError(t, err)
	if owner == nil {
		t.Skip("not root, or no clickhouse user: the server runs as ourselves")
	}
	s := New(t)
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	var uid string
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			uid = strings.Fields(rest)[0]
		}
	}
	require.Equal(t, fmt.Sprint(cred.Uid), uid)
}

func TestChServerServersAreIndependent(t *testing.T) {
	a, b := New(t), New(t)
	require.NotEqual(t, a.URL(), b.URL())
	require.NotEqual(t, a.Dir(), b.Dir())
	a.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, connect(t, b).Ping(ctx), "stopping one server leaves the other up")
}
