package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/sse"
	"github.com/causeway/causeway/ledger"
)

// The answer cache is a step of the pipeline, after budgets and before routing: a request
// whose config sets cache {mode, max_age} is looked up by an exact key (the workspace, where
// the config routes, the model, the namespace and the request normalised), and in mode
// semantic, on an exact miss, by the embedding of its last user message among the entries of
// the same partition. A hit answers without calling a provider, charges no budget (rate
// limits still count it as a request), and is logged with what it saved. A miss that ends in
// a complete, cacheable answer is stored off the request path.

// Cache headers (5.4), and the answer's cache status.
const (
	HeaderCacheNamespace    = "x-gateway-cache-namespace"
	HeaderCacheForceRefresh = "x-gateway-cache-force-refresh"
	HeaderCacheStatus       = "x-gateway-cache-status"
)

// DefaultCacheMaxAge is how long an answer is kept when a config's cache sets no max_age.
const DefaultCacheMaxAge = 7 * 24 * time.Hour

// AnswerCache keeps cached answers: in the process, in PostgreSQL or in Redis (cache.Store).
type AnswerCache interface {
	Get(ctx context.Context, workspace, key string, now time.Time) (cache.Entry, bool, error)
	Put(ctx context.Context, e cache.Entry) error
}

// SemanticIndex finds the cached prompt nearest to an embedding, within one partition, in
// memory (cache/semantic).
type SemanticIndex interface {
	Nearest(partition string, vec []float32, now time.Time) (key string, score float32, ok bool)
	Add(partition, key string, vec []float32, expires time.Time)
	Remove(key string)
}

// Cache is the answer cache as the pipeline uses it.
type Cache struct {
	Store AnswerCache
	// Index serves semantic lookups; nil: mode semantic looks up exact keys only.
	Index SemanticIndex
	// MaxAge is the default max_age (DefaultCacheMaxAge when zero).
	MaxAge time.Duration
	// Threshold is the default cosine similarity of a semantic hit.
	Threshold float64
	// Timeout bounds a lookup; a store slower than that is a miss, not a slow request.
	Timeout time.Duration
	// Embed embeds a semantic lookup's text with model on target; nil: through the engine, as
	// a call of the embeddings endpoint (a benchmark sets it to measure the lookup alone).
	Embed func(ctx context.Context, target *providers.Target, model, text string) ([]float32, error)
	Log   *slog.Logger

	writes  chan struct{} // bounds the puts in flight
	once    sync.Once
	outage  sync.Mutex
	failing bool
}

// maxCacheWrites bounds the puts in flight; more are dropped (the answer is served all the same).
const maxCacheWrites = 64

// DefaultEmbeddingModels are the embedding models a semantic cache calls on the request's
// own provider when its config names none.
var DefaultEmbeddingModels = map[string]string{
	"openai": "text-embedding-3-small", "azure-openai": "text-embedding-3-small", "cohere": "embed-english-v3.0",
	"google": "text-embedding-004", "vertex-ai": "text-embedding-004", "mistral-ai": "mistral-embed",
	"together-ai": "togethercomputer/m2-bert-80M-8k-retrieval", "fireworks-ai": "nomic-ai/nomic-embed-text-v1.5",
	"jina": "jina-embeddings-v3", "nomic": "nomic-embed-text-v1.5", "ollama": "nomic-embed-text",
	"deepinfra": "BAAI/bge-base-en-v1.5", "vllm": "intfloat/e5-mistral-7b-instruct",
}

// cacheLookup is what the cache step decided for one request.
type cacheLookup struct {
	cfg       *domain.Cache
	workspace string
	namespace string
	partition string
	key       string
	maxAge    time.Duration
	vector    []float32 // the last user message's embedding, for a semantic entry
	stream    bool
	usage     bool // a streamed hit ends with a usage chunk (stream_options.include_usage)
	acc       *openai.StreamAccumulator
	answer    []byte // a complete, cacheable answer to store once the request is settled
}

