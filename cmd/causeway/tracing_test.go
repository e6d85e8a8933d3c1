package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

// collector is the stand-in for an OpenTelemetry collector: it keeps every span exported to
// it, over OTLP/HTTP (POST /v1/traces, protobuf) or OTLP/gRPC (TraceService).
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu        sync.Mutex
	spans     []*tracepb.Span
	resources [][]*commonpb.KeyValue
	requests  int
}

func (c *collector) keep(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	for _, rs := range req.GetResourceSpans() {
		c.resources = append(c.resources, rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
}

// Export is the gRPC TraceService.
func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.keep(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// ServeHTTP is OTLP/HTTP.
func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not OTLP/HTTP protobuf", http.StatusNotFound)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.keep(&req)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// trace waits until the spans of traceID include one named root and n in all, and answers
// them.
func (c *collector) trace(t *testing.T, traceID string, n int) []*tracepb.Span {
	t.Helper()
	var got []*tracepb.Span
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		got = got[:0]
		for _, s := range c.spans {
			if hex.EncodeToString(s.GetTraceId()) == traceID {
				got = append(got, s)
			}
		}
		return len(got) >= n
	}, 15*time.Second, 50*time.Millisecond, "%d spans of trace %s", n, traceID)
	return got
}

// all answers every span and resource attribute received, for the checks that nothing secret
// left.
func (c *collector) all() ([]*tracepb.Span, [][]*commonpb.KeyValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...), append([][]*commonpb.KeyValue(nil), c.resources...)
}

func spanAttrs(s *tracepb.Span) map[string]*commonpb.AnyValue {
	out := map[string]*commonpb.AnyValue{}
	for _, kv := range s.GetAttributes() {
		out[kv.GetKey()] = kv.GetValue()
	}
	return out
}

func named(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, spans []*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	found := named(spans, name)
	require.Equal(t, 1, len(found), "one span %q among %v", name, spanNames(spans))
	return found[0]
}

// serverSpan is the request's own span (its provider calls share its name).
func serverSpan(t *testing.T, spans []*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	var found []*tracepb.Span
	for _, s := range named(spans, name) {
		if s.GetKind() == tracepb.Span_SPAN_KIND_SERVER {
			found = append(found, s)
		}
	}
	require.Equal(t, 1, len(found), "one server span %q among %v", name, spanNames(spans))
	return found[0]
}

func spanNames(spans []*tracepb.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.GetName()
	}
	return out
}

// startTraced runs the real Main exporting to a stand-in collector over protocol (grpc or
// http/protobuf).
func startTraced(t *testing.T, protocol string) (*Main, *collector) {
	t.Helper()
	col := &collector{}
	endpoint := ""
	if protocol == otlpGRPC {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv := grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(srv, col)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(srv.Stop)
		endpoint = "http://" + ln.Addr().String()
	} else {
		srv := httptest.NewServer(col)
		t.Cleanup(srv.Close)
		endpoint = srv.URL
	}
	// The batch processor reads its delay from the process environment, as the SDK does.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	m := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1",
		"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol})
	return m, col
}

