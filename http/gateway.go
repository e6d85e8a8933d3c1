package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/sse"
	"github.com/causeway/causeway/projections"
)

// RoutingTables are what the gateway's hot path reads: memory only, kept current by every
// process's own subscription. No request does database I/O.
type RoutingTables interface {
	Authenticator
	APIKey(orgID, id string) (domain.APIKey, bool)
	Workspace(orgID, id string) (domain.Workspace, bool)
	RateLimitPolicies(f projections.PolicyFilter) []domain.RateLimitPolicy
}

// URLGuard checks a custom host on the address it resolves to (gateway/egress).
type URLGuard interface {
	CheckURL(raw string) error
}

// Gateway is the data plane's HTTP surface: the OpenAI-compatible endpoints and pass-through.
type Gateway struct {
	Log     *slog.Logger
	Routing RoutingTables
	Engine  *gateway.Engine
	Limiter *gateway.Limiter
	Logs    gateway.LogSink
	Egress  URLGuard
	// CustomHostClient carries requests to custom hosts: its dialer checks every address it
	// connects to, and every redirect, again. One client, so connections are pooled.
	CustomHostClient *http.Client
	Now              func() time.Time
	// MaxBody bounds a request body; larger ones get a 413 before they are read.
	MaxBody int64
	// Plans resolves what the credential headers alone cannot: configs and managed providers
	// (nil until those resources exist).
	Plans PlanResolver
}

// PlanResolver turns a config (inline JSON or a saved id) or a managed provider (@slug) into a
// plan, for the actor's workspace.
type PlanResolver interface {
	ConfigPlan(ctx context.Context, actor domain.Actor, config string) (gateway.Plan, string, error)
	ProviderPlan(ctx context.Context, actor domain.Actor, slug string) (gateway.Plan, error)
}

// Gateway headers (5.3, 5.4) and their SDK spellings.
const (
	hProvider       = "x-gateway-provider"
	hVirtualKey     = "x-gateway-virtual-key"
	hConfig         = "x-gateway-config"
	hCustomHost     = "x-gateway-custom-host"
	hMetadata       = "x-gateway-metadata"
	hRequestTimeout = "x-gateway-request-timeout"
	hForwardHeaders = "x-gateway-forward-headers"
	hSpanID         = "x-gateway-span-id"
	hParentSpanID   = "x-gateway-parent-span-id"
	hSpanName       = "x-gateway-span-name"
	hTarget         = "x-gateway-target"
	hRetries        = "x-gateway-retry-count"
)

// header reads a gateway header by its x-gateway- name or its SDK spellings (snake_case and
// camelCase without the prefix), which are worked out once, not per request.
func header(r *http.Request, name string) string {
	if v := r.Header.Get(name); v != "" {
		return v
	}
	for _, alias := range headerAliases[name] {
		if v := r.Header.Get(alias); v != "" {
			return v
		}
	}
	return ""
}

var headerAliases = func() map[string][]string {
	out := map[string][]string{}
	for _, name := range []string{hProvider, hVirtualKey, hConfig, hCustomHost, hMetadata, hRequestTimeout,
		hForwardHeaders, hSpanID, hParentSpanID, hSpanName} {
		bare := strings.TrimPrefix(name, "x-gateway-")
		parts := strings.Split(bare, "-")
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		out[name] = []string{strings.ReplaceAll(bare, "-", "_"), strings.Join(parts, "")}
	}
	return out
}()

// Register adds the inference endpoints.
func (g *Gateway) Register(v1 *mux.Router) {
	v1.Handle("/chat/completions", g.endpoint(providers.EndpointChat)).Methods(http.MethodPost)
	v1.Handle("/completions", g.endpoint(providers.EndpointCompletion)).Methods(http.MethodPost)
	v1.Handle("/embeddings", g.endpoint(providers.EndpointEmbed)).Methods(http.MethodPost)
	v1.Handle("/rerank", g.endpoint(providers.EndpointRerank)).Methods(http.MethodPost)
}