// cacheMeta is kept beside a cached answer: what it cost and how long it took, for what a hit
// saves, and who answered it.
type cacheMeta struct {
	Provider  string  `json:"provider,omitempty"`
	Model     string  `json:"model,omitempty"`
	Cost      float64 `json:"cost"`
	LatencyMS float64 `json:"latency_ms"`
}

// cacheHeaders reads the namespace and force-refresh headers; bad values are refused whether
// or not the request's config caches.
func cacheHeaders(h http.Header) (namespace string, refresh bool, err error) {
	namespace = header(h, HeaderCacheNamespace)
	if err := domain.ValidateCacheNamespace(HeaderCacheNamespace, namespace); err != nil {
		return "", false, err
	}
	switch v := strings.ToLower(strings.TrimSpace(header(h, HeaderCacheForceRefresh))); v {
	case "", "false":
	case "true":
		refresh = true
	default:
		return "", false, domain.Invalid(HeaderCacheForceRefresh, "%s must be true or false", HeaderCacheForceRefresh)
	}
	return namespace, refresh, nil
}

// lookupCache is the cache step: it decides whether the request is cached and, if so, looks
// it up. A hit is returned; a miss leaves x.cache set for the answer to be stored. A store
// that fails is a miss, logged once as the outage starts: the cache never fails a request.
func (s *Service) lookupCache(ctx context.Context, x *exchange, res *resolved, call providers.Call) (hit *cache.Entry, status string, err error) {
	namespace, refresh, err := cacheHeaders(x.in.Header)
	if err != nil {
		return nil, "", err
	}
	cfg := res.cache
	c := s.Cache
	if cfg == nil || c == nil || c.Store == nil || !cacheable(cfg, call) {
		return nil, analytics.CacheDisabled, nil
	}
	material, err := openai.CacheKeyMaterial(call.Endpoint, call.Body)
	if err != nil {
		return nil, analytics.CacheDisabled, nil
	}
	l := &cacheLookup{cfg: cfg, workspace: x.route.Key.WorkspaceID, namespace: namespace, stream: call.Stream,
		maxAge: c.MaxAge}
	if l.maxAge <= 0 {
		l.maxAge = DefaultCacheMaxAge
	}
	if cfg.MaxAge > 0 {
		l.maxAge = time.Duration(cfg.MaxAge) * time.Second
	}
	l.partition = digest(l.workspace, res.cacheRoute, x.model, namespace)
	l.key = digest(l.partition, string(material))
	switch {
	case call.Chat != nil:
		l.usage = call.Chat.StreamOptions.IncludeUsage
	case call.Completion != nil:
		l.usage = call.Completion.StreamOptions.IncludeUsage
	}
	if l.stream {
		l.acc = &openai.StreamAccumulator{Choices: max(choices(call), 1)}
	}
	x.cache = l
	if refresh {
		return nil, analytics.CacheRefresh, nil
	}
	if x.span != nil {
		// The namespace is left out: it may name a user.
		var span trace.Span
		ctx, span = s.childSpan(ctx, x, "cache lookup", attribute.String(AttrCacheMode, cfg.Mode))
		defer func() {
			span.SetAttributes(attribute.String(AttrCacheStatus, status))
			span.End()
		}()
	}
	lctx, cancel := c.bound(ctx)
	defer cancel()
	now := s.Now()
	e, ok, err := c.Store.Get(lctx, l.workspace, l.key, now)
	c.observe(err)
	if ok {
		return &e, analytics.CacheHit, nil
	}
	if cfg.Mode != domain.CacheSemantic || c.Index == nil || !semanticEligible(cfg, call) {
		return nil, analytics.CacheMiss, nil
	}
	vec, err := s.embed(ctx, x, res, cfg, promptText(call))
	if err != nil {
		if c.Log != nil { // per request, so not a warning: a misconfigured embedding model would flood the log
			c.Log.Debug("the semantic cache could not embed the prompt; the request was looked up by its exact key only", "error", err)
		}
		return nil, analytics.CacheMiss, nil
	}
	l.vector = vec
	threshold := c.Threshold
	if cfg.Threshold > 0 {
		threshold = cfg.Threshold
	}
	near, score, found := c.Index.Nearest(l.partition, vec, now)
	if !found || float64(score) < threshold {
		return nil, analytics.CacheMiss, nil
	}
	e, ok, err = c.Store.Get(lctx, l.workspace, near, now)
	c.observe(err)
	if !ok {
		if err == nil {
			c.Index.Remove(near) // purged or expired: the index learns it here
		}
		return nil, analytics.CacheMiss, nil
	}
	return &e, analytics.CacheSemanticHit, nil
}

