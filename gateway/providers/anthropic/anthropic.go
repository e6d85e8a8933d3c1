package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/translate"
	"github.com/causeway/causeway/gateway/sse"
)

// New returns the Anthropic adapter; client sends calls whose Target carries no client (nil:
// a pooled client of its own).
func New(client *http.Client) *translate.Adapter {
	return translate.New(family{}, client)
}

// family is what sets Anthropic's Messages API apart: its URL, headers and translation.
type family struct{}

const (
	name           = "anthropic"
	defaultURL     = "https://api.anthropic.com"
	defaultVersion = "2023-06-01"
	// defaultMaxTokens fills max_tokens, which Anthropic requires and OpenAI does not.
	defaultMaxTokens = 4096
)

// Name is the provider name.
func (family) Name() string { return name }

// Base is the API's versioned base: the Target's base URL (or Anthropic's) with /v1, unless it
// already ends so (a proxy's https://host/v1).
func (family) Base(t providers.Target) string {
	base := translate.BaseURL(t, defaultURL)
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	return base
}

// Authorize sets the credential and version headers, after any forwarded ones.
func (family) Authorize(h http.Header, t providers.Target) {
	h.Set("X-Api-Key", t.APIKey)
	// Versioning: https://docs.anthropic.com/en/api/versioning; a forwarded header, or the
	// Target's anthropic_version, may pin another.
	if h.Get("Anthropic-Version") == "" {
		version := t.Option(providers.OptionAnthropicVersion)
		if version == "" {
			version = defaultVersion
		}
		h.Set("Anthropic-Version", version)
	}
	// Beta features: https://docs.anthropic.com/en/api/beta-headers (comma-separated names).
	if beta := t.Option(providers.OptionAnthropicBeta); beta != "" {
		h.Add("Anthropic-Beta", beta)
	}
}

// Header keeps what is worth passing back: Anthropic's request id.
func (family) Header(h http.Header) http.Header {
	out := http.Header{"Content-Type": {"application/json"}}
	if id := h.Get("Request-Id"); id != "" {
		out.Set("Request-Id", id)
	}
	return out
}

// Request translation, OpenAI → Anthropic.