// request is one gateway request in flight: what it is, who made it, and its log record.
type request struct {
	actor domain.Actor
	key   domain.APIKey
	rec   gateway.LogRecord
	start time.Time
}

func (g *Gateway) endpoint(endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := g.begin(r, endpoint)
		defer g.finish(req)
		status, err := g.serve(w, r, req, endpoint)
		if err != nil {
			status = g.fail(w, r, req, err)
		}
		req.rec.StatusCode = status
	})
}

func (g *Gateway) begin(r *http.Request, endpoint string) *request {
	now := g.Now()
	return &request{start: now, rec: gateway.LogRecord{
		ID: uuid.NewString(), TraceID: TraceID(r.Context()), SpanID: header(r, hSpanID),
		ParentSpanID: header(r, hParentSpanID), SpanName: header(r, hSpanName), Endpoint: endpoint,
		Method: r.Method, Path: r.URL.Path, StartedAt: now, LogFormat: "v1", CacheStatus: "DISABLED",
	}}
}

// finish hands the request's record to the analytics pipeline, without waiting.
func (g *Gateway) finish(req *request) {
	end := g.Now()
	req.rec.EndedAt = end
	req.rec.LatencyMS = float64(end.Sub(req.start).Microseconds()) / 1000
	if g.Logs != nil {
		g.Logs.Log(req.rec)
	}
}

// serve runs one inference request and returns the status it answered.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, req *request, endpoint string) (int, error) {
	if err := g.authenticate(r, req); err != nil {
		return 0, err
	}
	r.Body = http.MaxBytesReader(w, r.Body, g.MaxBody)
	body, err := openai.ReadBody(r, g.MaxBody)
	if err != nil {
		return 0, err
	}
	call := providers.Call{Endpoint: endpoint, Body: body, Header: forwardHeaders(r)}
	estimate := 0
	switch endpoint {
	case providers.EndpointChat:
		c, err := openai.ParseChat(body)
		if err != nil {
			return 0, err
		}
		call.Model, call.Stream, estimate = c.Model, c.Stream, openai.EstimateTokens(c)
	case providers.EndpointCompletion:
		c, err := openai.ParseCompletion(body)
		if err != nil {
			return 0, err
		}
		call.Model, call.Stream = c.Model, c.Stream
	case providers.EndpointEmbed:
		e, err := openai.ParseEmbedding(body)
		if err != nil {
			return 0, err
		}
		call.Model = e.Model
	case providers.EndpointRerank:
		e, err := openai.ParseRerank(body)
		if err != nil {
			return 0, err
		}
		call.Model = e.Model
	}
	req.rec.Model, req.rec.Stream, req.rec.RequestBody = call.Model, call.Stream, redactBody(body)
	_ = estimate

	metadata, err := parseMetadata(r, req.key)
	if err != nil {
		return 0, err
	}
	req.rec.Metadata = metadata
	limits := g.limits(req, endpoint, metadata)
	decision := g.Limiter.Allow(limits)
	writeLimitHeaders(w, decision)
	if !decision.Allowed {
		return 0, &domain.Error{Code: domain.CodeRateLimited, Detail: "rate_limit_exceeded",
			Message: fmt.Sprintf("rate limit of %v %s (%s) exceeded; it resets at %s", decision.Limit.Value, decision.Limit.Unit,
				decision.Limit.Source, decision.Reset.UTC().Format(time.RFC3339))}
	}

	plan, err := g.plan(r, req)
	if err != nil {
		return 0, err
	}
	if err := requestTimeout(r, &plan); err != nil {
		return 0, err
	}
	out, err := g.Engine.Run(r.Context(), plan, call)
	defer out.Close()
	req.rec.AIService, req.rec.Target, req.rec.RetryCount = out.Target.Provider, out.Path, out.Retries
	if len(out.Tried) > 0 {
		req.rec.FallbackTarget = out.Path
	}
	if err != nil {
		return 0, err
	}
	w.Header().Set(hTarget, out.Path)
	w.Header().Set(hRetries, strconv.Itoa(out.Retries))
	if out.Stream != nil {
		return g.stream(w, r, req, out, limits)
	}
	resp := out.Response
	g.record(req, resp.Usage, limits)
	if len(resp.Body) <= 1<<20 && json.Valid(resp.Body) {
		req.rec.ResponseBody = resp.Body // the provider's answer: no client credential in it
	}
	for _, h := range []string{"openai-processing-ms", "x-request-id", "request-id"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(resp.Body)
	return status, nil
}

