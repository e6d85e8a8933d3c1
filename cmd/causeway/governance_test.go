package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// governed is a running Causeway with a workspace, the OpenAI stand-in, and helpers to call
// the admin API and the gateway.
type governed struct {
	t  *testing.T
	m  *Main
	oa *providertest.OpenAIServer
	ws string
}

func newGoverned(t *testing.T, m *Main) *governed {
	g := &governed{t: t, m: m, oa: providertest.NewOpenAI(t)}
	g.ws = g.admin(http.MethodPost, "/workspaces", map[string]any{"name": "Governed " + t.Name()})["id"].(string)
	// Output costs 2.5 cents a token and input nothing: a chat the stand-in answers with its
	// four-word reply costs $0.10, exactly the worst case of max_tokens 4.
	g.admin(http.MethodPut, "/model-configs/pricing/openai/budget-model",
		map[string]any{"pay_as_you_go": map[string]any{"request_token": map[string]any{"price": 0}, "response_token": map[string]any{"price": 2.5}}})
	return g
}

// admin calls the admin API with the bootstrap key and requires a 2xx.
func (g *governed) admin(method, path string, body any) map[string]any {
	g.t.Helper()
	status, out := g.adminStatus(method, path, body)
	require.True(g.t, status >= 200 && status < 300, "%s %s: %d %v", method, path, status, out)
	return out
}

func (g *governed) adminStatus(method, path string, body any) (int, map[string]any) {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, g.m.URL()+path, rd)
	require.NoError(g.t, err)
	req.Header.Set("x-gateway-api-key", gatewayKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(g.t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// key creates a workspace service key with the given extra fields.
func (g *governed) key(fields map[string]any) (id, secret string) {
	body := map[string]any{"name": "app", "workspace_id": g.ws, "scopes": []string{"completions.write"}}
	for k, v := range fields {
		body[k] = v
	}
	out := g.admin(http.MethodPost, "/api-keys/workspace/service", body)
	return out["id"].(string), out["key"].(string)
}

// chat sends a chat of max_tokens 4 for budget-model with key.
func (g *governed) chat(key string, headers map[string]string) (*http.Response, []byte) {
	g.t.Helper()
	return chatThrough(g.t, g.m, key, g.oa.BaseURL(), `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`, headers)
}

type errorAnswer struct {
	Error struct {
		Message   string `json:"message"`
		Code      string `json:"code"`
		DecidedBy *struct {
			Kind    string  `json:"kind"`
			ID      string  `json:"id"`
			Sub     string  `json:"sub"`
			Version uint64  `json:"version"`
			Limit   float64 `json:"limit"`
			Used    float64 `json:"used"`
		} `json:"decided_by"`
	} `json:"error"`
}

func decodeError(t *testing.T, raw []byte) errorAnswer {
	t.Helper()
	var e errorAnswer
	require.NoError(t, json.Unmarshal(raw, &e), "%s", raw)
	return e
}

// logRow waits for the request log of a trace id and returns it as JSON.
func (g *governed) logRow(traceID string) map[string]any {
	g.t.Helper()
	var row map[string]any
	require.Eventually(g.t, func() bool {
		var page struct {
			Data []map[string]any `json:"data"`
		}
		req, _ := http.NewRequest(http.MethodGet, g.m.URL()+"/logs?trace_id="+traceID, nil)
		req.Header.Set("x-gateway-api-key", gatewayKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &page) != nil || len(page.Data) == 0 {
			return false
		}
		row = page.Data[0]
		return true
	}, 10*time.Second, 50*time.Millisecond, "no log for trace %s", traceID)
	id, _ := row["_id"].(string)
	status, full := g.adminStatus(http.MethodGet, "/logs/"+id, nil)
	require.Equal(g.t, http.StatusOK, status, "%v", full)
	return full
}

func (g *governed) keyUsage(id string) float64 {
	g.t.Helper()
	out := g.admin(http.MethodGet, "/api-keys/"+id, nil)
	ul, _ := out["usage_limits"].(map[string]any)
	require.NotNil(g.t, ul, "%v", out)
	return ul["current_usage"].(float64)
}

// A key with a cost budget: sequential requests are served until the budget is reached, then
// refused with the budget named, its limit and its usage, in the answer and in the log row.
func TestBudgetOfAKeyIsChargedThenRefuses(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	id, key := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 2, "alert_threshold": 1}})
	served := 0
	var refusal *http.Response
	var refusalBody []byte
	for i := 0; i < 30; i++ {
		resp, raw := g.chat(key, nil)
		if resp.StatusCode == http.StatusOK {
			served++
			continue
		}
		refusal, refusalBody = resp, raw
		break
	}
	assert.Equal(t, 20, served, "$2 at $0.10 a request")
	require.NotNil(t, refusal)
	assert.Equal(t, http.StatusForbidden, refusal.StatusCode)
	e := decodeError(t, refusalBody)
	assert.Contains(t, []string{"budget_exhausted", "budget_exceeded"}, e.Error.Code)
	require.NotNil(t, e.Error.DecidedBy, "%s", refusalBody)
	assert.Equal(t, "api_key", e.Error.DecidedBy.Kind)
	assert.Equal(t, id, e.Error.DecidedBy.ID)
	assert.Equal(t, 2.0, e.Error.DecidedBy.Limit)
	assert.InDelta(t, 2.0, e.Error.DecidedBy.Used, 1e-9)
	assert.Contains(t, e.Error.Message, id)
	assert.True(t, strings.HasPrefix(refusal.Header.Get("x-gateway-decided-by"), "api_key:"+id), refusal.Header.Get("x-gateway-decided-by"))
	assert.Len(t, g.oa.Requests(), 20, "the refused request never reached the provider")
	assert.InDelta(t, 2.0, g.keyUsage(id), 1e-9)

	row := g.logRow(refusal.Header.Get("x-gateway-trace-id"))
	prov, _ := row["provenance"].(map[string]any)
	require.NotNil(t, prov, "%v", row)
	by, _ := prov["refused_by"].(map[string]any)
	require.NotNil(t, by, "%v", prov)
	assert.Equal(t, "api_key", by["kind"])
	assert.Equal(t, id, by["id"])

	// The threshold and the exhaustion are events, in the audit log and the notifications.
	require.Eventually(t, func() bool {
		audit := g.admin(http.MethodGet, "/audit-logs?resource_id="+id, nil)
		actions := map[string]bool{}
		for _, r := range audit["data"].([]any) {
			actions[r.(map[string]any)["action"].(string)] = true
		}
		return actions["ApiKeyUsageThresholdReached"] && actions["ApiKeyExhausted"]
	}, 5*time.Second, 50*time.Millisecond)
	notes := g.admin(http.MethodGet, "/notifications", nil)
	kinds := map[string]bool{}
	for _, n := range notes["data"].([]any) {
		kinds[n.(map[string]any)["kind"].(string)] = true
	}
	assert.True(t, kinds["usage.threshold_reached"] && kinds["usage.exhausted"], "%v", kinds)
}

