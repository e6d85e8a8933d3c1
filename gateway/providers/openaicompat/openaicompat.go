package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tidwall/gjson"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/sse"
)

// Dialect is what sets one OpenAI-compatible provider apart from OpenAI.
type Dialect struct {
	// BaseURL is the default base; empty: the Target must carry one (self-hosted servers).
	BaseURL string
	// APIKeyHeader, when set, carries the key bare in that header (Azure's api-key) instead of
	// Authorization: Bearer.
	APIKeyHeader string
	// Suffix is appended to a Target's base URL that lacks it (Ollama serves OpenAI's API
	// under /v1 beside its own).
	Suffix string
	// StreamOptions says what becomes of stream_options on a stream.
	StreamOptions StreamOptionsPolicy
	// Azure: deployment-scoped URLs with an api-version query.
	Azure bool
}

// dialects are the providers that speak OpenAI's API, with their documented base URLs.
var dialects = map[string]Dialect{
	"openai":       {BaseURL: "https://api.openai.com/v1"},
	"azure-openai": {APIKeyHeader: "api-key", Azure: true},
	"groq":         {BaseURL: "https://api.groq.com/openai/v1"},
	// Mistral validates bodies strictly and sends usage in its last chunk on its own.
	"mistral-ai":   {BaseURL: "https://api.mistral.ai/v1", StreamOptions: KeepStreamOptions},
	"together-ai":  {BaseURL: "https://api.together.xyz/v1"},
	"fireworks-ai": {BaseURL: "https://api.fireworks.ai/inference/v1"},
	"deepseek":     {BaseURL: "https://api.deepseek.com/v1"},
	"openrouter":   {BaseURL: "https://openrouter.ai/api/v1"},
	"vllm":         {},
	"ollama":       {Suffix: "/v1"},
}

// StreamOptionsPolicy: what a stream's stream_options become upstream.
type StreamOptionsPolicy int

const (
	// AskStreamUsage adds include_usage when the client did not ask (OpenAI's default).
	AskStreamUsage StreamOptionsPolicy = iota
	// KeepStreamOptions sends the client's as they are: the provider reports usage unasked.
	KeepStreamOptions
	// DropStreamOptions removes them: the provider refuses the field.
	DropStreamOptions
)

// AzureDefaultAPIVersion is used when a Target names none: the latest generally available
// version of Azure OpenAI's data-plane inference API.
const AzureDefaultAPIVersion = "2024-10-21"

// Adapter is the adapter for OpenAI and every provider that speaks its dialect. The body goes
// out as the client sent it (OpenAI's JSON is the gateway's own), except for the
// model, the stream flag, stream usage and, in strict mode, fields OpenAI does not define; the
// answer comes back unchanged.
type Adapter struct {
	name   string
	d      Dialect
	client *http.Client
}

var (
	_ providers.Provider           = (*Adapter)(nil)
	_ providers.ChatStreamer       = (*Adapter)(nil)
	_ providers.Completer          = (*Adapter)(nil)
	_ providers.CompletionStreamer = (*Adapter)(nil)
	_ providers.Embedder           = (*Adapter)(nil)
	_ providers.PassThrougher      = (*Adapter)(nil)
)

// New returns the adapter for name, one of Names. client is used when a Target carries none;
// nil: providers.NewClient().
func New(name string, client *http.Client) (*Adapter, error) {
	d, ok := dialects[name]
	if !ok {
		return nil, fmt.Errorf("providers: %q is not an OpenAI-compatible provider", name)
	}
	return Custom(name, d, client), nil
}

// Custom returns the adapter of a provider that speaks OpenAI's dialect under a name that is
// not one of Names (Cohere's Compatibility API). client is used when a Target carries none;
// nil: providers.NewClient().
func Custom(name string, d Dialect, client *http.Client) *Adapter {
	if client == nil {
		client = providers.NewClient()
	}
	return &Adapter{name: name, d: d, client: client}
}

// Names lists the providers New serves.
func Names() []string {
	out := make([]string, 0, len(dialects))
	for n := range dialects {
		out = append(out, n)
	}
	return out
}

// All returns the adapter of every provider of Names, sharing client (nil:
// providers.NewClient()).
func All(client *http.Client) []*Adapter {
	if client == nil {
		client = providers.NewClient()
	}
	out := make([]*Adapter, 0, len(dialects))
	for name, d := range dialects {
		out = append(out, Custom(name, d, client))
	}
	return out
}

