package openai

import (
	"encoding/json"
	"slices"
	"strings"
)

// ChatRequest is a chat completion body (specification 2.2) that passed validation: what the
// gateway needs to route, rate-limit and log it. Raw is what gets forwarded.
type ChatRequest struct {
	Model         string
	Messages      []Message
	Stream        bool
	StreamOptions StreamOptions
	// N is the number of choices asked for: 1 when absent.
	N int
	// MaxTokens and MaxCompletionTokens are as sent, 0 when absent; OutputLimit picks one.
	MaxTokens           int
	MaxCompletionTokens int
	// Tools names the function tools, in order; Functions the deprecated functions.
	Tools     []string
	Functions []string
	// Thinking reports a thinking object, which only non-strict OpenAI compliance forwards.
	Thinking bool
	User     string
	// Raw is the body exactly as received (it shares the slice given to ParseChat), unknown
	// fields included.
	Raw json.RawMessage

	toolBytes int // the size of the tool and function definitions, which the model reads too
}

// StreamOptions are the stream_options of a streamed request.
type StreamOptions struct {
	IncludeUsage bool
}

// Message is one chat message, reduced to what routing and token estimates need.
type Message struct {
	Role string
	Name string
	// Text is the content: the string, or the text parts joined by "\n". Other parts (images,
	// audio, files) are not text and are left out.
	Text       string
	ToolCallID string

	callBytes int // the names and arguments of the tool or function calls it carries
}

// OutputLimit is the most tokens the answer may have, per choice: max_completion_tokens when
// sent, else max_tokens, else 0, meaning the model's own limit.
func (r *ChatRequest) OutputLimit() int {
	if r.MaxCompletionTokens > 0 {
		return r.MaxCompletionTokens
	}
	return r.MaxTokens
}

// Chat message roles (2.2).
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleFunction  = "function"
)

// Limits of part 8 that apply to chat.
const (
	MaxChoices     = 128 // n
	MaxStop        = 4   // stop sequences
	MaxTools       = 128 // tools and functions
	MaxTopLogprobs = 20
	maxNameLen     = 64 // a function's name
)

// ParseChat validates a chat completion body. Unknown fields are allowed and kept in Raw; every
// field the specification bounds is checked, and the first violation is returned as a
// *domain.Error with Param naming the field.
//
// max_tokens and max_completion_tokens must be at least 1: the specification gives no lower
// bound for chat, and an answer of at most 0 tokens is no answer (OpenAI refuses it too).
func ParseChat(body []byte) (*ChatRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &ChatRequest{Raw: body, N: 1}
	req.Messages = top.messages()
	req.Model = top.model()

	top.penalties()
	top.logitBias()
	logprobs, _ := top.boolean("logprobs")
	if _, ok := top.integer("top_logprobs", 0, MaxTopLogprobs); ok && !logprobs {
		v.fail("top_logprobs", "top_logprobs requires logprobs to be true")
	}
	req.MaxTokens, _ = top.integer("max_tokens", 1, noMax)
	req.MaxCompletionTokens, _ = top.integer("max_completion_tokens", 1, noMax)
	if n, ok := top.integer("n", 1, MaxChoices); ok {
		req.N = n
	}
	if rf, ok := top.object("response_format"); ok {
		rf.str("type")
	}
	top.integer("seed", -noMax-1, noMax)
	top.stop()
	req.Stream, _ = top.boolean("stream")
	req.StreamOptions = top.streamOptions(req.Stream)
	if th, ok := top.object("thinking"); ok {
		req.Thinking = true
		if th.required("type") {
			th.str("type")
		}
		// Only the shape: budgets differ by provider (Gemini takes 0 to turn thinking off and
		// -1 for a dynamic budget; Anthropic wants at least 1024).
		if raw, ok := th.raw("budget_tokens"); ok {
			v.asInt(raw, th.param("budget_tokens"))
		}
	}
	top.sampling()
	req.Tools, req.toolBytes = top.tools()
	top.toolChoice(req.Tools)
	top.boolean("parallel_tool_calls")
	req.User, _ = top.str("user")
	var fnBytes int
	req.Functions, fnBytes = top.functions()
	req.toolBytes += fnBytes
	top.functionCall(req.Functions)

	if v.err != nil {
		return nil, v.err
	}
	return req, nil
}

