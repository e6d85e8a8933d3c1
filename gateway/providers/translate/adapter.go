package translate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/sse"
)

// Family is what one translating provider family supplies: its name, where and how a call is
// sent, and the translation each way. The rest of a call (sending it, refusing what is not 2xx,
// bounding the answer, the life of a stream, pass-through) is Adapter's, the same for every
// family.
type Family interface {
	// Name is the provider's name, as errors and Target.Provider name it.
	Name() string
	// Base is the API's versioned base URL for t, without a trailing slash: calls' paths and
	// pass-through paths go under it.
	Base(t providers.Target) string
	// Authorize sets the credential (and version) headers, after any forwarded ones.
	Authorize(h http.Header, t providers.Target)
	// Build translates an OpenAI chat call into the provider's request.
	Build(t providers.Target, c providers.Call, stream bool) (Request, error)
	// Refusal turns an answer outside 2xx into an error: its status, headers and (at most
	// 1 MiB of) its body; key is the credential to scrub from it.
	Refusal(status int, h http.Header, raw []byte, key string) error
	// Answer translates a whole answer's body (Malformed when it cannot be read).
	Answer(raw []byte, tr Translation) (*Completion, providers.Usage, error)
	// Header is what of a whole answer's headers is passed back.
	Header(h http.Header) http.Header
	// Stream returns the translator of one streamed answer, which adds its chunks to out; key is
	// the credential to scrub from what the stream echoes.
	Stream(tr Translation, key string, out *Chunks) Events
}

// Request is a chat call translated: its path (and query) under the family's Base, its body,
// and what the answer's translation needs to know of the call.
type Request struct {
	Path  string
	Query string
	Body  []byte
	Translation
}

// Translation is what the answer's translation needs to know of the request.
type Translation struct {
	Strict       bool   // drop what is beyond OpenAI's fields (thinking)
	Legacy       bool   // the request used functions: answer with function_call
	IncludeUsage bool   // stream_options.include_usage: end the stream with a usage chunk
	Model        string // the model called, until the provider names it
}

// Adapter is a translating provider adapter: chat, whole and streamed, and pass-through, over
// a Family.
type Adapter struct {
	f      Family
	client *http.Client
}

var (
	_ providers.Provider      = (*Adapter)(nil)
	_ providers.ChatStreamer  = (*Adapter)(nil)
	_ providers.PassThrougher = (*Adapter)(nil)
)

// New returns f's adapter; client sends calls whose Target carries no client (nil: a pooled
// client of its own).
func New(f Family, client *http.Client) *Adapter {
	if client == nil {
		client = providers.NewClient()
	}
	return &Adapter{f: f, client: client}
}

// Name is the provider name.
func (a *Adapter) Name() string { return a.f.Name() }

