package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/guardrails"
)

// recorded is a tracer whose spans a test reads back once they end.
func recorded(t *testing.T) (trace.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(TraceIDs{}))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.Tracer(TraceScope), rec
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

func spansNamed(spans []sdktrace.ReadOnlySpan, prefix string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), prefix) {
			out = append(out, s)
		}
	}
	return out
}

// A fallback whose first target is retried and fails: each target tried is a span with its
// path and why it failed, each attempt a client span beneath it with its attempt number,
// status and address, and each call carries its own span's context to the provider.
func TestEngineTracesTargetsAndAttempts(t *testing.T) {
	tracer, rec := recorded(t)
	bad, good := providertest.NewOpenAI(t), providertest.NewOpenAI(t)
	bad.Script(providertest.Answer{Status: 503, Body: `{"error":{"message":"busy"}}`},
		providertest.Answer{Status: 503, Body: `{"error":{"message":"busy"}}`})
	first := leafAt(bad)
	first.Retry = Retry{Attempts: 1}
	plan := Plan{Mode: "fallback", Targets: []Plan{first, leafAt(good)}}

	ctx, root := tracer.Start(context.Background(), "request")
	out, err := testEngine().Run(ctx, plan, chatCall())
	require.NoError(t, err)
	out.Close()
	root.End()
	assert.Equal(t, "0.1", out.Path)
	assert.Positive(t, out.UpstreamMS(), "three calls took some time")

	spans := rec.Ended()
	targets := spansNamed(spans, "target ")
	require.Len(t, targets, 2)
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range targets {
		byName[s.Name()] = s
		assert.Equal(t, root.SpanContext().SpanID(), s.Parent().SpanID(), "a target is a child of the request")
	}
	failed := byName["target 0.0"]
	require.NotNil(t, failed)
	assert.Equal(t, codes.Error, failed.Status().Code)
	assert.Equal(t, "503", attrs(failed)["error.type"].AsString())
	assert.Equal(t, "the provider answered 503", attrs(failed)[AttrTargetFailure].AsString())
	assert.Equal(t, "0.0", attrs(failed)[AttrTargetPath].AsString())
	served := byName["target 0.1"]
	require.NotNil(t, served)
	assert.Equal(t, codes.Unset, served.Status().Code)

	calls := spansNamed(spans, "chat m")
	require.Len(t, calls, 3, "two attempts on the first target, one on the second")
	sent := append(bad.Requests(), good.Requests()...)
	require.Len(t, sent, 3)
	for i, c := range calls {
		a := attrs(c)
		assert.Equal(t, trace.SpanKindClient, c.SpanKind())
		assert.Equal(t, "openai", a["gen_ai.provider.name"].AsString())
		assert.Equal(t, "chat", a["gen_ai.operation.name"].AsString())
		assert.Equal(t, "127.0.0.1", a["server.address"].AsString())
		assert.Positive(t, a["server.port"].AsInt64())
		want := "00-" + c.SpanContext().TraceID().String() + "-" + c.SpanContext().SpanID().String() + "-01"
		assert.Equal(t, want, sent[i].Header.Get("traceparent"), "call %d carries its own span as the provider's parent", i)
	}
	for i, want := range []struct {
		parent  string
		attempt int64
		status  int64
	}{{"target 0.0", 0, 503}, {"target 0.0", 1, 503}, {"target 0.1", 0, 200}} {
		a := attrs(calls[i])
		assert.Equal(t, byName[want.parent].SpanContext().SpanID(), calls[i].Parent().SpanID(), "call %d", i)
		assert.Equal(t, want.attempt, a[AttrRetryAttempt].AsInt64(), "call %d", i)
		assert.Equal(t, want.status, a["http.response.status_code"].AsInt64(), "call %d", i)
	}
	assert.Equal(t, codes.Error, calls[0].Status().Code)
	assert.Positive(t, attrs(calls[2])["gen_ai.usage.output_tokens"].AsInt64())
}

// A provider's default address is the one its call connects to, as the transport tells.
func TestEngineNamesTheDefaultAddress(t *testing.T) {
	tracer, rec := recorded(t)
	offline := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("offline")
	}}}
	ctx, root := tracer.Start(context.Background(), "request")
	out, err := testEngine().Run(ctx, Plan{Target: &providers.Target{Provider: "openai", APIKey: "sk", Client: offline}}, chatCall())
	out.Close()
	root.End()
	require.Error(t, err)
	calls := spansNamed(rec.Ended(), "chat m")
	require.Len(t, calls, 1)
	a := attrs(calls[0])
	assert.Equal(t, "api.openai.com", a["server.address"].AsString())
	assert.EqualValues(t, 443, a["server.port"].AsInt64())
	assert.Equal(t, "connection_error", a["error.type"].AsString())
	assert.Equal(t, codes.Error, calls[0].Status().Code)
}

