package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/guardrails"
)

// Tracing. With Service.Tracer set, each request is one server span named as the GenAI
// semantic conventions name an inference ("chat gpt-4o-mini"), under the client's traceparent
// when it sent one, with the trace id of its x-gateway-trace-id (TraceIDs). Beneath it: the
// guardrail hooks and the cache lookup (internal spans), each target a fallback or a load
// balancer tried ("target 0.1", internal), and one client span per provider call, retries
// included, which carries the traceparent on to the provider. Spans hold ids, names, counts,
// statuses and verdicts: never a body, a prompt, an answer, a header or a credential. With
// Tracer nil nothing of this runs: each step checks a nil span.

// TraceScope is the instrumentation scope of the gateway's spans.
const TraceScope = "github.com/causeway/causeway/gateway"

// Span attributes of Causeway's own, beside the GenAI and HTTP conventions'.
const (
	AttrWorkspaceID   = "causeway.workspace.id"
	AttrAPIKeyID      = "causeway.api_key.id"
	AttrConfigID      = "causeway.config.id"
	AttrCacheStatus   = "causeway.cache.status"
	AttrRetryCount    = "causeway.retry_count"
	AttrRequestID     = "causeway.request.id"
	AttrRefusedBy     = "causeway.refused_by"
	AttrTraceID       = "causeway.trace_id"
	AttrRetryAttempt  = "causeway.retry.attempt"
	AttrTargetPath    = "causeway.target.path"
	AttrTargetFailure = "causeway.target.failure"
	AttrCacheMode     = "causeway.cache.mode"
	AttrGuardrailHook = "causeway.guardrail.hook"
	AttrGuardrailIDs  = "causeway.guardrail.ids"
	// AttrGuardrailVerdicts are the verdicts of AttrGuardrailIDs, in their order.
	AttrGuardrailVerdicts = "causeway.guardrail.verdicts"
	// AttrGuardrailFailedChecks names the checks that failed, as "guardrail-id/check-id".
	AttrGuardrailFailedChecks = "causeway.guardrail.failed_checks"
	AttrGuardrailDenied       = "causeway.guardrail.denied"
	AttrGuardrailDeniedBy     = "causeway.guardrail.denied_by"
	AttrGuardrailTransformed  = "causeway.guardrail.transformed"
)

// traceIDKey carries the trace id a request's root span must take (TraceIDs).
type traceIDKey struct{}

// TraceIDs is the trace SDK's IDGenerator (go.opentelemetry.io/otel/sdk/trace.IDGenerator,
// which it satisfies without this package importing the SDK): a request's root span takes the
// trace id of its x-gateway-trace-id, so that the exported trace and the answer's header and
// log row name the same trace; every other id is random. cmd wires it.
type TraceIDs struct{}

// NewIDs answers the trace id the context asks for, or a random one, and a random span id.
func (TraceIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, ok := ctx.Value(traceIDKey{}).(trace.TraceID)
	for !ok || !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
		ok = true
	}
	return tid, TraceIDs{}.NewSpanID(ctx, tid)
}

// NewSpanID answers a random span id.
func (TraceIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}

// RequestTraceID is the span trace id of a request's x-gateway-trace-id: the id itself when it
// is 32 hex digits (either case), else the first 16 bytes of its SHA-256, so that any string
// a client uses names one trace. exact is false when it had to be derived.
func RequestTraceID(id string) (tid trace.TraceID, exact bool) {
	if len(id) == 32 {
		if t, err := trace.TraceIDFromHex(strings.ToLower(id)); err == nil {
			return t, true
		}
	}
	sum := sha256.Sum256([]byte(id))
	copy(tid[:], sum[:16])
	return tid, false
}

// startSpan starts the request's server span: the child of the client's traceparent when its
// trace is the request's, else a root span with the request's trace id (linked to the
// traceparent, when one was sent for another trace).
func (s *Service) startSpan(ctx context.Context, x *exchange) context.Context {
	op := genAIOperation(x.in.Endpoint, x.in.Path)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", op), attribute.String("http.request.method", x.in.Method))}
	var remote trace.SpanContext
	if len(x.in.Header["Traceparent"]) > 0 {
		remote = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(x.in.Header)))
	}
	want, _ := RequestTraceID(x.in.TraceID)
	if remote.IsValid() && (x.in.TraceID == "" || remote.TraceID() == want) {
		ctx = trace.ContextWithRemoteSpanContext(ctx, remote)
	} else {
		opts = append(opts, trace.WithNewRoot())
		if x.in.TraceID != "" {
			ctx = context.WithValue(ctx, traceIDKey{}, want)
		}
		if remote.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: remote}))
		}
	}
	ctx, x.span = s.Tracer.Start(ctx, op, opts...)
	if !x.span.IsRecording() {
		x.span = nil // not sampled: nothing more to record
		return ctx
	}
	if id := x.in.TraceID; id != "" && x.span.SpanContext().TraceID().String() != id {
		x.span.SetAttributes(attribute.String(AttrTraceID, id))
	}
	return ctx
}

