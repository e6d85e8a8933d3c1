package openai

import (
	"encoding/json"
	"strings"
)

// ChatRequest is a chat completion body (specification 2.2) that passed validation, read into
// Go once: what the gateway needs to route, rate-limit and log it, and what an adapter needs to
// translate it for a provider with an API of its own. Raw is what goes to the providers that
// speak OpenAI's JSON. A member the body did not send (or sent as null) leaves its field at the
// zero value, nil for pointers, except N, which is 1.
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

	Temperature      *float64
	TopP             *float64
	PresencePenalty  *float64
	FrequencyPenalty *float64
	Seed             *int64
	// Stop holds the stop sequences; a single string is one sequence.
	Stop        []string
	Logprobs    bool
	TopLogprobs *int
	// LogitBias maps token ids, as sent (strings), to biases.
	LogitBias      map[string]float64
	ResponseFormat *ResponseFormat

	// Tools are the function tools, in order; ToolChoice is tool_choice (Mode "" when absent).
	Tools             []Tool
	ToolChoice        ToolChoice
	ParallelToolCalls *bool
	// Functions and FunctionCall are the deprecated functions and function_call.
	Functions    []Function
	FunctionCall ToolChoice

	// Thinking is the thinking object, which only non-strict OpenAI compliance forwards.
	Thinking *Thinking
	User     string
	// Metadata is the metadata object as sent; it is not checked.
	Metadata json.RawMessage
	// Extra holds the members no field above reads (reasoning_effort, modalities, a provider's
	// own), in the body's order.
	Extra Members
	// Raw is the body exactly as received (it shares the slice given to ParseChat), unknown
	// fields included.
	Raw json.RawMessage

	members       []member // Raw's top level, for overrides
	toolBytes     int      // the size of the tool definitions, which the model reads too
	functionBytes int      // and of the deprecated function definitions
}

// StreamOptions are the stream_options of a streamed request.
type StreamOptions struct {
	IncludeUsage bool
}

// Message is one chat message.
type Message struct {
	Role string
	Name string
	// Text is the content: the string, or the text parts joined by "\n". Other parts (images,
	// audio, files) are not text and are left out.
	Text string
	// Content holds the parts of a content sent as an array; nil for a string (which is Text),
	// null or absent content. Parts reads both.
	Content    []Part
	ToolCallID string
	// ToolCalls and FunctionCall are what an assistant message called.
	ToolCalls    []ToolCall
	FunctionCall *FunctionCall

	callBytes int // the names and arguments of the tool or function calls it carries
}

// Parts is the message's content as parts: the parts sent, or one text part for a non-empty
// string content, or none.
func (m *Message) Parts() []Part {
	if m.Content != nil || m.Text == "" {
		return m.Content
	}
	return []Part{{Type: PartText, Text: m.Text}}
}

// Content part types. Thinking parts are not OpenAI's: a client that got content_blocks from a
// thinking model sends them back, so that the provider can check their signatures.
const (
	PartText             = "text"
	PartImageURL         = "image_url"
	PartInputAudio       = "input_audio"
	PartFile             = "file"
	PartRefusal          = "refusal"
	PartThinking         = "thinking"
	PartRedactedThinking = "redacted_thinking"
)

// Part is one content part. Type is checked; the members of each type are read as sent and
// left to the provider to check, so a part of a type this package does not know has only its
// Type.
type Part struct {
	Type       string
	Text       string      // text
	ImageURL   *ImageURL   // image_url
	InputAudio *InputAudio // input_audio
	File       *File       // file
	Refusal    string      // refusal
	// Thinking and Signature are a thinking part's; Data a redacted_thinking part's.
	Thinking  string
	Signature string
	Data      string
	// CacheControl is a part's cache_control as sent (Anthropic's prompt caching).
	CacheControl json.RawMessage
}

// ImageURL is an image_url part's image: an http(s) or data: URL, and the detail asked for.
type ImageURL struct {
	URL    string
	Detail string
}

// InputAudio is an input_audio part's audio: base64 data and its format (wav, mp3).
type InputAudio struct {
	Data   string
	Format string
}

// File is a file part's file: an uploaded file's id, or base64 data with a file name.
type File struct {
	FileID   string
	FileData string
	Filename string
}

// ToolCall is a tool call of an assistant message.
type ToolCall struct {
	ID       string
	Type     string
	Function FunctionCall
}

// FunctionCall is a called function: its name and its arguments, a JSON string.
type FunctionCall struct {
	Name      string
	Arguments string
}

