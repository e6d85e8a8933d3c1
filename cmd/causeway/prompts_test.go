package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

// promptsE2E is the real binary with a workspace served by a managed provider (@primary, an
// integration whose base URL is the OpenAI stand-in) and an application key.
type promptsE2E struct {
	t   *testing.T
	m   *Main
	oa  *providertest.OpenAIServer
	ws  string
	key string
}

// answer is an HTTP answer: status, headers, raw body and the body decoded as an object.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (e *promptsE2E) do(method, path, key string, body any, headers ...string) answer {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(e.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.m.URL()+path, rd)
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-gateway-api-key", key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	out := answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// admin calls the admin API with the bootstrap key and requires a 2xx.
func (e *promptsE2E) admin(method, path string, body any) map[string]any {
	e.t.Helper()
	a := e.do(method, path, gatewayKey, body)
	require.True(e.t, a.status >= 200 && a.status < 300, "%s %s: %d %s", method, path, a.status, a.raw)
	return a.body
}

func (a answer) errorParam() string {
	e, _ := a.body["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

func (a answer) errorMessage() string {
	e, _ := a.body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func newPromptsE2E(t *testing.T) *promptsE2E {
	e := &promptsE2E{t: t, m: startGateway(t), oa: providertest.NewOpenAI(t)}
	e.ws = e.admin(http.MethodPost, "/workspaces", map[string]any{"name": "Support"})["id"].(string)
	e.admin(http.MethodPost, "/integrations", map[string]any{"name": "Primary", "slug": "primary", "ai_provider_id": "openai",
		"key": "sk-primary-secret", "workspace_id": e.ws, "configurations": map[string]any{"custom_host": e.oa.BaseURL()}})
	e.key = e.admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "app", "workspace_id": e.ws,
		"scopes": []string{"completions.write", "prompts.render", "logs.list", "logs.view", "analytics.view"}})["key"].(string)
	return e
}

// A prompt with nested partials, rendered and run through the gateway: render answers the
// body; completions, streamed and not, reach the provider with the version's model,
// parameters and managed provider, the request's overrides over them; a label serves its
// version; the whole pipeline applies (a config's cache, a guardrail, a rate limit); the log
// rows carry the prompt, version and label, and the analytics prompt group counts them.
func TestPromptCompletionsThroughThePipeline(t *testing.T) {
	e := newPromptsE2E(t)
	e.admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": e.ws, "name": "Tone", "string": "Answer in a {{tone}} tone. {{> sign-off}}"})
	e.admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": e.ws, "name": "Sign off", "string": "Sign as {{agent}}."})
	col := e.admin(http.MethodPost, "/collections", map[string]any{"workspace_id": e.ws, "name": "Support"})["id"].(string)
	created := e.admin(http.MethodPost, "/prompts", map[string]any{"name": "Support", "slug": "support", "collection_id": col,
		"string":     `[{"role":"system","content":"You help {{customer.name}}. {{> tone}}"},{"role":"user","content":"{{question}}"}]`,
		"parameters": map[string]any{"temperature": 0.3, "max_tokens": 64}, "model": "gpt-4o-mini", "virtual_key": "primary"})
	promptID := created["id"].(string)
	vars := map[string]any{"customer": map[string]any{"name": "Ann & Co"}, "tone": "warm", "agent": "Bo", "question": "Where is my order?"}
	system := "You help Ann & Co. Answer in a warm tone. Sign as Bo."

	// Render: the body the prompt makes, the request's overrides over its parameters.
	r := e.do(http.MethodPost, "/prompts/support/render", e.key, map[string]any{"variables": vars, "temperature": 0.9})
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	assert.Equal(t, true, r.body["success"])
	data := r.body["data"].(map[string]any)
	assert.Equal(t, "gpt-4o-mini", data["model"])
	assert.EqualValues(t, 0.9, data["temperature"])
	assert.EqualValues(t, 64, data["max_tokens"])
	msgs := data["messages"].([]any)
	require.Len(t, msgs, 2)
	assert.Equal(t, system, msgs[0].(map[string]any)["content"])
	assert.Equal(t, "Where is my order?", msgs[1].(map[string]any)["content"])

	// Missing variables are named, every one; an unknown prompt is not found.
	r = e.do(http.MethodPost, "/prompts/support/render", e.key, map[string]any{"variables": map[string]any{"question": "x"}})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)
	assert.Equal(t, "variables", r.errorParam())
	assert.Contains(t, r.errorMessage(), "agent, customer.name, tone")
	r = e.do(http.MethodPost, "/prompts/nope/completions", e.key, map[string]any{"variables": vars})
	assert.Equal(t, http.StatusNotFound, r.status, "%s", r.raw)
	assert.Equal(t, "promptId", r.errorParam())

	// A completion: the provider gets the rendered messages, the version's model and
	// parameters with the request's over them, with the managed provider's key.
	r = e.do(http.MethodPost, "/prompts/support/completions", e.key, map[string]any{"variables": vars, "max_tokens": 20})
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	assert.Equal(t, "chat.completion", r.body["object"])
	sent := e.oa.LastRequest()
	assert.Equal(t, "Bearer sk-primary-secret", sent.Header.Get("Authorization"), "the version's managed provider")
	body := sent.JSON()
	assert.Equal(t, "gpt-4o-mini", body["model"])
	assert.EqualValues(t, 0.3, body["temperature"])
	assert.EqualValues(t, 20, body["max_tokens"], "the request's override")
	assert.NotContains(t, body, "variables")
	assert.Equal(t, system, body["messages"].([]any)[0].(map[string]any)["content"])
	completions := 1

	// Streamed.
	r = e.do(http.MethodPost, "/prompts/"+promptID+"/completions", e.key, map[string]any{"variables": vars, "stream": true})
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	assert.Contains(t, r.header.Get("Content-Type"), "text/event-stream")
	assert.Contains(t, string(r.raw), "data: [DONE]")
	assert.Equal(t, true, e.oa.LastRequest().JSON()["stream"])
	completions++

	// A new version, labelled production: served by prompt@production, while the default
	// stays version 1.
	v2 := e.admin(http.MethodPut, "/prompts/support", map[string]any{"patch": true, "model": "gpt-4o"})["prompt_version_id"].(string)
	label := e.admin(http.MethodPost, "/labels", map[string]any{"name": "production"})["id"].(string)
	e.admin(http.MethodPut, "/prompts/support/versions/"+v2, map[string]any{"label_id": label})
	r = e.do(http.MethodPost, "/prompts/support@production/completions", e.key, map[string]any{"variables": vars})
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	assert.Equal(t, "gpt-4o", e.oa.LastRequest().JSON()["model"])
	completions++
	r = e.do(http.MethodPost, "/prompts/support/completions", e.key, map[string]any{"variables": vars})
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	assert.Equal(t, "gpt-4o-mini", e.oa.LastRequest().JSON()["model"], "the default version")
	completions++

	// The pipeline: a config the request names routes it and caches it (cache_sampled: the
	// prompt's temperature is above 0).
	config := `{"provider":"@primary","cache":{"mode":"simple","cache_sampled":true}}`
	before := len(e.oa.Requests())
	for _, want := range []string{"MISS", "HIT"} {
		r = e.do(http.MethodPost, "/prompts/support/completions", e.key, map[string]any{"variables": vars}, "x-gateway-config", config)
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, want, r.header.Get("x-gateway-cache-status"))
		completions++
	}
	assert.Equal(t, before+1, len(e.oa.Requests()), "the hit called no provider")

	// A guardrail of the config denies what the rendered prompt holds.
	e.admin(http.MethodPost, "/guardrails", map[string]any{"name": "No refunds", "slug": "no-refunds", "workspace_id": e.ws,
		"checks":  []any{map[string]any{"id": "default.contains", "parameters": map[string]any{"words": []any{"refund"}, "operator": "none"}}},
		"actions": map[string]any{"deny": true}})
	refund := map[string]any{"customer": map[string]any{"name": "Ann"}, "tone": "calm", "agent": "Bo", "question": "I want a refund"}
	r = e.do(http.MethodPost, "/prompts/support/completions", e.key, map[string]any{"variables": refund},
		"x-gateway-config", `{"provider":"@primary","input_guardrails":["no-refunds"]}`)
	assert.Equal(t, 446, r.status, "%s", r.raw)
	denied := 1

	// A rate limit on the key: the second request is refused.
	limited := e.admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "limited", "workspace_id": e.ws,
		"scopes": []string{"completions.write"}, "rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 1}}})["key"].(string)
	r = e.do(http.MethodPost, "/prompts/support/completions", limited, map[string]any{"variables": vars})
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	completions++
	r = e.do(http.MethodPost, "/prompts/support/completions", limited, map[string]any{"variables": vars})
	assert.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.raw)
	denied++

	// The logs: every prompt completion, with its prompt, version and label.
	rows := []any{}
	require.Eventually(t, func() bool {
		r = e.do(http.MethodGet, "/logs?prompt_slug=support&page_size=100", gatewayKey, nil)
		rows, _ = r.body["data"].([]any)
		return r.status == http.StatusOK && len(rows) == completions+denied
	}, 10*time.Second, 50*time.Millisecond, "%s", r.raw)
	versions := map[string]int{}
	for _, row := range rows {
		metrics := row.(map[string]any)["metrics"].(map[string]any)
		assert.Equal(t, promptID, metrics["prompt_id"])
		key, _ := metrics["prompt_label"].(string)
		versions[key+"@"+jsonNumber(metrics["prompt_version"])]++
	}
	assert.Equal(t, map[string]int{"@1": completions + denied - 1, "production@2": 1}, versions)
	statuses := map[float64]int{}
	for _, row := range rows {
		statuses[row.(map[string]any)["metrics"].(map[string]any)["response_status_code"].(float64)]++
	}
	assert.Equal(t, map[float64]int{200: completions, 446: 1, 429: 1}, statuses)

	// The analytics prompt group counts them, under the prompt's id and slug.
	r = e.do(http.MethodGet, "/analytics/groups/prompt?columns=error_count", gatewayKey, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	var group map[string]any
	for _, g := range r.body["data"].([]any) {
		if g.(map[string]any)["prompt"] == promptID {
			group = g.(map[string]any)
		}
	}
	require.NotNil(t, group, "%s", r.raw)
	assert.EqualValues(t, completions+denied, group["requests"])
	assert.EqualValues(t, denied, group["error_count"])
	assert.Equal(t, "support", group["prompt_slug"])
	r = e.do(http.MethodGet, "/analytics/groups/prompt?prompt_slug=support", e.key, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	require.Len(t, r.body["data"], 1, "the prompt_slug filter keeps the prompt's rows: %s", r.raw)

	// A cycle between partials is refused, naming it.
	e.admin(http.MethodPut, "/prompts/partials/sign-off", map[string]any{"string": "Sign as {{agent}}. {{> tone}}"})
	e.admin(http.MethodPut, "/prompts/partials/sign-off/makeDefault", map[string]any{"version": 2})
	r = e.do(http.MethodPost, "/prompts/support/completions", e.key, map[string]any{"variables": vars})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)
	assert.Equal(t, "partials", r.errorParam())
	assert.Contains(t, r.errorMessage(), "tone → sign-off → tone")
	assert.False(t, strings.Contains(string(r.raw), "sk-primary-secret"))

	// The metrics count renders (no log row holds them) and completions, by status class.
	s := scrape(t, e.m.MetricsURL(), "")
	prompts := func(op, class string) float64 {
		return s.value("causeway_prompt_requests_total", map[string]string{"operation": op, "status_class": class})
	}
	assert.Equal(t, 1.0, prompts("render", "2xx"))
	assert.Equal(t, 1.0, prompts("render", "4xx"), "the render missing a variable")
	assert.GreaterOrEqual(t, prompts("completions", "2xx"), 5.0)
	assert.GreaterOrEqual(t, prompts("completions", "4xx"), 2.0, "the rate limit, the guardrail, the cycle")
}

// jsonNumber is a decoded JSON number as text ("" when absent).
func jsonNumber(v any) string {
	f, ok := v.(float64)
	if !ok {
		return ""
	}
	raw, _ := json.Marshal(f)
	return string(raw)
}
