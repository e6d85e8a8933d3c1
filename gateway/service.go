package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/sse"
	"github.com/causeway/causeway/guardrails"
	"github.com/causeway/causeway/ledger"
)

// RoutingIndex resolves a presented key, by its hash, to everything the pipeline decides the
// request by. Index implements it from memory.
type RoutingIndex interface {
	Route(hash string) (Route, bool)
}

// UsageLedger holds the budgets' counters in memory: a request reserves its worst case before
// the provider is called and settles to what it used (ledger.Ledger).
type UsageLedger interface {
	Reserve(budgets []ledger.Budget, worst ledger.Amount) (*ledger.Reservation, *ledger.Refusal)
}

// PriceBook prices a provider's model in USD, without waiting for the network.
type PriceBook interface {
	UsageCost(orgID, workspaceID, provider, model string, u providers.Usage) float64
}

// Service is the data plane: one pipeline that every route goes through, chat, completions,
// embeddings, rerank and pass-through alike. It authenticates and authorises the key,
// checks rate limits and budgets, resolves the plan (configs, managed providers,
// credentials, egress), runs it, charges usage and logs. It reads only memory: the routing
// index, the provider directory and the usage ledger, declared here and wired by cmd.
type Service struct {
	Index     RoutingIndex
	Directory ProviderDirectory
	Opener    CredentialOpener
	Engine    *Engine
	Limiter   *Limiter
	Ledger    UsageLedger // nil: budgets are not charged
	Prices    PriceBook   // nil: no cost is computed
	Logs      analytics.LogSink
	// Cache is the answer cache; nil: no request is cached, whatever its config says.
	Cache *Cache
	// Guardrails runs the guardrails of workspaces and configs; nil (GUARDRAILS_ENABLED=OFF):
	// none runs.
	Guardrails *Guardrails
	Egress     URLGuard
	// CustomHostClient carries requests to custom hosts and admins' base URLs: its dialer
	// checks every address it connects to, and every redirect, again.
	CustomHostClient *http.Client
	Now              func() time.Time
	// MaxBody bounds a request body; a larger one gets a 413 before it is read.
	MaxBody int64
	// DefaultMaxTokens is the answer length a budget reserves for a request that sets no
	// output limit (DefaultMaxTokens when zero).
	DefaultMaxTokens int
	// Organisation is the deployment's organisation: a request refused before its key
	// resolves (missing, unknown, expired) is logged under it.
	Organisation string
	// Tracer traces each request (tracing.go): the OpenTelemetry API's, which cmd backs with
	// the SDK. nil: nothing is traced, at the cost of a nil check per step.
	Tracer trace.Tracer
}

// DefaultMaxTokens is the output a budget reserves for when a request names no limit: what
// most current models answer at most by default.
const DefaultMaxTokens = 4096

// Request is one data-plane request as the transport read it.
type Request struct {
	Endpoint string // providers.Endpoint*
	Method   string
	// Path is the path after the base path (/chat/completions, /responses, ...).
	Path          string
	Query         string
	Header        http.Header
	Body          io.Reader
	ContentLength int64
	TraceID       string
	// Prompt is the prompt a prompt completion names (its id or slug, and @version): the
	// body is its variables and overrides, rendered into a chat body (prompts.go).
	Prompt string
}

// Reply is how the service answers: the transport's writer, which it flushes chunk by chunk,
// and the transport's error shape (Error answers err and returns the status it used).
type Reply interface {
	http.ResponseWriter
	http.Flusher
	Error(err error) int
}