// Tool is a tool a request offers; only function tools pass validation.
type Tool struct {
	Type     string
	Function Function
}

// Function is a function definition; Parameters is its JSON Schema as sent (nil when absent).
type Function struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Strict      bool
}

// ToolChoice is tool_choice (or the deprecated function_call) reduced to its meaning.
type ToolChoice struct {
	// Mode is none, auto, required, or function when one function is forced; "" when absent.
	Mode string
	// Name is the forced function, for mode function.
	Name string
}

// Tool choice modes.
const (
	ChoiceNone     = "none"
	ChoiceAuto     = "auto"
	ChoiceRequired = "required"
	ChoiceFunction = "function"
)

// ResponseFormat is response_format: its type (text, json_object, json_schema), for
// json_schema the schema (json_schema.schema) as sent, and the whole object as sent.
type ResponseFormat struct {
	Type   string
	Schema json.RawMessage
	Raw    json.RawMessage
}

// Thinking is the thinking object: its type (enabled, disabled) and budget_tokens (nil when
// absent), and the object as sent.
type Thinking struct {
	Type         string
	BudgetTokens *int
	Raw          json.RawMessage
}

// OutputLimit is the most tokens the answer may have, per choice: max_completion_tokens when
// sent, else max_tokens, else 0, meaning the model's own limit.
func (r *ChatRequest) OutputLimit() int {
	if r.MaxCompletionTokens > 0 {
		return r.MaxCompletionTokens
	}
	return r.MaxTokens
}

// Member is a top-level member of Raw as sent (the last, when a name repeats, as a JSON decoder
// reads it); ok is false when Raw has no such member.
func (r *ChatRequest) Member(name string) (val json.RawMessage, ok bool) {
	for _, m := range r.members {
		if string(m.key) == name {
			val, ok = m.val, true
		}
	}
	return val, ok
}

// ToolNames names the function tools, in order.
func (r *ChatRequest) ToolNames() []string {
	if r.Tools == nil {
		return nil
	}
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Function.Name
	}
	return out
}

