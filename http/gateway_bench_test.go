package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

type discardSink struct{}

func (discardSink) Log(gateway.LogRecord) {}

// BenchmarkGatewayChat is the hot path of one chat completion in process: authentication from
// memory, validation, limits, the adapter and the answer, against a local stand-in. For
// profiling (go test -bench GatewayChat -cpuprofile); make bench measures the real binary.
func BenchmarkGatewayChat(b *testing.B) {
	api := newTestAPI(b)
	up := providertest.NewOpenAI(b)
	guard, err := egress.New([]string{"127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	g := &Gateway{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Routing: api.Read,
		Engine:  &gateway.Engine{Providers: providers.NewRegistry(providers.Default())},
		Limiter: gateway.NewLimiter(time.Now), Logs: discardSink{}, Now: time.Now, MaxBody: 1 << 20,
		Egress: guard, CustomHostClient: guard.Client(0)}
	h := withTraceID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.endpoint(providers.EndpointChat).ServeHTTP(w, r) }))
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":32,"temperature":0}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("x-gateway-api-key", api.AdminKey)
		req.Header.Set("x-gateway-provider", "openai")
		req.Header.Set("Authorization", "Bearer sk")
		req.Header.Set("x-gateway-custom-host", up.BaseURL())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}