// exchange is one request in flight.
type exchange struct {
	in    Request
	rec   analytics.LogRecord
	start time.Time

	route    Route
	actor    domain.Actor
	hash     string
	metadata map[string]string
	limits   []Limit
	tokens   int // the prompt's estimated tokens
	output   int // the most output tokens the request may produce
	model    string

	reservation *ledger.Reservation
	leaves      map[string]*leafAdmission // by plan path
	leafModels  map[string]string         // the model each leaf calls, by plan path
	served      string                    // the path of the leaf that served
	usage       providers.Usage
	usageKnown  bool
	prov        analytics.Provenance

	cache           *cacheLookup // nil: the request is not cached
	embedding       *embedCall   // the semantic lookup's embedding call; nil: none was made
	cachedLatencyMS float64      // a hit's: how long the answer it replays took

	guards *guardrailSet           // nil: no guardrail applies
	hooks  []guardrails.HookResult // what the guardrails decided so far
	// hooksJSON is hooks encoded as hook_results, for the first hooksEncoded of them.
	hooksJSON    json.RawMessage
	hooksEncoded int

	span           trace.Span // the request's server span; nil: not traced
	responseModel  string     // the model the answer names, for the span
	errType        string     // the span's error.type, when an error ended the request
	providerFailed bool       // the provider answered the error
}

// leafAdmission is what a leaf of the plan took before it was tried: its own rate limits and
// budgets (a managed provider's, an integration's in this workspace).
type leafAdmission struct {
	target      *providers.Target
	provider    string // the managed provider, as @slug
	limits      []Limit
	reservation *ledger.Reservation
}

// newRequestID is a request log's id: a UUIDv7, whose time order keeps the log stores' inserts
// at the end of their id indexes instead of scattered over them.
func newRequestID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}

// Serve runs one request through the pipeline and answers it on out.
func (s *Service) Serve(ctx context.Context, in Request, out Reply) {
	now := s.Now()
	x := &exchange{in: in, start: now, leaves: map[string]*leafAdmission{}, rec: analytics.LogRecord{
		// The deployment's organisation until the key resolves: a request refused before then
		// (a method pass-through does not take, an unknown key) is still its organisation's.
		ID: newRequestID(), OrganisationID: s.Organisation, TraceID: in.TraceID, SpanID: header(in.Header, HeaderSpanID),
		ParentSpanID: header(in.Header, HeaderParentSpanID), SpanName: header(in.Header, HeaderSpanName),
		Endpoint: in.Endpoint, Method: in.Method, Path: in.Path, StartedAt: now, LogFormat: "v1", CacheStatus: "DISABLED",
	}}
	if s.Tracer != nil {
		ctx = s.startSpan(ctx, x)
	}
	status, err := s.serve(ctx, x, out)
	if err != nil {
		if x.span != nil {
			var up *providers.UpstreamError
			x.errType, x.providerFailed = errorType(err), errors.As(err, &up)
			if clientGone(ctx) {
				x.errType = "client_closed"
			}
		}
		status = s.fail(ctx, out, x, err)
	}
	x.rec.StatusCode = status
	s.finish(x)
	if x.span != nil {
		x.endSpan()
	}
}