type request struct {
	Model         string          `json:"model"`
	System        []block         `json:"system,omitempty"`
	Messages      []message       `json:"messages"`
	MaxTokens     int             `json:"max_tokens"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	Tools         []tool          `json:"tools,omitempty"`
	ToolChoice    *toolChoice     `json:"tool_choice,omitempty"`
	Metadata      *metadata       `json:"metadata,omitempty"`
	Thinking      json.RawMessage `json:"thinking,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is every content block type used both ways: text, image, document, tool_use,
// tool_result, thinking and redacted_thinking.
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *source         `json:"source,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []block         `json:"content,omitempty"`
	Thinking     string          `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// source is an image or document source: base64 data with its media type, or a URL.
type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type metadata struct {
	UserID string `json:"user_id"`
}

// Build translates the OpenAI request in c into a Messages request.
func (family) Build(t providers.Target, c providers.Call, stream bool) (translate.Request, error) {
	req, tr, err := translate.Parse(t, c)
	if err != nil {
		return translate.Request{}, err
	}
	if req.N > 1 {
		return translate.Request{}, &domain.Error{Code: domain.CodeUnsupported, Param: "n", Message: "anthropic returns one choice; n must be 1"}
	}
	out := request{Model: tr.Model, Stream: stream, Temperature: req.Temperature, TopP: req.TopP,
		MaxTokens: defaultMaxTokens, StopSequences: req.Stop}
	if mt := translate.MaxTokens(req); mt != nil {
		out.MaxTokens = *mt
	}
	if req.User != "" {
		out.Metadata = &metadata{UserID: req.User}
	}
	// Extended thinking (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking)
	// is beyond OpenAI's fields: a strict Target drops it.
	if !t.StrictOpenAI && req.Thinking != nil {
		out.Thinking = req.Thinking.Raw
	}

	fns, legacy, err := translate.Functions(req)
	if err != nil {
		return translate.Request{}, err
	}
	tr.Legacy = legacy
	for _, f := range fns {
		schema := f.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`) // input_schema is required
		}
		out.Tools = append(out.Tools, tool{Name: f.Name, Description: f.Description, InputSchema: schema})
	}
	// tool_choice: https://docs.anthropic.com/en/docs/build-with-claude/tool-use#forcing-tool-use
	if len(out.Tools) > 0 {
		choice := req.Choice()
		switch choice.Mode {
		case openai.ChoiceNone:
			out.ToolChoice = &toolChoice{Type: "none"}
		case openai.ChoiceAuto:
			out.ToolChoice = &toolChoice{Type: "auto"}
		case openai.ChoiceRequired:
			out.ToolChoice = &toolChoice{Type: "any"}
		case openai.ChoiceFunction:
			out.ToolChoice = &toolChoice{Type: "tool", Name: choice.Name}
		}
		if req.ParallelToolCalls != nil && !*req.ParallelToolCalls && choice.Mode != openai.ChoiceNone {
			if out.ToolChoice == nil {
				out.ToolChoice = &toolChoice{Type: "auto"}
			}
			out.ToolChoice.DisableParallelToolUse = true
		}
	}

	w := turns{strict: t.StrictOpenAI, legacyID: map[string][]string{}}
	if err := translate.Walk(req.Messages, &w); err != nil {
		return translate.Request{}, err
	}
	out.System, out.Messages = w.system, w.out
	b, err := json.Marshal(out)
	if err != nil {
		return translate.Request{}, err
	}
	return translate.Request{Path: "/messages", Body: b, Translation: tr}, nil
}

// turns splits OpenAI's messages into Anthropic's top-level system blocks and its
// user/assistant turns. Tool results are user turns of tool_result blocks; consecutive ones
// share one turn, as Anthropic wants every result of a turn's tool calls in the next message
// (https://docs.anthropic.com/en/docs/build-with-claude/tool-use#handling-tool-use-and-tool-result-content-blocks).
type turns struct {
	strict   bool
	system   []block
	out      []message
	legacyID map[string][]string // function name → ids of unanswered legacy function calls
}

func (w *turns) System(p openai.Part) {
	w.system = append(w.system, block{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
}

func (w *turns) User(parts []openai.Part, param string) error {
	blocks, err := userBlocks(parts, param)
	if err != nil {
		return err
	}
	if len(blocks) > 0 {
		w.out = append(w.out, message{Role: "user", Content: blocks})
	}
	return nil
}

func (w *turns) Assistant(m *openai.Message, parts []openai.Part, param string) error {
	blocks, err := assistantBlocks(m, parts, param, w.strict, w.legacyID)
	if err != nil {
		return err
	}
	if len(blocks) > 0 {
		w.out = append(w.out, message{Role: "assistant", Content: blocks})
	}
	return nil
}

func (w *turns) Tool(m *openai.Message, parts []openai.Part, param string, join bool) error {
	id := m.ToolCallID
	if m.Role == openai.RoleFunction {
		if ids := w.legacyID[m.Name]; len(ids) > 0 {
			id, w.legacyID[m.Name] = ids[0], ids[1:]
		}
	}
	if id == "" {
		return domain.Invalid(param+".tool_call_id", "a tool message must answer an earlier tool call")
	}
	result := block{Type: "tool_result", ToolUseID: id}
	if text := translate.Text(parts); text != "" {
		result.Content = []block{{Type: "text", Text: text}}
	}
	if join {
		last := &w.out[len(w.out)-1]
		last.Content = append(last.Content, result)
	} else {
		w.out = append(w.out, message{Role: "user", Content: []block{result}})
	}
	return nil
}

func userBlocks(parts []openai.Part, param string) ([]block, error) {
	var blocks []block
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			// Anthropic refuses empty text blocks.
			if p.Text != "" {
				blocks = append(blocks, block{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
			}
		case openai.PartImageURL:
			b, err := image(p, fmt.Sprintf("%s.content[%d].image_url", param, j))
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		default:
			return nil, translate.Unsupported(name, "content parts", param, j, p.Type)
		}
	}
	return blocks, nil
}

// image turns an image_url part into an image block (https://docs.anthropic.com/en/docs/build-with-claude/vision):
// a data: URL becomes a base64 source, an http(s) URL a url source. A PDF data: URL becomes
// a document block (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support).
func image(p openai.Part, param string) (block, error) {
	if p.ImageURL == nil || p.ImageURL.URL == "" {
		return block{}, domain.Invalid(param+".url", "an image_url part needs a url")
	}
	u := p.ImageURL.URL
	if mediaType, data, ok := translate.DataURL(u); ok {
		typ := "image"
		if mediaType == "application/pdf" {
			typ = "document"
		}
		return block{Type: typ, Source: &source{Type: "base64", MediaType: mediaType, Data: data},
			CacheControl: p.CacheControl}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return block{Type: "image", Source: &source{Type: "url", URL: u}, CacheControl: p.CacheControl}, nil
	}
	return block{}, domain.Invalid(param+".url", "an image url must be a base64 data: URL or an http(s) URL")
}

func assistantBlocks(m *openai.Message, parts []openai.Part, param string, strict bool, legacyID map[string][]string) ([]block, error) {
	var blocks []block
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			if p.Text != "" {
				blocks = append(blocks, block{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
			}
		case openai.PartRefusal:
			if p.Refusal != "" {
				blocks = append(blocks, block{Type: "text", Text: p.Refusal})
			}
		case openai.PartThinking:
			if !strict {
				blocks = append(blocks, block{Type: "thinking", Thinking: p.Thinking, Signature: p.Signature})
			}
		case openai.PartRedactedThinking:
			if !strict {
				blocks = append(blocks, block{Type: "redacted_thinking", Data: p.Data})
			}
		default:
			return nil, translate.Unsupported(name, "assistant content parts", param, j, p.Type)
		}
	}
	for j, tc := range m.ToolCalls {
		input, err := translate.Args(tc.Function.Arguments, fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, j))
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	if fc := m.FunctionCall; fc != nil {
		input, err := translate.Args(fc.Arguments, param+".function_call.arguments")
		if err != nil {
			return nil, err
		}
		// A legacy function call has no id; one is made up and given to the function message
		// that answers it.
		id := translate.NewID("toolu_")
		legacyID[fc.Name] = append(legacyID[fc.Name], id)
		blocks = append(blocks, block{Type: "tool_use", ID: id, Name: fc.Name, Input: input})
	}
	return blocks, nil
}

// Answer translation, Anthropic → OpenAI.

type response struct {
	ID         string       `json:"id"`
	Model      string       `json:"model"`
	Content    []block      `json:"content"`
	StopReason string       `json:"stop_reason"`
	Usage      messageUsage `json:"usage"`
}

type messageUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// usage: OpenAI's prompt_tokens count every input token, cached or not; Anthropic's
// input_tokens leave out those read from or written to the cache.
func (u messageUsage) usage() providers.Usage {
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return providers.Usage{PromptTokens: prompt, CompletionTokens: u.OutputTokens, TotalTokens: prompt + u.OutputTokens,
		CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}

// finish maps stop_reason (https://docs.anthropic.com/en/api/handling-stop-reasons).
func finish(stop string, legacy bool) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		if legacy {
			return "function_call"
		}
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, pause_turn
}

// Answer translates a whole Messages answer.
func (family) Answer(raw []byte, tr translate.Translation) (*translate.Completion, providers.Usage, error) {
	var msg response
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, providers.Usage{}, translate.Malformed(name, "answered with a malformed message")
	}
	var r translate.Reply
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			r.Text(b.Text)
		case "tool_use":
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			r.Call(translate.ToolCall{ID: b.ID, Type: "function", Function: translate.FunctionCall{Name: b.Name, Arguments: args}})
		case "thinking":
			r.Thinking(translate.Block{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			r.Thinking(translate.Block{Type: "redacted_thinking", Data: b.Data})
		}
	}
	model := msg.Model
	if model == "" {
		model = tr.Model
	}
	usage := msg.Usage.usage()
	return &translate.Completion{
		ID: msg.ID, Object: "chat.completion", Created: time.Now().Unix(), Model: model,
		Choices: []translate.Choice{{Index: 0, Message: r.Message(tr), Logprobs: translate.Null, FinishReason: finish(msg.StopReason, tr.Legacy)}},
		Usage:   translate.UsageOf(usage),
	}, usage, nil
}

// Errors (https://docs.anthropic.com/en/api/errors): {"type":"error","error":{"type","message"}}.

// Refusal keeps Anthropic's error object and type (its names are OpenAI's where the two
// overlap); a body of another shape (a proxy's HTML page) is wrapped as ProviderErrorBody says.
func (family) Refusal(status int, h http.Header, raw []byte, key string) error {
	return translate.Refused(name, status, h, raw, key)
}

// errorStatus is the HTTP status Anthropic gives each error type, for an error that
// arrives as a stream event after a 200.
func errorStatus(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}

// Streaming (https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types).

type event struct {
	Type         string        `json:"type"`
	Message      *response     `json:"message"`
	Index        int           `json:"index"`
	ContentBlock *block        `json:"content_block"`
	Delta        *delta        `json:"delta"`
	Usage        *messageUsage `json:"usage"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type delta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
}

// Stream translates a stream's named events into chunks.
func (family) Stream(tr translate.Translation, key string, out *translate.Chunks) translate.Events {
	return &events{tr: tr, key: key, out: out, tools: map[int]int{}}
}

type events struct {
	tr  translate.Translation
	key string
	out *translate.Chunks

	tools map[int]int // content block index → tool call index
	usage messageUsage
	stop  string
}

func (s *events) Usage() providers.Usage { return s.usage.usage() }

// End: a stream is whole only at message_stop, which Event reports.
func (s *events) End(bool) string { return "message_stop" }

// Event translates one event; message_stop ends the answer.
func (s *events) Event(ev sse.Event) (done bool, err error) {
	var e event
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return false, translate.Malformed(name, "sent a malformed stream event")
	}
	typ := e.Type
	if typ == "" {
		typ = ev.Name
	}
	switch typ {
	case "message_start":
		if e.Message != nil {
			s.out.ID = e.Message.ID
			if e.Message.Model != "" {
				s.out.Model = e.Message.Model
			}
			s.usage = e.Message.Usage
		}
		s.out.AddDelta(translate.Delta{Role: "assistant", Content: translate.Str("")})
	case "content_block_start":
		if e.ContentBlock != nil {
			s.blockStart(e.Index, e.ContentBlock)
		}
	case "content_block_delta":
		if e.Delta != nil {
			s.blockDelta(e.Index, e.Delta)
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		if u := e.Usage; u != nil {
			// message_delta's usage is cumulative; its input counts, when present, replace
			// message_start's.
			s.usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				s.usage.InputTokens = u.InputTokens
			}
			if u.CacheReadInputTokens > 0 {
				s.usage.CacheReadInputTokens = u.CacheReadInputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				s.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
			}
		}
	case "message_stop":
		reason := finish(s.stop, s.tr.Legacy)
		s.out.Add(translate.ChunkChoice{Delta: translate.Delta{}, FinishReason: &reason})
		if s.tr.IncludeUsage {
			s.out.AddUsage(s.Usage())
		}
		return true, nil
	case "error":
		etype, msg := "api_error", "anthropic failed during the stream"
		if e.Error != nil {
			if e.Error.Type != "" {
				etype = e.Error.Type
			}
			if e.Error.Message != "" {
				msg = string(providers.Scrub([]byte(e.Error.Message), s.key))
			}
		}
		return false, &providers.UpstreamError{Status: errorStatus(etype), Provider: name, Body: translate.ErrorBody(msg, etype, nil)}
	}
	// ping, content_block_stop and event types added later carry nothing to translate
	// (https://docs.anthropic.com/en/api/versioning: new event types may appear).
	return false, nil
}

func (s *events) blockStart(index int, b *block) {
	switch b.Type {
	case "text":
		if b.Text != "" {
			s.out.AddDelta(translate.Delta{Content: translate.Str(b.Text)})
		}
	case "tool_use":
		n := len(s.tools)
		s.tools[index] = n
		if s.tr.Legacy {
			s.out.AddDelta(translate.Delta{FunctionCall: &translate.FunctionDelta{Name: b.Name}})
			return
		}
		s.out.AddDelta(translate.Delta{ToolCalls: []translate.ToolCallDelta{{Index: n, ID: b.ID, Type: "function",
			Function: translate.FunctionDelta{Name: b.Name}}}})
	case "thinking":
		if !s.tr.Strict && (b.Thinking != "" || b.Signature != "") {
			s.out.AddDelta(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index,
				Delta: translate.Block{Thinking: b.Thinking, Signature: b.Signature}}}})
		}
	case "redacted_thinking":
		if !s.tr.Strict {
			s.out.AddDelta(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index, Delta: translate.Block{Data: b.Data}}}})
		}
	}
}

func (s *events) blockDelta(index int, d *delta) {
	switch d.Type {
	case "text_delta":
		if d.Text != "" {
			s.out.AddDelta(translate.Delta{Content: translate.Str(d.Text)})
		}
	case "input_json_delta":
		n, ok := s.tools[index]
		if !ok || d.PartialJSON == "" {
			return
		}
		if s.tr.Legacy {
			s.out.AddDelta(translate.Delta{FunctionCall: &translate.FunctionDelta{Arguments: d.PartialJSON}})
			return
		}
		s.out.AddDelta(translate.Delta{ToolCalls: []translate.ToolCallDelta{{Index: n, Function: translate.FunctionDelta{Arguments: d.PartialJSON}}}})
	case "thinking_delta":
		if !s.tr.Strict && d.Thinking != "" {
			s.out.AddDelta(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index, Delta: translate.Block{Thinking: d.Thinking}}}})
		}
	case "signature_delta":
		if !s.tr.Strict && d.Signature != "" {
			s.out.AddDelta(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index, Delta: translate.Block{Signature: d.Signature}}}})
		}
	}
}