func (o obj) messages() []Message {
	if !o.required("messages") {
		return nil
	}
	items, ok := o.array("messages")
	if !ok {
		return nil
	}
	if len(items) == 0 {
		o.v.fail("messages", "messages must have at least 1 message")
		return nil
	}
	out := make([]Message, 0, len(items))
	for i, raw := range items {
		m, ok := o.v.message(raw, indexParam("messages", i))
		if !ok {
			return nil
		}
		out = append(out, m)
	}
	return out
}

func (v *validator) message(raw json.RawMessage, param string) (Message, bool) {
	mo, ok := v.asObject(raw, param)
	if !ok || !mo.required("role") {
		return Message{}, false
	}
	role, ok := mo.str("role")
	if !ok {
		return Message{}, false
	}
	switch role {
	case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant, RoleTool, RoleFunction:
	default:
		v.fail(mo.param("role"), "%s must be one of system, developer, user, assistant, tool or function (got %q)", mo.param("role"), truncate(role, 40))
		return Message{}, false
	}
	msg := Message{Role: role}
	msg.Name, _ = mo.str("name")
	contentOptional := false
	switch role {
	case RoleTool:
		if mo.required("tool_call_id") {
			msg.ToolCallID, _ = mo.str("tool_call_id")
			if msg.ToolCallID == "" {
				v.fail(mo.param("tool_call_id"), "%s must not be empty", mo.param("tool_call_id"))
			}
		}
	case RoleFunction:
		if msg.Name == "" {
			v.fail(mo.param("name"), "%s is required for a message with role function", mo.param("name"))
		}
		contentOptional = true
	case RoleAssistant:
		calls := mo.toolCalls()
		msg.callBytes += calls.bytes
		if fc, ok := mo.object("function_call"); ok {
			name, _ := fc.str("name")
			args, _ := fc.str("arguments")
			msg.callBytes += len(name) + len(args)
		}
		// An assistant turn that called tools needs no content; nor does one that refers to
		// an earlier audio answer by its id.
		contentOptional = calls.n > 0 || mo.has("function_call") || mo.has("audio")
	}
	if !mo.has("content") {
		if !contentOptional {
			v.fail(mo.param("content"), "%s is required for a message with role %s", mo.param("content"), role)
		}
	} else if raw, ok := mo.raw("content"); ok {
		msg.Text = v.content(raw, mo.param("content"))
	}
	return msg, !v.failed()
}

type toolCalls struct{ n, bytes int }

// toolCalls checks an assistant message's tool_calls and measures them for the estimate. Only
// the shape is checked: the calls were written by a model, and providers differ in what they add.
func (o obj) toolCalls() toolCalls {
	items, ok := o.array("tool_calls")
	if !ok {
		return toolCalls{}
	}
	out := toolCalls{n: len(items)}
	for i, raw := range items {
		call, ok := o.v.asObject(raw, indexParam(o.param("tool_calls"), i))
		if !ok {
			return out
		}
		if fn, ok := call.object("function"); ok {
			name, _ := fn.str("name")
			args, _ := fn.str("arguments")
			out.bytes += len(name) + len(args)
		}
	}
	return out
}

// content reads a message's content: a string, or a non-empty array of parts, each an object
// with a type; text parts need their text.
func (v *validator) content(raw json.RawMessage, param string) string {
	switch kindOf(raw) {
	case kindString:
		s, _ := v.asString(raw, param)
		return s
	case kindArray:
	default:
		v.typeError(param, "a string or an array of content parts", raw)
		return ""
	}
	parts, ok := v.asArray(raw, param)
	if !ok {
		return ""
	}
	if len(parts) == 0 {
		v.fail(param, "%s must have at least 1 content part", param)
		return ""
	}
	var text strings.Builder
	for i, p := range parts {
		po, ok := v.asObject(p, indexParam(param, i))
		if !ok || !po.required("type") {
			return ""
		}
		typ, _ := po.str("type")
		if typ != "text" {
			continue
		}
		if !po.required("text") {
			return ""
		}
		s, _ := po.str("text")
		if text.Len() > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(s)
	}
	return text.String()
}