func (s *Service) serve(ctx context.Context, x *exchange, out Reply) (int, error) {
	if x.in.Endpoint == providers.EndpointPassThrough {
		switch x.in.Method {
		case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
		default:
			return 0, domain.Errorf(domain.CodeNotAllowed, "method %s is not passed through; use GET, POST, PUT or DELETE", x.in.Method)
		}
	}
	if err := s.authenticate(x); err != nil {
		return 0, err
	}
	body, err := openai.ReadBody(x.in.Body, x.in.ContentLength, s.MaxBody)
	if err != nil {
		return 0, err
	}
	if x.in.Prompt != "" {
		if body, err = s.renderPromptCall(x, body); err != nil {
			return 0, err
		}
	}
	call, err := s.parse(x, body)
	if x.span != nil {
		x.spanRequest(&call)
	}
	if err != nil {
		return 0, err
	}
	if x.metadata, err = parseMetadata(x.in.Header, &x.route.Key); err != nil {
		return 0, err
	}
	x.rec.Metadata = x.metadata
	if err := s.rateLimit(x, out); err != nil {
		return 0, err
	}
	res, err := s.resolve(x)
	x.rec.Provider, x.rec.ConfigID = res.provider, res.configID
	if res.configID != "" {
		x.prov.Config = &analytics.Decider{Kind: "config", ID: res.configID, VersionID: res.configVersion}
	}
	if err != nil {
		return 0, err
	}
	timeout, err := requestTimeout(x.in.Header)
	if err != nil {
		return 0, err
	}
	if timeout > 0 {
		res.plan.Timeout, res.plan.TimeoutFrom = timeout, HeaderRequestTimeout
	}
	call.Header = forwardHeaders(x.in.Header, append(forwardHeaderNames(x.in.Header), res.forward...))
	if x.in.Endpoint == providers.EndpointPassThrough {
		call.Header = withPassHeaders(call.Header, x.in.Header)
	}
	if err := s.reserve(x, &res); err != nil {
		return 0, err
	}
	if err := s.resolveGuardrails(x, &res); err != nil {
		return 0, err
	}
	if err := s.beforeHook(ctx, x, &call, planProvider(&res.plan)); err != nil {
		return 0, err
	}
	s.guardLeaves(ctx, x, &res.plan, call, "0")
	hit, cacheStatus, err := s.lookupCache(ctx, x, &res, call)
	if err != nil {
		return 0, err
	}
	x.rec.CacheStatus = cacheStatus
	out.Header().Set(HeaderCacheStatus, cacheStatus)
	if hit != nil {
		return s.answerCached(ctx, x, out, hit, call)
	}
	out.Header().Set("Content-Type", "application/json")
	run, err := s.Engine.Run(ctx, res.plan, call)
	defer func() {
		run.Close() // a stream's provider call ends here, and its time with it
		x.rec.UpstreamMS += run.UpstreamMS()
	}()
	x.served = run.Path
	x.rec.AIService, x.rec.Target, x.rec.RetryCount = run.Target.Provider, run.Path, run.Retries
	if a := x.leaves[run.Path]; a != nil {
		x.rec.Provider = a.provider // a config's target: the managed provider that served
	}
	if len(run.Tried) > 0 {
		x.rec.FallbackTarget = run.Path
	}
	if err != nil {
		return 0, err
	}
	out.Header().Set(HeaderTarget, run.Path)
	out.Header().Set(HeaderRetries, strconv.Itoa(run.Retries))
	if x.prov.Config != nil {
		out.Header().Set(HeaderDecidedBy, x.prov.Config.String())
	}
	switch {
	case run.Raw != nil:
		return s.relay(ctx, x, out, run.Raw)
	case run.Stream != nil:
		return s.stream(ctx, x, out, run.Stream, call, run.Target.Provider)
	}
	resp := run.Response
	x.usage, x.usageKnown = resp.Usage, true
	if x.span != nil {
		x.responseModel = jsonModel(resp.Body)
	}
	if len(resp.Body) <= maxLoggedBody && json.Valid(resp.Body) {
		x.rec.ResponseBody, x.rec.ResponseBodyEncoding = loggedBody(resp.Body) // the provider's answer: no client credential in it
	}
	for _, h := range []string{"openai-processing-ms", "x-request-id", "request-id"} {
		if v := resp.Header.Get(h); v != "" {
			out.Header().Set(h, v)
		}
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	answer, err := s.afterHook(ctx, x, call, run.Target.Provider, resp.Body)
	if err != nil {
		return 0, err
	}
	if status == http.StatusOK {
		x.keepAnswer(answer)
	}
	out.WriteHeader(status)
	_, _ = out.Write(withHookResults(answer, x.hookResults()))
	return status, nil
}

// authenticate resolves the gateway key from the routing index and refuses keys that may not
// call models: unknown, expired, deleted, of an archived workspace, exhausted, or without the
// scope completions.write.
func (s *Service) authenticate(x *exchange) error {
	route, hash, err := s.keyRoute(x.in.Header)
	if err != nil {
		return err
	}
	now := s.Now()
	x.hash, x.route, x.actor = hash, route, route.Actor
	x.rec.OrganisationID, x.rec.WorkspaceID, x.rec.APIKeyID = route.Key.OrganisationID, route.Key.WorkspaceID, route.Key.ID
	if route.ActorErr != nil {
		return route.ActorErr
	}
	if route.Key.StatusAt(now) == domain.KeyExhausted {
		return s.budgetState(ledger.KindAPIKey, route.Key.ID, "", route.KeyVersion, "this API key's usage limit is exhausted")
	}
	if !x.actor.HasScope("completions.write") {
		return domain.Errorf(domain.CodeForbidden, "this API key lacks the scope completions.write")
	}
	if ws := route.Workspace; ws != nil && ws.BudgetExhausted {
		return s.budgetState(ledger.KindWorkspace, ws.ID, ws.ExhaustedLimit, route.WorkspaceVersion,
			fmt.Sprintf("this workspace's %s budget is exhausted", ws.ExhaustedLimit))
	}
	return nil
}

// keyRoute finds the presented key in the routing index, by its hash, and refuses a key that
// is missing, unknown, expired or revoked.
func (s *Service) keyRoute(h http.Header) (Route, string, error) {
	presented, err := PresentedKey(h)
	if err != nil {
		return Route{}, "", err
	}
	if presented == "" {
		return Route{}, "", domain.Errorf(domain.CodeUnauthorized, "missing %s header", HeaderAPIKey)
	}
	hash := domain.HashKey(presented)
	route, ok := s.Index.Route(hash)
	if !ok {
		return Route{}, "", domain.Errorf(domain.CodeUnauthorized, "invalid API key")
	}
	if accepted, reason := route.Key.Accepts(hash, s.Now()); !accepted {
		if reason == "expired" {
			return Route{}, "", domain.Errorf(domain.CodeUnauthorized, "this API key has expired")
		}
		return Route{}, "", domain.Errorf(domain.CodeUnauthorized, "invalid API key")
	}
	return route, hash, nil
}

// budgetState refuses a request because a budget's recorded state is exhausted.
func (s *Service) budgetState(kind ledger.Kind, id, sub string, version uint64, msg string) error {
	d := analytics.Decider{Kind: string(kind), ID: id, Sub: sub, Version: version}
	return &RefusalError{By: d, Err: &domain.Error{Code: domain.CodeForbidden, Detail: "budget_exhausted",
		Message: msg + " (" + d.String() + ")"}}
}

// parse validates the body once, by endpoint, into the call the engine runs, and works out
// what the budgets reserve: the prompt's estimated tokens and the most the answer may hold.
func (s *Service) parse(x *exchange, body []byte) (providers.Call, error) {
	call := providers.Call{Endpoint: x.in.Endpoint, Body: body}
	// The body is logged as sent (credentials redacted), refused or not: a 400 is easier to
	// understand beside what was sent. A pass-through body that is not JSON is not kept.
	if x.in.Endpoint != providers.EndpointPassThrough || json.Valid(body) {
		x.rec.RequestBody, x.rec.RequestBodyEncoding = loggedBody(redactBody(body))
	}
	maxOut := s.DefaultMaxTokens
	if maxOut <= 0 {
		maxOut = DefaultMaxTokens
	}
	switch x.in.Endpoint {
	case providers.EndpointChat:
		c, err := openai.ParseChat(body)
		if err != nil {
			return call, err
		}
		call.Chat, call.Model, call.Stream = c, c.Model, c.Stream
		x.tokens = openai.EstimateTokens(c)
		limit := c.OutputLimit()
		if limit <= 0 {
			limit = maxOut
		}
		x.output = limit * max(c.N, 1)
	case providers.EndpointCompletion:
		c, err := openai.ParseCompletion(body)
		if err != nil {
			return call, err
		}
		call.Completion, call.Model, call.Stream = c, c.Model, c.Stream
		x.tokens = openai.EstimateCompletionTokens(c)
		x.output = max(c.MaxTokens, 0) * max(c.N, 1) * max(c.BestOf, 1)
	case providers.EndpointEmbed:
		e, err := openai.ParseEmbedding(body)
		if err != nil {
			return call, err
		}
		call.Embedding, call.Model, x.tokens = e, e.Model, openai.EstimateEmbeddingTokens(e)
	case providers.EndpointRerank:
		e, err := openai.ParseRerank(body)
		if err != nil {
			return call, err
		}
		call.Rerank, call.Model, x.tokens = e, e.Model, openai.EstimateRerankTokens(e)
	case providers.EndpointPassThrough:
		call.Path, call.Method, call.Query = x.in.Path, x.in.Method, x.in.Query
		probe := probePassThrough(x.in.Header, body, x.in.Path, maxOut)
		call.Model, call.Stream, x.tokens, x.output = probe.model, probe.stream, probe.tokens, probe.output
	}
	x.model = call.Model
	x.rec.Model, x.rec.Stream = call.Model, call.Stream
	return call, nil
}

// maxLoggedBody bounds the bodies a log row keeps.
const maxLoggedBody = 1 << 20

// loggedBody is how a body is kept in the log: as the JSON it is, or, when its bytes are not
// valid UTF-8 (which JSON parsers refuse), as a JSON string of their base64, marked "base64".
func loggedBody(b []byte) (json.RawMessage, string) {
	if len(b) == 0 || len(b) > maxLoggedBody {
		return nil, ""
	}
	if utf8.Valid(b) {
		return b, ""
	}
	enc, _ := json.Marshal(base64.StdEncoding.EncodeToString(b))
	return enc, "base64"
}

// rateLimit checks every rate limit that applies at the request's level: the key's, its
// workspace's, and the policies of the workspace whose conditions the request meets. The
// limits of a managed provider and its integration are checked when that target is tried.
func (s *Service) rateLimit(x *exchange, out Reply) error {
	k := &x.route.Key
	x.limits = OwnLimits("api_key", k.ID, x.route.KeyVersion, k.RateLimits)
	if ws := x.route.Workspace; ws != nil {
		x.limits = append(x.limits, OwnLimits("workspace", ws.ID, x.route.WorkspaceVersion, ws.RateLimits)...)
		x.limits = append(x.limits, PolicyLimits(x.route.RatePolicies, x.facts())...)
	}
	d := s.Limiter.Allow(x.limits)
	now := s.Now()
	writeLimitHeaders(out.Header(), d, now)
	if d.Allowed {
		return nil
	}
	x.prov.RefusedBy = &d.Limit.By
	return &RefusalError{By: d.Limit.By, Err: &domain.Error{Code: domain.CodeRateLimited, Detail: "rate_limit_exceeded",
		Message: d.Refusal(now, "")}}
}

func (x *exchange) facts() RequestFacts {
	return RequestFacts{OrganisationID: x.route.Key.OrganisationID, WorkspaceID: x.route.Key.WorkspaceID,
		APIKeyID: x.route.Key.ID, EndpointType: x.in.Endpoint, Metadata: x.metadata}
}

func writeLimitHeaders(h http.Header, d Decision, now time.Time) {
	if d.Limit.Bucket == "" {
		return
	}
	h.Set("x-ratelimit-limit", strconv.FormatFloat(d.Limit.Value, 'f', -1, 64))
	h.Set("x-ratelimit-remaining", strconv.FormatFloat(d.Remaining, 'f', -1, 64))
	h.Set("x-ratelimit-reset", strconv.FormatInt(d.Reset.Unix(), 10))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(int(d.RetryAfter(now).Seconds())))
		h.Set(HeaderDecidedBy, d.Limit.By.String())
	}
}

