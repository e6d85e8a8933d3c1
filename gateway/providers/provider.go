package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/causeway/causeway/gateway/openai"
)

// Endpoint kinds, as the specification's endpoint_type names them.
const (
	EndpointChat        = "chatComplete"
	EndpointCompletion  = "complete"
	EndpointEmbed       = "embed"
	EndpointRerank      = "rerank"
	EndpointImage       = "imageGenerate"
	EndpointPassThrough = "proxy"
)

// Target is where one call goes: which provider, at which base URL, with which credential
// and headers. The gateway resolves it from the request's headers, a config or a managed
// provider; an adapter only reads it.
type Target struct {
	Provider string // adapter name: openai, azure-openai, anthropic, google, cohere, groq, ...
	BaseURL  string // e.g. https://api.openai.com/v1; empty: the provider's default
	APIKey   string // the provider credential, decrypted; never logged
	// Options are provider-specific settings: Azure's resource, deployment and api-version,
	// Anthropic's beta header, Vertex's project and region.
	Options map[string]string
	// Client sends the request. For a custom host it carries the egress guard's dialer, so
	// every connection (and every redirect) is checked on the address it resolves to.
	Client *http.Client
	// StrictOpenAI removes fields beyond OpenAI's (such as thinking) instead of passing them on.
	StrictOpenAI bool
}

// Call is one OpenAI-shaped request.
type Call struct {
	Endpoint string          // one of the Endpoint kinds
	Model    string          // after config overrides
	Body     json.RawMessage // the OpenAI request body, overrides applied
	// The request body as the gateway parsed it, for the endpoint's kind (the others nil): what
	// the translating adapters build their provider's request from, while the OpenAI-compatible
	// ones send Body. Its Raw is Body. A call built from bytes alone leaves them nil, and an
	// adapter then parses Body (ChatRequest, RerankRequest). WithOverrides keeps both in step.
	Chat       *openai.ChatRequest
	Completion *openai.CompletionRequest
	Embedding  *openai.EmbeddingRequest
	Rerank     *openai.RerankRequest
	Stream     bool
	// Path and Method are set for pass-through calls: the path after /v1, sent unchanged.
	Path   string
	Method string
	Query  string
	// Header holds the headers to forward unprocessed (x-gateway-forward-headers).
	Header http.Header
}

// Usage is what a call consumed, as OpenAI reports it: PromptTokens counts every input token,
// those read from the provider's prompt cache (CachedTokens) and those written to it
// (CacheWriteTokens, which providers bill above the input price) included.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Response is a complete answer in OpenAI's shape (or, for pass-through, the provider's own
// answer unchanged).
type Response struct {
	Status int
	Header http.Header // headers worth passing back (content type, provider request ids)
	Body   []byte
	Usage  Usage
}

// Stream is a streamed answer: OpenAI chat.completion.chunk (or text_completion) JSON objects,
// one per Next, without the "data: " framing; io.EOF after the last. Usage is complete after
// io.EOF.
type Stream interface {
	Next() ([]byte, error)
	Usage() Usage
	Close() error
}

// Provider is every adapter: chat completions, whole answers.
type Provider interface {
	Name() string
	Chat(ctx context.Context, t Target, c Call) (*Response, error)
}

// Optional capabilities, checked by type assertion.
type (
	ChatStreamer interface {
		ChatStream(ctx context.Context, t Target, c Call) (Stream, error)
	}
	Completer interface {
		Complete(ctx context.Context, t Target, c Call) (*Response, error)
	}
	CompletionStreamer interface {
		CompleteStream(ctx context.Context, t Target, c Call) (Stream, error)
	}
	Embedder interface {
		Embed(ctx context.Context, t Target, c Call) (*Response, error)
	}
	Reranker interface {
		Rerank(ctx context.Context, t Target, c Call) (*Response, error)
	}
	// PassThrougher forwards any other call (images, audio, files, batches, fine-tuning, and
	// any path) to the provider and returns its answer unchanged, whatever its status, as the
	// raw *http.Response for the caller to copy (streams included).
	PassThrougher interface {
		PassThrough(ctx context.Context, t Target, c Call) (*http.Response, error)
	}
)

// UpstreamError is a provider's refusal or failure: its status (for fallback and retry on
// status codes), Retry-After when it sent one, and its body translated to OpenAI's error
// shape where the adapter knows how.
type UpstreamError struct {
	Status     int
	RetryAfter time.Duration
	Body       []byte // OpenAI error JSON
	Provider   string
}

func (e *UpstreamError) Error() string {
	return fmt.Sprintf("%s answered %d", e.Provider, e.Status)
}

// ConnectionError is a failure to reach the provider at all (DNS, refused, TLS, timeout
// before any answer, a connection reset): retried and fallen back from like a 5xx. Err is
// for logs (it may quote the address a host name resolved to); Describe is for the client.
type ConnectionError struct {
	Provider string
	// Host is the host (and port) of the URL called: the one the caller or an admin gave, or
	// the provider's default. Empty when the failure came before a URL was built.
	Host    string
	Timeout bool
	// Reason, when set, says what failed in words safe to show a client, in place of the
	// class ClassifyFailure finds in Err.
	Reason string
	Err    error
}

func (e *ConnectionError) Error() string { return e.Provider + ": " + e.Err.Error() }
func (e *ConnectionError) Unwrap() error { return e.Err }

// Class is the kind of failure (ClassifyFailure), and what it means in words.
func (e *ConnectionError) Class() (Failure, string) {
	if e.Reason != "" {
		return FailureOther, e.Reason
	}
	class, reason := ClassifyFailure(e.Err)
	if class == FailureOther && e.Timeout {
		return FailureTimeout, "no answer in time"
	}
	return class, reason
}

// Describe says what failed for the client: the provider, the host it was called at, and the
// class of failure, e.g. "the provider openai could not be reached at api.example.com:
// connection refused (nothing listens on that port)". It quotes nothing of Err, so no
// resolved address, URL path or query reaches the client.
func (e *ConnectionError) Describe() string {
	msg := "the provider " + e.Provider + " could not be reached"
	if e.Host != "" {
		msg += " at " + e.Host
	}
	_, reason := e.Class()
	return msg + ": " + reason
}

// Registry finds adapters by name. It is a value the gateway builds (NewRegistry), not a
// package global.
type Registry struct {
	byName map[string]Provider
}

// NewRegistry returns a registry of the given adapters; an adapter may register several names
// (OpenAI-compatible providers share one).
func NewRegistry(adapters map[string]Provider) *Registry {
	r := &Registry{byName: map[string]Provider{}}
	for name, p := range adapters {
		r.byName[name] = p
	}
	return r
}

// Get returns the adapter called name.
func (r *Registry) Get(name string) (Provider, bool) {
	p, ok := r.byName[name]
	return p, ok
}

// Names lists the registered provider names.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	return out
}