// cacheable: the endpoints whose answers are cached, and requests whose answers are meant to
// vary (several choices, a temperature above 0) only when the config opts in.
func cacheable(cfg *domain.Cache, call providers.Call) bool {
	switch {
	case call.Chat != nil:
		r := call.Chat
		return cfg.Sampled || (r.N <= 1 && (r.Temperature == nil || *r.Temperature == 0))
	case call.Completion != nil:
		r := call.Completion
		return cfg.Sampled || (r.N <= 1 && r.BestOf <= 1 && (r.Temperature == nil || *r.Temperature == 0))
	case call.Embedding != nil:
		return true
	}
	return false
}

// choices is the number of choices the request asks for.
func choices(call providers.Call) int {
	switch {
	case call.Chat != nil:
		return call.Chat.N
	case call.Completion != nil:
		return call.Completion.N
	}
	return 1
}

// semanticEligible: the requests a semantic lookup may answer. A request with tools or
// several user turns depends on more than its last message, so it is exact-only unless the
// config opts in; embeddings are always exact.
func semanticEligible(cfg *domain.Cache, call providers.Call) bool {
	switch {
	case call.Chat != nil:
		r := call.Chat
		if cfg.SemanticToolsAndTurns {
			return true
		}
		return len(r.Tools) == 0 && len(r.Functions) == 0 && openai.UserTurns(r) <= 1
	case call.Completion != nil:
		return len(call.Completion.Prompts) == 1
	}
	return false
}

// promptText is what a semantic lookup embeds: the last user message, or the prompt.
func promptText(call providers.Call) string {
	if call.Chat != nil {
		return openai.LastUserText(call.Chat)
	}
	if call.Completion != nil && len(call.Completion.Prompts) > 0 {
		return call.Completion.Prompts[0]
	}
	return ""
}

// embed calls the cache's embedding model on text: the config's @provider, or the plan's first
// target, with the model the config names or that provider's default. The call is a provider
// call like any other: a managed provider admits it first (its status, rate limits and
// budgets), and what it used is charged and logged with the request (x.embedding, settle).
func (s *Service) embed(ctx context.Context, x *exchange, res *resolved, cfg *domain.Cache, text string) ([]float32, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("no user text to embed")
	}
	var (
		t       *providers.Target
		mp      ManagedProvider
		managed bool
	)
	model := ""
	if e := cfg.Embedding; e != nil {
		model = e.Model
		if slug, ok := strings.CutPrefix(e.Provider, "@"); ok {
			target, p, err := s.managed(x, slug, "cache.embedding.provider")
			if err != nil {
				return nil, err
			}
			t, mp, managed = target, p, true
		}
	}
	if t == nil {
		t = firstLeaf(&res.plan)
		if t != nil {
			mp, managed = res.leaves[t]
		}
	}
	if t == nil {
		return nil, errors.New("the plan has no target")
	}
	if model == "" {
		if model = DefaultEmbeddingModels[t.Provider]; model == "" {
			return nil, errors.New("the provider " + t.Provider + " has no default embedding model: name one in cache.embedding")
		}
	}
	call := &embedCall{provider: t.Provider, service: t.Provider, model: model}
	if managed {
		call.provider = "@" + mp.Provider.Value.Slug
		prompt := len(text)/4 + 1
		worst := s.cost(x, t.Provider, model, providers.Usage{PromptTokens: prompt, TotalTokens: prompt})
		a, err := s.admit(x, t, mp, ledger.Amount{Tokens: float64(prompt), Cost: worst})
		if err != nil {
			return nil, fmt.Errorf("the embedding provider %s refused the lookup: %w", call.provider, err)
		}
		call.admitted = a
	}
	x.embedding, call.start = call, s.Now()
	if s.Cache.Embed != nil {
		vec, err := s.Cache.Embed(ctx, t, model, text)
		call.done(s.Now(), nil, err)
		return vec, err
	}
	ask := map[string]any{"model": model, "input": text}
	if base64Embeddings[t.Provider] {
		// A vector as base64 of its float32s is a quarter of its JSON and decodes without
		// parsing 1,536 numbers.
		ask["encoding_format"] = "base64"
	}
	body, err := json.Marshal(ask)
	if err != nil {
		return nil, err
	}
	req, err := openai.ParseEmbedding(body)
	if err != nil {
		call.done(s.Now(), nil, err)
		return nil, err
	}
	run, err := s.Engine.Run(ctx, Plan{Target: t}, providers.Call{Endpoint: providers.EndpointEmbed, Body: body, Embedding: req, Model: model})
	defer run.Close()
	call.done(s.Now(), run.Response, err)
	x.rec.UpstreamMS += run.UpstreamMS() // a provider call too
	if err != nil {
		return nil, err
	}
	if run.Response == nil {
		return nil, errors.New("the embedding call answered no body")
	}
	call.cost = s.cost(x, t.Provider, model, call.usage)
	return decodeEmbedding(run.Response.Body)
}

