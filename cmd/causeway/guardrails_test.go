package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

// guarded is a governed gateway with helpers to save guardrails and call through a config.
type guarded struct {
	*cached
}

func newGuarded(t *testing.T, m *Main) *guarded { return &guarded{cached: newCached(t, m)} }

// guardrail saves a workspace guardrail of one check and answers its slug.
func (g *guarded) guardrail(slug, check string, params map[string]any, deny bool) string {
	g.t.Helper()
	g.admin(http.MethodPost, "/guardrails", map[string]any{"name": slug, "slug": slug, "workspace_id": g.ws,
		"checks":  []any{map[string]any{"id": check, "parameters": params}},
		"actions": map[string]any{"deny": deny, "async": false}})
	return slug
}

// withGuardrails is an inline config to the stand-in with extra fields at its root.
func (g *guarded) withGuardrails(fields string) string {
	return fmt.Sprintf(`{"provider":"openai","api_key":"sk-provider-key","custom_host":%q,%s}`, g.oa.BaseURL(), fields)
}

func hookResults(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
	hr, ok := body["hook_results"].(map[string]any)
	require.True(t, ok, "hook_results in %s", raw)
	return hr
}

// Guardrails through the real binary: a before-request deny answers 446 naming the
// guardrail and its check, with the hook results, and the provider is never called; a
// failing guardrail that does not deny lets the request through with its verdict; an
// after-request deny refuses the answer; a rewriting check changes what the provider gets;
// the verdicts are in the log row.
func TestGuardrailsHooks(t *testing.T) {
	g := newGuarded(t, startGateway(t))
	noSecrets := g.guardrail("no-secrets", "default.regexMatch", map[string]any{"rule": "password", "not": true}, true)
	warn := g.guardrail("warn-long", "default.wordCount", map[string]any{"minWords": 0, "maxWords": 3}, false)
	noHello := g.guardrail("no-hello", "default.regexMatch", map[string]any{"rule": "Hello", "not": true}, true)
	prefix := g.guardrail("be-brief", "default.addPrefix", map[string]any{"prefix": "Answer briefly. "}, false)

	ask := func(q string) string {
		return fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":%q}]}`, q)
	}
	t.Run("a before-request deny", func(t *testing.T) {
		before := g.chats()
		cfg := g.withGuardrails(`"input_guardrails":["` + noSecrets + `"]`)
		resp, raw := g.call(g.key, "/chat/completions", cfg, ask("my password is hunter2"),
			map[string]string{"x-gateway-trace-id": "guard-deny"})
		require.Equal(t, 446, resp.StatusCode, "%s", raw)
		assert.Equal(t, before, g.chats(), "the provider is never called")
		e := decodeError(t, raw)
		assert.Equal(t, "guardrail_denied", e.Error.Code)
		assert.Contains(t, e.Error.Message, "default.regexMatch")
		assert.Contains(t, e.Error.Message, "no-secrets", "the guardrail is named by its slug")
		require.NotNil(t, e.Error.DecidedBy)
		assert.Equal(t, "guardrail", e.Error.DecidedBy.Kind)
		assert.Contains(t, resp.Header.Get("x-gateway-decided-by"), "guardrail:")
		hr := hookResults(t, raw)
		first := hr["before_request_hooks"].([]any)[0].(map[string]any)
		assert.Equal(t, false, first["verdict"])
		assert.Equal(t, true, first["deny"])

		row := g.logRow("guard-deny")
		prov := row["provenance"].(map[string]any)
		assert.NotNil(t, prov["hook_results"], "the verdicts are in the log row: %v", prov)

		resp, raw = g.call(g.key, "/chat/completions", cfg, ask("what is the weather"), nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, true, hookResults(t, raw)["before_request_hooks"].([]any)[0].(map[string]any)["verdict"])
	})

	t.Run("a failing guardrail that does not deny", func(t *testing.T) {
		cfg := g.withGuardrails(`"before_request_hooks":[{"id":"` + warn + `"}]`)
		resp, raw := g.call(g.key, "/chat/completions", cfg, ask("one two three four five six"), nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, false, hookResults(t, raw)["before_request_hooks"].([]any)[0].(map[string]any)["verdict"])
	})

	t.Run("an after-request deny refuses the answer", func(t *testing.T) {
		cfg := g.withGuardrails(`"output_guardrails":["` + noHello + `"]`)
		resp, raw := g.call(g.key, "/chat/completions", cfg, ask("hi"), nil)
		require.Equal(t, 446, resp.StatusCode, "the stand-in answers %q: %s", providertest.Reply, raw)
		assert.NotEmpty(t, hookResults(t, raw)["after_request_hooks"])
	})

	t.Run("a rewriting check changes what the provider gets", func(t *testing.T) {
		cfg := g.withGuardrails(`"input_guardrails":["` + prefix + `"]`)
		resp, raw := g.call(g.key, "/chat/completions", cfg, ask("capital of France?"), nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		sent := g.oa.LastRequest().JSON()
		content := sent["messages"].([]any)[0].(map[string]any)["content"]
		assert.Equal(t, "Answer briefly. capital of France?", content)
	})

	t.Run("a streamed answer denied on a match split between chunks", func(t *testing.T) {
		split := g.guardrail("no-w1-w2", "default.regexMatch", map[string]any{"rule": "w1 w2", "not": true}, true)
		cfg := g.withGuardrails(`"output_guardrails":["` + split + `"]`)
		body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"count"}]}`
		resp, raw := g.call(g.key, "/chat/completions", cfg, body, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		text, done, _ := readStream(t, raw)
		assert.False(t, done, "a denied stream ends with an error event, not [DONE]")
		assert.Contains(t, string(raw), "guardrail_denied")
		assert.NotContains(t, text, "w2", "the chunk that completed the match was not sent")
	})

	t.Run("nested targets: a deny moves the fallback on", func(t *testing.T) {
		cfg := fmt.Sprintf(`{"strategy":{"mode":"fallback"},"targets":[`+
			`{"provider":"openai","api_key":"sk-provider-key","custom_host":%q,"input_guardrails":[%q]},`+
			`{"provider":"openai","api_key":"sk-provider-key","custom_host":%q}]}`, g.oa.BaseURL(), noSecrets, g.oa.BaseURL())
		resp, raw := g.call(g.key, "/chat/completions", cfg, ask("password reset please"), nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, "0.1", resp.Header.Get("x-gateway-target"), "the second target served")
	})

	t.Run("a config naming an unknown guardrail is refused", func(t *testing.T) {
		resp, raw := g.call(g.key, "/chat/completions", g.withGuardrails(`"input_guardrails":["nope"]`), ask("hi"), nil)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
		assert.Contains(t, string(raw), "nope")
	})
}

// Workspace guardrails apply to every request of the workspace, with no config.
func TestGuardrailsOfAWorkspace(t *testing.T) {
	g := newGuarded(t, startGateway(t))
	slug := g.guardrail("ws-no-secrets", "default.regexMatch", map[string]any{"rule": "password", "not": true}, true)
	g.admin(http.MethodPut, "/workspaces/"+g.ws, map[string]any{"defaults": map[string]any{"input_guardrails": []string{slug}}})
	var status int
	for range 50 { // the key's route picks up the workspace's new defaults from the read model
		resp, _ := chatThrough(t, g.m, g.key, g.oa.BaseURL(), `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"my password"}]}`, nil)
		if status = resp.StatusCode; status == 446 {
			break
		}
	}
	assert.Equal(t, 446, status)
	resp, _ := chatThrough(t, g.m, g.key, g.oa.BaseURL(), `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}`, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// Checks' parameters are validated when a guardrail is saved, with a 400 naming the
// parameter; GUARDRAILS_ENABLED=OFF turns guardrails off, the routes with them.
func TestGuardrailsValidationAndTheFlag(t *testing.T) {
	g := newGuarded(t, startGateway(t))
	status, out := g.adminStatus(http.MethodPost, "/guardrails", map[string]any{"name": "bad", "workspace_id": g.ws,
		"checks":  []any{map[string]any{"id": "default.wordCount", "parameters": map[string]any{"maxWords": "ten"}}},
		"actions": map[string]any{"deny": true}})
	require.Equal(t, http.StatusBadRequest, status, "%v", out)
	assert.Equal(t, "checks[0].parameters.maxWords", out["error"].(map[string]any)["param"])
	status, out = g.adminStatus(http.MethodPost, "/guardrails", map[string]any{"name": "bad", "workspace_id": g.ws,
		"checks":  []any{map[string]any{"id": "default.webhook", "parameters": map[string]any{"webhookURL": "http://169.254.169.254/latest"}}},
		"actions": map[string]any{"deny": true}})
	require.Equal(t, http.StatusBadRequest, status, "a webhook to a refused address: %v", out)
	assert.True(t, strings.HasPrefix(out["error"].(map[string]any)["param"].(string), "checks[0].parameters.webhookURL"), "%v", out)

	off := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1",
		"GUARDRAILS_ENABLED": "OFF"})
	h := &governed{t: t, m: off}
	status, _ = h.adminStatus(http.MethodGet, "/guardrails", nil)
	assert.Equal(t, http.StatusForbidden, status)
}