// stream copies a streamed answer chunk by chunk, flushing each. A client that goes away
// cancels the request's context, which the provider call carries, so the upstream call ends
// too; what the stream used is charged all the same. A failure after the first byte ends the
// stream with an error event, never in silence, and is not retried.
func (s *Service) stream(ctx context.Context, x *exchange, out Reply, st providers.Stream, call providers.Call, provider string) (int, error) {
	guard, err := s.startStreamGuard(ctx, x, call, provider)
	if err != nil {
		return 0, err
	}
	if guard != nil {
		defer guard.close()
	}
	sw := sse.NewWriter(out)
	out.WriteHeader(http.StatusOK)
	first := true
	var delivered deliveredText
	defer func() { x.usage, x.usageKnown = streamUsage(st.Usage(), x.tokens, delivered.n) }()
	for {
		chunk, err := st.Next()
		if errors.Is(err, io.EOF) {
			if guard != nil {
				if err := guard.finish(ctx, x); err != nil {
					return streamDenied(x, sw, err), nil
				}
			}
			_ = sw.Done()
			x.keepStream(st.Usage())
			return http.StatusOK, nil
		}
		if err != nil {
			return s.streamFailed(ctx, x, sw, err), nil
		}
		if guard != nil {
			if err := guard.chunk(ctx, x, chunk); err != nil {
				return streamDenied(x, sw, err), nil
			}
		}
		if first {
			x.rec.TTFTMS = float64(s.Now().Sub(x.start).Microseconds()) / 1000
			first = false
			if x.span != nil {
				x.responseModel = jsonModel(chunk)
			}
		}
		if err := sw.Data(chunk); err != nil {
			x.rec.Error = "client closed the stream"
			return StatusClientClosed, nil
		}
		delivered.add(chunk)
		if x.cache != nil && x.cache.acc != nil {
			x.cache.accumulate(chunk)
		}
	}
}

