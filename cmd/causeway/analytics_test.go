package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/projections/analytics"
)

// chat sends one chat completion through the gateway to the stand-in at host.
func chat(t *testing.T, m *Main, host, model string, headers map[string]string) int {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, model)
	req, err := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-gateway-api-key", gatewayKey)
	req.Header.Set("x-gateway-provider", "openai")
	req.Header.Set("x-gateway-custom-host", host)
	req.Header.Set("Authorization", "Bearer sk-provider-key")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// requestsByStatus counts the stored rows of org by status code.
func requestsByStatus(t *testing.T, store analytics.Store, org string) map[string]int64 {
	t.Helper()
	q := analytics.GroupsQuery{GroupBy: analytics.GroupStatusCode, PageSize: analytics.MaxPageSize}
	q.OrganisationID = org
	res, err := store.Groups(context.Background(), q)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, g := range res.Groups {
		out[g.Key] = g.Requests
	}
	return out
}

// A gateway stopped cleanly stores every request it answered before it exits: the sink, the
// bus and the pipeline's batch are flushed by Close, in that order.
func TestCleanStopFlushesRequestLogs(t *testing.T) {
	const n = 300
	dir := t.TempDir()
	cfg, err := LoadConfig(env(map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": dir,
		"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1"}))
	require.NoError(t, err)
	m := NewMain(cfg, io.Discard, "test")
	require.NoError(t, m.Run(context.Background()))
	org := m.Bootstrap.OrganisationID
	oa := providertest.NewOpenAI(t)

	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := w; i < n; i += 6 {
				assert.Equal(t, http.StatusOK, chat(t, m, oa.BaseURL(), "gpt-4o-mini", nil))
			}
		})
	}
	wg.Wait()
	// Stop at once: most rows are still in the sink, on the bus or in a batch waiting for its
	// one-second flush.
	require.NoError(t, m.Close())

	store, err := analytics.OpenSQLite(context.Background(), filepath.Join(dir, "analytics.db"))
	require.NoError(t, err)
	defer store.Close()
	assert.Equal(t, map[string]int64{"200": n}, requestsByStatus(t, store, org))
}

// Health reports the log pipeline's counters and that no row is being lost.
func TestHealthReportsLogPipeline(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	require.Equal(t, http.StatusOK, chat(t, m, oa.BaseURL(), "gpt-4o", nil))
	require.Eventually(t, func() bool { return m.Pipeline.Stats().Received == 1 }, 5*time.Second, 10*time.Millisecond)

	h := getHealth(t, m)
	assert.Equal(t, "ok", h.Status)
	assert.Equal(t, "up", h.Checks["log_pipeline"].Status)
	assert.Equal(t, "sqlite", h.Checks["log_pipeline"].Backend)
}
