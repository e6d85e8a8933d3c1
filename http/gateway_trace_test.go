package httpapi

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// keptLogs keeps the records the gateway logs.
type keptLogs struct {
	mu   sync.Mutex
	recs []analytics.LogRecord
}

func (k *keptLogs) Log(r analytics.LogRecord) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recs = append(k.recs, r)
}

func (k *keptLogs) last() analytics.LogRecord {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.recs[len(k.recs)-1]
}

// A streamed chat, traced and not: the log record's upstream time covers the stream to its
// last chunk and no more than the request took; traced, the request's span and the provider
// call's span end after the stream, with the model the stream named.
func TestGatewayStreamUpstreamTimeAndSpans(t *testing.T) {
	api := newTestAPI(t)
	up := providertest.NewOpenAI(t)
	const chunks, delay = 4, 25 * time.Millisecond
	up.SetStream(providertest.StreamPlan{Chunks: chunks, Delay: delay})
	guard, err := egress.New([]string{"127.0.0.1"})
	require.NoError(t, err)
	ws := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Traced"}).Str("id")
	key := api.Admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "t", "workspace_id": ws,
		"scopes": []string{"completions.write"}}).Str("key")
	require.NotEmpty(t, key)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(gateway.TraceIDs{}))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	logs := &keptLogs{}
	svc := &gateway.Service{Index: api.Index, Directory: api.Index, Logs: logs,
		Engine:  &gateway.Engine{Providers: providers.NewRegistry(all.Default())},
		Limiter: gateway.NewLimiter(time.Now, nil), Now: time.Now, MaxBody: 1 << 20, Egress: guard, CustomHostClient: guard.Client(0)}
	h := withTraceID((&Gateway{Service: svc}).endpoint(providers.EndpointChat))

	for _, traced := range []bool{false, true} {
		svc.Tracer = nil
		if traced {
			svc.Tracer = tp.Tracer(gateway.TraceScope)
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"count"}]}`))
		req.Header.Set("x-gateway-api-key", key)
		req.Header.Set("x-gateway-provider", "openai")
		req.Header.Set("Authorization", "Bearer sk-test")
		req.Header.Set("x-gateway-custom-host", up.BaseURL())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		events := 0
		for sc := bufio.NewScanner(w.Body); sc.Scan(); {
			if strings.HasPrefix(sc.Text(), "data: ") {
				events++
			}
		}
		assert.Greater(t, events, chunks, "every chunk and [DONE]")

		r := logs.last()
		assert.GreaterOrEqual(t, r.UpstreamMS, float64(chunks*delay/time.Millisecond), "the stream's time, to its end (traced: %v)", traced)
		assert.LessOrEqual(t, r.UpstreamMS, r.LatencyMS, "never more than the request took")
		if !traced {
			assert.Empty(t, up.LastRequest().Header.Get("traceparent"), "tracing off: nothing is propagated")
			assert.Empty(t, rec.Ended())
			continue
		}
		var server, call sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			switch s.SpanKind() {
			case trace.SpanKindServer:
				server = s
			case trace.SpanKindClient:
				call = s
			}
		}
		require.NotNil(t, server)
		require.NotNil(t, call)
		assert.Equal(t, "chat gpt-4o-mini", server.Name())
		assert.Equal(t, w.Header().Get(TraceIDHeader), server.SpanContext().TraceID().String(), "the answer's trace id is the span's")
		assert.Equal(t, server.SpanContext().SpanID(), call.Parent().SpanID())
		assert.GreaterOrEqual(t, call.EndTime().Sub(call.StartTime()), chunks*delay, "the call lasts until the stream's end")
		assert.False(t, server.EndTime().Before(call.EndTime()), "the request ends after its stream")
		a := map[string]string{}
		for _, kv := range server.Attributes() {
			a[string(kv.Key)] = kv.Value.Emit()
		}
		assert.Equal(t, "gpt-4o-mini", a["gen_ai.response.model"])
		assert.Equal(t, r.ID, a[gateway.AttrRequestID])
		assert.Equal(t, ws, a[gateway.AttrWorkspaceID])
		assert.Equal(t, "200", a["http.response.status_code"])
		assert.NotContains(t, a, "error.type")
	}
}