// Traces through the real binary to a stand-in collector: a chat through a saved config
// with a retry and a fallback (the first provider fails twice), a guardrail and a cache is one
// server span named by the GenAI conventions, with the guardrail hook, the cache lookup, each
// target tried and each provider call beneath it; its trace id is the answer's
// x-gateway-trace-id; a client's traceparent makes it a child of the client's span; and no
// span holds a key or the prompt.
func TestTracingExportsTheRequestTree(t *testing.T) {
	m, col := startTraced(t, otlpHTTP)
	g := newGuarded(t, m)
	keyID, key := g.governed.key(nil)
	bad, good := providertest.NewOpenAI(t), providertest.NewOpenAI(t)
	const primarySecret, backupSecret = "sk-trace-primary-secret-1", "sk-trace-backup-secret-2"
	g.admin(http.MethodPost, "/integrations", map[string]any{"name": "Traced primary", "slug": "tr-primary", "ai_provider_id": "openai",
		"key": primarySecret, "workspace_id": g.ws, "configurations": map[string]any{"custom_host": bad.BaseURL()}})
	g.admin(http.MethodPost, "/integrations", map[string]any{"name": "Traced backup", "slug": "tr-backup", "ai_provider_id": "openai",
		"key": backupSecret, "workspace_id": g.ws, "configurations": map[string]any{"custom_host": good.BaseURL()}})
	guard := g.guardrail("tr-no-secrets", "default.regexMatch", map[string]any{"rule": "password", "not": true}, true)
	saved := g.admin(http.MethodPost, "/configs", map[string]any{"name": "Traced routing", "slug": "traced-routing", "workspace_id": g.ws,
		"config": map[string]any{"strategy": map[string]any{"mode": "fallback"}, "cache": map[string]any{"mode": "simple"},
			"input_guardrails": []string{guard},
			"targets": []map[string]any{
				{"provider": "@tr-primary", "retry": map[string]any{"attempts": 1, "on_status_codes": []int{503}}},
				{"provider": "@tr-backup"}}}})
	configID := saved["data"].(map[string]any)["id"].(string)

	const prompt = "Describe the lighthouse keeper called Zebulon Quartermaine"
	body := fmt.Sprintf(`{"model":"gpt-4o-mini","max_tokens":16,"temperature":0,"messages":[{"role":"user","content":%q}]}`, prompt)
	bad.Script(providertest.Answer{Status: 503, Body: `{"error":{"message":"down"}}`}, providertest.Answer{Status: 503, Body: `{"error":{"message":"down"}}`})
	resp, raw := g.call(key, "/chat/completions", "traced-routing", body, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	require.Equal(t, "0.1", resp.Header.Get("x-gateway-target"))
	require.Equal(t, "MISS", resp.Header.Get("x-gateway-cache-status"))
	traceID := resp.Header.Get("x-gateway-trace-id")
	require.Len(t, traceID, 32)

	// server, guardrails, cache, two targets, three provider calls
	spans := col.trace(t, traceID, 8)
	server := serverSpan(t, spans, "chat gpt-4o-mini")
	assert.Equal(t, tracepb.Span_SPAN_KIND_SERVER, server.GetKind())
	assert.Empty(t, server.GetParentSpanId(), "a request without traceparent is a root span")
	a := spanAttrs(server)
	for k, want := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.provider.name": "openai",
		"causeway.workspace.id": g.ws, "causeway.api_key.id": keyID, "causeway.config.id": configID, "causeway.cache.status": "MISS",
	} {
		assert.Equal(t, want, a[k].GetStringValue(), k)
	}
	assert.NotEmpty(t, a["gen_ai.response.model"].GetStringValue())
	assert.EqualValues(t, 200, a["http.response.status_code"].GetIntValue())
	assert.EqualValues(t, 16, a["gen_ai.request.max_tokens"].GetIntValue())
	assert.Contains(t, a, "gen_ai.request.temperature")
	assert.Positive(t, a["gen_ai.usage.input_tokens"].GetIntValue())
	assert.Positive(t, a["gen_ai.usage.output_tokens"].GetIntValue())
	assert.EqualValues(t, 0, a["causeway.retry_count"].GetIntValue(), "the target that served needed no retry")
	assert.NotContains(t, a, "error.type")
	assert.NotContains(t, a, "causeway.trace_id", "the span's trace id is the request's own")
	row := g.logRow(traceID)
	assert.Equal(t, row["_id"], a["causeway.request.id"].GetStringValue(), "the span names the log row: %v", row)

	childOf := func(s, parent *tracepb.Span) {
		t.Helper()
		assert.Equal(t, parent.GetSpanId(), s.GetParentSpanId(), "%s is a child of %s", s.GetName(), parent.GetName())
	}
	hook := one(t, spans, "guardrails before_request")
	childOf(hook, server)
	ha := spanAttrs(hook)
	require.NotNil(t, ha["causeway.guardrail.ids"])
	require.Len(t, ha["causeway.guardrail.ids"].GetArrayValue().GetValues(), 1)
	assert.NotEmpty(t, ha["causeway.guardrail.ids"].GetArrayValue().GetValues()[0].GetStringValue())
	assert.True(t, ha["causeway.guardrail.verdicts"].GetArrayValue().GetValues()[0].GetBoolValue(), "the guardrail passed")
	assert.False(t, ha["causeway.guardrail.denied"].GetBoolValue())

	lookup := one(t, spans, "cache lookup")
	childOf(lookup, server)
	assert.Equal(t, "MISS", spanAttrs(lookup)["causeway.cache.status"].GetStringValue())
	assert.Equal(t, "simple", spanAttrs(lookup)["causeway.cache.mode"].GetStringValue())

	failed, served := one(t, spans, "target 0.0"), one(t, spans, "target 0.1")
	childOf(failed, server)
	childOf(served, server)
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, failed.GetStatus().GetCode())
	assert.Equal(t, "the provider answered 503", spanAttrs(failed)["causeway.target.failure"].GetStringValue())
	assert.Equal(t, "0.0", spanAttrs(failed)["causeway.target.path"].GetStringValue())
	assert.NotEqual(t, tracepb.Status_STATUS_CODE_ERROR, served.GetStatus().GetCode())

	var calls []*tracepb.Span
	for _, s := range spans {
		if s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT {
			calls = append(calls, s)
		}
	}
	require.Len(t, calls, 3, "two attempts at the first target, one at the second: %v", spanNames(spans))
	byAttempt := map[string]*tracepb.Span{}
	for _, c := range calls {
		ca := spanAttrs(c)
		assert.Equal(t, "chat gpt-4o-mini", c.GetName())
		assert.Equal(t, "openai", ca["gen_ai.provider.name"].GetStringValue())
		assert.Equal(t, "127.0.0.1", ca["server.address"].GetStringValue())
		byAttempt[fmt.Sprintf("%s#%d", ca["causeway.target.path"].GetStringValue(), ca["causeway.retry.attempt"].GetIntValue())] = c
	}
	require.Contains(t, byAttempt, "0.0#0")
	require.Contains(t, byAttempt, "0.0#1")
	require.Contains(t, byAttempt, "0.1#0")
	childOf(byAttempt["0.0#0"], failed)
	childOf(byAttempt["0.0#1"], failed)
	childOf(byAttempt["0.1#0"], served)
	assert.EqualValues(t, 503, spanAttrs(byAttempt["0.0#1"])["http.response.status_code"].GetIntValue())
	assert.EqualValues(t, 200, spanAttrs(byAttempt["0.1#0"])["http.response.status_code"].GetIntValue())
	// Each provider call carried its own span as the provider's parent.
	parentOf := func(c *tracepb.Span) string {
		return "00-" + traceID + "-" + hex.EncodeToString(c.GetSpanId()) + "-01"
	}
	require.Len(t, bad.Requests(), 2)
	assert.Equal(t, parentOf(byAttempt["0.0#0"]), bad.Requests()[0].Header.Get("traceparent"))
	assert.Equal(t, parentOf(byAttempt["0.0#1"]), bad.Requests()[1].Header.Get("traceparent"))
	assert.Equal(t, parentOf(byAttempt["0.1#0"]), good.LastRequest().Header.Get("traceparent"))

	t.Run("a cache hit", func(t *testing.T) {
		resp, raw := g.call(key, "/chat/completions", "traced-routing", body, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		require.Equal(t, "HIT", resp.Header.Get("x-gateway-cache-status"))
		spans := col.trace(t, resp.Header.Get("x-gateway-trace-id"), 3)
		assert.Equal(t, "HIT", spanAttrs(serverSpan(t, spans, "chat gpt-4o-mini"))["causeway.cache.status"].GetStringValue())
		assert.Equal(t, "HIT", spanAttrs(one(t, spans, "cache lookup"))["causeway.cache.status"].GetStringValue())
		assert.Empty(t, named(spans, "target 0.0"), "no provider is called")
	})

	t.Run("a client's traceparent", func(t *testing.T) {
		const clientTrace, clientSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
		resp, raw := g.call(key, "/chat/completions", "traced-routing", strings.Replace(body, "Zebulon", "Ygritte", 1),
			map[string]string{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"})
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, clientTrace, resp.Header.Get("x-gateway-trace-id"), "the traceparent's trace is the request's")
		server := serverSpan(t, col.trace(t, clientTrace, 4), "chat gpt-4o-mini")
		assert.Equal(t, clientSpan, hex.EncodeToString(server.GetParentSpanId()), "the client's span is the parent")
		assert.NotEmpty(t, g.logRow(clientTrace)["_id"], "the log row is found by the traceparent's trace id")
	})

	t.Run("a trace id and a traceparent of another trace", func(t *testing.T) {
		const ownTrace, otherTrace, otherSpan = "11111111111111111111111111111111", "22222222222222222222222222222222", "3333333333333333"
		resp, raw := g.call(key, "/chat/completions", "traced-routing", body, map[string]string{"x-gateway-trace-id": ownTrace,
			"traceparent": "00-" + otherTrace + "-" + otherSpan + "-01"})
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, ownTrace, resp.Header.Get("x-gateway-trace-id"))
		server := serverSpan(t, col.trace(t, ownTrace, 1), "chat gpt-4o-mini")
		assert.Empty(t, server.GetParentSpanId(), "the request's own trace id wins: a root span")
		require.Len(t, server.GetLinks(), 1, "linked to the client's span")
		assert.Equal(t, otherTrace, hex.EncodeToString(server.GetLinks()[0].GetTraceId()))
		assert.Equal(t, otherSpan, hex.EncodeToString(server.GetLinks()[0].GetSpanId()))
	})

	t.Run("a trace id that is not hex", func(t *testing.T) {
		resp, raw := g.call(key, "/chat/completions", "traced-routing", body, map[string]string{"x-gateway-trace-id": "checkout-42"})
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, "checkout-42", resp.Header.Get("x-gateway-trace-id"))
		sum := sha256.Sum256([]byte("checkout-42"))
		server := serverSpan(t, col.trace(t, hex.EncodeToString(sum[:16]), 1), "chat gpt-4o-mini")
		assert.Equal(t, "checkout-42", spanAttrs(server)["causeway.trace_id"].GetStringValue())
	})

	t.Run("a refusal", func(t *testing.T) {
		resp, raw := g.call("cw-not-a-key-0000000000000000", "/chat/completions", "traced-routing", body, nil)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s", raw)
		// Refused before the body was read: the operation names the span alone.
		server := serverSpan(t, col.trace(t, resp.Header.Get("x-gateway-trace-id"), 1), "chat")
		sa := spanAttrs(server)
		assert.Equal(t, "unauthorized", sa["error.type"].GetStringValue())
		assert.EqualValues(t, 401, sa["http.response.status_code"].GetIntValue())
	})

	t.Run("no secret and no prompt in any span", func(t *testing.T) {
		all, resources := col.all()
		require.NotEmpty(t, all)
		forbidden := []string{key, gatewayKey, primarySecret, backupSecret, "sk-provider-key", "Zebulon", "Quartermaine", "Ygritte", "lighthouse"}
		check := func(where, text string) {
			for _, f := range forbidden {
				assert.NotContains(t, text, f, "%s holds %q", where, f)
			}
		}
		for _, s := range all {
			check(s.GetName(), s.GetName())
			check(s.GetName()+" status", s.GetStatus().GetMessage())
			for _, kv := range s.GetAttributes() {
				check(s.GetName()+" "+kv.GetKey(), kv.GetValue().String())
			}
			for _, e := range s.GetEvents() {
				check(s.GetName()+" event", e.String())
			}
		}
		for _, attrs := range resources {
			for _, kv := range attrs {
				check("resource "+kv.GetKey(), kv.GetValue().String())
			}
		}
	})
}