// 200 concurrent requests against a budget that fits 20: at most 20 are served, and the usage
// ends at most at the limit.
func TestBudgetHoldsUnderConcurrency(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	id, key := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 2}})
	var served, refused atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := g.chat(key, nil)
			switch resp.StatusCode {
			case http.StatusOK:
				served.Add(1)
			case http.StatusForbidden:
				refused.Add(1)
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, served.Load(), int64(20))
	assert.Equal(t, int64(200), served.Load()+refused.Load())
	usage := g.keyUsage(id)
	assert.LessOrEqual(t, usage, 2.0+1e-9)
	assert.InDelta(t, float64(served.Load())*0.10, usage, 1e-9, "every served request is charged")
}

// A usage-limit policy grouped by metadata._user: two users each stop at their own limit, and
// each shows as an entity with its usage.
func TestUsageLimitPolicyPerUser(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	_, key := g.key(nil)
	policy := g.admin(http.MethodPost, "/policies/usage-limits", map[string]any{"workspace_id": g.ws, "type": "cost", "credit_limit": 0.5,
		"conditions": []map[string]string{{"key": "workspace_id", "value": g.ws}}, "group_by": []map[string]string{{"key": "metadata._user"}}})["id"].(string)
	for _, user := range []string{"ann", "bob"} {
		served := 0
		var last []byte
		for i := 0; i < 10; i++ {
			resp, raw := g.chat(key, map[string]string{"x-gateway-metadata": `{"_user":"` + user + `"}`})
			if resp.StatusCode != http.StatusOK {
				last = raw
				assert.Equal(t, http.StatusForbidden, resp.StatusCode)
				break
			}
			served++
		}
		assert.Equal(t, 5, served, "%s: $0.50 at $0.10", user)
		e := decodeError(t, last)
		require.NotNil(t, e.Error.DecidedBy)
		assert.Equal(t, "usage_limit_policy", e.Error.DecidedBy.Kind)
		assert.Equal(t, policy, e.Error.DecidedBy.ID)
		assert.Equal(t, "metadata._user:"+user, e.Error.DecidedBy.Sub)
	}
	entities := g.admin(http.MethodGet, "/policies/usage-limits/"+policy+"/entities", nil)["data"].([]any)
	require.Len(t, entities, 2)
	for _, en := range entities {
		assert.InDelta(t, 0.5, en.(map[string]any)["current_usage"].(float64), 1e-9)
	}
}