// tools checks the tools array: at most 128, function tools only, each with a valid name.
func (o obj) tools() (names []string, size int) {
	items, ok := o.array("tools")
	if !ok {
		return nil, 0
	}
	if len(items) > MaxTools {
		o.v.fail("tools", "tools must have at most %d tools (got %d)", MaxTools, len(items))
		return nil, 0
	}
	names = make([]string, 0, len(items))
	for i, raw := range items {
		param := indexParam("tools", i)
		tool, ok := o.v.asObject(raw, param)
		if !ok || !tool.required("type") {
			return nil, 0
		}
		if typ, ok := tool.str("type"); ok && typ != "function" {
			o.v.fail(tool.param("type"), "%s must be \"function\", the only tool type supported (got %q)", tool.param("type"), truncate(typ, 40))
		}
		if !tool.required("function") {
			return nil, 0
		}
		fn, ok := tool.object("function")
		if !ok {
			return nil, 0
		}
		names = append(names, fn.function())
		fn.boolean("strict")
		size += len(raw)
	}
	if o.v.failed() {
		return nil, 0
	}
	return names, size
}

// functions checks the deprecated functions array: 1 to 128 definitions.
func (o obj) functions() (names []string, size int) {
	items, ok := o.array("functions")
	if !ok {
		return nil, 0
	}
	if len(items) == 0 || len(items) > MaxTools {
		o.v.fail("functions", "functions must have between 1 and %d functions (got %d)", MaxTools, len(items))
		return nil, 0
	}
	names = make([]string, 0, len(items))
	for i, raw := range items {
		fn, ok := o.v.asObject(raw, indexParam("functions", i))
		if !ok {
			return nil, 0
		}
		names = append(names, fn.function())
		size += len(raw)
	}
	if o.v.failed() {
		return nil, 0
	}
	return names, size
}

// function checks a function definition (name, description, parameters) and returns its name.
func (o obj) function() string {
	if !o.required("name") {
		return ""
	}
	name, ok := o.str("name")
	if ok && !validFunctionName(name) {
		o.v.fail(o.param("name"), "%s must be 1 to %d characters of a-z, A-Z, 0-9, underscores and dashes (got %q)", o.param("name"), maxNameLen, truncate(name, 80))
	}
	o.str("description")
	o.shape("parameters", kindObject, "an object")
	return name
}

func validFunctionName(s string) bool {
	if len(s) == 0 || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// toolChoice checks none, auto, required, or an object forcing one of the tools by name.
func (o obj) toolChoice(tools []string) {
	raw, ok := o.raw("tool_choice")
	if !ok {
		return
	}
	switch kindOf(raw) {
	case kindString:
		s, _ := o.v.asString(raw, "tool_choice")
		switch s {
		case "none", "auto", "required":
		default:
			o.v.fail("tool_choice", "tool_choice must be none, auto, required or an object naming a function (got %q)", truncate(s, 40))
		}
	case kindObject:
		tc, _ := o.v.asObject(raw, "tool_choice")
		if !tc.required("type") {
			return
		}
		if typ, ok := tc.str("type"); ok && typ != "function" {
			o.v.fail("tool_choice.type", "tool_choice.type must be \"function\" (got %q)", truncate(typ, 40))
			return
		}
		if !tc.required("function") {
			return
		}
		fn, ok := tc.object("function")
		if !ok || !fn.required("name") {
			return
		}
		if name, ok := fn.str("name"); ok && !slices.Contains(tools, name) {
			o.v.fail("tool_choice.function.name", "tool_choice.function.name %q is not the name of one of the tools", truncate(name, 80))
		}
	default:
		o.v.typeError("tool_choice", "a string or an object", raw)
	}
}

// functionCall checks the deprecated function_call: none, auto, or {name} of one of functions.
func (o obj) functionCall(functions []string) {
	raw, ok := o.raw("function_call")
	if !ok {
		return
	}
	switch kindOf(raw) {
	case kindString:
		s, _ := o.v.asString(raw, "function_call")
		if s != "none" && s != "auto" {
			o.v.fail("function_call", "function_call must be none, auto or an object naming a function (got %q)", truncate(s, 40))
		}
	case kindObject:
		fc, _ := o.v.asObject(raw, "function_call")
		if !fc.required("name") {
			return
		}
		if name, ok := fc.str("name"); ok && !slices.Contains(functions, name) {
			o.v.fail("function_call.name", "function_call.name %q is not the name of one of the functions", truncate(name, 80))
		}
	default:
		o.v.typeError("function_call", "a string or an object", raw)
	}
}
