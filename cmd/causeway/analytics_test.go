package main

import (
	"context"
	"encoding/json"
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

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/chserver"
	"github.com/causeway/causeway/analytics/sqlite"
	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// chatThrough sends a chat completion body through the gateway with key, to the OpenAI
// stand-in at host, with any extra headers; it answers the response, its body read and closed.
func chatThrough(t *testing.T, m *Main, key, host, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-gateway-api-key", key)
	req.Header.Set("x-gateway-provider", "openai")
	req.Header.Set("x-gateway-custom-host", host)
	req.Header.Set("Authorization", "Bearer sk-provider-key")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, raw
}

// chat sends one chat completion of model through the gateway to the stand-in at host.
func chat(t *testing.T, m *Main, host, model string, headers map[string]string) int {
	t.Helper()
	resp, _ := chatThrough(t, m, gatewayKey, host, fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, model), headers)
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

	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "analytics.db"))
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

// getJSON GETs url with the admin key and decodes the answer, which must be 200.
func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("x-gateway-api-key", gatewayKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	require.NoError(t, json.Unmarshal(raw, out))
}

// Requests through the gateway show up in analytics/groups/model with the counts and tokens
// the provider reported, and the cost of the model's price at the time, an override included.
func TestGatewayRequestsInAnalyticsGroups(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testRequestsInAnalyticsGroups(t, startGateway(t)) })
	t.Run("clickhouse", func(t *testing.T) {
		m := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1",
			"CLICKHOUSE_URL": migrationstest.ClickHouseURL(t)})
		testRequestsInAnalyticsGroups(t, m)
	})
}

