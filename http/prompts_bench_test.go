package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"
)

// BenchmarkGatewayPromptCompletion is BenchmarkGatewayChat's request made from a prompt: the
// same messages, model and parameters, rendered from a template with a partial and the
// request's variables, then served by the same pipeline. The difference between the two is
// what rendering a prompt costs the hot path.
func BenchmarkGatewayPromptCompletion(b *testing.B) {
	env := benchGateway(b, nil)
	api := env.api
	api.Admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": env.ws, "name": "Persona",
		"string": "You are a {{adjective}} assistant."})
	col := api.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": env.ws, "name": "Bench"}).Str("id")
	created := api.Admin(http.MethodPost, "/prompts", map[string]any{"name": "Hello", "slug": "hello", "collection_id": col,
		"string":     `[{"role":"system","content":"{{> persona}}"},{"role":"user","content":"Say {{what}} in one short sentence."}]`,
		"parameters": map[string]any{"max_tokens": 32, "temperature": 0}, "model": "gpt-4o-mini", "virtual_key": "unused"})
	if created.Status != http.StatusOK {
		b.Fatalf("prompt: %s", created.Raw)
	}
	root := mux.NewRouter()
	env.g.registerPrompts(root.PathPrefix(BasePath).Subrouter())
	h := withTraceID(root)
	body := []byte(`{"variables":{"adjective":"helpful","what":"hello"}}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/v1/prompts/hello/completions", bytes.NewReader(body))
		req.Header.Set("x-gateway-api-key", env.key)
		req.Header.Set("x-gateway-provider", "openai")
		req.Header.Set("Authorization", "Bearer sk")
		req.Header.Set("x-gateway-custom-host", env.up.BaseURL())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}