// Choice is tool_choice, or the deprecated function_call when tool_choice is absent.
func (r *ChatRequest) Choice() ToolChoice {
	if r.ToolChoice.Mode != "" {
		return r.ToolChoice
	}
	return r.FunctionCall
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

// chatFields read a chat body, in the order the validator checks it: the client hears about
// the first broken field in this order.
var chatFields = []field[ChatRequest]{
	{keys("messages"), func(o obj, r *ChatRequest) { r.Messages = o.messages() }},
	{keys("model"), func(o obj, r *ChatRequest) { r.Model = o.model() }},
	{keys("frequency_penalty"), func(o obj, r *ChatRequest) { r.FrequencyPenalty = o.numberPtr("frequency_penalty", -2, 2) }},
	{keys("presence_penalty"), func(o obj, r *ChatRequest) { r.PresencePenalty = o.numberPtr("presence_penalty", -2, 2) }},
	{keys("logit_bias"), func(o obj, r *ChatRequest) { r.LogitBias = o.logitBias() }},
	{keys("logprobs", "top_logprobs"), func(o obj, r *ChatRequest) {
		r.Logprobs, _ = o.boolean("logprobs")
		r.TopLogprobs = nil
		if n, ok := o.integer("top_logprobs", 0, MaxTopLogprobs); ok {
			r.TopLogprobs = &n
			if !r.Logprobs {
				o.v.fail("top_logprobs", "top_logprobs requires logprobs to be true")
			}
		}
	}},
	{keys("max_tokens"), func(o obj, r *ChatRequest) { r.MaxTokens, _ = o.integer("max_tokens", 1, noMax) }},
	{keys("max_completion_tokens"), func(o obj, r *ChatRequest) {
		r.MaxCompletionTokens, _ = o.integer("max_completion_tokens", 1, noMax)
	}},
	{keys("n"), func(o obj, r *ChatRequest) { r.N = o.choices() }},
	{keys("response_format"), func(o obj, r *ChatRequest) { r.ResponseFormat = o.responseFormat() }},
	{keys("seed"), func(o obj, r *ChatRequest) { r.Seed = o.seed() }},
	{keys("stop"), func(o obj, r *ChatRequest) { r.Stop = o.stop() }},
	{keys("stream", "stream_options"), func(o obj, r *ChatRequest) {
		r.Stream, _ = o.boolean("stream")
		r.StreamOptions = o.streamOptions(r.Stream)
	}},
	{keys("thinking"), func(o obj, r *ChatRequest) { r.Thinking = o.thinking() }},
	{keys("temperature"), func(o obj, r *ChatRequest) { r.Temperature = o.numberPtr("temperature", 0, 2) }},
	{keys("top_p"), func(o obj, r *ChatRequest) { r.TopP = o.numberPtr("top_p", 0, 1) }},
	{keys("tools", "tool_choice"), func(o obj, r *ChatRequest) {
		r.Tools, r.toolBytes = o.tools()
		r.ToolChoice = o.toolChoice(r.Tools)
	}},
	{keys("parallel_tool_calls"), func(o obj, r *ChatRequest) { r.ParallelToolCalls = o.boolPtr("parallel_tool_calls") }},
	{keys("user"), func(o obj, r *ChatRequest) { r.User, _ = o.str("user") }},
	{keys("functions", "function_call"), func(o obj, r *ChatRequest) {
		r.Functions, r.functionBytes = o.functions()
		r.FunctionCall = o.functionCall(r.Functions)
	}},
	{keys("metadata"), func(o obj, r *ChatRequest) { r.Metadata = o.peekRaw("metadata") }},
}

var chatKnown = knownKeys(chatFields)

// ParseChat validates a chat completion body and reads it into a ChatRequest, in one pass.
// Unknown fields are allowed, kept in Raw and listed in Extra; every field the specification
// bounds is checked, and the first violation is returned as a *domain.Error with Param naming
// the field.
//
// max_tokens and max_completion_tokens must be at least 1: the specification gives no lower
// bound for chat, and an answer of at most 0 tokens is no answer (OpenAI refuses it too).
func ParseChat(body []byte) (*ChatRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &ChatRequest{Raw: body, members: top.members}
	readFields(top, req, chatFields, nil)
	if v.err != nil {
		return nil, v.err
	}
	req.Extra = extra(top.members, chatKnown)
	return req, nil
}

// WithOverrides returns the request with a config's override_params applied: Raw as the
// package's WithOverrides makes it (every byte not overridden stays as sent), and the fields
// that read an overridden member read again from the new value, checked as ParseChat checks
// them; a refused value is a *domain.Error whose Param is under override_params. r is not
// changed; the two share what the overrides left alone.
func (r *ChatRequest) WithOverrides(overrides map[string]any) (*ChatRequest, error) {
	if len(overrides) == 0 {
		return r, nil
	}
	out := *r
	if err := override(&out, parsed{&out.Raw, &out.members, &out.Extra}, overrides, chatFields, chatKnown); err != nil {
		return nil, err
	}
	return &out, nil
}

// choices reads n: 1 when absent.
func (o obj) choices() int {
	if n, ok := o.integer("n", 1, MaxChoices); ok {
		return n
	}
	return 1
}

func (o obj) seed() *int64 {
	s, ok := o.integer("seed", -noMax-1, noMax)
	if !ok {
		return nil
	}
	s64 := int64(s)
	return &s64
}

func (o obj) responseFormat() *ResponseFormat {
	rf, ok := o.object("response_format")
	if !ok {
		return nil
	}
	out := &ResponseFormat{Raw: o.peekRaw("response_format")}
	out.Type, _ = rf.str("type")
	if js, ok := rf.peekObject("json_schema"); ok {
		out.Schema = js.peekRaw("schema")
	}
	return out
}

func (o obj) thinking() *Thinking {
	th, ok := o.object("thinking")
	if !ok {
		return nil
	}
	out := &Thinking{Raw: o.peekRaw("thinking")}
	if th.required("type") {
		out.Type, _ = th.str("type")
	}
	// Only the shape: budgets differ by provider (Gemini takes 0 to turn thinking off and -1
	// for a dynamic budget; Anthropic wants at least 1024).
	if raw, ok := th.raw("budget_tokens"); ok {
		if n, ok := o.v.asInt(raw, th.param("budget_tokens")); ok {
			out.BudgetTokens = &n
		}
	}
	return out
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
		var sent int
		msg.ToolCalls, sent, msg.callBytes = mo.toolCalls()
		if fc, ok := mo.object("function_call"); ok {
			name, _ := fc.str("name")
			args, _ := fc.str("arguments")
			msg.FunctionCall = &FunctionCall{Name: name, Arguments: args}
			msg.callBytes += len(name) + len(args)
		}
		// An assistant turn that called tools needs no content; nor does one that refers to
		// an earlier audio answer by its id.
		contentOptional = sent > 0 || mo.has("function_call") || mo.has("audio")
	}
	if !mo.has("content") {
		if !contentOptional {
			v.fail(mo.param("content"), "%s is required for a message with role %s", mo.param("content"), role)
		}
	} else if raw, ok := mo.raw("content"); ok {
		msg.Text, msg.Content = v.content(raw, mo.param("content"))
	}
	return msg, !v.failed()
}