// stream copies a streamed answer chunk by chunk, flushing each. A client that goes away
// cancels the request's context, which the provider call carries, so the upstream call ends
// too. A failure after the first byte ends the stream with an error event, never in silence,
// and is not retried.
func (g *Gateway) stream(w http.ResponseWriter, r *http.Request, req *request, out gateway.Outcome, limits []gateway.Limit) (int, error) {
	sw := sse.NewWriter(w)
	w.WriteHeader(http.StatusOK)
	first := true
	for {
		chunk, err := out.Stream.Next()
		if errors.Is(err, io.EOF) {
			g.record(req, out.Stream.Usage(), limits)
			_ = sw.Done()
			return http.StatusOK, nil
		}
		if err != nil {
			g.record(req, out.Stream.Usage(), limits)
			if r.Context().Err() != nil {
				req.rec.Error = "client closed the stream"
				return 499, nil
			}
			req.rec.Error = "upstream failed mid-stream: " + err.Error()
			_ = sw.Data(streamError(err))
			return http.StatusBadGateway, nil
		}
		if first {
			req.rec.TTFTMS = float64(g.Now().Sub(req.start).Microseconds()) / 1000
			first = false
		}
		if err := sw.Data(chunk); err != nil {
			req.rec.Error = "client closed the stream"
			return 499, nil
		}
	}
}

func streamError(err error) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": "the provider's stream failed: " + err.Error(), "type": "api_error", "param": nil, "code": "stream_error"}})
	return b
}

// record fills the log's usage and charges token limits.
func (g *Gateway) record(req *request, u providers.Usage, limits []gateway.Limit) {
	req.rec.PromptTokens, req.rec.CompletionTokens, req.rec.TotalTokens = u.PromptTokens, u.CompletionTokens, u.TotalTokens
	req.rec.CachedTokens, req.rec.CacheWriteTokens, req.rec.ReasoningTokens = u.CachedTokens, u.CacheWriteTokens, u.ReasoningTokens
	if req.rec.TotalTokens == 0 {
		req.rec.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	g.Limiter.Charge(limits, req.rec.TotalTokens)
}

// authenticate resolves the gateway key from memory and refuses keys that may not call
// models: unknown, expired, deleted, of an archived workspace, exhausted, or without scope.
func (g *Gateway) authenticate(r *http.Request, req *request) error {
	actor, err := g.Routing.Authenticate(presentedKey(r), g.Now())
	if err != nil {
		return err
	}
	key, ok := g.Routing.APIKey(actor.OrganisationID, actor.ID)
	if !ok {
		return domain.Errorf(domain.CodeUnauthorized, "invalid API key")
	}
	req.actor, req.key = actor, key
	req.rec.OrganisationID, req.rec.WorkspaceID, req.rec.APIKeyID = actor.OrganisationID, key.WorkspaceID, key.ID
	if key.StatusAt(g.Now()) == domain.KeyExhausted {
		return &domain.Error{Code: domain.CodeForbidden, Detail: "budget_exhausted", Message: "this API key's usage limit is exhausted"}
	}
	if !actor.HasScope("completions.write") {
		return domain.Errorf(domain.CodeForbidden, "this API key lacks the scope completions.write")
	}
	if key.WorkspaceID != "" {
		if ws, ok := g.Routing.Workspace(actor.OrganisationID, key.WorkspaceID); ok && ws.BudgetExhausted {
			return &domain.Error{Code: domain.CodeForbidden, Detail: "budget_exhausted", Message: "this workspace's budget is exhausted"}
		}
	}
	return nil
}

// limits are every rate limit that applies: the key's, its workspace's, and the policies whose
// conditions the request meets.
func (g *Gateway) limits(req *request, endpoint string, metadata map[string]string) []gateway.Limit {
	out := gateway.OwnLimits("api key", req.key.ID, req.key.RateLimits)
	if req.key.WorkspaceID == "" {
		return out
	}
	if ws, ok := g.Routing.Workspace(req.actor.OrganisationID, req.key.WorkspaceID); ok {
		out = append(out, gateway.OwnLimits("workspace", ws.ID, ws.RateLimits)...)
	}
	policies := g.Routing.RateLimitPolicies(projections.PolicyFilter{OrganisationID: req.actor.OrganisationID,
		WorkspaceIDs: map[string]bool{req.key.WorkspaceID: true}, Statuses: map[string]bool{domain.StatusActive: true}})
	return append(out, gateway.PolicyLimits(policies, gateway.RequestFacts{OrganisationID: req.actor.OrganisationID,
		WorkspaceID: req.key.WorkspaceID, APIKeyID: req.key.ID, EndpointType: endpoint, Metadata: metadata})...)
}

func writeLimitHeaders(w http.ResponseWriter, d gateway.Decision) {
	if d.Limit.Bucket == "" {
		return
	}
	h := w.Header()
	h.Set("x-ratelimit-limit", strconv.FormatFloat(d.Limit.Value, 'f', -1, 64))
	h.Set("x-ratelimit-remaining", strconv.FormatFloat(d.Remaining, 'f', -1, 64))
	h.Set("x-ratelimit-reset", strconv.FormatInt(d.Reset.Unix(), 10))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(max(1, int(time.Until(d.Reset).Seconds()+0.999))))
	}
}

