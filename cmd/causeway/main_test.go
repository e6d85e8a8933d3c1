package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/migrations/migrationstest"
)

// startMain runs the real Main on a free port with its data in a temporary directory.
func startMain(t *testing.T, extra map[string]string) *Main {
	t.Helper()
	vars := map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": t.TempDir(), "CAUSEWAY_STARTUP_TIMEOUT": "5s"}
	for k, v := range extra {
		vars[k] = v
	}
	cfg, err := LoadConfig(env(vars))
	require.NoError(t, err)
	m := NewMain(cfg, io.Discard, "test")
	require.NoError(t, m.Run(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

type health struct {
	Status string `json:"status"`
	Checks map[string]struct {
		Status  string `json:"status"`
		Backend string `json:"backend"`
		Error   string `json:"error"`
	} `json:"checks"`
}

func getHealth(t *testing.T, m *Main) health {
	t.Helper()
	resp, err := http.Get(m.URL() + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var h health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return h
}

func TestServeEmbeddedDefaults(t *testing.T) {
	m := startMain(t, nil)
	h := getHealth(t, m)
	assert.Equal(t, "ok", h.Status)
	assert.Equal(t, "sqlite", h.Checks["eventstore"].Backend)
	assert.Equal(t, "up", h.Checks["eventstore"].Status)
	assert.Equal(t, "memory", h.Checks["readmodels"].Backend)
	assert.Equal(t, "sqlite", h.Checks["analytics"].Backend)
	assert.Equal(t, "sqlite", h.Checks["answer_cache"].Backend, "the answer cache, embedded")
	assert.Equal(t, "up", h.Checks["answer_cache"].Status)
	assert.FileExists(t, filepath.Join(m.Config.DataDir, "events.db"))
}

func TestUnknownRoutesAnswerInTheErrorShapeWithATraceID(t *testing.T) {
	m := startMain(t, nil)
	for _, tc := range []struct {
		method, path string
		provider     string
		status       int
		code         string
	}{
		// Any other path under /v1 that names a provider is passed through to it, for a gateway
		// key; one that names none is a route that does not exist.
		{http.MethodGet, "/nope", "openai", http.StatusUnauthorized, "unauthorized"},
		{http.MethodGet, "/nope", "", http.StatusNotFound, "not_found"},
		{http.MethodPost, "/health", "", http.StatusMethodNotAllowed, "not_allowed"},
	} {
		req, _ := http.NewRequest(tc.method, m.URL()+tc.path, nil)
		if tc.provider != "" {
			req.Header.Set("x-gateway-provider", tc.provider)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct {
			Error struct {
				Message, Type string
				Code          *string
			} `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, tc.path)
		require.NotNil(t, body.Error.Code)
		assert.Equal(t, tc.code, *body.Error.Code)
		assert.NotEmpty(t, body.Error.Message)
		assert.Len(t, resp.Header.Get("x-gateway-trace-id"), 32, "a trace id is generated")
	}

	outside, err := http.Get(strings.TrimSuffix(m.URL(), "/v1") + "/elsewhere")
	require.NoError(t, err)
	outside.Body.Close()
	assert.Equal(t, http.StatusNotFound, outside.StatusCode, "outside /v1 nothing is passed through")

	req, _ := http.NewRequest(http.MethodGet, m.URL()+"/health", nil)
	req.Header.Set("x-gateway-trace-id", "client-trace-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "client-trace-1", resp.Header.Get("x-gateway-trace-id"), "the client's trace id is kept")
}

// Server mode: PostgreSQL holds the events and the read models, ClickHouse the analytics.
func TestServeOnServers(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	ch := os.Getenv("TEST_CLICKHOUSE_URL")
	if ch == "" {
		migrationstest.Unavailable(t, "TEST_CLICKHOUSE_URL is unset")
	}
	m := startMain(t, map[string]string{"EVENTSTORE_URL": pg, "DATABASE_URL": pg, "CLICKHOUSE_URL": ch})
	h := getHealth(t, m)
	assert.Equal(t, "ok", h.Status, "%+v", h)
	assert.Equal(t, "postgres", h.Checks["eventstore"].Backend)
	assert.Equal(t, "postgres", h.Checks["readmodels"].Backend)
	assert.Equal(t, "clickhouse", h.Checks["analytics"].Backend)
}

// A backend that goes down while Causeway runs makes health "degraded" and names it; the
// answer is still 200, and it comes back to "ok" when the backend does.
func TestHealthDegradesWhenABackendGoesDown(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	u, err := url.Parse(pg)
	require.NoError(t, err)
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr()
	m := startMain(t, map[string]string{"DATABASE_URL": u.String()})
	require.Equal(t, "ok", getHealth(t, m).Status)

	proxy.setDown(true)
	h := getHealth(t, m)
	assert.Equal(t, "degraded", h.Status)
	assert.Equal(t, "down", h.Checks["readmodels"].Status)
	assert.Equal(t, "up", h.Checks["eventstore"].Status)
	assert.NotContains(t, h.Checks["readmodels"].Error, u.Host, "no host names in the answer")

	proxy.setDown(false)
	require.Eventually(t, func() bool { return getHealth(t, m).Status == "ok" }, 10*time.Second, 100*time.Millisecond)
}

func TestStartupFailsClearlyOnAnUnreachableBackend(t *testing.T) {
	cfg, err := LoadConfig(env(map[string]string{
		"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": t.TempDir(), "CAUSEWAY_STARTUP_TIMEOUT": "1s",
		"EVENTSTORE_URL": "postgres://u:secret@127.0.0.1:1/x?connect_timeout=1",
	}))
	require.NoError(t, err)
	m := NewMain(cfg, io.Discard, "test")
	err = m.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "event store postgres://u:xxxxx@127.0.0.1:1/x")
	assert.NotContains(t, err.Error(), "secret")
}

func TestRunCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run([]string{"version"}, env(nil), &out, &errOut))
	assert.Equal(t, "dev\n", out.String())
	assert.Equal(t, 2, run(nil, env(nil), &out, &errOut))
	assert.Equal(t, 2, run([]string{"frobnicate"}, env(nil), &out, &errOut))
	assert.Contains(t, errOut.String(), `unknown command "frobnicate"`)

	errOut.Reset()
	assert.Equal(t, 2, run([]string{"serve"}, env(map[string]string{"CAUSEWAY_ADDR": "x", "POLICY_ENABLED": "nah"}), &out, &errOut))
	assert.Contains(t, errOut.String(), "CAUSEWAY_ADDR")
	assert.Contains(t, errOut.String(), "POLICY_ENABLED")
}

// tcpProxy forwards connections to a server and can be switched off, cutting every open
// connection, to stand for that server going down.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &tcpProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go p.serve()
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

func TestServeTunesTheCollectorUnlessGOGCIsSet(t *testing.T) {
	before, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	tuneGC(ctx, env(nil))
	assert.Equal(t, serveGCPercent, debug.SetGCPercent(100), "GOGC unset: the serving target")
	assert.GreaterOrEqual(t, debug.SetMemoryLimit(-1), int64(gcRoomBytes), "with a limit that leaves it room")

	debug.SetMemoryLimit(math.MaxInt64)
	tuneGC(ctx, env(map[string]string{"GOGC": "50"}))
	assert.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: left to Go")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))

	assert.Equal(t, int64(gcRoomBytes), gcLimit(1<<20), "a small heap: the room")
	assert.Equal(t, int64(400<<20), gcLimit(200<<20), "a large heap: room to double, as at Go's default")
}

// Two processes on one data directory would share its spool and exports: the second refuses
// to start, naming the directory and the holder, and the instance id survives a restart.
func TestASecondInstanceOnOneDataDirRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": dir, "CAUSEWAY_STARTUP_TIMEOUT": "5s"}
	first := startMainOnce(t, vars)
	id := first.Instance.ID
	require.NotEmpty(t, id)

	cfg, err := LoadConfig(env(vars))
	require.NoError(t, err)
	second := NewMain(cfg, io.Discard, "test")
	err = second.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "data directory "+dir+" is in use by another Causeway process (pid "+strconv.Itoa(os.Getpid())+")")

	require.NoError(t, first.Close())
	again := startMainOnce(t, vars)
	assert.Equal(t, id, again.Instance.ID, "the instance id is kept in the data directory")
	require.NoError(t, again.Close())
}

// freshMinute waits, when the minute is more than 35 s old, until the next one starts. Rate
// limits count in windows aligned to the minute: a test that expects a refusal after N requests
// must not see its window end halfway (a CI run that crossed a minute once saw its limit reset).
func freshMinute(t *testing.T) {
	t.Helper()
	now := time.Now()
	if now.Second() > 35 {
		time.Sleep(now.Truncate(time.Minute).Add(time.Minute + 50*time.Millisecond).Sub(now))
	}
}
