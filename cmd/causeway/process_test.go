package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/internal/syncbuf"
	"github.com/causeway/causeway/migrations/migrationstest"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// causewayBinary builds the real binary once per test run.
func causewayBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "causeway-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "causeway")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	require.NoError(t, binaryErr)
	return binaryPath
}

// process is the binary serving on addr, as a user runs it.
type process struct {
	cmd  *exec.Cmd
	addr string
	log  *syncbuf.Buffer
}

// startProcess runs `causeway serve` with env on a free port and waits until it answers.
func startProcess(t *testing.T, env map[string]string) *process {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	cmd := exec.Command(causewayBinary(t), "serve")
	cmd.Env = append(os.Environ(), "CAUSEWAY_ADDR="+addr)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &process{cmd: cmd, addr: addr, log: &syncbuf.Buffer{}}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { p.stop() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(p.url() + "/health"); err == nil {
			resp.Body.Close()
			return p
		}
	}
	t.Fatalf("causeway did not start: %s", p.log.String())
	return nil
}

func (p *process) url() string { return "http://" + p.addr + "/v1" }

// kill9 ends the process as a crash does: no shutdown, no flush.
func (p *process) kill9() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

func (p *process) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.kill9()
	}
}

// A kill -9 during steady traffic (200 requests a second), then a restart: every request
// answered 200 has its log row, once, embedded (SQLite), on servers (PostgreSQL and
// ClickHouse), and with three instances on those servers, one of which is killed while the
// traffic is spread over the three. Rows are journaled before the answer, and the next start
// stores what the journal holds.
func TestClusterKill9LosesNoLogRow(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { testKill9LosesNoLogRow(t, nil, 1) })
	servers := func(t *testing.T) map[string]string {
		pg := migrationstest.PostgresURL(t)
		return map[string]string{"EVENTSTORE_URL": pg, "DATABASE_URL": pg,
			"CLICKHOUSE_URL": migrationstest.ClickHouseURL(t), "CAUSEWAY_SECRET_KEY": strings.Repeat("s", 32)}
	}
	t.Run("servers", func(t *testing.T) { testKill9LosesNoLogRow(t, servers(t), 1) })
	t.Run("one of three instances", func(t *testing.T) { testKill9LosesNoLogRow(t, servers(t), 3) })
}

// testKill9LosesNoLogRow runs n instances, each on its own data directory, spreads the
// traffic over them in turn, and kills the last.
func testKill9LosesNoLogRow(t *testing.T, extra map[string]string, n int) {
	standIn := providertest.NewOpenAI(t)
	envs := make([]map[string]string, n)
	procs := make([]*process, n)
	for i := range envs {
		envs[i] = map[string]string{"CAUSEWAY_DATA_DIR": filepath.Join(t.TempDir(), fmt.Sprintf("data-%d", i)),
			"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1"}
		for k, v := range extra {
			envs[i][k] = v
		}
		procs[i] = startProcess(t, envs[i])
	}
	victim := n - 1

	var mu sync.Mutex
	answered := map[string]bool{}
	send := func(i int) {
		trace := fmt.Sprintf("crash-%05d", i)
		req, _ := http.NewRequest(http.MethodPost, procs[i%n].url()+"/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-gateway-api-key", gatewayKey)
		req.Header.Set("x-gateway-provider", "openai")
		req.Header.Set("x-gateway-custom-host", standIn.BaseURL())
		req.Header.Set("Authorization", "Bearer sk-provider-key")
		req.Header.Set("x-gateway-trace-id", trace)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // the process died with this request in flight
		}
		defer resp.Body.Close()
		var body map[string]any
		if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil {
			mu.Lock()
			answered[trace] = true
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	tick := time.NewTicker(5 * time.Millisecond) // 200 a second
	for i := 0; i < 400; i++ {
		<-tick.C
		if i == 300 {
			procs[victim].kill9()
		}
		wg.Go(func() { send(i) })
	}
	tick.Stop()
	wg.Wait()
	require.Greater(t, len(answered), 250, "most requests were answered before the kill")

	again := startProcess(t, envs[victim])
	rows := map[string]int{}
	require.Eventually(t, func() bool {
		clear(rows)
		for page := 0; ; page++ {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/logs?page_size=1000&current_page=%d", again.url(), page), nil)
			req.Header.Set("x-gateway-api-key", gatewayKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false
			}
			var list struct {
				Data []struct {
					Metrics struct {
						TraceID string `json:"trace_id"`
					} `json:"metrics"`
				} `json:"data"`
			}
			err = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			if err != nil {
				return false
			}
			for _, r := range list.Data {
				rows[r.Metrics.TraceID]++
			}
			if len(list.Data) < 1000 {
				break
			}
		}
		missing := 0
		for trace := range answered {
			if rows[trace] == 0 {
				missing++
			}
		}
		if missing > 0 {
			t.Logf("answered %d, rows %d, missing %d", len(answered), len(rows), missing)
		}
		return missing == 0
	}, 20*time.Second, 100*time.Millisecond, "every answered request has its row after the restart")
	for trace, n := range rows {
		require.Equal(t, 1, n, "row %s stored once", trace)
	}
	t.Logf("answered %d, rows %d (rows of requests cut off by the kill may be there too)", len(answered), len(rows))
}

// TestMain removes the binary causewayBinary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binaryPath != "" {
		_ = os.RemoveAll(filepath.Dir(binaryPath))
	}
	os.Exit(code)
}