// parseMetadata reads x-gateway-metadata: a JSON object of strings (special keys _user,
// _prompt, _organisation, _environment), over the key's default metadata.
func parseMetadata(r *http.Request, key domain.APIKey) (map[string]string, error) {
	out := map[string]string{}
	if key.Defaults != nil {
		for k, v := range key.Defaults.Metadata {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
	}
	raw := header(r, hMetadata)
	if raw == "" {
		return out, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
		return nil, domain.Invalid(hMetadata, "%s must be a JSON object", hMetadata)
	}
	if len(m) > 128 {
		return nil, domain.Invalid(hMetadata, "%s may hold at most 128 keys", hMetadata)
	}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = v
		case float64, bool:
			out[k] = fmt.Sprint(v)
		default:
			return nil, domain.Invalid(hMetadata, "%s values must be strings (the value of %q is not)", hMetadata, k)
		}
	}
	return out, nil
}

// forwardHeaders are the client's headers named in x-gateway-forward-headers, passed to the
// provider unprocessed.
func forwardHeaders(r *http.Request) http.Header {
	list := header(r, hForwardHeaders)
	if list == "" {
		return nil
	}
	var names []string
	if err := json.Unmarshal([]byte(list), &names); err != nil {
		names = strings.Split(list, ",")
	}
	out := http.Header{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || strings.HasPrefix(strings.ToLower(n), "x-gateway-") || strings.EqualFold(n, "authorization") {
			continue
		}
		if v := r.Header.Values(n); len(v) > 0 {
			out[http.CanonicalHeaderKey(n)] = v
		}
	}
	return out
}

// requestTimeout applies x-gateway-request-timeout (milliseconds) to the whole plan.
func requestTimeout(r *http.Request, p *gateway.Plan) error {
	raw := header(r, hRequestTimeout)
	if raw == "" {
		return nil
	}
	ms, err := strconv.Atoi(raw)
	if err != nil || ms < 1 {
		return domain.Invalid(hRequestTimeout, "%s must be a whole number of milliseconds, at least 1", hRequestTimeout)
	}
	p.Timeout = time.Duration(ms) * time.Millisecond
	return nil
}