// spanRequest names the span after the parsed request ("chat gpt-4o-mini") and records what
// it asks for.
func (x *exchange) spanRequest(call *providers.Call) {
	op := genAIOperation(x.in.Endpoint, x.in.Path)
	if call.Model != "" {
		x.span.SetName(op + " " + call.Model)
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	if call.Model != "" {
		attrs = append(attrs, attribute.String("gen_ai.request.model", call.Model))
	}
	var maxTokens int
	var temperature *float64
	switch {
	case call.Chat != nil:
		maxTokens, temperature = call.Chat.OutputLimit(), call.Chat.Temperature
	case call.Completion != nil:
		maxTokens, temperature = call.Completion.MaxTokens, call.Completion.Temperature
	}
	if maxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", maxTokens))
	}
	if temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *temperature))
	}
	x.span.SetAttributes(attrs...)
}

// endSpan records how the request ended and ends its span.
func (x *exchange) endSpan() {
	r := &x.rec
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, attribute.String(AttrRequestID, r.ID), attribute.Int("http.response.status_code", r.StatusCode),
		attribute.String(AttrCacheStatus, r.CacheStatus), attribute.Int(AttrRetryCount, r.RetryCount))
	str := func(key, v string) {
		if v != "" {
			attrs = append(attrs, attribute.String(key, v))
		}
	}
	provider := r.AIService
	if provider == "" && !strings.HasPrefix(r.Provider, "@") {
		provider = r.Provider
	}
	str("gen_ai.provider.name", genAIProvider(provider))
	str("gen_ai.response.model", x.responseModel)
	str(AttrWorkspaceID, r.WorkspaceID)
	str(AttrAPIKeyID, r.APIKeyID)
	str(AttrConfigID, r.ConfigID)
	if x.usageKnown {
		attrs = append(attrs, attribute.Int("gen_ai.usage.input_tokens", x.usage.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", x.usage.CompletionTokens))
	}
	if by := x.prov.RefusedBy; by != nil {
		str(AttrRefusedBy, by.String())
	}
	errType := x.errType
	if errType == "" && r.StatusCode >= 400 {
		errType = statusErrorType(r.StatusCode)
	}
	if errType != "" {
		attrs = append(attrs, attribute.String("error.type", errType))
		// A refusal of the client's request is the gateway working; a failure is a 5xx, or
		// the provider's own error answer.
		if r.StatusCode >= 500 || x.providerFailed {
			x.span.SetStatus(codes.Error, errType)
		}
	}
	x.span.SetAttributes(attrs...)
	x.span.End()
}

// statusErrorType is the error.type of an answer that failed with status and no error of its
// own to name: a stream cut off, denied or timed out after its first byte.
func statusErrorType(status int) string {
	switch status {
	case StatusClientClosed:
		return "client_closed"
	case StatusGuardrailDenied:
		return "guardrail_denied"
	case 408:
		return "timeout"
	}
	return strconv.Itoa(status)
}

// errorType is error.type for err: low-cardinality, and never a message (which may quote what
// the client sent): the provider's status, the class of a failure to reach it, the code of a
// refusal.
func errorType(err error) string {
	var (
		up      *providers.UpstreamError
		conn    *providers.ConnectionError
		te      *TimeoutError
		denied  *GuardrailDeniedError
		refused *RefusalError
		unsup   *UnsupportedError
		unknown *UnknownProviderError
		appErr  *domain.Error
	)
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &up):
		return strconv.Itoa(up.Status)
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &conn):
		if class, _ := conn.Class(); class != providers.FailureOther {
			return "connection_" + string(class)
		}
		return "connection_error"
	case errors.As(err, &denied):
		return "guardrail_denied"
	case errors.As(err, &refused):
		if refused.Err != nil && refused.Err.Detail != "" {
			return refused.Err.Detail
		}
		return "refused"
	case errors.As(err, &unsup):
		return "unsupported"
	case errors.As(err, &unknown):
		return "unknown_provider"
	case errors.As(err, &appErr):
		return string(appErr.Code)
	}
	return "_OTHER"
}

// failureReason says why a target failed, for its span: the provider's status, the class of
// failure, the refusal's decider; never a message that may quote what the client sent.
func failureReason(err error) string {
	var (
		up      *providers.UpstreamError
		conn    *providers.ConnectionError
		te      *TimeoutError
		denied  *GuardrailDeniedError
		refused *RefusalError
		unsup   *UnsupportedError
	)
	switch {
	case errors.As(err, &up):
		return "the provider answered " + strconv.Itoa(up.Status)
	case errors.As(err, &te):
		return te.Error()
	case errors.As(err, &conn):
		_, reason := conn.Class()
		return "the provider could not be reached: " + reason
	case errors.As(err, &denied):
		return "denied by " + denied.By.String()
	case errors.As(err, &refused):
		return "refused by " + refused.By.String()
	case errors.As(err, &unsup):
		return unsup.Error()
	}
	return errorType(err)
}