// Name is the provider's name.
func (p *Adapter) Name() string { return p.name }

// Chat is POST /chat/completions.
func (p *Adapter) Chat(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	return p.whole(ctx, t, c, "/chat/completions", chatFields)
}

// Complete is POST /completions.
func (p *Adapter) Complete(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	return p.whole(ctx, t, c, "/completions", completionFields)
}

// Embed is POST /embeddings.
func (p *Adapter) Embed(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	return p.whole(ctx, t, c, "/embeddings", embeddingFields)
}

// ChatStream is POST /chat/completions with stream=true.
func (p *Adapter) ChatStream(ctx context.Context, t providers.Target, c providers.Call) (providers.Stream, error) {
	return p.stream(ctx, t, c, "/chat/completions", chatFields)
}

// CompleteStream is POST /completions with stream=true.
func (p *Adapter) CompleteStream(ctx context.Context, t providers.Target, c providers.Call) (providers.Stream, error) {
	return p.stream(ctx, t, c, "/completions", completionFields)
}

// whole sends a call whose answer is read at once.
func (p *Adapter) whole(ctx context.Context, t providers.Target, c providers.Call, path string, fields map[string]bool) (*providers.Response, error) {
	body, _, err := prepareBody(c, t.StrictOpenAI, fields, false, KeepStreamOptions)
	if err != nil {
		return nil, err
	}
	resp, err := p.post(ctx, t, c, path, body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, providers.NewUpstreamError(p.name, resp, t.APIKey)
	}
	answer, err := providers.ReadAnswer(ctx, p.name, resp, t.APIKey)
	if err != nil {
		return nil, err
	}
	return &providers.Response{
		Status: resp.StatusCode,
		Header: AnswerHeaders(resp.Header),
		Body:   answer,
		Usage:  usageOf(answer),
	}, nil
}

// stream sends a streamed call. Usage is always asked for (stream_options.include_usage) where
// the provider accepts it, so the request log has it; when the client did not ask, the
// usage-only last chunk OpenAI then adds is read for its usage and not yielded, so the client
// sees the stream it asked for.
func (p *Adapter) stream(ctx context.Context, t providers.Target, c providers.Call, path string, fields map[string]bool) (providers.Stream, error) {
	body, hideUsage, err := prepareBody(c, t.StrictOpenAI, fields, true, p.streamOptions(t))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := p.post(ctx, t, c, path, body)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer cancel() // after the error body is read
		return nil, providers.NewUpstreamError(p.name, resp, t.APIKey)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// A provider that refuses a stream after all sometimes says so in a JSON 200.
		defer cancel()
		answer, err := providers.ReadAnswer(ctx, p.name, resp, t.APIKey)
		if err != nil {
			return nil, err
		}
		return nil, &providers.UpstreamError{Status: http.StatusBadGateway, Provider: p.name,
			Body: providers.ProviderErrorBody(p.name, http.StatusBadGateway, providers.Scrub(answer, t.APIKey))}
	}
	return newChunkStream(ctx, cancel, p.name, t.APIKey, resp.Body, hideUsage), nil
}

// azureStreamUsageSince is the first Azure OpenAI API version that accepts stream_options;
// older versions refuse the field as unrecognised.
const azureStreamUsageSince = "2024-09-01"

// streamOptions is the Dialect's policy, except on an Azure API version too old for the field
// (versions are dates, so they compare as strings).
func (p *Adapter) streamOptions(t providers.Target) StreamOptionsPolicy {
	if p.d.Azure {
		if v := t.Option(providers.OptionAzureAPIVersion); v != "" && v < azureStreamUsageSince {
			return KeepStreamOptions
		}
	}
	return p.d.StreamOptions
}

// post sends a JSON body to path.
func (p *Adapter) post(ctx context.Context, t providers.Target, c providers.Call, path string, body []byte) (*http.Response, error) {
	u, err := p.endpoint(t, c.Model, path, "")
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: building the request: %w", p.name, providers.RedactError(err, t.APIKey))
	}
	providers.ForwardHeaders(req.Header, c.Header, false)
	req.Header.Set("Content-Type", "application/json")
	p.authorize(req.Header, t)
	return p.send(ctx, t, req)
}

