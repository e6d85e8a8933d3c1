package translate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
)

// The OpenAI side of the translation, which every family shares: the request read from its Go
// model (package openai) and walked turn by turn, and the answer and chunk shapes written back.
// The call itself is Adapter's (adapter.go), the stream's life stream's (stream.go).

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

// Parse reads the call's chat request and what the answer's translation needs to know of it:
// the model is the call's (after overrides), else the body's.
func Parse(t providers.Target, c providers.Call) (*openai.ChatRequest, Translation, error) {
	req, err := c.ChatRequest()
	if err != nil {
		return nil, Translation{}, err
	}
	model := c.Model
	if model == "" {
		model = req.Model
	}
	return req, Translation{Strict: t.StrictOpenAI, Model: model, IncludeUsage: req.StreamOptions.IncludeUsage}, nil
}

// Turns receives OpenAI's messages (Walk) as the providers that take the system prompt apart
// from the turns, and tool results as user turns, want them.
type Turns interface {
	// System is a non-empty text part of a system or developer message.
	System(p openai.Part)
	// User is a user message; param names it (messages[i]) in errors.
	User(parts []openai.Part, param string) error
	// Assistant is an assistant message.
	Assistant(m *openai.Message, parts []openai.Part, param string) error
	// Tool is a tool or function message: a result. join says the turn before holds results
	// too, which this one joins, as providers want every result of a turn's calls in one turn.
	Tool(m *openai.Message, parts []openai.Part, param string, join bool) error
}

// Walk hands msgs to t in order. A system or developer message holds only text; a role other
// than system, developer, user, assistant, tool and function is refused.
func Walk(msgs []openai.Message, t Turns) error {
	lastTool := false // the last turn holds tool results, so the next one joins it
	for i := range msgs {
		m := &msgs[i]
		param := fmt.Sprintf("messages[%d]", i)
		parts := m.Parts()
		switch m.Role {
		case openai.RoleSystem, openai.RoleDeveloper:
			for j, p := range parts {
				if p.Type != openai.PartText {
					return domain.Invalid(fmt.Sprintf("%s.content[%d].type", param, j), "a system message holds only text")
				}
				if p.Text != "" {
					t.System(p)
				}
			}
			continue
		case openai.RoleUser:
			if err := t.User(parts, param); err != nil {
				return err
			}
		case openai.RoleAssistant:
			if err := t.Assistant(m, parts, param); err != nil {
				return err
			}
		case openai.RoleTool, openai.RoleFunction:
			if err := t.Tool(m, parts, param, lastTool); err != nil {
				return err
			}
			lastTool = true
			continue
		default:
			return domain.Invalid(param+".role", "role %q is not one of system, developer, user, assistant, tool, function", m.Role)
		}
		lastTool = false
	}
	return nil
}

// Unsupported refuses a content part the provider cannot take: what ("content parts",
// "assistant content parts") of part j of the message param.
func Unsupported(provider, what, param string, j int, typ string) error {
	return &domain.Error{Code: domain.CodeUnsupported, Param: fmt.Sprintf("%s.content[%d].type", param, j),
		Message: fmt.Sprintf("%s of type %q cannot be sent to %s", what, typ, provider)}
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

// Reply gathers one choice's message from a provider's answer, part by part in the model's
// order.
type Reply struct {
	text     strings.Builder
	hasText  bool
	calls    []ToolCall
	blocks   []Block
	thinking bool
}

// Text adds a text part.
func (r *Reply) Text(s string) {
	r.text.WriteString(s)
	r.hasText = true
	r.blocks = append(r.blocks, Block{Type: "text", Text: s})
}

// Call adds a tool call.
func (r *Reply) Call(tc ToolCall) { r.calls = append(r.calls, tc) }

// Thinking adds a thinking (or redacted thinking) block.
func (r *Reply) Thinking(b Block) {
	r.thinking = true
	r.blocks = append(r.blocks, b)
}

// Calls counts the tool calls added.
func (r *Reply) Calls() int { return len(r.calls) }

// Message is the assistant message: its text as content, unless only tool calls came; the
// calls as tool_calls, or the first as function_call for a legacy request; and, when thinking
// came and the Target is not strict, every text and thinking block in order as content_blocks.
func (r *Reply) Message(tr Translation) Message {
	out := Message{Role: "assistant"}
	if r.hasText || len(r.calls) == 0 {
		out.Content = Str(r.text.String())
	}
	if tr.Legacy && len(r.calls) > 0 {
		out.FunctionCall = &r.calls[0].Function
	} else {
		out.ToolCalls = r.calls
	}
	if r.thinking && !tr.Strict {
		out.ContentBlocks = r.blocks
	}
	return out
}

// Completion is a whole answer: a chat.completion object.
type Completion struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []Choice   `json:"choices"`
	Usage   *UsageBody `json:"usage,omitempty"`
}

// Choice is one choice of a Completion.
type Choice struct {
	Index        int             `json:"index"`
	Message      Message         `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

// Message is a choice's assistant message.
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

// UsageBody is OpenAI's usage object as answers and usage chunks carry it.
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

// UsageOf is u in OpenAI's shape: cached tokens always, reasoning tokens when there are any.
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

// Chunk is a chat.completion.chunk object.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *UsageBody    `json:"usage,omitempty"`
}

// ChunkChoice is one choice of a Chunk.
type ChunkChoice struct {
	Index        int             `json:"index"`
	Delta        Delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// Delta is what a ChunkChoice adds to its message.
type Delta struct {
	Role          string          `json:"role,omitempty"`
	Content       *string         `json:"content,omitempty"`
	ToolCalls     []ToolCallDelta `json:"tool_calls,omitempty"`
	FunctionCall  *FunctionDelta  `json:"function_call,omitempty"`
	ContentBlocks []BlockDelta    `json:"content_blocks,omitempty"`
}

// ToolCallDelta is a streamed piece of a tool call: the first carries its id, type and name.
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

// Str points at s, for the optional strings of answers and deltas.
func Str(s string) *string { return &s }

// NewID returns prefix followed by 24 random hex digits.
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
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
