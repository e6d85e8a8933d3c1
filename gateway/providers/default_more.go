package providers

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
)

// More returns the adapters that translate OpenAI's chat into another provider's own API,
// keyed by the provider names a Target carries. They share one pooled client, used when a
// Target brings none.
func More() map[string]Provider {
	client := NewClient()
	return map[string]Provider{
		"anthropic": NewAnthropic(client),
		"google":    NewGemini(client),
	}
}

// The rest of this file holds what the translating adapters share: the OpenAI side of the
// translation (helpers over the request's Go model, which the openai package reads; the answer
// and chunk shapes written), and the plumbing of one upstream call. Names carry the "more"
// prefix so they stay apart from the OpenAI-compatible adapter's own.

// moreMaxBody bounds a whole (non-streamed) upstream answer, so that a provider cannot make the
// gateway buffer without limit.
const moreMaxBody = 32 << 20

// moreFunctionArg is a function call in an answer: its name and its JSON-string arguments.
type moreFunctionArg struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// moreToolCall is a tool call in an answer.
type moreToolCall struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Function moreFunctionArg `json:"function"`
}

// moreText joins the text parts of a message's content (tool results and system prompts are
// text to the providers that take them as one string).
func moreText(parts []openai.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == openai.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// moreFunctions lists the request's functions: tools, or the deprecated functions when there
// are no tools. legacy reports the latter, whose answers carry function_call, not tool_calls.
func moreFunctions(req *openai.ChatRequest) (fns []openai.Function, legacy bool, err error) {
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

// moreMaxTokens is max_completion_tokens, or the deprecated max_tokens; nil when neither was
// sent.
func moreMaxTokens(req *openai.ChatRequest) *int {
	if n := req.OutputLimit(); n > 0 {
		return &n
	}
	return nil
}

// moreArgs turns a tool call's JSON-string arguments into the JSON object providers take.
func moreArgs(args, param string) (json.RawMessage, error) {
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

// moreDataURL splits a data: URL into its media type and base64 payload.
func moreDataURL(u string) (mediaType, data string, ok bool) {
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

type moreCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []moreChoice `json:"choices"`
	Usage   *moreUsage   `json:"usage,omitempty"`
}

type moreChoice struct {
	Index        int             `json:"index"`
	Message      moreOutMessage  `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type moreOutMessage struct {
	Role          string           `json:"role"`
	Content       *string          `json:"content"`
	ToolCalls     []moreToolCall   `json:"tool_calls,omitempty"`
	FunctionCall  *moreFunctionArg `json:"function_call,omitempty"`
	ContentBlocks []moreBlock      `json:"content_blocks,omitempty"`
}

// moreBlock is one entry of content_blocks: the answer's text and thinking in the order the
// model produced them, kept so that a client can send thinking (and its signature) back.
type moreBlock struct {
	Type      string `json:"type,omitempty"` // empty in a streamed delta`
	Text      string `json:"text,omitempty"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type moreUsage struct {
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

func moreUsageBody(u Usage) *moreUsage {
	out := &moreUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
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

type moreChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []moreChunkChoice `json:"choices"`
	Usage   *moreUsage        `json:"usage,omitempty"`
}

type moreChunkChoice struct {
	Index        int             `json:"index"`
	Delta        moreDelta       `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type moreDelta struct {
	Role          string              `json:"role,omitempty"`
	Content       *string             `json:"content,omitempty"`
	ToolCalls     []moreToolCallDelta `json:"tool_calls,omitempty"`
	FunctionCall  *moreFunctionDelta  `json:"function_call,omitempty"`
	ContentBlocks []moreBlockDelta    `json:"content_blocks,omitempty"`
}

type moreToolCallDelta struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function moreFunctionDelta `json:"function"`
}

// moreFunctionDelta always carries arguments, "" in the first delta of a call, as OpenAI's do.
type moreFunctionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// moreBlockDelta is a streamed piece of content_blocks: index is the block's position in the
// provider's answer, delta one of thinking, signature, data or text.
type moreBlockDelta struct {
	Index int       `json:"index"`
	Delta moreBlock `json:"delta"`
}

var moreNull = json.RawMessage("null")

// moreChunker builds the chunks of one streamed answer.
type moreChunker struct {
	id      string
	model   string
	created int64
}

func (c *moreChunker) chunk(choices ...moreChunkChoice) []byte {
	for i := range choices {
		choices[i].Logprobs = moreNull
	}
	b, _ := json.Marshal(moreChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model, Choices: choices})
	return b
}

func (c *moreChunker) usage(u Usage) []byte {
	b, _ := json.Marshal(moreChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []moreChunkChoice{}, Usage: moreUsageBody(u)})
	return b
}

func moreStr(s string) *string { return &s }

// moreNewID returns prefix followed by 24 random hex digits.
func moreNewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Plumbing of one upstream call.

// moreClient is the Target's client (which carries the egress guard for custom hosts), or the
// adapter's own.
func moreClient(t Target, own *http.Client) *http.Client {
	if t.Client != nil {
		return t.Client
	}
	return own
}

// moreSend sends req and sorts a failure: the caller's cancellation as ctx.Err(); its deadline
// (the request timeout) as a timed-out *ConnectionError that still unwraps to
// context.DeadlineExceeded; anything else before an answer as a *ConnectionError.
func moreSend(ctx context.Context, client *http.Client, provider, key string, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, TransportError(ctx, provider, err, key)
	}
	return resp, nil
}

// moreReadBody reads a whole answer, bounded by moreMaxBody.
func moreReadBody(ctx context.Context, t Target, provider string, resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, moreMaxBody+1))
	if err != nil {
		return nil, TransportError(ctx, provider, err, t.APIKey)
	}
	if len(body) > moreMaxBody {
		return nil, &UpstreamError{Status: http.StatusBadGateway, Provider: provider,
			Body: moreErrorBody(provider+" answered more than 32 MiB", "api_error", nil)}
	}
	return body, nil
}

// morePassThroughRequest builds a pass-through request: the call's method (GET when unset),
// path under base, query and body, with the forwarded headers. A path with ?, # or dot
// segments is refused, so that a call cannot climb out of the API's base.
func morePassThroughRequest(ctx context.Context, base string, c Call) (*http.Request, error) {
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
	ForwardHeaders(req.Header, c.Header, false)
	if len(c.Body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// moreErrorBody is OpenAI's error shape.
func moreErrorBody(message, typ string, code any) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": code,
	}})
	return b
}

// moreBaseURL is the Target's base URL without its trailing slash, or def.
func moreBaseURL(t Target, def string) string {
	if t.BaseURL == "" {
		return def
	}
	return strings.TrimRight(t.BaseURL, "/")
}
