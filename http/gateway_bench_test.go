package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/ledger"
	ledgersqlite "github.com/causeway/causeway/ledger/sqlite"
)

type discardSink struct{}

func (discardSink) Log(analytics.LogRecord) {}

// BenchmarkGatewayChat is the hot path of one chat completion in process, with the real work
// on: authentication from the routing index, validation, a rate-limit policy and a budget
// (a key's cost budget and a workspace's, reserved and settled on the usage ledger, which
// writes to SQLite in the background), the adapter and the answer, against a local stand-in.
// For profiling (go test -bench GatewayChat -cpuprofile); make bench measures the real binary.
func BenchmarkGatewayChat(b *testing.B) { benchChat(b, nil) }

// BenchmarkGatewayChatTraced is BenchmarkGatewayChat with every request traced: the SDK's
// tracer provider, its batch processor and the gateway's trace ids, as cmd wires them, to an
// exporter that discards the spans (what the request path pays; the export is off it).
func BenchmarkGatewayChatTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()), sdktrace.WithIDGenerator(gateway.TraceIDs{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	benchChat(b, func(s *gateway.Service) { s.Tracer = tp.Tracer(gateway.TraceScope) })
}

func benchChat(b *testing.B, configure func(*gateway.Service)) {
	env := benchGateway(b, configure)
	g, key, up := env.g, env.key, env.up
	h := withTraceID(g.endpoint(providers.EndpointChat))
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":32,"temperature":0}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("x-gateway-api-key", key)
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

// benchGateway is the gateway in process with the real work on: a workspace with a cost budget,
// a key with a token budget, a rate-limit policy on the workspace (never refusing, always
// checked), the usage ledger on SQLite, and the OpenAI stand-in; it answers the transport, the
// key and the stand-in. configure, when set, adds to the service (the answer cache, the
// guardrails).
func benchGateway(b *testing.B, configure func(*gateway.Service)) *benchEnv {
	b.Helper()
	api := newTestAPI(b)
	up := providertest.NewOpenAI(b)
	guard, err := egress.New([]string{"127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	ws := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Bench",
		"usage_limits": []map[string]any{{"type": "cost", "credit_limit": 1e9}}}).Str("id")
	key := api.Admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "bench", "workspace_id": ws,
		"scopes": []string{"completions.write"}, "usage_limits": map[string]any{"type": "tokens", "credit_limit": 1e12}}).Str("key")
	api.Admin(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": ws, "type": "requests", "unit": "rpm", "value": 1e9,
		"conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}})
	if key == "" {
		b.Fatal("no key")
	}
	store, err := ledgersqlite.Open(context.Background(), filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	book := ledger.New(store, ledger.Options{})
	go func() { _ = book.Run(context.Background()) }()
	b.Cleanup(func() { _ = book.Close(context.Background()) })
	svc := &gateway.Service{Index: api.Index, Directory: api.Index, Ledger: book, Logs: discardSink{},
		Engine:  &gateway.Engine{Providers: providers.NewRegistry(all.Default())},
		Limiter: gateway.NewLimiter(time.Now, nil), Now: time.Now, MaxBody: 1 << 20, Egress: guard, CustomHostClient: guard.Client(0)}
	if configure != nil {
		configure(svc)
	}
	return &benchEnv{api: api, ws: ws, key: key, up: up, guard: guard,
		g: &Gateway{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Service: svc}}
}

// benchEnv is a governed gateway in process for benchmarks.
type benchEnv struct {
	api     *testAPI
	ws, key string
	up      *providertest.OpenAIServer
	guard   *egress.Guard
	g       *Gateway
}