// embedCall is a semantic lookup's embedding call, which spends like any provider call: its
// managed provider's admission, its usage and cost, and how it ended, for settle to charge and
// finish to log as a row of its own.
type embedCall struct {
	provider string // the managed provider (@slug), or the adapter named by the request
	service  string // the adapter
	model    string
	admitted *leafAdmission // nil: not a managed provider
	usage    providers.Usage
	cost     float64
	status   int
	err      string
	charges  []ledger.Charge
	start    time.Time
	end      time.Time
}

// done records how the call ended: its answer's status and usage, or its error.
func (e *embedCall) done(end time.Time, resp *providers.Response, err error) {
	e.end, e.status = end, http.StatusOK
	if err != nil {
		e.status, e.err = http.StatusBadGateway, "the semantic cache's embedding call failed"
		var up *providers.UpstreamError
		if errors.As(err, &up) {
			e.status = up.Status
		}
		return
	}
	if resp != nil {
		if resp.Status != 0 {
			e.status = resp.Status
		}
		e.usage = resp.Usage
		if e.usage.TotalTokens == 0 {
			e.usage.TotalTokens = e.usage.PromptTokens + e.usage.CompletionTokens
		}
	}
}

func (e *embedCall) amount() ledger.Amount {
	return ledger.Amount{Cost: e.cost, Tokens: float64(e.usage.TotalTokens)}
}

// record is the call's log row: under the request's trace, its own usage, cost and budgets.
func (e *embedCall) record(x *exchange) analytics.LogRecord {
	latency := float64(e.end.Sub(e.start).Microseconds()) / 1000
	rec := analytics.LogRecord{ID: newRequestID(), TraceID: x.rec.TraceID, ParentSpanID: x.rec.SpanID,
		SpanName: "semantic cache embedding", OrganisationID: x.rec.OrganisationID, WorkspaceID: x.rec.WorkspaceID,
		APIKeyID: x.rec.APIKeyID, Provider: e.provider, AIService: e.service, Model: e.model, ConfigID: x.rec.ConfigID,
		Endpoint: providers.EndpointEmbed, Method: http.MethodPost, Path: "/embeddings", StatusCode: e.status,
		PromptTokens: e.usage.PromptTokens, TotalTokens: e.usage.TotalTokens, Cost: e.cost, LatencyMS: latency,
		UpstreamMS: latency, CacheStatus: analytics.CacheDisabled, Metadata: x.metadata, Error: e.err, LogFormat: "v1",
		StartedAt: e.start, EndedAt: e.end}
	if len(e.charges) > 0 {
		rec.Provenance = &analytics.Provenance{Charged: appendCharges(nil, e.charges)}
	}
	return rec
}