func (p *Adapter) send(ctx context.Context, t providers.Target, req *http.Request) (*http.Response, error) {
	client := t.Client
	if client == nil {
		client = p.client
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, providers.TransportError(ctx, p.name, err, t.APIKey)
	}
	return resp, nil
}

// authorize sets the Target's credential the provider's way; the client's own Authorization
// never reaches the provider (ForwardHeaders drops it).
func (p *Adapter) authorize(h http.Header, t providers.Target) {
	if t.APIKey != "" {
		if p.d.APIKeyHeader != "" {
			h.Set(p.d.APIKeyHeader, t.APIKey)
		} else {
			h.Set("Authorization", "Bearer "+t.APIKey)
		}
	}
	if org := t.Option(providers.OptionOpenAIOrg); org != "" {
		h.Set("OpenAI-Organization", org)
	}
	if project := t.Option(providers.OptionOpenAIProject); project != "" {
		h.Set("OpenAI-Project", project)
	}
}

// base is the Target's base URL or the provider's default, without a trailing slash.
func (p *Adapter) base(t providers.Target) (string, error) {
	base := strings.TrimRight(t.BaseURL, "/")
	if base == "" {
		base = p.d.BaseURL
	}
	if base == "" {
		return "", domain.Invalid("x-gateway-custom-host", "provider %s is self-hosted: it needs a custom host (its base URL)", p.name)
	}
	if p.d.Suffix != "" && !strings.HasSuffix(base, p.d.Suffix) {
		base += p.d.Suffix
	}
	return base, nil
}

// endpoint is the URL of path (an OpenAI path such as /chat/completions) with query.
func (p *Adapter) endpoint(t providers.Target, model, path, query string) (string, error) {
	if p.d.Azure {
		return p.azureEndpoint(t, model, path, query)
	}
	base, err := p.base(t)
	if err != nil {
		return "", err
	}
	if query != "" {
		return base + path + "?" + query, nil
	}
	return base + path, nil
}

// azureEndpoint builds Azure OpenAI's URL:
// https://{resource}.openai.azure.com/openai/deployments/{deployment}/{path}?api-version=...
// (learn.microsoft.com, "Azure OpenAI in Azure AI Foundry Models REST API reference"). A
// Target's BaseURL stands for https://{resource}.openai.azure.com/openai. Paths that are not
// deployment-scoped (files, batches, fine-tuning) go under /openai directly.
func (p *Adapter) azureEndpoint(t providers.Target, model, path, query string) (string, error) {
	base := strings.TrimRight(t.BaseURL, "/")
	if base == "" {
		resource := t.Option(providers.OptionAzureResource)
		if resource == "" {
			return "", domain.Invalid("x-gateway-azure-resource-name", "azure-openai needs a resource name")
		}
		if !isDNSLabel(resource) {
			return "", domain.Invalid("x-gateway-azure-resource-name", "an Azure resource name has only letters, digits and hyphens")
		}
		base = "https://" + resource + ".openai.azure.com/openai"
	}
	if azureDeploymentScoped(path) {
		deployment := t.Option(providers.OptionAzureDeployment)
		if deployment == "" {
			deployment = model
		}
		if deployment == "" {
			return "", domain.Invalid("x-gateway-azure-deployment-id", "azure-openai needs a deployment id")
		}
		base += "/deployments/" + url.PathEscape(deployment)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", domain.Invalid("query", "the query string is malformed")
	}
	if q.Get("api-version") == "" {
		version := t.Option(providers.OptionAzureAPIVersion)
		if version == "" {
			version = AzureDefaultAPIVersion
		}
		if query != "" {
			query += "&"
		}
		query += "api-version=" + url.QueryEscape(version)
	}
	return base + path + "?" + query, nil
}