// A stream's call lasts until it is read: its span ends then, and its time counts.
func TestEngineTimesAStreamToItsEnd(t *testing.T) {
	tracer, rec := recorded(t)
	up := providertest.NewOpenAI(t)
	const chunks, delay = 4, 20 * time.Millisecond
	up.SetStream(providertest.StreamPlan{Chunks: chunks, Delay: delay})
	call := chatCall()
	call.Stream = true
	call.Body = []byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)

	for _, traced := range []bool{false, true} {
		ctx := context.Background()
		var root trace.Span
		if traced {
			ctx, root = tracer.Start(ctx, "request")
		}
		out, err := testEngine().Run(ctx, leafAt(up), call)
		require.NoError(t, err)
		require.NotNil(t, out.Stream)
		n := 0
		for {
			_, err := out.Stream.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			n++
		}
		out.Close()
		assert.Greater(t, n, chunks-1)
		assert.GreaterOrEqual(t, out.UpstreamMS(), float64(chunks*delay/time.Millisecond),
			"the stream's time is counted to its end (traced: %v)", traced)
		if traced {
			root.End()
		} else {
			assert.Empty(t, up.LastRequest().Header.Get("traceparent"), "an untraced request carries no trace context")
		}
	}
	calls := spansNamed(rec.Ended(), "chat m")
	require.Len(t, calls, 1)
	c := calls[0]
	assert.GreaterOrEqual(t, c.EndTime().Sub(c.StartTime()), chunks*delay, "the span lasts until the stream's end")
	assert.Positive(t, attrs(c)["gen_ai.usage.output_tokens"].AsInt64(), "the stream's usage is on its span")
	assert.NotEmpty(t, attrs(c)["gen_ai.response.model"].AsString())
}

func TestRequestTraceID(t *testing.T) {
	hex := "4bf92f3577b34da6a3ce929d0e0e4736"
	tid, exact := RequestTraceID(hex)
	assert.True(t, exact)
	assert.Equal(t, hex, tid.String())
	tid, exact = RequestTraceID(strings.ToUpper(hex))
	assert.True(t, exact, "hex in capitals is the same id")
	assert.Equal(t, hex, tid.String())

	for _, id := range []string{"client-trace-1", "00000000000000000000000000000000", "4bf92f3577b34da6a3ce929d0e0e473z"} {
		a, exact := RequestTraceID(id)
		assert.False(t, exact, id)
		assert.True(t, a.IsValid(), id)
		b, _ := RequestTraceID(id)
		assert.Equal(t, a, b, "derived the same way each time: %s", id)
	}
	a, _ := RequestTraceID("client-trace-1")
	b, _ := RequestTraceID("client-trace-2")
	assert.NotEqual(t, a, b)
}

// The ID generator gives a root span the trace id its context asks for.
func TestTraceIDsHonourTheRequestsTraceID(t *testing.T) {
	tracer, rec := recorded(t)
	want, _ := RequestTraceID("4bf92f3577b34da6a3ce929d0e0e4736")
	_, span := tracer.Start(context.WithValue(context.Background(), traceIDKey{}, want), "root")
	span.End()
	_, other := tracer.Start(context.Background(), "another")
	other.End()
	ended := rec.Ended()
	require.Len(t, ended, 2)
	assert.Equal(t, want, ended[0].SpanContext().TraceID())
	assert.NotEqual(t, want, ended[1].SpanContext().TraceID(), "without one, a random id")
	assert.True(t, ended[1].SpanContext().TraceID().IsValid())
}

func TestErrorTypeNamesNoMessage(t *testing.T) {
	for want, err := range map[string]error{
		"503":     &providers.UpstreamError{Status: 503, Provider: "openai", Body: []byte(`{"error":{"message":"secret prompt"}}`)},
		"timeout": &TimeoutError{Timeout: time.Second},
		"connection_refused": &providers.ConnectionError{Provider: "openai",
			Err: &net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}},
		"connection_error":    &providers.ConnectionError{Provider: "openai", Err: errors.New("something odd")},
		"rate_limit_exceeded": &RefusalError{Err: domainErr("rate_limit_exceeded")},
		"guardrail_denied":    &GuardrailDeniedError{RefusalError: RefusalError{Err: domainErr("guardrail_denied")}},
		"_OTHER":              errors.New("my prompt was: tell me a secret"),
	} {
		assert.Equal(t, want, errorType(err))
	}
	assert.Equal(t, "canceled", errorType(fmt.Errorf("read: %w", context.Canceled)))
}