// A workspace budget exhausted by traffic; raising its limit reactivates it, and both
// transitions are in the audit log.
func TestWorkspaceBudgetExhaustsAndReactivates(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	g.admin(http.MethodPut, "/workspaces/"+g.ws, map[string]any{"usage_limits": []map[string]any{{"type": "cost", "credit_limit": 2}}})
	_, key := g.key(nil)
	for i := 0; i < 20; i++ {
		resp, raw := g.chat(key, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	}
	resp, raw := g.chat(key, nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "workspace", decodeError(t, raw).Error.DecidedBy.Kind)
	require.Eventually(t, func() bool {
		return g.admin(http.MethodGet, "/workspaces/"+g.ws, nil)["budget_status"] == "exhausted"
	}, 5*time.Second, 50*time.Millisecond, "the exhaustion is recorded")

	g.admin(http.MethodPut, "/workspaces/"+g.ws, map[string]any{"usage_limits": []map[string]any{{"type": "cost", "credit_limit": 3}}})
	resp, raw = g.chat(key, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	audit := g.admin(http.MethodGet, "/audit-logs?resource_id="+g.ws, nil)
	actions := map[string]bool{}
	for _, r := range audit["data"].([]any) {
		actions[r.(map[string]any)["action"].(string)] = true
	}
	assert.True(t, actions["WorkspaceBudgetExhausted"], "%v", actions)
	assert.True(t, actions["WorkspaceBudgetReactivated"], "%v", actions)
}

// passThrough posts body to path through the gateway with key.
func (g *governed) passThrough(key, path, body string) (*http.Response, []byte) {
	g.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.m.URL()+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-gateway-api-key", key)
	req.Header.Set("x-gateway-provider", "openai")
	req.Header.Set("x-gateway-custom-host", g.oa.BaseURL())
	req.Header.Set("Authorization", "Bearer sk-provider-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(g.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

// responsesAnswer is a Responses API answer with its usage.
const responsesAnswer = `{"id":"resp_1","object":"response","model":"budget-model","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]}],` +
	`"usage":{"input_tokens":10,"output_tokens":8,"total_tokens":18,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`

// A pass-through POST to /responses is governed: its usage from the answer is charged, and it
// is refused by a rate limit and by an exhausted budget.
func TestPassThroughIsGoverned(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	freshMinute(t)
	id, key := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 2},
		"rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 3}}})
	body := `{"model":"budget-model","input":"hi","max_output_tokens":8}`
	g.oa.Script(providertest.Answer{Body: responsesAnswer}, providertest.Answer{Body: responsesAnswer})
	for i := 0; i < 2; i++ {
		resp, raw := g.passThrough(key, "/responses", body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.JSONEq(t, responsesAnswer, string(raw), "the answer is passed on unchanged")
	}
	assert.InDelta(t, 2*8*0.025, g.keyUsage(id), 1e-9, "8 output tokens at 2.5 cents, twice")
	row := g.logRow(g.lastTrace(key, body))
	metrics := row["metrics"].(map[string]any)
	assert.EqualValues(t, 10, metrics["req_units"], "%v", row)
	assert.EqualValues(t, 8, metrics["res_units"], "%v", row)

	resp, raw := g.passThrough(key, "/responses", body)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", raw)
	assert.Equal(t, "api_key", decodeError(t, raw).Error.DecidedBy.Kind)
	assert.Contains(t, resp.Header.Get("x-gateway-decided-by"), "api_key:"+id)

	// Exhaust the budget of a second key, then its pass-through is refused too.
	id2, key2 := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 2}})
	for i := 0; i < 20; i++ {
		resp, raw := g.chat(key2, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	}
	before := len(g.oa.Requests())
	resp, raw = g.passThrough(key2, "/responses", body)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", raw)
	e := decodeError(t, raw)
	assert.Equal(t, id2, e.Error.DecidedBy.ID)
	assert.Len(t, g.oa.Requests(), before, "never reached the provider")
}

// lastTrace sends one more pass-through and returns its trace id (for its log row).
func (g *governed) lastTrace(key, body string) string {
	g.oa.Script(providertest.Answer{Body: responsesAnswer})
	resp, _ := g.passThrough(key, "/responses", body)
	return resp.Header.Get("x-gateway-trace-id")
}

// A streaming request whose client leaves after the first chunks is still charged.
func TestAbandonedStreamIsCharged(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	id, key := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 100}})
	g.oa.SetStream(providertest.StreamPlan{Chunks: 100, Delay: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.m.URL()+"/chat/completions",
		strings.NewReader(`{"model":"budget-model","max_tokens":400,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-gateway-api-key", key)
	req.Header.Set("x-gateway-provider", "openai")
	req.Header.Set("x-gateway-custom-host", g.oa.BaseURL())
	req.Header.Set("Authorization", "Bearer sk-provider-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	sc := bufio.NewScanner(resp.Body)
	chunks := 0
	for sc.Scan() && chunks < 10 {
		if strings.HasPrefix(sc.Text(), "data: ") {
			chunks++
		}
	}
	cancel()
	resp.Body.Close()
	require.Eventually(t, func() bool { return g.keyUsage(id) > 0 }, 5*time.Second, 50*time.Millisecond,
		"the abandoned stream is charged what it delivered")
	assert.Less(t, g.keyUsage(id), 400*0.025, "charged what was delivered, not the worst case")
}

// A restart in the middle of a budget: the usage and the exhausted state survive, embedded
// (the ledger in DATA_DIR/ledger.db) and on servers (the ledger in PostgreSQL).
func TestBudgetSurvivesARestart(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		testBudgetSurvivesARestart(t, map[string]string{"CAUSEWAY_DATA_DIR": t.TempDir()})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := migrationstest.PostgresURL(t)
		vars := serverEnv(pg)
		vars["CAUSEWAY_DATA_DIR"] = t.TempDir()
		testBudgetSurvivesARestart(t, vars)
	})
}

func testBudgetSurvivesARestart(t *testing.T, vars map[string]string) {
	vars["CAUSEWAY_BOOTSTRAP_ADMIN_KEY"], vars["CAUSEWAY_ALLOWED_HOSTS"] = gatewayKey, "127.0.0.1"
	m := startMainOnce(t, vars)
	g := newGoverned(t, m)
	id, key := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 2}})
	for i := 0; i < 10; i++ {
		resp, _ := g.chat(key, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.NoError(t, m.Close())

	g.m = startMainOnce(t, vars)
	assert.InDelta(t, 1.0, g.keyUsage(id), 1e-9, "usage survives")
	for i := 0; i < 10; i++ {
		resp, _ := g.chat(key, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	resp, _ := g.chat(key, nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Eventually(t, func() bool {
		return g.admin(http.MethodGet, "/api-keys/"+id, nil)["status"] == "exhausted"
	}, 5*time.Second, 50*time.Millisecond)
	require.NoError(t, g.m.Close())

	g.m = startMainOnce(t, vars)
	resp, raw := g.chat(key, nil)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the exhausted state survives: %s", raw)
	assert.InDelta(t, 2.0, g.keyUsage(id), 1e-9)
	require.NoError(t, g.m.Close())
}

// startMainOnce runs Main with vars; the test closes it (a restart reuses the data dir).
func startMainOnce(t *testing.T, vars map[string]string) *Main {
	t.Helper()
	all := map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_STARTUP_TIMEOUT": "5s"}
	for k, v := range vars {
		all[k] = v
	}
	cfg, err := LoadConfig(env(all))
	require.NoError(t, err)
	m := NewMain(cfg, io.Discard, "test")
	require.NoError(t, m.Run(context.Background()))
	return m
}

// A rate-limit policy's refusal names the policy and its version, in the header, the body
// and the log row; an answer names the saved config version that routed it.
func TestProvenanceOfAPolicyRefusalAndAConfig(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	_, key := g.key(nil)
	freshMinute(t)
	policy := g.admin(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": g.ws, "type": "requests", "unit": "rpm", "value": 1,
		"conditions": []map[string]string{{"key": "workspace_id", "value": g.ws}}, "group_by": []map[string]string{{"key": "api_key"}}})["id"].(string)
	resp, _ := g.chat(key, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, raw := g.chat(key, nil)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "rate_limit_policy:"+policy+"@v1", resp.Header.Get("x-gateway-decided-by"))
	e := decodeError(t, raw)
	assert.Equal(t, policy, e.Error.DecidedBy.ID)
	assert.EqualValues(t, 1, e.Error.DecidedBy.Version)
	assert.Contains(t, e.Error.Message, "1 request per minute")
	row := g.logRow(resp.Header.Get("x-gateway-trace-id"))
	by := row["provenance"].(map[string]any)["refused_by"].(map[string]any)
	assert.Equal(t, "rate_limit_policy", by["kind"])
	assert.Equal(t, policy, by["id"])
}

// A served request's log row names the budgets it was charged to, with what it was charged.
func TestProvenanceOfCharges(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	id, key := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 10}})
	resp, _ := g.chat(key, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	row := g.logRow(resp.Header.Get("x-gateway-trace-id"))
	charged := row["provenance"].(map[string]any)["charged"].([]any)
	require.Len(t, charged, 1)
	c := charged[0].(map[string]any)
	assert.Equal(t, "api_key", c["kind"])
	assert.Equal(t, id, c["id"])
	assert.InDelta(t, 0.10, c["amount"].(float64), 1e-9)
	assert.InDelta(t, 0.10, row["metrics"].(map[string]any)["cost"].(float64), 1e-9)
}

// A config's forward_headers pass the named client headers to the provider; a pass-through
// upload keeps the headers that shape its body (a gzip body arrives declared as gzip).
func TestForwardHeadersAndBodyHeaders(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	_, key := g.key(nil)
	config := `{"provider":"openai","api_key":"sk-inline","custom_host":"` + g.oa.BaseURL() + `","forward_headers":["x-team"]}`
	resp, raw := chatTo(t, g, key, map[string]string{"x-gateway-config": config, "x-team": "search", "x-other": "no"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	got := g.oa.LastRequest().Header
	assert.Equal(t, "search", got.Get("x-team"), "forward_headers names it")
	assert.Empty(t, got.Get("x-other"), "a header no list names stays behind")

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"model":"budget-model","input":"hi"}`))
	require.NoError(t, zw.Close())
	req, _ := http.NewRequest(http.MethodPost, g.m.URL()+"/files", bytes.NewReader(gz.Bytes()))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("x-gateway-api-key", key)
	req.Header.Set("x-gateway-provider", "openai")
	req.Header.Set("x-gateway-custom-host", g.oa.BaseURL())
	req.Header.Set("Authorization", "Bearer sk-provider-key")
	pr, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	pr.Body.Close()
	require.Equal(t, http.StatusOK, pr.StatusCode)
	last := g.oa.LastRequest()
	assert.Equal(t, "gzip", last.Header.Get("Content-Encoding"), "the body's encoding is declared")
	assert.Equal(t, gz.Bytes(), last.Body, "the body is passed on unchanged")
}