// plan turns the credential headers (5.3) into a plan: a config, a managed provider, a custom
// host, or a provider name with the provider's key in Authorization.
func (g *Gateway) plan(r *http.Request, req *request) (gateway.Plan, error) {
	if cfg := header(r, hConfig); cfg != "" {
		if g.Plans == nil {
			return gateway.Plan{}, domain.Invalid(hConfig, "configs are not available yet")
		}
		p, id, err := g.Plans.ConfigPlan(r.Context(), req.actor, cfg)
		req.rec.ConfigID = id
		return p, err
	}
	provider := header(r, hProvider)
	if slug, ok := strings.CutPrefix(provider, "@"); ok || header(r, hVirtualKey) != "" {
		if !ok {
			slug = header(r, hVirtualKey)
		}
		if g.Plans == nil {
			return gateway.Plan{}, domain.Invalid(hProvider, "managed providers are not available yet")
		}
		req.rec.Provider = "@" + slug
		return g.Plans.ProviderPlan(r.Context(), req.actor, slug)
	}
	if provider == "" {
		return gateway.Plan{}, domain.Invalid(hProvider, "name the provider: %s (with Authorization), @<provider slug>, or %s", hProvider, hConfig)
	}
	t := providers.Target{Provider: strings.ToLower(provider), APIKey: bearer(r), Options: cloudOptions(r)}
	if host := header(r, hCustomHost); host != "" {
		if err := g.Egress.CheckURL(host); err != nil {
			return gateway.Plan{}, domain.Invalid(hCustomHost, "%v", err)
		}
		t.BaseURL, t.Client = strings.TrimSuffix(host, "/"), g.CustomHostClient
	}
	return gateway.Plan{Target: &t}, nil
}

// cloudOptions reads the cloud-specific headers of 5.3 (x-gateway-<cloud>-<name>).
func cloudOptions(r *http.Request) map[string]string {
	out := map[string]string{}
	for name, values := range r.Header {
		lower := strings.ToLower(name)
		for _, prefix := range []string{"x-gateway-azure-", "x-gateway-vertex-", "x-gateway-aws-", "x-gateway-anthropic-"} {
			if opt, ok := strings.CutPrefix(lower, prefix); ok && len(values) > 0 {
				out[strings.ReplaceAll(strings.TrimPrefix(prefix, "x-gateway-")+opt, "-", "_")] = values[0]
			}
		}
	}
	return out
}

func bearer(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if v, ok := strings.CutPrefix(auth, "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return strings.TrimSpace(auth)
}

// credentialFields are body fields a client may put a credential in.
var credentialFields = []string{"api_key", "apiKey", "authorization", "Authorization", "password", "secret"}

// redactBody keeps a request body for the log with any credential a client put in it replaced.
// Most bodies hold none: a byte scan tells, and only those that might are decoded.
func redactBody(body []byte) json.RawMessage {
	if len(body) == 0 || len(body) > 1<<20 {
		return nil
	}
	suspect := false
	for _, k := range credentialFields {
		if bytes.Contains(body, []byte(`"`+k+`"`)) {
			suspect = true
			break
		}
	}
	if !suspect {
		return body // validated JSON already (the parsers' json.Valid)
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	changed := false
	for _, k := range credentialFields {
		if _, ok := m[k]; ok {
			m[k], changed = "[REDACTED]", true
		}
	}
	if !changed {
		return body
	}
	out, _ := json.Marshal(m)
	return out
}

// fail answers an error: a provider's own error with its status, or the application error
// shape; and records it in the log.
func (g *Gateway) fail(w http.ResponseWriter, r *http.Request, req *request, err error) int {
	req.rec.Error = err.Error()
	var up *providers.UpstreamError
	if errors.As(err, &up) {
		w.Header().Set("Content-Type", "application/json")
		if up.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(up.RetryAfter.Seconds())))
		}
		w.WriteHeader(up.Status)
		_, _ = w.Write(up.Body)
		return up.Status
	}
	appErr := gatewayError(err)
	WriteError(w, r, g.Log, appErr)
	return statusOf[appErr.Code]
}

