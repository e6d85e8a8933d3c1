// Package chserver starts a private ClickHouse server for one test or benchmark: its own data
// directory, configuration and free ports on 127.0.0.1, so that a test may stop and restart
// the server (an outage) without disturbing the shared server of scripts/services.sh.
//
// The server binary is found as scripts/services.sh finds it (clickhouse-server, or the
// multi-call `clickhouse server`). Without one the test is skipped, or fails when CI is set.
// When the test runs as root the server runs as the clickhouse user, as services.sh runs it.
//
// It is a test helper: only tests and benchmarks import it. It imports the ClickHouse driver
// (to see the server answer) and migrations/migrationstest; never a store, gateway/, commands/,
// projections/ or http/.
package chserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/causeway/causeway/migrations/migrationstest"
)

// StartTimeout bounds how long Start waits for the server to answer a ping; release 18.16
// takes a few seconds on a quiet machine and much longer on a loaded one.
const StartTimeout = 60 * time.Second

// stopTimeout bounds a graceful stop before the server is killed.
const stopTimeout = 60 * time.Second

// Server is one private ClickHouse server. Its methods must be called from the test's own
// goroutine, since they fail the test through it.
type Server struct {
	tb   testing.TB
	bin  []string
	dir  string
	cred *syscall.Credential // nil: run as ourselves

	TCPPort, HTTPPort, InterserverPort int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// New starts a server and stops it, removing its data, when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	bin := findBinary()
	if bin == nil {
		migrationstest.Unavailable(tb, "ClickHouse server binary not found (clickhouse-server or clickhouse)")
	}
	s := &Server{tb: tb, bin: bin}
	cred, owner, err := runAs()
	if err != nil {
		tb.Fatalf("chserver: %v", err)
	}
	s.cred = cred
	ports, err := freePorts(3)
	if err != nil {
		tb.Fatalf("chserver: %v", err)
	}
	s.TCPPort, s.HTTPPort, s.InterserverPort = ports[0], ports[1], ports[2]

	if s.dir, err = os.MkdirTemp("", "chserver-"); err != nil {
		tb.Fatalf("chserver: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.stop(); err != nil {
			tb.Logf("chserver: %v", err)
		}
		if err := os.RemoveAll(s.dir); err != nil {
			tb.Logf("chserver: remove %s: %v", s.dir, err)
		}
	})
	if err := s.prepare(owner); err != nil {
		tb.Fatalf("chserver: %v", err)
	}
	s.Start()
	return s
}

// URL is the server's default database over the native protocol.
func (s *Server) URL() string {
	return fmt.Sprintf("clickhouse://127.0.0.1:%d/default", s.TCPPort)
}

// Addr is the native protocol's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.TCPPort)) }

// Dir is the server's directory: configuration, data and logs.
func (s *Server) Dir() string { return s.dir }

// Start starts the server, on the same data and ports as before a Stop, and waits until it
// answers a ping. It does nothing when the server runs already.
func (s *Server) Start() {
	s.tb.Helper()
	if err := s.start(); err != nil {
		s.tb.Fatalf("chserver: %v", err)
	}
}

// Stop stops the server gracefully and waits for it to exit; the data stays for Start.
func (s *Server) Stop() {
	s.tb.Helper()
	if err := s.stop(); err != nil {
		s.tb.Fatalf("chserver: %v", err)
	}
}

// Running reports whether the server process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

func (s *Server) start() error {
	if s.Running() {
		return nil
	}
	console, err := os.OpenFile(filepath.Join(s.dir, "log", "console.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer console.Close()
	args := append(append([]string(nil), s.bin[1:]...), "--config-file="+filepath.Join(s.dir, "config.xml"))
	cmd := exec.Command(s.bin[0], args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = console, console
	cmd.SysProcAttr = sysProcAttr(s.cred)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", strings.Join(s.bin, " "), err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	if err := s.awaitPing(exited); err != nil {
		_ = s.stop()
		return fmt.Errorf("%w\n%s", err, s.logTail())
	}
	return nil
}

// awaitPing polls the native port until the server answers or the time is up.
func (s *Server) awaitPing(exited <-chan struct{}) error {
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        []string{s.Addr()},
		Protocol:    clickhouse.Native,
		DialTimeout: time.Second,
	})
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(StartTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("server on %s exited while starting", s.Addr())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last = conn.Ping(ctx)
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("server did not answer on %s within %s: %v", s.Addr(), StartTimeout, last)
}

func (s *Server) stop() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop server: %w", err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(stopTimeout):
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("server on %s did not stop within %s and was killed", s.Addr(), stopTimeout)
}