// streamDenied ends a stream a guardrail denied with an error event naming it (no [DONE]:
// the answer is not complete), and returns the status its log records.
func streamDenied(x *exchange, sw *sse.Writer, err error) int {
	x.rec.Error = err.Error()
	var denied *GuardrailDeniedError
	if errors.As(err, &denied) {
		by := denied.By
		x.prov.RefusedBy = &by
	}
	x.cache = nil // a denied answer is never cached
	_ = sw.Data(streamError(err.Error(), "guardrail_error", "guardrail_denied"))
	return StatusGuardrailDenied
}

// StatusClientClosed is the status a request's log records when its client went away before
// the answer was complete (nginx's 499: client closed request). No client ever sees it.
const StatusClientClosed = 499

// clientGone: the client closed the request (its context was cancelled, not timed out).
func clientGone(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }

// streamFailed ends a stream that failed after its first byte with an error event saying
// why (the headers, and a 200, are gone already), and returns the status its log records: a
// client that left (499), the request timeout (408, naming it), the provider's own error
// event (passed on, marked as the provider's), or a connection that broke (502).
func (s *Service) streamFailed(ctx context.Context, x *exchange, sw *sse.Writer, err error) int {
	if clientGone(ctx) {
		x.rec.Error = "client closed the stream"
		return StatusClientClosed
	}
	var te *TimeoutError
	if errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) {
		msg := "the request timed out while streaming"
		if te != nil {
			msg = te.Error() + " while streaming"
		}
		x.rec.Error = msg
		_ = sw.Data(streamError(msg, "timeout_error", "request_timeout"))
		return http.StatusRequestTimeout
	}
	var up *providers.UpstreamError
	if errors.As(err, &up) {
		x.rec.Error = "the provider failed mid-stream: " + err.Error()
		_ = sw.Data(up.AnswerBody())
		return http.StatusBadGateway
	}
	msg := "the provider's stream failed"
	var conn *providers.ConnectionError
	if errors.As(err, &conn) {
		_, reason := conn.Class()
		msg = "the stream from " + conn.Provider + " broke off: " + reason
	}
	x.rec.Error = msg
	_ = sw.Data(streamError(msg, "api_error", "stream_error"))
	return http.StatusBadGateway
}