// toolCalls checks an assistant message's tool_calls and measures them for the estimate: the
// calls, how many were sent, and the size of their names and arguments. Only the shape is
// checked: the calls were written by a model, and providers differ in what they add.
func (o obj) toolCalls() (calls []ToolCall, sent, size int) {
	items, ok := o.array("tool_calls")
	if !ok {
		return nil, 0, 0
	}
	calls = make([]ToolCall, 0, len(items))
	for i, raw := range items {
		call, ok := o.v.asObject(raw, indexParam(o.param("tool_calls"), i))
		if !ok {
			return calls, len(items), size
		}
		tc := ToolCall{ID: call.peekString("id"), Type: call.peekString("type")}
		if fn, ok := call.object("function"); ok {
			tc.Function.Name, _ = fn.str("name")
			tc.Function.Arguments, _ = fn.str("arguments")
			size += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		calls = append(calls, tc)
	}
	return calls, len(items), size
}

// content reads a message's content: a string, or a non-empty array of parts, each an object
// with a type; text parts need their text. It returns the text, and the parts of an array.
func (v *validator) content(raw json.RawMessage, param string) (string, []Part) {
	switch kindOf(raw) {
	case kindString:
		s, _ := v.asString(raw, param)
		return s, nil
	case kindArray:
	default:
		v.typeError(param, "a string or an array of content parts", raw)
		return "", nil
	}
	items, ok := v.asArray(raw, param)
	if !ok {
		return "", nil
	}
	if len(items) == 0 {
		v.fail(param, "%s must have at least 1 content part", param)
		return "", nil
	}
	var text strings.Builder
	parts := make([]Part, 0, len(items))
	for i, p := range items {
		po, ok := v.asObject(p, indexParam(param, i))
		if !ok || !po.required("type") {
			return "", nil
		}
		typ, _ := po.str("type")
		part := Part{Type: typ, CacheControl: po.peekRaw("cache_control")}
		switch typ {
		case PartText:
			if !po.required("text") {
				return "", nil
			}
			part.Text, _ = po.str("text")
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(part.Text)
		case PartImageURL:
			part.ImageURL = po.imageURL()
		case PartInputAudio:
			if a, ok := po.peekObject("input_audio"); ok {
				part.InputAudio = &InputAudio{Data: a.peekString("data"), Format: a.peekString("format")}
			}
		case PartFile:
			if f, ok := po.peekObject("file"); ok {
				part.File = &File{FileID: f.peekString("file_id"), FileData: f.peekString("file_data"), Filename: f.peekString("filename")}
			}
		case PartRefusal:
			part.Refusal = po.peekString("refusal")
		case PartThinking:
			part.Thinking, part.Signature = po.peekString("thinking"), po.peekString("signature")
		case PartRedactedThinking:
			part.Data = po.peekString("data")
		}
		parts = append(parts, part)
	}
	return text.String(), parts
}

// imageURL reads an image_url part's image: {"url","detail"}, or the URL alone as a string,
// which some clients send.
func (o obj) imageURL() *ImageURL {
	if u := o.peekString("image_url"); u != "" {
		return &ImageURL{URL: u}
	}
	img, ok := o.peekObject("image_url")
	if !ok {
		return nil
	}
	return &ImageURL{URL: img.peekString("url"), Detail: img.peekString("detail")}
}

// tools checks the tools array: at most 128, function tools only, each with a valid name.
func (o obj) tools() (tools []Tool, size int) {
	items, ok := o.array("tools")
	if !ok {
		return nil, 0
	}
	if len(items) > MaxTools {
		o.v.fail("tools", "tools must have at most %d tools (got %d)", MaxTools, len(items))
		return nil, 0
	}
	tools = make([]Tool, 0, len(items))
	for i, raw := range items {
		param := indexParam("tools", i)
		tool, ok := o.v.asObject(raw, param)
		if !ok || !tool.required("type") {
			return nil, 0
		}
		typ, ok := tool.str("type")
		if ok && typ != "function" {
			o.v.fail(tool.param("type"), "%s must be \"function\", the only tool type supported (got %q)", tool.param("type"), truncate(typ, 40))
		}
		if !tool.required("function") {
			return nil, 0
		}
		fo, ok := tool.object("function")
		if !ok {
			return nil, 0
		}
		fn := fo.function()
		fn.Strict, _ = fo.boolean("strict")
		tools = append(tools, Tool{Type: typ, Function: fn})
		size += len(raw)
	}
	if o.v.failed() {
		return nil, 0
	}
	return tools, size
}

// functions checks the deprecated functions array: 1 to 128 definitions.
func (o obj) functions() (fns []Function, size int) {
	items, ok := o.array("functions")
	if !ok {
		return nil, 0
	}
	if len(items) == 0 || len(items) > MaxTools {
		o.v.fail("functions", "functions must have between 1 and %d functions (got %d)", MaxTools, len(items))
		return nil, 0
	}
	fns = make([]Function, 0, len(items))
	for i, raw := range items {
		fo, ok := o.v.asObject(raw, indexParam("functions", i))
		if !ok {
			return nil, 0
		}
		fns = append(fns, fo.function())
		size += len(raw)
	}
	if o.v.failed() {
		return nil, 0
	}
	return fns, size
}

// function checks a function definition (name, description, parameters) and reads it.
func (o obj) function() Function {
	if !o.required("name") {
		return Function{}
	}
	name, ok := o.str("name")
	if ok && !validFunctionName(name) {
		o.v.fail(o.param("name"), "%s must be 1 to %d characters of a-z, A-Z, 0-9, underscores and dashes (got %q)", o.param("name"), maxNameLen, truncate(name, 80))
	}
	fn := Function{Name: name}
	fn.Description, _ = o.str("description")
	o.shape("parameters", kindObject, "an object")
	fn.Parameters = o.peekRaw("parameters")
	return fn
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

func hasTool(tools []Tool, name string) bool {
	for _, t := range tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

func hasFunction(fns []Function, name string) bool {
	for _, f := range fns {
		if f.Name == name {
			return true
		}
	}
	return false
}

// toolChoice checks none, auto, required, or an object forcing one of the tools by name.
func (o obj) toolChoice(tools []Tool) ToolChoice {
	raw, ok := o.raw("tool_choice")
	if !ok {
		return ToolChoice{}
	}
	switch kindOf(raw) {
	case kindString:
		s, _ := o.v.asString(raw, "tool_choice")
		switch s {
		case ChoiceNone, ChoiceAuto, ChoiceRequired:
			return ToolChoice{Mode: s}
		}
		o.v.fail("tool_choice", "tool_choice must be none, auto, required or an object naming a function (got %q)", truncate(s, 40))
	case kindObject:
		tc, _ := o.v.asObject(raw, "tool_choice")
		if !tc.required("type") {
			return ToolChoice{}
		}
		if typ, ok := tc.str("type"); ok && typ != "function" {
			o.v.fail("tool_choice.type", "tool_choice.type must be \"function\" (got %q)", truncate(typ, 40))
			return ToolChoice{}
		}
		if !tc.required("function") {
			return ToolChoice{}
		}
		fn, ok := tc.object("function")
		if !ok || !fn.required("name") {
			return ToolChoice{}
		}
		if name, ok := fn.str("name"); ok {
			if !hasTool(tools, name) {
				o.v.fail("tool_choice.function.name", "tool_choice.function.name %q is not the name of one of the tools", truncate(name, 80))
			}
			return ToolChoice{Mode: ChoiceFunction, Name: name}
		}
	default:
		o.v.typeError("tool_choice", "a string or an object", raw)
	}
	return ToolChoice{}
}

// functionCall checks the deprecated function_call: none, auto, or {name} of one of functions.
func (o obj) functionCall(functions []Function) ToolChoice {
	raw, ok := o.raw("function_call")
	if !ok {
		return ToolChoice{}
	}
	switch kindOf(raw) {
	case kindString:
		s, _ := o.v.asString(raw, "function_call")
		if s == ChoiceNone || s == ChoiceAuto {
			return ToolChoice{Mode: s}
		}
		o.v.fail("function_call", "function_call must be none, auto or an object naming a function (got %q)", truncate(s, 40))
	case kindObject:
		fc, _ := o.v.asObject(raw, "function_call")
		if !fc.required("name") {
			return ToolChoice{}
		}
		if name, ok := fc.str("name"); ok {
			if !hasFunction(functions, name) {
				o.v.fail("function_call.name", "function_call.name %q is not the name of one of the functions", truncate(name, 80))
			}
			return ToolChoice{Mode: ChoiceFunction, Name: name}
		}
	default:
		o.v.typeError("function_call", "a string or an object", raw)
	}
	return ToolChoice{}
}
