package translate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
)

// What the translating adapters share: the OpenAI side of the translation (helpers over the
// request's Go model, which the openai package reads; the answer and chunk shapes written), and
// the plumbing of one upstream call.

// maxBody bounds a whole (non-streamed) upstream answer, so that a provider cannot make the
// gateway buffer without limit.
const maxBody = 32 << 20

// FunctionCall is a function call in an answer: its name and its JSON-string arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolCall is a tool call in an answer.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// Text joins the text parts of a message's content (tool results and system prompts are
// text to the providers that take them as one string).
func Text(parts []openai.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == openai.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Functions lists the request's functions: tools, or the deprecated functions when there
// are no tools. legacy reports the latter, whose answers carry function_call, not tool_calls.
func Functions(req *openai.ChatRequest) (fns []openai.Function, legacy bool, err error) {
	if len(req.Tools) > 0 {
		for i, t := range req.Tools {
			if t.Type != "" && t.Type != "function" {
				return nil, false, &domain.Error{Code: domain.CodeUnsupported, Param: fmt.Sprintf("tools[%d].type", i),
					Message: "only function tools can be translated for this provider"}
			}
			fns = append(fns, t.Function)
		}
		return fns, false, nil
	}
	return req.Functions, len(req.Functions) > 0, nil
}

// MaxTokens is max_completion_tokens, or the deprecated max_tokens; nil when neither was
// sent.
func MaxTokens(req *openai.ChatRequest) *int {
	if n := req.OutputLimit(); n > 0 {
		return &n
	}
	return nil
}

// Args turns a tool call's JSON-string arguments into the JSON object providers take.
func Args(args, param string) (json.RawMessage, error) {
	args = strings.TrimSpace(args)
	if args == "" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return nil, domain.Invalid(param, "tool call arguments must be a JSON object")
	}
	return json.RawMessage(args), nil
}

// DataURL splits a data: URL into its media type and base64 payload.
func DataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if !isBase64 || mediaType == "" {
		return "", "", false
	}
	return mediaType, payload, true
}

// The answer side (spec 2.3).

type Completion struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []Choice   `json:"choices"`
	Usage   *UsageBody `json:"usage,omitempty"`
}

type Choice struct {
	Index        int             `json:"index"`
	Message      Message         `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type Message struct {
	Role          string        `json:"role"`
	Content       *string       `json:"content"`
	ToolCalls     []ToolCall    `json:"tool_calls,omitempty"`
	FunctionCall  *FunctionCall `json:"function_call,omitempty"`
	ContentBlocks []Block       `json:"content_blocks,omitempty"`
}

// Block is one entry of content_blocks: the answer's text and thinking in the order the
// model produced them, kept so that a client can send thinking (and its signature) back.
type Block struct {
	Type      string `json:"type,omitempty"` // empty in a streamed delta`
	Text      string `json:"text,omitempty"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type UsageBody struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

func UsageOf(u providers.Usage) *UsageBody {
	out := &UsageBody{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	out.PromptTokensDetails = &struct {
		CachedTokens int `json:"cached_tokens"`
	}{u.CachedTokens}
	if u.ReasoningTokens > 0 {
		out.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{u.ReasoningTokens}
	}
	return out
}

// The stream side: chat.completion.chunk objects.

type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *UsageBody    `json:"usage,omitempty"`
}

type ChunkChoice struct {
	Index        int             `json:"index"`
	Delta        Delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type Delta struct {
	Role          string          `json:"role,omitempty"`
	Content       *string         `json:"content,omitempty"`
	ToolCalls     []ToolCallDelta `json:"tool_calls,omitempty"`
	FunctionCall  *FunctionDelta  `json:"function_call,omitempty"`
	ContentBlocks []BlockDelta    `json:"content_blocks,omitempty"`
}

type ToolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function FunctionDelta `json:"function"`
}

// FunctionDelta always carries arguments, "" in the first delta of a call, as OpenAI's do.
type FunctionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// BlockDelta is a streamed piece of content_blocks: index is the block's position in the
// provider's answer, delta one of thinking, signature, data or text.
type BlockDelta struct {
	Index int   `json:"index"`
	Delta Block `json:"delta"`
}

// Null is JSON's null: the logprobs of every choice translated.
var Null = json.RawMessage("null")

// Chunker builds the chunks of one streamed answer.
type Chunker struct {
	ID      string
	Model   string
	Created int64
}

// Chunk is a chat.completion.chunk of choices.
func (c *Chunker) Chunk(choices ...ChunkChoice) []byte {
	for i := range choices {
		choices[i].Logprobs = Null
	}
	b, _ := json.Marshal(Chunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model, Choices: choices})
	return b
}

// Usage is the chunk of usage alone that ends a stream whose client asked for it.
func (c *Chunker) Usage(u providers.Usage) []byte {
	b, _ := json.Marshal(Chunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
		Choices: []ChunkChoice{}, Usage: UsageOf(u)})
	return b
}

// Str points at s, for the optional strings of answers and deltas.
func Str(s string) *string { return &s }

// NewID returns prefix followed by 24 random hex digits.
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Plumbing of one upstream call.

// Client is the Target's client (which carries the egress guard for custom hosts), or the
// adapter's own.
func Client(t providers.Target, own *http.Client) *http.Client {
	if t.Client != nil {
		return t.Client
	}
	return own
}

// Send sends req and sorts a failure: the caller's cancellation as ctx.Err(); its deadline
// (the request timeout) as a timed-out *ConnectionError that still unwraps to
// context.DeadlineExceeded; anything else before an answer as a *ConnectionError.
func Send(ctx context.Context, client *http.Client, provider, key string, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, providers.TransportError(ctx, provider, err, key)
	}
	return resp, nil
}

// ReadBody reads a whole answer, bounded by maxBody.
func ReadBody(ctx context.Context, t providers.Target, provider string, resp *http.Response) ([]byte, error) {
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

// PassThroughRequest builds a pass-through request: the call's method (GET when unset),
// path under base, query and body, with the forwarded headers. A path with ?, # or dot
// segments is refused, so that a call cannot climb out of the API's base.
func PassThroughRequest(ctx context.Context, base string, c providers.Call) (*http.Request, error) {
	p := c.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if strings.ContainsAny(p, "?#") {
		return nil, domain.Invalid("path", "the path must not contain ? or #")
	}
	for _, seg := range strings.Split(p, "/") {
		if unescaped, err := url.PathUnescape(seg); err != nil || unescaped == "." || unescaped == ".." {
			return nil, domain.Invalid("path", "the path must not contain dot segments")
		}
	}
	u := base + p
	if c.Query != "" {
		u += "?" + c.Query
	}
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader = http.NoBody
	if len(c.Body) > 0 {
		body = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, domain.Invalid("path", "the path does not make a valid URL")
	}
	providers.ForwardHeaders(req.Header, c.Header, false)
	if len(c.Body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// ErrorBody is OpenAI's error shape.
func ErrorBody(message, typ string, code any) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": code,
	}})
	return b
}

// BaseURL is the Target's base URL without its trailing slash, or def.
func BaseURL(t providers.Target, def string) string {
	if t.BaseURL == "" {
		return def
	}
	return strings.TrimRight(t.BaseURL, "/")
}