// OTLP over gRPC, with the service name from OTEL_SERVICE_NAME.
func TestTracingOverGRPC(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "causeway-edge")
	m, col := startTraced(t, otlpGRPC)
	oa := providertest.NewOpenAI(t)
	resp, raw := chatThrough(t, m, gatewayKey, oa.BaseURL(), `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	spans := col.trace(t, resp.Header.Get("x-gateway-trace-id"), 2)
	serverSpan(t, spans, "chat gpt-4o-mini")
	_, resources := col.all()
	require.NotEmpty(t, resources)
	service := ""
	for _, kv := range resources[0] {
		if kv.GetKey() == "service.name" {
			service = kv.GetValue().GetStringValue()
		}
	}
	assert.Equal(t, "causeway-edge", service, "OTEL_SERVICE_NAME names the service")
}

// Spans still batched when Main closes are flushed to the collector.
func TestTracingCloseFlushes(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000") // ten minutes: only Close sends
	cfg, err := LoadConfig(env(map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": t.TempDir(),
		"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1", "OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}))
	require.NoError(t, err)
	m := NewMain(cfg, io.Discard, "test")
	require.NoError(t, m.Run(context.Background()))
	oa := providertest.NewOpenAI(t)
	resp, raw := chatThrough(t, m, gatewayKey, oa.BaseURL(), `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	all, _ := col.all()
	assert.Empty(t, all, "nothing sent before the batch is due")
	require.NoError(t, m.Close())
	serverSpan(t, col.trace(t, resp.Header.Get("x-gateway-trace-id"), 2), "chat gpt-4o-mini")
}

func TestTracingConfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vars     map[string]string
		endpoint string
		protocol string
		problem  string
	}{
		{name: "off without an endpoint", vars: nil, protocol: otlpHTTP},
		{name: "the base endpoint gets the traces path", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
			endpoint: "http://collector:4318/v1/traces", protocol: otlpHTTP},
		{name: "the traces endpoint is used as it is", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/otlp/traces"}, endpoint: "https://collector/otlp/traces", protocol: otlpHTTP},
		{name: "grpc", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			endpoint: "http://collector:4317", protocol: otlpGRPC},
		{name: "the traces protocol wins", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, endpoint: "http://collector:4317", protocol: otlpGRPC},
		{name: "disabled", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"},
			protocol: otlpHTTP},
		{name: "json is not spoken", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			problem: "OTEL_EXPORTER_OTLP_PROTOCOL=\"http/json\": must be grpc or http/protobuf"},
		{name: "not a URL", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
			problem: "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318: must be an http:// or https:// URL with a host"},
		{name: "an unknown sampler", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "sometimes"},
			problem: "OTEL_TRACES_SAMPLER=\"sometimes\""},
		{name: "a ratio above 1", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
			"OTEL_TRACES_SAMPLER_ARG": "1.5"}, problem: "OTEL_TRACES_SAMPLER_ARG=\"1.5\": must be a ratio from 0 to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(env(tc.vars))
			if tc.problem != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.problem)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.endpoint, c.Tracing.Endpoint)
			assert.Equal(t, tc.endpoint != "", c.Tracing.On())
			if tc.endpoint != "" {
				assert.Equal(t, tc.protocol, c.Tracing.Protocol)
			}
		})
	}
	_, err := LoadConfig(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:hunter2@collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
}