// A managed provider's budget is checked when its target is tried: a fallback passes over a
// provider whose budget is spent to the next, and the provider's usage shows on it.
func TestManagedProviderBudgetFallsBack(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	_, key := g.key(nil)
	backup := providertest.NewOpenAI(t)
	for slug, host := range map[string]string{"primary": g.oa.BaseURL(), "backup": backup.BaseURL()} {
		g.admin(http.MethodPost, "/integrations", map[string]any{"name": slug, "slug": slug, "ai_provider_id": "openai",
			"key": "sk-" + slug, "workspace_id": g.ws, "configurations": map[string]any{"custom_host": host}})
	}
	g.admin(http.MethodPut, "/providers/primary?workspace_id="+g.ws, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 1}})
	config := `{"strategy":{"mode":"fallback"},"targets":[{"provider":"@primary"},{"provider":"@backup"}]}`
	body := `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`
	targets, traces := map[string]int{}, map[string]string{}
	for i := 0; i < 12; i++ {
		req, _ := http.NewRequest(http.MethodPost, g.m.URL()+"/chat/completions", strings.NewReader(body))
		req.Header.Set("x-gateway-api-key", key)
		req.Header.Set("x-gateway-config", config)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		targets[resp.Header.Get("x-gateway-target")]++
		traces[resp.Header.Get("x-gateway-target")] = resp.Header.Get("x-gateway-trace-id")
	}
	assert.Equal(t, map[string]int{"0.0": 10, "0.1": 2}, targets, "$1 at $0.10 on the primary, then the backup")
	for target, provider := range map[string]string{"0.0": "@primary", "0.1": "@backup"} {
		row := g.logRow(traces[target])
		assert.Equal(t, provider, row["metrics"].(map[string]any)["provider"], "the log names the managed provider that served")
	}
	p := g.admin(http.MethodGet, "/providers/primary?workspace_id="+g.ws, nil)
	ul, _ := p["usage_limits"].(map[string]any)
	require.NotNil(t, ul, "%v", p)
	assert.InDelta(t, 1.0, ul["current_usage"].(float64), 1e-9)
}
