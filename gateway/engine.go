package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/gateway/providers"
)

// Plan is how one request is served: a target (a leaf) or a strategy over nested plans. It is
// what a config, saved or inline, or the request's provider headers become.
type Plan struct {
	// Leaf: one provider target.
	Target *providers.Target

	// Node: single (the first target), fallback (in order, moving on when a target fails with
	// one of OnStatusCodes, or cannot be reached) or loadbalance (one target by weight).
	Mode          string
	OnStatusCodes []int
	Targets       []Plan

	Weight   float64
	Override map[string]any // override_params, inherited by nested plans unless they set the key
	Retry    Retry
	Timeout  time.Duration // request_timeout; zero: none beyond the client's
	// TimeoutFrom names what set Timeout, for the message when it runs out: the header
	// x-gateway-request-timeout, or a config's request_timeout.
	TimeoutFrom string

	// Admit, when set on a leaf, is asked once before the leaf is first tried, with its path:
	// the leaf's own limits and budgets (a managed provider's). A refusal moves a fallback on,
	// as an unreachable target does, and is the answer when no other target serves. Its
	// context carries the leaf's span (the request's deadline is the caller's to keep).
	Admit func(ctx context.Context, path string) error
}

// Retry retries a target on the given statuses (or when it cannot be reached), with
// exponential back-off that honours Retry-After.
type Retry struct {
	Attempts      int // retries after the first try, 0 to 5
	OnStatusCodes []int
}

// DefaultRetryStatuses are retried when a config names none.
var DefaultRetryStatuses = []int{429, 500, 502, 503, 504}

// Outcome is what served a request.
type Outcome struct {
	Response *providers.Response
	Stream   providers.Stream
	// Raw is a pass-through answer, to be copied to the client unchanged (its body is the
	// caller's to close).
	Raw    *http.Response
	Target providers.Target
	// Path names the target that served, as indexes down the plan ("1.0": the first target of
	// the second); it goes back in the x-gateway-target header.
	Path    string
	Retries int
	// Tried lists the paths that failed before Path, for the log's fallback record.
	Tried []string
	// release ends the request timeout's context; for a stream it must wait until the stream
	// is read, so the caller releases it (Close).
	release func()
	// upstream is the time the calls that ended before Run returned took; open is the call
	// still going on: a stream, or a pass-through answer, until it is read or closed.
	upstream time.Duration
	open     *upstreamCall
}

// UpstreamMS is the time the Run spent in provider calls, every attempt of every target, in
// milliseconds: until each answered, or, for a stream or a pass-through answer, until it was
// read to its end or closed.
func (o Outcome) UpstreamMS() float64 {
	d := o.upstream
	if o.open != nil {
		d += o.open.elapsed
	}
	return float64(d.Microseconds()) / 1000
}

// Close releases what the outcome holds: its stream, and its timeout.
func (o Outcome) Close() {
	if o.Stream != nil {
		_ = o.Stream.Close()
	}
	if o.Raw != nil {
		_ = o.Raw.Body.Close()
	}
	if o.release != nil {
		o.release()
	}
}

// Engine runs plans against provider adapters.
type Engine struct {
	Providers *providers.Registry
	// Sleep waits between retries (tests make it instant).
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxBackoff caps a retry's wait, Retry-After included.
	MaxBackoff time.Duration
}