func testRequestsInAnalyticsGroups(t *testing.T, m *Main) {
	oa := providertest.NewOpenAI(t)
	oa.SetUsageDetails(2, 0)

	// gpt-4o is priced by an override (an audited event); gpt-4o-mini by the shipped data;
	// the stand-in's own model by nothing, so it costs 0.
	req, _ := http.NewRequest(http.MethodPut, m.URL()+"/model-configs/pricing/openai/gpt-4o",
		strings.NewReader(`{"pay_as_you_go":{"request_token":{"price":0.001},"response_token":{"price":0.004},"cache_read_input_token":{"price":0.0005}}}`))
	req.Header.Set("x-gateway-api-key", gatewayKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	type price struct {
		PayAsYouGo map[string]struct {
			Price float64 `json:"price"`
		} `json:"pay_as_you_go"`
	}
	prices := map[string]price{}
	for _, model := range []string{"gpt-4o", "gpt-4o-mini"} {
		var p price
		getJSON(t, m.URL()+"/model-configs/pricing/openai/"+model, &p)
		prices[model] = p
	}

	type want struct {
		requests int
		tokens   int
		cost     float64 // USD; prices are cents per token
	}
	wants := map[string]*want{}
	plan := map[string]int{"gpt-4o": 5, "gpt-4o-mini": 8, "test-model-unpriced": 2}
	for model, n := range plan {
		w := &want{}
		wants[model] = w
		for range n {
			body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hello there, how are you doing today, my friend?"}]}`, model)
			resp, raw := chatThrough(t, m, gatewayKey, oa.BaseURL(), body, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var out struct {
				Usage struct {
					PromptTokens        int `json:"prompt_tokens"`
					CompletionTokens    int `json:"completion_tokens"`
					TotalTokens         int `json:"total_tokens"`
					PromptTokensDetails struct {
						CachedTokens int `json:"cached_tokens"`
					} `json:"prompt_tokens_details"`
				} `json:"usage"`
			}
			require.NoError(t, json.Unmarshal(raw, &out))
			u := out.Usage
			require.Greater(t, u.PromptTokens, u.PromptTokensDetails.CachedTokens, "cached input is part of the input")
			w.requests++
			w.tokens += u.TotalTokens
			if p, ok := prices[model]; ok {
				cached := u.PromptTokensDetails.CachedTokens
				w.cost += (float64(u.PromptTokens-cached)*p.PayAsYouGo["request_token"].Price +
					float64(cached)*p.PayAsYouGo["cache_read_input_token"].Price +
					float64(u.CompletionTokens)*p.PayAsYouGo["response_token"].Price) / 100
			}
		}
	}

	type group struct {
		Model       string  `json:"model"`
		Requests    int     `json:"requests"`
		TotalTokens int     `json:"total_tokens"`
		Cost        float64 `json:"cost"`
	}
	var got struct {
		Total int     `json:"total"`
		Data  []group `json:"data"`
	}
	require.Eventually(t, func() bool {
		getJSON(t, m.URL()+"/analytics/groups/model?columns=cost,total_tokens", &got)
		n := 0
		for _, g := range got.Data {
			n += g.Requests
		}
		return n == 15
	}, 10*time.Second, 50*time.Millisecond, "every request reaches analytics")

	require.Equal(t, 3, got.Total)
	for _, g := range got.Data {
		w := wants[g.Model]
		require.NotNil(t, w, "unexpected model %q", g.Model)
		assert.Equal(t, w.requests, g.Requests, g.Model)
		assert.Equal(t, w.tokens, g.TotalTokens, g.Model)
		assert.InDelta(t, w.cost, g.Cost, 1e-12, g.Model)
	}
	assert.Positive(t, wants["gpt-4o"].cost)
	assert.Positive(t, wants["gpt-4o-mini"].cost)
	assert.Zero(t, wants["test-model-unpriced"].cost)
}

// A workspace's requests through the gateway, exported as JSON lines by the running export
// worker and downloaded through the signed link.
func TestGatewayRequestsExported(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	admin := func(method, path string, body any) map[string]any {
		t.Helper()
		var raw []byte
		if body != nil {
			raw, _ = json.Marshal(body)
		}
		req, _ := http.NewRequest(method, m.URL()+path, strings.NewReader(string(raw)))
		req.Header.Set("x-gateway-api-key", gatewayKey)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %v", method, path, out)
		return out
	}
	ws := admin(http.MethodPost, "/workspaces", map[string]any{"name": "Apps"})["id"].(string)
	key := admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "app", "workspace_id": ws,
		"scopes": []string{"completions.write"}})["key"].(string)

	const n = 7
	for range n {
		resp, _ := chatThrough(t, m, key, oa.BaseURL(), `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.Eventually(t, func() bool { return m.Pipeline.Stats().Inserted == n }, 10*time.Second, 20*time.Millisecond)

	id := admin(http.MethodPost, "/logs/exports", map[string]any{"workspace_id": ws, "filters": map[string]any{},
		"requested_data": []string{"id", "ai_model", "response_status_code", "cost"}})["id"].(string)
	admin(http.MethodPost, "/logs/exports/"+id+"/start", nil)
	require.Eventually(t, func() bool { return admin(http.MethodGet, "/logs/exports/"+id, nil)["status"] == "success" },
		10*time.Second, 50*time.Millisecond)

	link := admin(http.MethodGet, "/logs/exports/"+id+"/download", nil)["signed_url"].(string)
	resp, err := http.Get(link)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, lines, n)
	for _, line := range lines {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &row))
		assert.Equal(t, "gpt-4o-mini", row["ai_model"])
		assert.EqualValues(t, 200, row["response_status_code"])
		assert.Positive(t, row["cost"])
		assert.NotContains(t, line, "sk-provider-key")
	}
}

// A gateway whose ClickHouse is down at start still starts and serves: its request logs wait
// in the spool, health says analytics is down, and when ClickHouse comes up the schema is
// applied and every request is stored.
func TestGatewayStartsWhileClickHouseIsDown(t *testing.T) {
	srv := chserver.New(t)
	srv.Stop()
	m := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1",
		"CLICKHOUSE_URL": srv.URL()})
	oa := providertest.NewOpenAI(t)
	const n = 20
	for range n {
		require.Equal(t, http.StatusOK, chat(t, m, oa.BaseURL(), "gpt-4o-mini", nil))
	}
	require.Eventually(t, func() bool { return m.Pipeline.Stats().Spooled == n }, 10*time.Second, 20*time.Millisecond)
	h := getHealth(t, m)
	assert.Equal(t, "degraded", h.Status)
	assert.Equal(t, "down", h.Checks["analytics"].Status)

	srv.Start()
	require.Eventually(t, func() bool { return m.Pipeline.Stats().Inserted == n }, 60*time.Second, 100*time.Millisecond)
	assert.Equal(t, map[string]int64{"200": n}, requestsByStatus(t, m.Analytics, m.Bootstrap.OrganisationID))
	assert.Equal(t, "up", getHealth(t, m).Checks["analytics"].Status)
}