// Chat sends one translated request and translates its answer.
func (a *Adapter) Chat(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	req, err := a.f.Build(t, c, false)
	if err != nil {
		return nil, err
	}
	resp, err := a.do(ctx, t, c, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := a.readBody(ctx, t, resp)
	if err != nil {
		return nil, err
	}
	out, usage, err := a.f.Answer(raw, req.Translation)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &providers.Response{Status: http.StatusOK, Header: a.f.Header(resp.Header), Body: b, Usage: usage}, nil
}

// ChatStream sends one streamed translated request; the family turns its events into chunks.
func (a *Adapter) ChatStream(ctx context.Context, t providers.Target, c providers.Call) (providers.Stream, error) {
	req, err := a.f.Build(t, c, true)
	if err != nil {
		return nil, err
	}
	resp, err := a.do(ctx, t, c, req)
	if err != nil {
		return nil, err
	}
	s := &stream{ctx: ctx, provider: a.f.Name(), key: t.APIKey, body: resp.Body, r: sse.NewReader(resp.Body),
		out: &Chunks{Created: time.Now().Unix(), Model: req.Model}}
	s.events = a.f.Stream(req.Translation, t.APIKey, s.out)
	return s, nil
}

// PassThrough sends any other call to the provider's API with the Target's credential, and
// returns the answer unchanged whatever its status.
func (a *Adapter) PassThrough(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	req, err := passThroughRequest(ctx, a.f.Base(t), c)
	if err != nil {
		return nil, err
	}
	a.f.Authorize(req.Header, t)
	return a.send(ctx, t, req)
}

// do sends a translated request and turns a refusal into the family's error.
func (a *Adapter) do(ctx context.Context, t providers.Target, c providers.Call, r Request) (*http.Response, error) {
	u := a.f.Base(t) + r.Path
	if r.Query != "" {
		u += "?" + r.Query
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(r.Body))
	if err != nil {
		return nil, &providers.ConnectionError{Provider: a.f.Name(), Reason: "its base URL is not a valid URL", Err: errors.New("the base URL is not a valid URL")}
	}
	providers.ForwardHeaders(req.Header, c.Header, false)
	req.Header.Set("Content-Type", "application/json")
	a.f.Authorize(req.Header, t)
	resp, err := a.send(ctx, t, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil && ctx.Err() != nil {
			return nil, providers.TransportError(ctx, a.f.Name(), err, t.APIKey)
		}
		return nil, a.f.Refusal(resp.StatusCode, resp.Header, raw, t.APIKey)
	}
	return resp, nil
}

// send sends req with the Target's client (which carries the egress guard for custom hosts),
// or the adapter's own, and sorts a failure: the caller's cancellation as ctx.Err(); its
// deadline (the request timeout) as a timed-out *ConnectionError that still unwraps to
// context.DeadlineExceeded; anything else before an answer as a *ConnectionError.
func (a *Adapter) send(ctx context.Context, t providers.Target, req *http.Request) (*http.Response, error) {
	client := t.Client
	if client == nil {
		client = a.client
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, providers.TransportError(ctx, a.f.Name(), err, t.APIKey)
	}
	return resp, nil
}

// maxBody bounds a whole (non-streamed) upstream answer, so that a provider cannot make the
// gateway buffer without limit.
const maxBody = 32 << 20

// readBody reads a whole answer, bounded by maxBody.
func (a *Adapter) readBody(ctx context.Context, t providers.Target, resp *http.Response) ([]byte, error) {
	provider := a.f.Name()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, providers.TransportError(ctx, provider, err, t.APIKey)
	}
	if len(body) > maxBody {
		return nil, &providers.UpstreamError{Status: http.StatusBadGateway, Provider: provider,
			Body: ErrorBody(provider+" answered more than 32 MiB", "api_error", nil)}
	}
	return body, nil
}

// passThroughRequest builds a pass-through request to the call's path under base, with its
// query. A path with ?, # or dot segments is refused, so that a call cannot climb out of the
// API's base.
func passThroughRequest(ctx context.Context, base string, c providers.Call) (*http.Request, error) {
	p := c.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if strings.ContainsAny(p, "?#") {
		return nil, domain.Invalid("path", "the path must not contain ? or #")
	}
	if providers.HasDotSegment(p) {
		return nil, domain.Invalid("path", "the path must not contain dot segments")
	}
	u := base + p
	if c.Query != "" {
		u += "?" + c.Query
	}
	req, err := providers.NewPassThroughRequest(ctx, u, c, false)
	if err != nil {
		return nil, domain.Invalid("path", "the path does not make a valid URL")
	}
	return req, nil
}

// Refused is a refusal in the provider's own words: its status, its Retry-After, and its body
// (scrubbed of key) in OpenAI's error shape as providers.ProviderErrorBody keeps it.
func Refused(provider string, status int, h http.Header, raw []byte, key string) *providers.UpstreamError {
	return &providers.UpstreamError{
		Status:     status,
		RetryAfter: providers.RetryAfter(h, time.Now()),
		Body:       providers.ProviderErrorBody(provider, status, providers.Scrub(raw, key)),
		Provider:   provider,
	}
}

// Malformed is the error of an answer or event that cannot be read: "<provider> <what>", a 502.
func Malformed(provider, what string) *providers.UpstreamError {
	return &providers.UpstreamError{Status: http.StatusBadGateway, Provider: provider,
		Body: ErrorBody(provider+" "+what, "api_error", nil)}
}