// logTail is the end of the server's error log and of its console output.
func (s *Server) logTail() string {
	var b strings.Builder
	for _, name := range []string{"clickhouse-server.err.log", "console.log"} {
		data, err := os.ReadFile(filepath.Join(s.dir, "log", name))
		if err != nil || len(data) == 0 {
			continue
		}
		lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
		lines = lines[max(0, len(lines)-40):]
		fmt.Fprintf(&b, "last lines of %s:\n%s\n", name, bytes.Join(lines, []byte("\n")))
	}
	return b.String()
}

// prepare writes the configuration and hands the directory to the user the server runs as.
func (s *Server) prepare(owner *user.User) error {
	for _, d := range []string{"data", "tmp", "user_files", "format_schemas", "log"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "config.xml"), []byte(s.config()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "users.xml"), []byte(usersXML), 0o644); err != nil {
		return err
	}
	// Other users (clickhouse) must be able to reach the directory MkdirTemp made private.
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return err
	}
	if owner == nil {
		return nil
	}
	uid, _ := strconv.Atoi(owner.Uid)
	gid, _ := strconv.Atoi(owner.Gid)
	// The server writes its preprocessed configuration next to config.xml, so the whole
	// directory must be the server user's.
	return filepath.WalkDir(s.dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// config is services.sh's configuration (the <yandex> root of release 18.16, which newer
// releases still accept) with every port the server would otherwise open on its defaults.
func (s *Server) config() string {
	return fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
    <logger>
        <level>information</level>
        <log>%[1]s/log/clickhouse-server.log</log>
        <errorlog>%[1]s/log/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>

    <listen_host>127.0.0.1</listen_host>
    <tcp_port>%[2]d</tcp_port>
    <http_port>%[3]d</http_port>
    <interserver_http_port>%[4]d</interserver_http_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>

    <max_connections>1024</max_connections>
    <max_concurrent_queries>100</max_concurrent_queries>
    <keep_alive_timeout>3</keep_alive_timeout>

    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>

    <path>%[1]s/data/</path>
    <tmp_path>%[1]s/tmp/</tmp_path>
    <user_files_path>%[1]s/user_files/</user_files_path>
    <format_schema_path>%[1]s/format_schemas/</format_schema_path>

    <users_config>%[1]s/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>

    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
</yandex>
`, s.dir, s.TCPPort, s.HTTPPort, s.InterserverPort)
}

const usersXML = `<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <load_balancing>random</load_balancing>
            <!-- An idle connection notices a stop after this many seconds (default 10): a
                 graceful Stop waits for every connection to notice. -->
            <poll_interval>1</poll_interval>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
`

// findBinary returns the command that runs the server, or nil. /usr/sbin is searched even
// when it is not on PATH, since Debian's package installs clickhouse-server there.
func findBinary() []string {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"clickhouse-server", nil},
		{"/usr/sbin/clickhouse-server", nil},
		{"clickhouse", []string{"server"}},
		{"/usr/bin/clickhouse", []string{"server"}},
	} {
		if p, err := exec.LookPath(c.name); err == nil {
			return append([]string{p}, c.args...)
		}
	}
	return nil
}

// runAs returns the credential the server runs with and the user owning its directory: the
// clickhouse user when we are root and it exists, since the server may refuse root; else
// nil, nil, and the server runs as ourselves.
func runAs() (*syscall.Credential, *user.User, error) {
	if os.Geteuid() != 0 {
		return nil, nil, nil
	}
	u, err := user.Lookup("clickhouse")
	if err != nil {
		var unknown user.UnknownUserError
		if errors.As(err, &unknown) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("look up the clickhouse user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("clickhouse user's uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("clickhouse user's gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, u, nil
}

// freePorts asks the kernel for n distinct free ports on 127.0.0.1. They are released before
// the server binds them, a window in which another process could take one; Start then fails
// with the server's "Address already in use" in its log.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
