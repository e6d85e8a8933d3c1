package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/gateway/providers"
)

// attempt makes one provider call. It is timed, one clock read before and one after, into
// the Run's upstream time (a stream's and a pass-through answer's until they are read or
// closed). When the request has a trace context the call carries it to the provider
// (traceparent), and when the request is traced the call is a client span: its provider, the
// address it connected to, its attempt number and how it ended.
func (e *Engine) attempt(ctx context.Context, st *runState, a providers.Provider, t *providers.Target, call providers.Call, path string, n int) (Outcome, error) {
	var span trace.Span
	if st.propagate {
		if st.tracer != nil {
			ctx, span = e.startCall(ctx, st.tracer, t, &call, path, n)
		}
		h := call.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
		call.Header = h
	}
	c := upstreamCall{span: span, start: time.Now()}
	out, err := invoke(ctx, a, *t, call)
	switch {
	case err != nil:
		c.fail(err)
		st.upstream += c.elapsed
	case out.Stream != nil:
		c.status = http.StatusOK
		s := &upstreamStream{Stream: out.Stream, call: c}
		out.Stream, out.open = s, &s.call
	case out.Raw != nil:
		c.status = out.Raw.StatusCode
		b := &upstreamBody{ReadCloser: out.Raw.Body, call: c}
		out.Raw.Body, out.open = b, &b.call
	default:
		c.status = http.StatusOK
		if out.Response != nil && out.Response.Status != 0 {
			c.status = out.Response.Status
		}
		if span != nil && out.Response != nil {
			c.usage, c.model = &out.Response.Usage, jsonModel(out.Response.Body)
		}
		c.end()
		st.upstream += c.elapsed
	}
	return out, err
}

// startCall starts a provider call's client span, named as the GenAI conventions name it.
func (e *Engine) startCall(ctx context.Context, tracer trace.Tracer, t *providers.Target, call *providers.Call, path string, n int) (context.Context, trace.Span) {
	op := genAIOperation(call.Endpoint, call.Path)
	name := op
	attrs := []attribute.KeyValue{attribute.String("gen_ai.operation.name", op), attribute.String("gen_ai.provider.name", genAIProvider(t.Provider)),
		attribute.String(AttrTargetPath, path), attribute.Int(AttrRetryAttempt, n)}
	if call.Model != "" {
		name += " " + call.Model
		attrs = append(attrs, attribute.String("gen_ai.request.model", call.Model))
	}
	if host, port, ok := baseHost(t.BaseURL); ok {
		attrs = append(attrs, attribute.String("server.address", host), attribute.Int("server.port", port))
	}
	ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if t.BaseURL == "" {
		// The provider's default address is the adapter's to know: the transport says where
		// it connects.
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GetConn: func(hostPort string) { serverAddress(span, hostPort) }})
	}
	return ctx, span
}

// baseHost is the host and port of a base URL (a custom host, an admin's base URL), read
// without parsing the whole URL.
func baseHost(base string) (host string, port int, ok bool) {
	rest, port := base, 0
	switch {
	case strings.HasPrefix(rest, "https://"):
		rest, port = rest[len("https://"):], 443
	case strings.HasPrefix(rest, "http://"):
		rest, port = rest[len("http://"):], 80
	default:
		return "", 0, false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:] // never the credentials of a URL
	}
	if h, p, err := net.SplitHostPort(rest); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil {
			return "", 0, false
		}
		rest, port = h, n
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")
	return rest, port, rest != ""
}

// upstreamCall is one provider call until it ends.
type upstreamCall struct {
	span    trace.Span // nil: not traced
	start   time.Time
	elapsed time.Duration // how long it took, once it ended
	status  int
	usage   *providers.Usage
	model   string
	done    bool
}

// end times the call and ends its span, once.
func (c *upstreamCall) end() {
	if c.done {
		return
	}
	c.done = true
	c.elapsed = time.Since(c.start)
	if c.span == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	if c.status != 0 {
		attrs = append(attrs, attribute.Int("http.response.status_code", c.status))
	}
	if c.usage != nil {
		attrs = append(attrs, attribute.Int("gen_ai.usage.input_tokens", c.usage.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", c.usage.CompletionTokens))
	}
	if c.model != "" {
		attrs = append(attrs, attribute.String("gen_ai.response.model", c.model))
	}
	c.span.SetAttributes(attrs...)
	c.span.End()
}

// fail ends a call that failed: its status when the provider answered one, and the class of
// error.
func (c *upstreamCall) fail(err error) {
	if c.span != nil && !c.done {
		var up *providers.UpstreamError
		if errors.As(err, &up) {
			c.status = up.Status
		}
		typ := errorType(err)
		c.span.SetAttributes(attribute.String("error.type", typ))
		c.span.SetStatus(codes.Error, typ)
	}
	c.end()
}

// upstreamStream is a streamed answer: its call lasts until the stream ends or is closed.
type upstreamStream struct {
	providers.Stream
	call  upstreamCall
	first bool // the first chunk has been read
}

func (s *upstreamStream) Next() ([]byte, error) {
	chunk, err := s.Stream.Next()
	switch {
	case errors.Is(err, io.EOF):
		if s.call.span != nil {
			u := s.Stream.Usage()
			s.call.usage = &u
		}
		s.call.end()
	case err != nil:
		s.call.fail(err)
	case !s.first:
		s.first = true
		if s.call.span != nil {
			s.call.model = jsonModel(chunk)
		}
	}
	return chunk, err
}

func (s *upstreamStream) Close() error {
	s.call.end()
	return s.Stream.Close()
}

// upstreamBody is a pass-through answer: its call lasts until it is read or closed.
type upstreamBody struct {
	io.ReadCloser
	call upstreamCall
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.call.end()
	case err != nil:
		b.call.fail(err)
	}
	return n, err
}

func (b *upstreamBody) Close() error {
	b.call.end()
	return b.ReadCloser.Close()
}

// endTargetSpan ends a target's span, with why it failed when it did.
func endTargetSpan(span trace.Span, err error) {
	if err != nil {
		typ := errorType(err)
		span.SetAttributes(attribute.String("error.type", typ), attribute.String(AttrTargetFailure, failureReason(err)))
		span.SetStatus(codes.Error, typ)
	}
	span.End()
}