// A hook's span holds the verdicts: ids, pass or fail, the checks that failed, never text.
func TestGuardSpanHoldsVerdictsOnly(t *testing.T) {
	tracer, rec := recorded(t)
	_, span := tracer.Start(context.Background(), "guardrails before_request")
	endGuardSpan(span, guardrails.HookResult{Hook: guardrails.BeforeRequest, Denied: true,
		DeniedBy: &guardrails.DeniedBy{Guardrail: "g2", Check: "default.regexMatch"},
		Guardrails: []guardrails.GuardrailResult{
			{ID: "g1", Verdict: true, Checks: []guardrails.CheckResult{{ID: "default.wordCount", Verdict: true}}},
			{ID: "g2", Verdict: false, Checks: []guardrails.CheckResult{{ID: "default.regexMatch", Verdict: false,
				Explanation: "matched: my password is hunter2"}}},
		}})
	ended := rec.Ended()
	require.Len(t, ended, 1)
	a := attrs(ended[0])
	assert.Equal(t, []string{"g1", "g2"}, a[AttrGuardrailIDs].AsStringSlice())
	assert.Equal(t, []bool{true, false}, a[AttrGuardrailVerdicts].AsBoolSlice())
	assert.Equal(t, []string{"g2/default.regexMatch"}, a[AttrGuardrailFailedChecks].AsStringSlice())
	assert.True(t, a[AttrGuardrailDenied].AsBool())
	assert.Equal(t, "g2/default.regexMatch", a[AttrGuardrailDeniedBy].AsString())
	for _, kv := range ended[0].Attributes() {
		assert.NotContains(t, kv.Value.Emit(), "hunter2")
	}
}

func TestBaseHost(t *testing.T) {
	for base, want := range map[string]struct {
		host string
		port int
	}{
		"https://api.openai.com/v1":              {"api.openai.com", 443},
		"http://127.0.0.1:11434":                 {"127.0.0.1", 11434},
		"http://user:pw@gateway.internal:8080/x": {"gateway.internal", 8080},
		"https://[::1]:9000/v1":                  {"::1", 9000},
		"http://llm.local?x=1":                   {"llm.local", 80},
	} {
		host, port, ok := baseHost(base)
		assert.True(t, ok, base)
		assert.Equal(t, want.host, host, base)
		assert.Equal(t, want.port, port, base)
	}
	for _, base := range []string{"", "ftp://x", "https://", "http://h:port"} {
		_, _, ok := baseHost(base)
		assert.False(t, ok, base)
	}
}

func TestJSONModel(t *testing.T) {
	assert.Equal(t, "gpt-4o-mini-2024-07-18", jsonModel([]byte(`{"id":"x","object":"chat.completion","model":"gpt-4o-mini-2024-07-18","choices":[]}`)))
	assert.Equal(t, "", jsonModel([]byte(`{"id":"x"}`)))
	assert.Equal(t, "", jsonModel([]byte(`{"model":"unterminated`)))
	assert.Equal(t, "", jsonModel([]byte(`{"model":"a\"b"}`)))
}

func TestGenAINames(t *testing.T) {
	assert.Equal(t, "chat", genAIOperation(providers.EndpointChat, "/chat/completions"))
	assert.Equal(t, "text_completion", genAIOperation(providers.EndpointCompletion, "/completions"))
	assert.Equal(t, "embeddings", genAIOperation(providers.EndpointEmbed, "/embeddings"))
	assert.Equal(t, "chat", genAIOperation(providers.EndpointPassThrough, "/responses"))
	assert.Equal(t, "proxy", genAIOperation(providers.EndpointPassThrough, "/files/file-1"))
	assert.Equal(t, "gcp.gemini", genAIProvider("google"))
	assert.Equal(t, "azure.ai.openai", genAIProvider("azure-openai"))
	assert.Equal(t, "ollama", genAIProvider("ollama"))
}

func domainErr(detail string) *domain.Error {
	return &domain.Error{Code: domain.CodeForbidden, Detail: detail, Message: "refused"}
}