// streamUsage is what a stream is charged: the usage it reported, or, when it reported none
// (a client that left before the last chunk), the prompt's estimate and the text delivered at
// 4 bytes a token. No stream goes unbilled.
func streamUsage(u providers.Usage, promptEstimate, deliveredBytes int) (providers.Usage, bool) {
	if u.PromptTokens > 0 || u.CompletionTokens > 0 || u.TotalTokens > 0 {
		return u, true
	}
	u.PromptTokens = promptEstimate
	u.CompletionTokens = (deliveredBytes + 3) / 4
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u, true
}

// deliveredText counts the answer text of the chunks a client received: the bytes of their
// content, text and tool-call arguments strings, found by a byte scan (no decoding: this runs
// for every chunk of every stream).
type deliveredText struct{ n int }

var textKeys = [][]byte{[]byte(`"content":"`), []byte(`"text":"`), []byte(`"arguments":"`)}

func (d *deliveredText) add(chunk []byte) {
	for _, key := range textKeys {
		rest := chunk
		for {
			i := bytes.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			n := jsonStringLen(rest)
			d.n += n
			rest = rest[n:]
		}
	}
}

// jsonStringLen is the length of the JSON string body at the start of b, up to its closing
// quote (escapes count as the bytes they take).
func jsonStringLen(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}

