package providers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/causeway/causeway/domain"
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
// translation (request fields read, answer and chunk shapes written), and the plumbing of one
// upstream call. Names carry the "more" prefix so they stay apart from the OpenAI-compatible
// adapter's own.

// moreMaxBody bounds a whole (non-streamed) upstream answer, so that a provider cannot make the
// gateway buffer without limit.
const moreMaxBody = 32 << 20

// moreChatRequest is the part of an OpenAI chat request (spec 2.2) that translating adapters read.
type moreChatRequest struct {
	Model               string          `json:"model"`
	Messages            []moreMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	N                   *int            `json:"n"`
	Stop                json.RawMessage `json:"stop"`
	PresencePenalty     *float64        `json:"presence_penalty"`
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	Seed                *int64          `json:"seed"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools             []moreTool      `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	Functions         []moreFunction  `json:"functions"`
	FunctionCall      json.RawMessage `json:"function_call"`
	ResponseFormat    *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	User     string          `json:"user"`
	Thinking json.RawMessage `json:"thinking"`
}

type moreMessage struct {
	Role         string           `json:"role"`
	Content      json.RawMessage  `json:"content"`
	Name         string           `json:"name"`
	ToolCalls    []moreToolCall   `json:"tool_calls"`
	ToolCallID   string           `json:"tool_call_id"`
	FunctionCall *moreFunctionArg `json:"function_call"`
}

// morePart is one content part of a message. Thinking parts are not OpenAI's: a client that
// got content_blocks from a thinking model sends them back so that the provider can check
// their signatures.
type morePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type moreTool struct {
	Type     string       `json:"type"`
	Function moreFunction `json:"function"`
}

type moreFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type moreToolCall struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Function moreFunctionArg `json:"function"`
}

type moreFunctionArg struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// moreToolChoice is tool_choice (or the deprecated function_call) reduced to its meaning.
type moreToolChoice struct {
	Mode string // "", none, auto, required, function
	Name string // the forced function, for mode function
}

// moreDecodeChat reads an OpenAI chat request; the gateway has validated its bounds already,
// so only what the translation needs is checked here.
func moreDecodeChat(body []byte) (*moreChatRequest, error) {
	var req moreChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, domain.Invalid("", "the request body is not a valid chat completion request: %s", moreJSONProblem(err))
	}
	if len(req.Messages) == 0 {
		return nil, domain.Invalid("messages", "at least one message is required")
	}
	return &req, nil
}

// moreJSONProblem describes a decoding failure without quoting the body.
func moreJSONProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s has the wrong type", te.Field)
	}
	return "malformed JSON"
}

// moreParts reads a message's content: a string is one text part; null or absent is none.
func moreParts(raw json.RawMessage, param string) ([]morePart, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, domain.Invalid(param, "content must be a string or an array of content parts")
		}
		return []morePart{{Type: "text", Text: s}}, nil
	}
	var parts []morePart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, domain.Invalid(param, "content must be a string or an array of content parts")
	}
	return parts, nil
}

// moreText joins the text parts of a message's content (tool results and system prompts are
// text to the providers that take them as one string).
func moreText(parts []morePart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// moreStop reads stop: a string or an array of strings.
func moreStop(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, domain.Invalid("stop", "stop must be a string or an array of strings")
		}
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, domain.Invalid("stop", "stop must be a string or an array of strings")
	}
	return list, nil
}

// moreReadChoice reads tool_choice, or the deprecated function_call when tool_choice is absent:
// the strings none, auto and required, or an object that forces one function.
func moreReadChoice(req *moreChatRequest) (moreToolChoice, error) {
	raw, param := bytes.TrimSpace(req.ToolChoice), "tool_choice"
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw, param = bytes.TrimSpace(req.FunctionCall), "function_call"
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return moreToolChoice{}, nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "none", "auto", "required":
			return moreToolChoice{Mode: s}, nil
		}
		return moreToolChoice{}, domain.Invalid(param, "%s must be none, auto, required or a named function", param)
	}
	var obj struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return moreToolChoice{}, domain.Invalid(param, "%s must be none, auto, required or a named function", param)
	}
	name := obj.Function.Name
	if name == "" {
		name = obj.Name // function_call's {"name": ...}
	}
	if name == "" {
		return moreToolChoice{}, domain.Invalid(param, "%s must name the function to call", param)
	}
	return moreToolChoice{Mode: "function", Name: name}, nil
}

// moreFunctions lists the request's functions: tools, or the deprecated functions when there
// are no tools. legacy reports the latter, whose answers carry function_call, not tool_calls.
func moreFunctions(req *moreChatRequest) (fns []moreFunction, legacy bool, err error) {
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

// moreMaxTokens is max_completion_tokens, or the deprecated max_tokens.
func moreMaxTokens(req *moreChatRequest) *int {
	if req.MaxCompletionTokens != nil {
		return req.MaxCompletionTokens
	}
	return req.MaxTokens
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
		return nil, transportError(ctx, provider, err, key)
	}
	return resp, nil
}

// moreReadBody reads a whole answer, bounded by moreMaxBody.
func moreReadBody(ctx context.Context, t Target, provider string, resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, moreMaxBody+1))
	if err != nil {
		return nil, transportError(ctx, provider, err, t.APIKey)
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
	forwardHeaders(req.Header, c.Header, false)
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