// genAIOperation is gen_ai.operation.name for an endpoint (a pass-through's by its path).
func genAIOperation(endpoint, path string) string {
	switch endpoint {
	case providers.EndpointChat:
		return "chat"
	case providers.EndpointCompletion:
		return "text_completion"
	case providers.EndpointEmbed:
		return "embeddings"
	case providers.EndpointRerank:
		return "rerank"
	case providers.EndpointPassThrough:
		switch {
		case strings.HasSuffix(path, "/chat/completions"), strings.HasSuffix(path, "/responses"), strings.HasSuffix(path, "/messages"):
			return "chat"
		case strings.HasSuffix(path, "/completions"):
			return "text_completion"
		case strings.HasSuffix(path, "/embeddings"):
			return "embeddings"
		}
		return "proxy"
	}
	return endpoint
}

// genAIProviders are the GenAI conventions' names of the providers they list; any other
// keeps Causeway's name.
var genAIProviders = map[string]string{
	"azure-openai": "azure.ai.openai", "google": "gcp.gemini", "vertex-ai": "gcp.vertex_ai", "mistral-ai": "mistral_ai",
	"bedrock": "aws.bedrock", "perplexity-ai": "perplexity", "x-ai": "x_ai",
}

func genAIProvider(name string) string {
	if n, ok := genAIProviders[name]; ok {
		return n
	}
	return name
}

// jsonModel is the top-level "model" an answer or a chunk names, found by a byte scan (the
// first "model" key of an OpenAI answer is its own); "" when there is none.
func jsonModel(b []byte) string {
	_, rest, ok := bytes.Cut(b, []byte(`"model":"`))
	if !ok {
		return ""
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || end > 256 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return ""
	}
	return string(rest[:end])
}

// childSpan starts an internal span under the request's, or answers a nil span when the
// request is not traced.
func (s *Service) childSpan(ctx context.Context, x *exchange, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if x.span == nil {
		return ctx, nil
	}
	return s.Tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// guardSpan starts the span of a guardrail hook; nil when the request is not traced.
func (s *Service) guardSpan(ctx context.Context, x *exchange, hook guardrails.Hook, leafPath string) (context.Context, trace.Span) {
	if x.span == nil {
		return ctx, nil
	}
	name := "guardrails before_request"
	if hook == guardrails.AfterRequest {
		name = "guardrails after_request"
	}
	attrs := []attribute.KeyValue{attribute.String(AttrGuardrailHook, string(hook))}
	if leafPath != "" {
		attrs = append(attrs, attribute.String(AttrTargetPath, leafPath))
	}
	return s.Tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// endGuardSpan records a hook's verdicts (ids, pass or fail, the checks that failed; never
// the text judged, nor an explanation, which may quote it) and ends its span.
func endGuardSpan(span trace.Span, res guardrails.HookResult) {
	if span == nil {
		return
	}
	ids := make([]string, 0, len(res.Guardrails))
	verdicts := make([]bool, 0, len(res.Guardrails))
	var failed []string
	transformed := false
	for _, g := range res.Guardrails {
		ids, verdicts = append(ids, g.ID), append(verdicts, g.Verdict)
		transformed = transformed || g.Transformed
		for _, c := range g.Checks {
			if !c.Verdict && !c.Cancelled {
				failed = append(failed, g.ID+"/"+c.ID)
			}
		}
	}
	attrs := []attribute.KeyValue{attribute.StringSlice(AttrGuardrailIDs, ids), attribute.BoolSlice(AttrGuardrailVerdicts, verdicts),
		attribute.Bool(AttrGuardrailDenied, res.Denied), attribute.Bool(AttrGuardrailTransformed, transformed)}
	if len(failed) > 0 {
		attrs = append(attrs, attribute.StringSlice(AttrGuardrailFailedChecks, failed))
	}
	if d := res.DeniedBy; d != nil {
		attrs = append(attrs, attribute.String(AttrGuardrailDeniedBy, d.Guardrail+"/"+d.Check))
	}
	span.SetAttributes(attrs...)
	span.End()
}

// serverAddress records the host and port a provider call connects to.
func serverAddress(span trace.Span, hostPort string) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		span.SetAttributes(attribute.String("server.address", hostPort))
		return
	}
	attrs := []attribute.KeyValue{attribute.String("server.address", host)}
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", p))
	}
	span.SetAttributes(attrs...)
}
