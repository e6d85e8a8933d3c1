package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/guardrails"
	"github.com/causeway/causeway/guardrails/guardrailstest"
)

// guardBenchChecks are the check kinds BenchmarkGuardrails times, each on the hook it reads,
// with parameters it passes on the benchmark's chat (so that every request is served).
var guardBenchChecks = []struct {
	id, hook string
	params   map[string]any
}{
	{"default.regexMatch", "input_guardrails", map[string]any{"rule": `password|secret`, "not": true}},
	{"default.wordCount", "input_guardrails", map[string]any{"minWords": 1, "maxWords": 500}},
	{"default.contains", "output_guardrails", map[string]any{"words": []any{"stand-in"}, "operator": "any"}},
	{"default.jsonSchema", "output_guardrails", map[string]any{"schema": map[string]any{"type": "string"}, "not": true}},
	{"default.modelWhitelist", "input_guardrails", map[string]any{"models": []any{"gpt-4o-mini"}}},
	{"default.requiredMetadataKeyPairs", "input_guardrails", map[string]any{"metadataPairs": map[string]any{"team": "x"}, "operator": "none"}},
	{"default.requestParametersCheck", "input_guardrails", map[string]any{"params": map[string]any{"blockedKeys": []any{"logit_bias"}}}},
	{"default.pii", "input_guardrails", map[string]any{"categories": []any{"email", "credit_card", "iban", "api_key"}}},
	{"default.addPrefix", "input_guardrails", map[string]any{"prefix": "Answer briefly. "}},
	{"default.webhook", "input_guardrails", nil}, // to a local receiver that answers at once
}

// BenchmarkGuardrails is what guardrails add to a request, in process with the real work on
// (as BenchmarkGatewayChat) against the zero-delay stand-in:
//   - baseline-none: a request through a config with no guardrail;
//   - one row per check kind: one guardrail of that check on its hook;
//   - five-checks: one guardrail of five local checks, run side by side;
//   - five-webhooks-concurrent and five-webhooks-sequential: five webhook checks whose
//     receiver waits 1 ms, in one hook (the runner runs them side by side), and the same five
//     run one after another (the request, plus the five run by the engine one at a time): the
//     ratio between the two is what running a hook's checks concurrently saves.
func BenchmarkGuardrails(b *testing.B) {
	var svc *gateway.Service
	env := benchGateway(b, func(s *gateway.Service) { svc = s })
	reg := guardrails.NewRegistry()
	guardrails.AddNetworkChecks(reg)
	secret := []byte("bench-webhook-secret")
	deps := guardrails.Deps{Client: env.guard.Client(0), CheckURL: env.guard.CheckURL, Secret: secret, Now: time.Now}
	svc.Guardrails = &gateway.Guardrails{Registry: reg, Deps: deps, Directory: env.api.Index}
	hook := guardrailstest.NewWebhook(b, secret)
	slow := guardrailstest.NewWebhook(b, secret)
	slow.SetDelay(time.Millisecond)
	h := withTraceID(env.g.endpoint(providers.EndpointChat))
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":32,"temperature":0}`)
	n := 0
	save := func(checks ...map[string]any) string {
		n++
		slug := fmt.Sprintf("bench-%d", n)
		list := make([]any, len(checks))
		for i, c := range checks {
			list[i] = c
		}
		r := env.api.Admin(http.MethodPost, "/guardrails", map[string]any{"name": slug, "slug": slug, "workspace_id": env.ws,
			"checks": list, "actions": map[string]any{"deny": true}})
		if r.Status != http.StatusOK {
			b.Fatalf("guardrail: %d %s", r.Status, r.Raw)
		}
		return slug
	}
	run := func(name, attach string) {
		cfg := `{"provider":"openai","api_key":"sk","custom_host":"` + env.up.BaseURL() + `"` + attach + `}`
		b.Run(name, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("x-gateway-api-key", env.key)
				req.Header.Set("x-gateway-config", cfg)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "req-µs")
		})
	}
	run("baseline-none", "")
	for _, c := range guardBenchChecks {
		params := c.params
		if c.id == "default.webhook" {
			params = map[string]any{"webhookURL": hook.URL}
		}
		slug := save(map[string]any{"id": c.id, "parameters": params})
		run(c.id, fmt.Sprintf(`,%q:[%q]`, c.hook, slug))
	}
	var five []map[string]any
	for _, c := range guardBenchChecks[:4] {
		five = append(five, map[string]any{"id": c.id, "parameters": c.params})
	}
	five = append(five, map[string]any{"id": "default.pii", "parameters": map[string]any{}})
	run("five-checks", `,"input_guardrails":["`+save(five...)+`"]`)

	webhook := map[string]any{"id": "default.webhook", "parameters": map[string]any{"webhookURL": slow.URL}}
	run("five-webhooks-concurrent", `,"input_guardrails":["`+save(webhook, webhook, webhook, webhook, webhook)+`"]`)
	// The same five one after another: the request with no guardrail, then the five checks
	// run by the engine one at a time, as a gateway that ran a hook's checks in sequence would.
	one, err := reg.Configure("default.webhook", "", map[string]any{"webhookURL": slow.URL}, deps)
	if err != nil {
		b.Fatal(err)
	}
	single := []guardrails.Guardrail{{ID: "w", Checks: []guardrails.Configured{one}, Actions: guardrails.Actions{Deny: true}}}
	in := guardrails.Input{Endpoint: providers.EndpointChat, Request: body, Text: "Say hello in one short sentence.", Final: true}
	cfg := `{"provider":"openai","api_key":"sk","custom_host":"` + env.up.BaseURL() + `"}`
	b.Run("five-webhooks-sequential", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			for range 5 {
				if res := guardrails.Run(context.Background(), guardrails.BeforeRequest, single, in); res.Denied {
					b.Fatal("denied")
				}
			}
			req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("x-gateway-api-key", env.key)
			req.Header.Set("x-gateway-config", cfg)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "req-µs")
	})
}