// gatewayError translates the engine's errors into application errors.
func gatewayError(err error) *domain.Error {
	var (
		conn        *providers.ConnectionError
		unknown     *gateway.UnknownProviderError
		unsupported *gateway.UnsupportedError
		appErr      *domain.Error
	)
	switch {
	case errors.As(err, &appErr):
		return appErr
	case errors.Is(err, context.DeadlineExceeded):
		return &domain.Error{Code: domain.CodeTimeout, Detail: "request_timeout", Message: "the provider did not answer within the request timeout", Err: err}
	case errors.As(err, &conn):
		return &domain.Error{Code: domain.CodeUpstream, Detail: "provider_unreachable", Message: "the provider " + conn.Provider + " could not be reached", Err: err}
	case errors.As(err, &unknown):
		return &domain.Error{Code: domain.CodeInvalid, Param: hProvider, Message: unknown.Error()}
	case errors.As(err, &unsupported):
		return &domain.Error{Code: domain.CodeUnsupported, Message: unsupported.Error()}
	}
	return &domain.Error{Code: domain.CodeInternal, Message: "internal error", Err: err}
}

// PassThrough serves every other path under /v1 (POST, GET, PUT, DELETE): sent unchanged to the
// chosen provider, its answer returned unchanged, streamed as it comes. Admin routes are
// matched first, so they keep precedence.
func (g *Gateway) PassThrough() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := g.begin(r, providers.EndpointPassThrough)
		defer g.finish(req)
		status, err := g.passThrough(w, r, req)
		if err != nil {
			status = g.fail(w, r, req, err)
		}
		req.rec.StatusCode = status
	})
}

func (g *Gateway) passThrough(w http.ResponseWriter, r *http.Request, req *request) (int, error) {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		return 0, domain.Errorf(domain.CodeNotAllowed, "method %s is not passed through; use GET, POST, PUT or DELETE", r.Method)
	}
	if err := g.authenticate(r, req); err != nil {
		return 0, err
	}
	body, err := openai.ReadBody(r, g.MaxBody)
	if err != nil {
		return 0, err
	}
	plan, err := g.plan(r, req)
	if err != nil {
		return 0, err
	}
	leaf := firstTarget(plan)
	if leaf == nil {
		return 0, domain.Invalid(hConfig, "the config has no target to pass the request to")
	}
	adapter, ok := g.Engine.Providers.Get(leaf.Provider)
	if !ok {
		return 0, &gateway.UnknownProviderError{Provider: leaf.Provider}
	}
	pt, ok := adapter.(providers.PassThrougher)
	if !ok {
		return 0, &gateway.UnsupportedError{Provider: leaf.Provider, What: "pass-through"}
	}
	path := strings.TrimPrefix(r.URL.Path, BasePath)
	req.rec.AIService = leaf.Provider
	fwd := forwardHeaders(r)
	if fwd == nil {
		fwd = http.Header{}
	}
	// The body goes unchanged, so its type goes with it (a multipart upload needs its boundary).
	for _, h := range []string{"Content-Type", "Accept"} {
		if v := r.Header.Get(h); v != "" {
			fwd.Set(h, v)
		}
	}
	resp, err := pt.PassThrough(r.Context(), *leaf, providers.Call{Endpoint: providers.EndpointPassThrough, Path: path,
		Method: r.Method, Query: r.URL.RawQuery, Body: body, Header: fwd})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		switch strings.ToLower(k) {
		case "content-length", "connection", "transfer-encoding", "set-cookie":
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return 499, nil
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				req.rec.Error = "upstream failed mid-answer: " + rerr.Error()
			}
			return resp.StatusCode, nil
		}
	}
}

// firstTarget is the target a pass-through goes to: a plan's first leaf.
func firstTarget(p gateway.Plan) *providers.Target {
	if p.Target != nil {
		return p.Target
	}
	for _, t := range p.Targets {
		if leaf := firstTarget(t); leaf != nil {
			return leaf
		}
	}
	return nil
}