func (e *Engine) sleep(ctx context.Context, d time.Duration) error {
	if e.Sleep != nil {
		return e.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Run serves call by plan. When ctx carries a recording span, each target a strategy tries
// and each provider call is a span beneath it (tracing.go).
func (e *Engine) Run(ctx context.Context, p Plan, call providers.Call) (Outcome, error) {
	var st runState // on the stack: no call keeps it
	if sc := trace.SpanFromContext(ctx); sc.SpanContext().IsValid() {
		st.propagate = true
		if sc.IsRecording() {
			st.tracer = sc.TracerProvider().Tracer(TraceScope)
		}
	}
	out, err := e.run(ctx, p, call, nil, "0", &st)
	out.Tried, out.upstream = st.tried, st.upstream
	return out, err
}

// runState is what one Run gathers as it goes.
type runState struct {
	tried    []string      // the paths that failed before the one that served
	upstream time.Duration // spent in provider calls
	// propagate: the request has a trace context, which provider calls carry (traceparent);
	// tracer, when set, records their spans.
	propagate bool
	tracer    trace.Tracer
}

func (e *Engine) run(ctx context.Context, p Plan, call providers.Call, inherited map[string]any, path string, st *runState) (Outcome, error) {
	override := mergeOverrides(inherited, p.Override)
	if p.Timeout > 0 {
		tctx, cancel := context.WithTimeoutCause(ctx, p.Timeout, &TimeoutError{Timeout: p.Timeout, From: p.TimeoutFrom})
		out, err := e.runWithin(tctx, p, call, override, path, st)
		if err != nil || (out.Stream == nil && out.Raw == nil) {
			cancel()
			return out, timedOut(tctx, err)
		}
		// A stream, or a pass-through answer, is read after Run returns: the timeout covers
		// it whole, released by Close.
		if out.Stream != nil {
			out.Stream = &timedStream{Stream: out.Stream, ctx: tctx}
		}
		if out.Raw != nil {
			out.Raw.Body = &timedBody{ReadCloser: out.Raw.Body, ctx: tctx}
		}
		inner := out.release
		out.release = func() {
			if inner != nil {
				inner()
			}
			cancel()
		}
		return out, nil
	}
	return e.runWithin(ctx, p, call, override, path, st)
}

func (e *Engine) runWithin(ctx context.Context, p Plan, call providers.Call, override map[string]any, path string, st *runState) (Outcome, error) {
	if p.Target != nil {
		return e.leaf(ctx, p, call, override, path, st)
	}
	if len(p.Targets) == 0 {
		return Outcome{}, fmt.Errorf("gateway: the plan at %s has no targets", path)
	}
	switch p.Mode {
	case "loadbalance":
		i := pickWeighted(p.Targets)
		return e.run(ctx, p.Targets[i], call, override, path+"."+strconv.Itoa(i), st)
	case "fallback":
		var last error
		for i, t := range p.Targets {
			sub := path + "." + strconv.Itoa(i)
			out, err := e.run(ctx, t, call, override, sub, st)
			if err == nil {
				return out, nil
			}
			last = err
			if ctx.Err() != nil || !fallsBack(err, p.OnStatusCodes) {
				return out, err
			}
			st.tried = append(st.tried, sub)
		}
		return Outcome{}, last
	}
	return e.run(ctx, p.Targets[0], call, override, path+".0", st)
}

// leaf calls one target, retrying as its plan says. A target below a strategy is a span of
// its own (named by its path) when the request is traced, with why it failed.
func (e *Engine) leaf(ctx context.Context, p Plan, call providers.Call, override map[string]any, path string, st *runState) (out Outcome, err error) {
	if st.tracer != nil && path != "0" {
		var span trace.Span
		ctx, span = st.tracer.Start(ctx, "target "+path, trace.WithAttributes(attribute.String(AttrTargetPath, path),
			attribute.String("gen_ai.provider.name", genAIProvider(p.Target.Provider))))
		defer func() { endTargetSpan(span, err) }()
	}
	adapter, ok := e.Providers.Get(p.Target.Provider)
	if !ok {
		return Outcome{}, &UnknownProviderError{Provider: p.Target.Provider}
	}
	if p.Admit != nil {
		if err := p.Admit(ctx, path); err != nil {
			return Outcome{Path: path, Target: *p.Target}, err
		}
	}
	if len(override) > 0 {
		// The parsed request is overridden, and the body with it, changed only where the
		// config says; a model override becomes the call's model.
		overridden, err := call.WithOverrides(override)
		if err != nil {
			return Outcome{}, err
		}
		call = overridden
	}
	statuses := p.Retry.OnStatusCodes
	if len(statuses) == 0 {
		statuses = DefaultRetryStatuses
	}
	backoff := 250 * time.Millisecond
	for attempt := 0; ; attempt++ {
		out, err := e.attempt(ctx, st, adapter, p.Target, call, path, attempt)
		if err == nil {
			out.Path, out.Retries, out.Target = path, attempt, *p.Target
			return out, nil
		}
		if attempt >= p.Retry.Attempts || ctx.Err() != nil || !retriable(err, statuses) {
			return Outcome{Path: path, Retries: attempt, Target: *p.Target}, err
		}
		wait := backoff
		var up *providers.UpstreamError
		if errors.As(err, &up) && up.RetryAfter > 0 {
			wait = up.RetryAfter
		}
		if e.MaxBackoff > 0 && wait > e.MaxBackoff {
			wait = e.MaxBackoff
		}
		if err := e.sleep(ctx, wait); err != nil {
			return Outcome{Path: path, Retries: attempt, Target: *p.Target}, err
		}
		backoff *= 2
	}
}

// invoke calls the adapter capability the endpoint needs.
func invoke(ctx context.Context, a providers.Provider, t providers.Target, c providers.Call) (Outcome, error) {
	var (
		resp *providers.Response
		err  error
	)
	switch c.Endpoint {
	case providers.EndpointChat:
		if c.Stream {
			s, ok := a.(providers.ChatStreamer)
			if !ok {
				return Outcome{}, &UnsupportedError{Provider: a.Name(), What: "streamed chat completions"}
			}
			st, err := s.ChatStream(ctx, t, c)
			return Outcome{Stream: st}, err
		}
		resp, err = a.Chat(ctx, t, c)
	case providers.EndpointCompletion:
		if c.Stream {
			s, ok := a.(providers.CompletionStreamer)
			if !ok {
				return Outcome{}, &UnsupportedError{Provider: a.Name(), What: "streamed completions"}
			}
			st, err := s.CompleteStream(ctx, t, c)
			return Outcome{Stream: st}, err
		}
		cp, ok := a.(providers.Completer)
		if !ok {
			return Outcome{}, &UnsupportedError{Provider: a.Name(), What: "completions"}
		}
		resp, err = cp.Complete(ctx, t, c)
	case providers.EndpointEmbed:
		em, ok := a.(providers.Embedder)
		if !ok {
			return Outcome{}, &UnsupportedError{Provider: a.Name(), What: "embeddings"}
		}
		resp, err = em.Embed(ctx, t, c)
	case providers.EndpointRerank:
		rr, ok := a.(providers.Reranker)
		if !ok {
			return Outcome{}, &UnsupportedError{Provider: a.Name(), What: "rerank"}
		}
		resp, err = rr.Rerank(ctx, t, c)
	case providers.EndpointPassThrough:
		return passThrough(ctx, a, t, c)
	default:
		return Outcome{}, &UnsupportedError{Provider: a.Name(), What: c.Endpoint}
	}
	return Outcome{Response: resp}, err
}

// maxBufferedError bounds the error answer of a pass-through that is held for a retry or a
// fallback to act on; a longer one is passed to the client as it comes.
const maxBufferedError = 1 << 20

// passThrough forwards a call unchanged. An answer with an error status is read whole (up to
// maxBufferedError) into a RawUpstreamError, so that retries and fallbacks act on its status
// as on any other call's, and the client gets it unchanged when they don't.
func passThrough(ctx context.Context, a providers.Provider, t providers.Target, c providers.Call) (Outcome, error) {
	pt, ok := a.(providers.PassThrougher)
	if !ok {
		return Outcome{}, &UnsupportedError{Provider: a.Name(), What: "pass-through"}
	}
	resp, err := pt.PassThrough(ctx, t, c)
	if err != nil {
		return Outcome{}, err
	}
	if resp.StatusCode < 400 {
		return Outcome{Raw: resp}, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBufferedError+1))
	if rerr != nil || len(body) > maxBufferedError {
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		return Outcome{Raw: resp}, nil
	}
	_ = resp.Body.Close()
	up := providers.UpstreamError{Status: resp.StatusCode, Body: body, Provider: a.Name(), RetryAfter: retryAfter(resp.Header)}
	return Outcome{}, &RawUpstreamError{Upstream: up, Header: resp.Header}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// retriable: a status the retry names, or a provider that could not be reached.
func retriable(err error, statuses []int) bool {
	var up *providers.UpstreamError
	if errors.As(err, &up) {
		return slices.Contains(statuses, up.Status)
	}
	var conn *providers.ConnectionError
	return errors.As(err, &conn)
}

// fallsBack: a fallback moves on from a target that failed with one of on (every error status
// when on is empty), or could not be reached, or does not support the call.
func fallsBack(err error, on []int) bool {
	var up *providers.UpstreamError
	if errors.As(err, &up) {
		return len(on) == 0 || slices.Contains(on, up.Status)
	}
	var conn *providers.ConnectionError
	var unsupported *UnsupportedError
	var refused *RefusalError
	var denied *GuardrailDeniedError
	return errors.As(err, &conn) || errors.As(err, &unsupported) || errors.As(err, &refused) || errors.As(err, &denied)
}

func pickWeighted(targets []Plan) int {
	total := 0.0
	for _, t := range targets {
		total += max(t.Weight, 0)
	}
	if total <= 0 {
		return rand.IntN(len(targets))
	}
	r := rand.Float64() * total
	for i, t := range targets {
		r -= max(t.Weight, 0)
		if r < 0 {
			return i
		}
	}
	return len(targets) - 1
}

// mergeOverrides: a nested plan inherits its parents' override_params unless it sets the key.
func mergeOverrides(parent, own map[string]any) map[string]any {
	if len(parent) == 0 {
		return own
	}
	out := make(map[string]any, len(parent)+len(own))
	for k, v := range parent {
		out[k] = v
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}

// TimeoutError is a request timeout that ran out: how long it was and what set it. It wraps
// the failure the timeout caused, so fallbacks and retries still see a provider that could
// not answer.
type TimeoutError struct {
	Timeout time.Duration
	From    string // x-gateway-request-timeout, or the config's request_timeout
	Err     error
}

// Error says which timeout ran out: "the request timeout of 2s (x-gateway-request-timeout)
// ran out".
func (e *TimeoutError) Error() string {
	msg := "the request timeout of " + e.Timeout.String()
	if e.From != "" {
		msg += " (" + e.From + ")"
	}
	return msg + " ran out"
}

func (e *TimeoutError) Unwrap() error {
	if e.Err == nil {
		return context.DeadlineExceeded
	}
	return e.Err
}

// timedOut names the timeout in err when ctx ended by its own timeout (not the client's
// cancellation, nor an outer timeout, which names itself).
func timedOut(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	var te *TimeoutError
	if !errors.As(context.Cause(ctx), &te) {
		return err
	}
	var already *TimeoutError
	if errors.As(err, &already) && already.Timeout == te.Timeout && already.From == te.From {
		return err
	}
	return &TimeoutError{Timeout: te.Timeout, From: te.From, Err: err}
}

// timedStream is a stream under a request timeout: a read that fails because the timeout ran
// out says so (a *TimeoutError), instead of "context deadline exceeded".
type timedStream struct {
	providers.Stream
	ctx context.Context
}

func (s *timedStream) Next() ([]byte, error) {
	chunk, err := s.Stream.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		err = timedOut(s.ctx, err)
	}
	return chunk, err
}

// timedBody is a pass-through answer under a request timeout, which says so when it runs out
// mid-answer.
type timedBody struct {
	io.ReadCloser
	ctx context.Context
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = timedOut(b.ctx, err)
	}
	return n, err
}

// UnknownProviderError: a plan names a provider no adapter serves.
type UnknownProviderError struct{ Provider string }

func (e *UnknownProviderError) Error() string {
	return fmt.Sprintf("provider %q is not supported", e.Provider)
}

// UnsupportedError: the provider cannot serve this kind of call.
type UnsupportedError struct{ Provider, What string }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("provider %s does not support %s", e.Provider, e.What)
}