func azureDeploymentScoped(path string) bool {
	for _, prefix := range []string{"/chat/completions", "/completions", "/embeddings", "/audio/", "/images/"} {
		if path == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// isDNSLabel: a resource name becomes a host name label, so nothing else may pass (a dot, a
// slash or an @ would point the credential at another host).
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// PassThrough forwards any call (images, audio, files, batches, fine-tuning, any path) with its
// method, path, query and body unchanged, and returns the provider's answer, whatever its
// status, for the caller to copy (and close): a streamed answer is read as it arrives.
// NewUpstreamError turns an answer the caller wants to retry or fall back from into an error.
// Call.Header should carry the client's Content-Type and Accept besides the forwarded ones,
// since a pass-through body may be multipart; JSON is assumed when it names none.
func (p *Adapter) PassThrough(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	path := c.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if strings.ContainsAny(path, "?#") || providers.HasDotSegment(path) {
		return nil, domain.Invalid("path", "the path must not contain ?, # or dot segments")
	}
	u, err := p.endpoint(t, c.Model, path, c.Query)
	if err != nil {
		return nil, err
	}
	req, err := providers.NewPassThroughRequest(ctx, u, c, true)
	if err != nil {
		return nil, fmt.Errorf("%s: building the request: %w", p.name, providers.RedactError(err, t.APIKey))
	}
	p.authorize(req.Header, t)
	return p.send(ctx, t, req)
}

// AnswerHeaders are the upstream headers worth handing back: the content type, the
// provider's request id and processing time, and its rate-limit state.
func AnswerHeaders(h http.Header) http.Header {
	out := http.Header{}
	for name, values := range h {
		lower := strings.ToLower(name)
		switch {
		case lower == "content-type", lower == "x-request-id", lower == "request-id",
			lower == "openai-processing-ms", lower == "openai-version", lower == "apim-request-id",
			strings.HasPrefix(lower, "x-ratelimit-"):
			out[name] = values
		}
	}
	return out
}

// Fields OpenAI defines for each endpoint (platform.openai.com/docs/api-reference: "Create
// chat completion", "Create completion", "Create embeddings"). Strict mode sends only these.
var (
	chatFields = fieldSet("messages", "model", "audio", "frequency_penalty", "function_call",
		"functions", "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata",
		"modalities", "n", "parallel_tool_calls", "prediction", "presence_penalty",
		"prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
		"service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice",
		"tools", "top_logprobs", "top_p", "user", "verbosity", "web_search_options")
	completionFields = fieldSet("model", "prompt", "best_of", "echo", "frequency_penalty",
		"logit_bias", "logprobs", "max_tokens", "n", "presence_penalty", "seed", "stop", "stream",
		"stream_options", "suffix", "temperature", "top_p", "user")
	embeddingFields = fieldSet("input", "model", "dimensions", "encoding_format", "user")
)

func fieldSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// prepareBody makes the body the provider receives from the client's: the call's model,
// stream set to the call's kind, in strict mode only OpenAI's fields, and for a stream
// stream_options as policy says: with AskStreamUsage, include_usage is added when the client
// did not ask (hideUsage reports that). The body is re-encoded only when something changed.
func prepareBody(c providers.Call, strict bool, fields map[string]bool, stream bool, policy StreamOptionsPolicy) (body []byte, hideUsage bool, err error) {
	if !strict && !stream && bodyAsIs(c) {
		return c.Body, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c.Body, &m); err != nil || m == nil {
		return nil, false, domain.Invalid("body", "the body must be a JSON object")
	}
	changed := false
	if strict {
		for k := range m {
			if !fields[k] {
				delete(m, k)
				changed = true
			}
		}
	}
	if c.Model != "" {
		if model, _ := json.Marshal(c.Model); !bytes.Equal(bytes.TrimSpace(m["model"]), model) {
			m["model"] = model
			changed = true
		}
	}
	wantStream := []byte("false")
	if stream {
		wantStream = []byte("true")
	}
	if raw, ok := m["stream"]; (ok || stream) && !bytes.Equal(bytes.TrimSpace(raw), wantStream) {
		m["stream"] = wantStream
		changed = true
	}
	if !stream || policy == DropStreamOptions {
		if _, ok := m["stream_options"]; ok {
			delete(m, "stream_options")
			changed = true
		}
	}
	if stream && policy == AskStreamUsage {
		var opts map[string]json.RawMessage
		if raw := m["stream_options"]; len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if err := json.Unmarshal(raw, &opts); err != nil {
				return nil, false, domain.Invalid("stream_options", "stream_options must be an object")
			}
		}
		if !bytes.Equal(bytes.TrimSpace(opts["include_usage"]), []byte("true")) {
			if opts == nil {
				opts = map[string]json.RawMessage{}
			}
			opts["include_usage"] = json.RawMessage("true")
			m["stream_options"], _ = json.Marshal(opts)
			changed, hideUsage = true, true
		}
	}
	if !changed {
		return c.Body, hideUsage, nil
	}
	body, err = json.Marshal(m)
	return body, hideUsage, err
}

// bodyAsIs reports, reading only the fields it may change, that a whole answer's body needs
// nothing changed: the hot path of a chat call, which then costs one scan of the body.
func bodyAsIs(c providers.Call) bool {
	if c.Chat != nil && sameBytes(c.Chat.Raw, c.Body) {
		// The chat was parsed from this very body: its members are already known.
		if _, ok := c.Chat.Member("stream_options"); ok {
			return false
		}
		if s, ok := c.Chat.Member("stream"); ok && !bytes.Equal(bytes.TrimSpace(s), []byte("false")) {
			return false
		}
		return c.Model == "" || c.Chat.Model == c.Model
	}
	var probe struct {
		Model         json.RawMessage `json:"model"`
		Stream        json.RawMessage `json:"stream"`
		StreamOptions json.RawMessage `json:"stream_options"`
	}
	if json.Unmarshal(c.Body, &probe) != nil || !isObject(c.Body) || probe.StreamOptions != nil {
		return false
	}
	if s := bytes.TrimSpace(probe.Stream); len(s) > 0 && !bytes.Equal(s, []byte("false")) {
		return false
	}
	if c.Model == "" {
		return true
	}
	var model string
	return json.Unmarshal(probe.Model, &model) == nil && model == c.Model
}

// usageFrom reads OpenAI's usage object, with DeepSeek's cache-hit count as a fallback for the
// cached tokens, in one pass over its members (gjson: no decoding of the rest, no allocation).
func usageFrom(u gjson.Result) providers.Usage {
	var out providers.Usage
	hits := 0
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "prompt_tokens":
			out.PromptTokens = int(v.Int())
		case "completion_tokens":
			out.CompletionTokens = int(v.Int())
		case "total_tokens":
			out.TotalTokens = int(v.Int())
		case "prompt_cache_hit_tokens":
			hits = int(v.Int())
		case "prompt_tokens_details":
			out.CachedTokens, out.CacheWriteTokens = int(v.Get("cached_tokens").Int()), int(v.Get("cache_write_tokens").Int())
		case "completion_tokens_details":
			out.ReasoningTokens = int(v.Get("reasoning_tokens").Int())
		}
		return true
	})
	if out.CachedTokens <= 0 {
		out.CachedTokens = hits
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

// usageOf reads the usage of a whole answer; zero when it has none. Only the usage member is
// read: the rest of the answer (its choices, the bulk of it) is scanned past, not decoded, and
// not validated here (the log validates what it keeps).
func usageOf(body []byte) providers.Usage {
	if !bytes.Contains(body, usageKey) {
		return providers.Usage{}
	}
	u := gjson.GetBytes(body, "usage")
	if !u.IsObject() {
		return providers.Usage{}
	}
	return usageFrom(u)
}

// chunkStream reads an OpenAI-style event stream: data-only events of JSON chunks, ended by
// data: [DONE] (platform.openai.com/docs/api-reference/chat-streaming).
type chunkStream struct {
	provider  string
	apiKey    string
	ctx       context.Context
	cancel    context.CancelFunc
	body      io.ReadCloser
	events    *sse.Reader
	hideUsage bool

	usage  providers.Usage
	chunks int
	err    error // sticky: io.EOF after [DONE], or the failure

	// done and closeOnce let Close run on another goroutine than Next, as when the gateway
	// stops a stream because its client went away.
	done      atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

func newChunkStream(ctx context.Context, cancel context.CancelFunc, provider, apiKey string, body io.ReadCloser, hideUsage bool) *chunkStream {
	return &chunkStream{
		provider: provider, apiKey: apiKey, ctx: ctx, cancel: cancel,
		body: body, events: sse.NewReader(body), hideUsage: hideUsage,
	}
}

var (
	doneData    = []byte("[DONE]")
	usageKey    = []byte(`"usage"`)
	xGroqKey    = []byte(`"x_groq"`)
	errorKey    = []byte(`"error"`)
	nullLiteral = []byte("null")
)

// Next returns the next chunk's JSON. The end of the upstream without [DONE], a cut
// connection or an error event is an error, never io.EOF, so a truncated answer is never
// taken for a whole one.
func (s *chunkStream) Next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	for {
		ev, err := s.events.Next()
		if err != nil {
			s.err = s.cut(err)
			return nil, s.err
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		if bytes.Equal(data, doneData) {
			s.done.Store(true)
			s.err = io.EOF
			return nil, io.EOF
		}
		if ev.Name == "error" || bytes.Contains(data, errorKey) {
			if upErr := s.inBandError(ev.Name, data); upErr != nil {
				s.err = upErr
				return nil, upErr
			}
		}
		if hasUsageObject(data) || bytes.Contains(data, xGroqKey) {
			if usageOnly := s.captureUsage(data); usageOnly && s.hideUsage {
				continue
			}
		}
		s.chunks++
		return data, nil
	}
}

// hasUsageObject reports a "usage" key whose value is an object, without decoding: with
// include_usage OpenAI sends "usage":null in every chunk but the last. Inside a JSON string a
// quote is escaped, so "usage" followed by a colon is always a key.
func hasUsageObject(data []byte) bool {
	for {
		i := bytes.Index(data, usageKey)
		if i < 0 {
			return false
		}
		rest := bytes.TrimLeft(data[i+len(usageKey):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			if v := bytes.TrimLeft(rest[1:], " \t\r\n"); len(v) > 0 && v[0] == '{' {
				return true
			}
		}
		data = data[i+len(usageKey):]
	}
}

// cut turns a read failure into the stream's error: the caller's cancellation as is, anything
// else as a ConnectionError saying how far the stream got.
func (s *chunkStream) cut(err error) error {
	if s.ctx.Err() != nil {
		return providers.TransportError(s.ctx, s.provider, err, s.apiKey)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
		return &providers.ConnectionError{Provider: s.provider, Reason: fmt.Sprintf("its stream ended after %d chunks without [DONE]", s.chunks),
			Err: fmt.Errorf("the stream ended after %d chunks without [DONE]: %w", s.chunks, err)}
	}
	return &providers.ConnectionError{Provider: s.provider,
		Err: fmt.Errorf("the stream failed after %d chunks: %w", s.chunks, providers.RedactError(err, s.apiKey))}
}

// inBandError recognises an error sent inside the stream (a chunk {"error":{...}}, or an
// event named error), which OpenAI and others send when they fail after the answer began.
func (s *chunkStream) inBandError(name string, data []byte) *providers.UpstreamError {
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if name != "error" && (json.Unmarshal(data, &probe) != nil || len(probe.Error) == 0 || bytes.Equal(probe.Error, nullLiteral)) {
		return nil
	}
	return &providers.UpstreamError{Status: http.StatusBadGateway, Provider: s.provider,
		Body: providers.ProviderErrorBody(s.provider, http.StatusBadGateway, providers.Scrub(data, s.apiKey))}
}

// captureUsage keeps the usage a chunk reports (OpenAI: the last chunk's usage; Groq: also
// x_groq.usage) and says whether the chunk is only that: no choices.
func (s *chunkStream) captureUsage(data []byte) (usageOnly bool) {
	m := gjson.GetManyBytes(data, "usage", "x_groq.usage", "choices")
	u, top := m[0], true
	if !u.IsObject() {
		u, top = m[1], false
	}
	if !u.IsObject() {
		return false
	}
	s.usage = usageFrom(u)
	return top && emptyArray(m[2])
}

// emptyArray: absent, null, or an array with no items.
func emptyArray(r gjson.Result) bool {
	if !r.IsArray() {
		return r.Type == gjson.Null
	}
	empty := true
	r.ForEach(func(_, _ gjson.Result) bool {
		empty = false
		return false
	})
	return empty
}

// Usage is what the stream reported; complete after io.EOF.
func (s *chunkStream) Usage() providers.Usage { return s.usage }

// Close ends the stream. Before [DONE] it drops the connection, which is how the upstream
// learns that the client went away; after it, the connection goes back to the pool.
func (s *chunkStream) Close() error {
	s.closeOnce.Do(func() {
		if s.done.Load() {
			_, _ = io.CopyN(io.Discard, s.body, 4<<10)
		}
		s.closeErr = s.body.Close()
		s.cancel()
	})
	return s.closeErr
}

// isObject reports JSON text that is an object.
func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// sameBytes reports whether a and b are the same bytes in memory, not merely equal ones.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