func streamError(msg, typ, code string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
	return b
}

// fail answers an error and records it in the log. A provider's own error keeps its status
// and is marked as the provider's (HeaderErrorSource, and its name and status in the body; a
// pass-through's is its bytes unchanged, headers and all); any other is the gateway's, in the
// application error shape. A client that went away is answered nothing and logged as 499.
func (s *Service) fail(ctx context.Context, out Reply, x *exchange, err error) int {
	x.rec.Error = err.Error()
	if clientGone(ctx) {
		x.rec.Error = "client closed the request"
		return StatusClientClosed
	}
	var raw *RawUpstreamError
	if errors.As(err, &raw) {
		copyHeaders(out.Header(), raw.Header)
		out.Header().Set(HeaderErrorSource, ErrorSourceProvider)
		out.WriteHeader(raw.Upstream.Status)
		_, _ = out.Write(raw.Upstream.Body)
		return raw.Upstream.Status
	}
	var up *providers.UpstreamError
	if errors.As(err, &up) {
		out.Header().Set("Content-Type", "application/json")
		out.Header().Set(HeaderErrorSource, ErrorSourceProvider)
		if up.RetryAfter > 0 {
			out.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(up.RetryAfter.Seconds()))))
		}
		out.WriteHeader(up.Status)
		_, _ = out.Write(up.AnswerBody())
		return up.Status
	}
	var refused *RefusalError
	if errors.As(err, &refused) {
		by := refused.By
		x.prov.RefusedBy = &by
		out.Header().Set(HeaderDecidedBy, by.String())
		return out.Error(err)
	}
	var denied *GuardrailDeniedError
	if errors.As(err, &denied) {
		by := denied.By
		x.prov.RefusedBy = &by
		out.Header().Set(HeaderDecidedBy, by.String())
		return out.Error(err)
	}
	appErr := translate(err)
	if appErr.Code == domain.CodeTimeout || appErr.Code == domain.CodeUpstream {
		// The log row is shown to the API's readers: it says what the client was told, not
		// the transport's error, which may quote an address a host name resolved to.
		x.rec.Error = appErr.Message
	}
	return out.Error(appErr)
}

// finish settles what the request used, against its budgets and token limits, and hands its
// record to the analytics pipeline without waiting.
func (s *Service) finish(x *exchange) {
	s.settle(x)
	end := s.Now()
	x.rec.EndedAt = end
	x.rec.LatencyMS = float64(end.Sub(x.start).Microseconds()) / 1000
	x.prov.HookResults = x.hookResults()
	if x.prov.RefusedBy != nil || len(x.prov.Charged) > 0 || x.prov.Config != nil || x.prov.HookResults != nil {
		p := x.prov
		x.rec.Provenance = &p
	}
	if x.cachedLatencyMS > 0 {
		x.rec.CacheSavedMS = max(x.cachedLatencyMS-x.rec.LatencyMS, 0)
	}
	s.storeAnswer(x)
	if s.Logs != nil {
		s.Logs.Log(x.rec)
		if x.embedding != nil {
			s.Logs.Log(x.embedding.record(x))
		}
	}
}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Connection", "Transfer-Encoding", "Set-Cookie":
			continue
		}
		dst[k] = vs
	}
}