// base64Embeddings are the provider types whose embeddings API answers encoding_format base64
// (OpenAI's, and the compatible APIs that document it).
var base64Embeddings = map[string]bool{"openai": true, "azure-openai": true}

// decodeEmbedding reads the first vector of an embeddings answer: an array of numbers, or the
// base64 of little-endian float32s.
func decodeEmbedding(body []byte) ([]float32, error) {
	// Fast path: the first "embedding" as a base64 string, which holds no escapes, is cut out
	// and decoded without running the JSON scanner over the whole answer (four times faster).
	if _, rest, ok := bytes.Cut(body, []byte(`"embedding":"`)); ok {
		if enc, _, ok := bytes.Cut(rest, []byte{'"'}); ok {
			if vec, ok := float32s(enc); ok {
				return vec, nil
			}
		}
	}
	var out struct {
		Data []struct {
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Data) == 0 || len(out.Data[0].Embedding) == 0 {
		return nil, errors.New("the embedding call answered no vector")
	}
	raw := out.Data[0].Embedding
	if raw[0] == '"' {
		var enc string
		if err := json.Unmarshal(raw, &enc); err != nil {
			return nil, errors.New("the embedding call answered an unreadable vector")
		}
		vec, ok := float32s([]byte(enc))
		if !ok {
			return nil, errors.New("the embedding call answered an unreadable vector")
		}
		return vec, nil
	}
	var vec []float32
	if err := json.Unmarshal(raw, &vec); err != nil || len(vec) == 0 {
		return nil, errors.New("the embedding call answered no vector")
	}
	return vec, nil
}

// float32s decodes the base64 of little-endian float32s.
func float32s(enc []byte) ([]float32, bool) {
	b := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
	n, err := base64.StdEncoding.Decode(b, enc)
	if err != nil || n == 0 || n%4 != 0 {
		return nil, false
	}
	vec := make([]float32, n/4)
	for i := range vec {
		vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return vec, true
}

// firstLeaf is the first target a plan would try.
func firstLeaf(p *Plan) *providers.Target {
	for p != nil {
		if p.Target != nil {
			return p.Target
		}
		if len(p.Targets) == 0 {
			return nil
		}
		p = &p.Targets[0]
	}
	return nil
}

// answerCached answers a hit as the request asked: the stored body, or, for a streamed
// request, a stream replayed from it ending in [DONE].
func (s *Service) answerCached(ctx context.Context, x *exchange, out Reply, e *cache.Entry, call providers.Call) (int, error) {
	var meta cacheMeta
	_ = json.Unmarshal(e.Meta, &meta)
	// The answer's guardrails judge a cached answer as they judge a provider's.
	body, err := s.afterHook(ctx, x, call, meta.Provider, e.Body)
	if err != nil {
		return 0, err
	}
	x.cachedLatencyMS = meta.LatencyMS
	if x.span != nil {
		x.responseModel = jsonModel(e.Body)
	}
	x.rec.CacheSavedCost = meta.Cost
	x.rec.AIService = meta.Provider
	if len(body) <= maxLoggedBody {
		x.rec.ResponseBody, x.rec.ResponseBodyEncoding = loggedBody(body)
	}
	x.cache.acc = nil // nothing to store
	if !x.cache.stream {
		out.Header().Set("Content-Type", "application/json")
		out.WriteHeader(http.StatusOK)
		_, _ = out.Write(withHookResults(body, x.hookResults()))
		return http.StatusOK, nil
	}
	chunks, err := openai.ReplayStream(body, x.cache.usage)
	if err != nil {
		return 0, domain.Errorf(domain.CodeInternal, "a cached answer could not be replayed as a stream: %v", err)
	}
	sw := sse.NewWriter(out)
	out.WriteHeader(http.StatusOK)
	for i, c := range chunks {
		if i == 0 {
			x.rec.TTFTMS = float64(s.Now().Sub(x.start).Microseconds()) / 1000
		}
		if err := sw.Data(c); err != nil {
			x.rec.Error = "client closed the stream"
			return StatusClientClosed, nil
		}
	}
	_ = sw.Done()
	return http.StatusOK, nil
}

// keepAnswer notes a provider's complete answer for the cache, unless it must not be cached:
// a tool-call answer when the config says so.
func (x *exchange) keepAnswer(body []byte) {
	l := x.cache
	if l == nil || len(body) == 0 {
		return
	}
	if !l.cfg.CachesToolCalls() && openai.ChatAnswerHasToolCalls(body) {
		return
	}
	l.answer = body
}

// accumulate adds a streamed chunk to the answer being assembled for the cache; a chunk it
// cannot read ends the assembly (the stream is served all the same).
func (l *cacheLookup) accumulate(chunk []byte) {
	if err := l.acc.Add(chunk); err != nil {
		l.acc = nil
	}
}

// keepStream keeps a stream's assembled answer for the cache once the stream ended well and
// every choice finished: a partial stream is never cached.
// A stream whose client did not ask for usage carries none; the usage the provider reported
// (or the gateway estimated) is added, so that a later streamed hit that asks for usage gets it.
func (x *exchange) keepStream(u providers.Usage) {
	l := x.cache
	if l == nil || l.acc == nil || !l.acc.Complete() {
		return
	}
	body, err := l.acc.Body()
	if err != nil {
		return
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return
	}
	if _, ok := fields["usage"]; !ok && u.TotalTokens+u.PromptTokens+u.CompletionTokens > 0 {
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.CompletionTokens
		}
		fields["usage"], _ = json.Marshal(map[string]int{"prompt_tokens": u.PromptTokens,
			"completion_tokens": u.CompletionTokens, "total_tokens": total})
		if body, err = json.Marshal(fields); err != nil {
			return
		}
	}
	x.keepAnswer(body)
}

// storeAnswer puts the answer a miss got into the cache, off the request path: the request
// has been answered and settled, so its cost and latency are known. When too many puts are in
// flight the answer is not stored.
func (s *Service) storeAnswer(x *exchange) {
	l, c := x.cache, s.Cache
	if l == nil || l.answer == nil || c == nil || x.rec.StatusCode != http.StatusOK {
		return
	}
	meta, _ := json.Marshal(cacheMeta{Provider: x.rec.AIService, Model: x.model, Cost: x.rec.Cost, LatencyMS: x.rec.LatencyMS})
	now := s.Now()
	e := cache.Entry{Key: l.key, Workspace: l.workspace, Namespace: l.namespace, Partition: l.partition, Body: l.answer,
		Meta: meta, Vector: l.vector, CreatedAt: now, ExpiresAt: now.Add(l.maxAge)}
	c.once.Do(func() { c.writes = make(chan struct{}, maxCacheWrites) })
	select {
	case c.writes <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-c.writes }()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := c.Store.Put(ctx, e)
		c.observe(err)
		if err == nil && e.Vector != nil && c.Index != nil {
			c.Index.Add(e.Partition, e.Key, e.Vector, e.ExpiresAt)
		}
	}()
}

func (c *Cache) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.Timeout <= 0 {
		return context.WithTimeout(ctx, time.Second)
	}
	return context.WithTimeout(ctx, c.Timeout)
}

// observe logs the cache store's outage once as it starts (WARN) and once as it ends (INFO).
func (c *Cache) observe(err error) {
	c.outage.Lock()
	defer c.outage.Unlock()
	switch {
	case err != nil && !c.failing:
		c.failing = true
		c.logf("the answer cache's store failed; requests are served uncached until it answers", "error", err)
	case err == nil && c.failing:
		c.failing = false
		if c.Log != nil {
			c.Log.Info("the answer cache's store answers again")
		}
	}
}

func (c *Cache) logf(msg string, args ...any) {
	if c.Log != nil {
		c.Log.Warn(msg, args...)
	}
}

// digest is the hex SHA-256 of parts, each length-prefixed so that no two lists of parts
// collide.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		_, _ = h.Write([]byte(strconv.Itoa(len(p))))
		_, _ = h.Write([]byte{':'})
		_, _ = h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}
