package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/translate"
	"github.com/causeway/causeway/gateway/sse"
)

// Adapter adapts the Anthropic Messages API (https://docs.anthropic.com/en/api/messages):
// OpenAI chat requests become Messages requests, and Messages answers and named stream events
// become chat.completion objects and chunks.
//
// Thinking: the request's thinking object is passed on only when the Target is not strict.
// Then the answer's thinking blocks are exposed in message.content_blocks (every thinking,
// redacted_thinking and text block, in the model's order), and in a stream as
// delta.content_blocks; a client sends them back as assistant content parts of types thinking
// and redacted_thinking, which the provider needs to check their signatures. A strict Target
// drops all of it, so its answers hold only OpenAI's fields.
type Adapter struct {
	client *http.Client
}

var (
	_ providers.Provider      = (*Adapter)(nil)
	_ providers.ChatStreamer  = (*Adapter)(nil)
	_ providers.PassThrougher = (*Adapter)(nil)
)

// New returns the Anthropic adapter; client sends calls whose Target carries no client
// (nil: a pooled client of its own).
func New(client *http.Client) *Adapter {
	if client == nil {
		client = providers.NewClient()
	}
	return &Adapter{client: client}
}

const (
	anthropicName       = "anthropic"
	anthropicDefaultURL = "https://api.anthropic.com"
	anthropicVersion    = "2023-06-01"
	// anthropicDefaultMaxTokens fills max_tokens, which Anthropic requires and OpenAI does not.
	anthropicDefaultMaxTokens = 4096
)

// Name is the provider name.
func (*Adapter) Name() string { return anthropicName }

// Chat sends one Messages request and translates its answer.
func (a *Adapter) Chat(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	body, tr, err := anthropicBuild(t, c, false)
	if err != nil {
		return nil, err
	}
	resp, err := a.do(ctx, t, c, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := translate.ReadBody(ctx, t, anthropicName, resp)
	if err != nil {
		return nil, err
	}
	var msg anthropicMessageResponse
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, &providers.UpstreamError{Status: http.StatusBadGateway, Provider: anthropicName,
			Body: translate.ErrorBody("anthropic answered with a malformed message", "api_error", nil)}
	}
	out, usage := anthropicTranslate(&msg, tr)
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &providers.Response{Status: http.StatusOK, Header: anthropicAnswerHeader(resp.Header), Body: b, Usage: usage}, nil
}

// ChatStream sends one streamed Messages request; its named events become chunks.
func (a *Adapter) ChatStream(ctx context.Context, t providers.Target, c providers.Call) (providers.Stream, error) {
	body, tr, err := anthropicBuild(t, c, true)
	if err != nil {
		return nil, err
	}
	resp, err := a.do(ctx, t, c, body)
	if err != nil {
		return nil, err
	}
	return &anthropicStream{
		ctx: ctx, body: resp.Body, r: sse.NewReader(resp.Body), tr: tr, key: t.APIKey,
		chunker: translate.Chunker{Created: time.Now().Unix(), Model: tr.model},
		tools:   map[int]int{},
	}, nil
}

// anthropicTranslation is what the answer's translation needs to know of the request.
type anthropicTranslation struct {
	strict       bool // drop thinking
	legacy       bool // the request used functions: answer with function_call
	includeUsage bool // stream_options.include_usage: end the stream with a usage chunk
	model        string
}

// anthropicBase is the API's versioned base: the Target's base URL (or Anthropic's) with /v1,
// unless it already ends so (a proxy's https://host/v1).
func anthropicBase(t providers.Target) string {
	base := translate.BaseURL(t, anthropicDefaultURL)
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	return base
}

// authorize sets the credential and version headers, after any forwarded ones.
func (a *Adapter) authorize(h http.Header, t providers.Target) {
	h.Set("X-Api-Key", t.APIKey)
	// Versioning: https://docs.anthropic.com/en/api/versioning; a forwarded header, or the
	// Target's anthropic_version, may pin another.
	if h.Get("Anthropic-Version") == "" {
		version := t.Option(providers.OptionAnthropicVersion)
		if version == "" {
			version = anthropicVersion
		}
		h.Set("Anthropic-Version", version)
	}
	// Beta features: https://docs.anthropic.com/en/api/beta-headers (comma-separated names).
	if beta := t.Option(providers.OptionAnthropicBeta); beta != "" {
		h.Add("Anthropic-Beta", beta)
	}
}

// do sends a Messages request body and turns a refusal into an *UpstreamError.
func (a *Adapter) do(ctx context.Context, t providers.Target, c providers.Call, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, anthropicBase(t)+"/messages", bytes.NewReader(body))
	if err != nil {
		return nil, &providers.ConnectionError{Provider: anthropicName, Reason: "its base URL is not a valid URL", Err: errors.New("the base URL is not a valid URL")}
	}
	providers.ForwardHeaders(req.Header, c.Header, false)
	req.Header.Set("Content-Type", "application/json")
	a.authorize(req.Header, t)
	resp, err := translate.Send(ctx, translate.Client(t, a.client), anthropicName, t.APIKey, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, anthropicUpstreamError(ctx, t, resp)
	}
	return resp, nil
}

// PassThrough sends any other call (count_tokens, models, batches) to Anthropic's API with the
// Target's credential, and returns the answer unchanged whatever its status.
func (a *Adapter) PassThrough(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	req, err := translate.PassThroughRequest(ctx, anthropicBase(t), c)
	if err != nil {
		return nil, err
	}
	a.authorize(req.Header, t)
	return translate.Send(ctx, translate.Client(t, a.client), anthropicName, t.APIKey, req)
}

// anthropicAnswerHeader keeps what is worth passing back: Anthropic's request id.
func anthropicAnswerHeader(h http.Header) http.Header {
	out := http.Header{"Content-Type": {"application/json"}}
	if id := h.Get("Request-Id"); id != "" {
		out.Set("Request-Id", id)
	}
	return out
}

// Request translation, OpenAI → Anthropic.

type anthropicRequest struct {
	Model         string             `json:"model"`
	System        []anthropicBlock   `json:"system,omitempty"`
	Messages      []anthropicMessage `json:"messages"`
	MaxTokens     int                `json:"max_tokens"`
	StopSequences []string           `json:"stop_sequences,omitempty"`
	Stream        bool               `json:"stream,omitempty"`
	Temperature   *float64           `json:"temperature,omitempty"`
	TopP          *float64           `json:"top_p,omitempty"`
	Tools         []anthropicTool    `json:"tools,omitempty"`
	ToolChoice    *anthropicChoice   `json:"tool_choice,omitempty"`
	Metadata      *anthropicMetadata `json:"metadata,omitempty"`
	Thinking      json.RawMessage    `json:"thinking,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// anthropicBlock is every content block type used both ways: text, image, document, tool_use,
// tool_result, thinking and redacted_thinking.
type anthropicBlock struct {
	Type         string           `json:"type"`
	Text         string           `json:"text,omitempty"`
	Source       *anthropicSource `json:"source,omitempty"`
	ID           string           `json:"id,omitempty"`
	Name         string           `json:"name,omitempty"`
	Input        json.RawMessage  `json:"input,omitempty"`
	ToolUseID    string           `json:"tool_use_id,omitempty"`
	Content      []anthropicBlock `json:"content,omitempty"`
	Thinking     string           `json:"thinking,omitempty"`
	Signature    string           `json:"signature,omitempty"`
	Data         string           `json:"data,omitempty"`
	CacheControl json.RawMessage  `json:"cache_control,omitempty"`
}

// anthropicSource is an image or document source: base64 data with its media type, or a URL.
type anthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type anthropicMetadata struct {
	UserID string `json:"user_id"`
}

// anthropicBuild translates the OpenAI request in c into a Messages request body.
func anthropicBuild(t providers.Target, c providers.Call, stream bool) ([]byte, anthropicTranslation, error) {
	req, err := c.ChatRequest()
	if err != nil {
		return nil, anthropicTranslation{}, err
	}
	model := c.Model
	if model == "" {
		model = req.Model
	}
	tr := anthropicTranslation{strict: t.StrictOpenAI, model: model, includeUsage: req.StreamOptions.IncludeUsage}
	if req.N > 1 {
		return nil, tr, &domain.Error{Code: domain.CodeUnsupported, Param: "n", Message: "anthropic returns one choice; n must be 1"}
	}
	out := anthropicRequest{Model: model, Stream: stream, Temperature: req.Temperature, TopP: req.TopP,
		MaxTokens: anthropicDefaultMaxTokens, StopSequences: req.Stop}
	if mt := translate.MaxTokens(req); mt != nil {
		out.MaxTokens = *mt
	}
	if req.User != "" {
		out.Metadata = &anthropicMetadata{UserID: req.User}
	}
	// Extended thinking (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking)
	// is beyond OpenAI's fields: a strict Target drops it.
	if !t.StrictOpenAI && req.Thinking != nil {
		out.Thinking = req.Thinking.Raw
	}

	fns, legacy, err := translate.Functions(req)
	if err != nil {
		return nil, tr, err
	}
	tr.legacy = legacy
	for _, f := range fns {
		schema := f.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`) // input_schema is required
		}
		out.Tools = append(out.Tools, anthropicTool{Name: f.Name, Description: f.Description, InputSchema: schema})
	}
	// tool_choice: https://docs.anthropic.com/en/docs/build-with-claude/tool-use#forcing-tool-use
	if len(out.Tools) > 0 {
		choice := req.Choice()
		switch choice.Mode {
		case openai.ChoiceNone:
			out.ToolChoice = &anthropicChoice{Type: "none"}
		case openai.ChoiceAuto:
			out.ToolChoice = &anthropicChoice{Type: "auto"}
		case openai.ChoiceRequired:
			out.ToolChoice = &anthropicChoice{Type: "any"}
		case openai.ChoiceFunction:
			out.ToolChoice = &anthropicChoice{Type: "tool", Name: choice.Name}
		}
		if req.ParallelToolCalls != nil && !*req.ParallelToolCalls && choice.Mode != openai.ChoiceNone {
			if out.ToolChoice == nil {
				out.ToolChoice = &anthropicChoice{Type: "auto"}
			}
			out.ToolChoice.DisableParallelToolUse = true
		}
	}

	if out.System, out.Messages, err = anthropicMessages(req.Messages, t.StrictOpenAI); err != nil {
		return nil, tr, err
	}
	b, err := json.Marshal(out)
	return b, tr, err
}

// anthropicMessages splits OpenAI's messages into Anthropic's top-level system blocks and its
// user/assistant turns. Tool results are user turns of tool_result blocks; consecutive ones
// share one turn, as Anthropic wants every result of a turn's tool calls in the next message
// (https://docs.anthropic.com/en/docs/build-with-claude/tool-use#handling-tool-use-and-tool-result-content-blocks).
func anthropicMessages(msgs []openai.Message, strict bool) ([]anthropicBlock, []anthropicMessage, error) {
	var (
		system   []anthropicBlock
		out      []anthropicMessage
		lastTool bool                    // the last turn holds tool results, so the next one joins it
		legacyID = map[string][]string{} // function name → ids of unanswered legacy function calls
	)
	for i := range msgs {
		m := &msgs[i]
		param := fmt.Sprintf("messages[%d]", i)
		parts := m.Parts()
		switch m.Role {
		case openai.RoleSystem, openai.RoleDeveloper:
			for j, p := range parts {
				if p.Type != openai.PartText {
					return nil, nil, domain.Invalid(fmt.Sprintf("%s.content[%d].type", param, j), "a system message holds only text")
				}
				if p.Text != "" {
					system = append(system, anthropicBlock{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
				}
			}
			continue
		case openai.RoleUser:
			blocks, err := anthropicUserBlocks(parts, param)
			if err != nil {
				return nil, nil, err
			}
			if len(blocks) > 0 {
				out = append(out, anthropicMessage{Role: "user", Content: blocks})
			}
		case openai.RoleAssistant:
			blocks, err := anthropicAssistantBlocks(m, parts, param, strict, legacyID)
			if err != nil {
				return nil, nil, err
			}
			if len(blocks) > 0 {
				out = append(out, anthropicMessage{Role: "assistant", Content: blocks})
			}
		case openai.RoleTool, openai.RoleFunction:
			id := m.ToolCallID
			if m.Role == openai.RoleFunction {
				if ids := legacyID[m.Name]; len(ids) > 0 {
					id, legacyID[m.Name] = ids[0], ids[1:]
				}
			}
			if id == "" {
				return nil, nil, domain.Invalid(param+".tool_call_id", "a tool message must answer an earlier tool call")
			}
			result := anthropicBlock{Type: "tool_result", ToolUseID: id}
			if text := translate.Text(parts); text != "" {
				result.Content = []anthropicBlock{{Type: "text", Text: text}}
			}
			if lastTool {
				last := &out[len(out)-1]
				last.Content = append(last.Content, result)
			} else {
				out = append(out, anthropicMessage{Role: "user", Content: []anthropicBlock{result}})
			}
			lastTool = true
			continue
		default:
			return nil, nil, domain.Invalid(param+".role", "role %q is not one of system, developer, user, assistant, tool, function", m.Role)
		}
		lastTool = false
	}
	return system, out, nil
}

func anthropicUserBlocks(parts []openai.Part, param string) ([]anthropicBlock, error) {
	var blocks []anthropicBlock
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			// Anthropic refuses empty text blocks.
			if p.Text != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
			}
		case openai.PartImageURL:
			b, err := anthropicImage(p, fmt.Sprintf("%s.content[%d].image_url", param, j))
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		default:
			return nil, &domain.Error{Code: domain.CodeUnsupported, Param: fmt.Sprintf("%s.content[%d].type", param, j),
				Message: fmt.Sprintf("content parts of type %q cannot be sent to anthropic", p.Type)}
		}
	}
	return blocks, nil
}

// anthropicImage turns an image_url part into an image block (https://docs.anthropic.com/en/docs/build-with-claude/vision):
// a data: URL becomes a base64 source, an http(s) URL a url source. A PDF data: URL becomes
// a document block (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support).
func anthropicImage(p openai.Part, param string) (anthropicBlock, error) {
	if p.ImageURL == nil || p.ImageURL.URL == "" {
		return anthropicBlock{}, domain.Invalid(param+".url", "an image_url part needs a url")
	}
	u := p.ImageURL.URL
	if mediaType, data, ok := translate.DataURL(u); ok {
		typ := "image"
		if mediaType == "application/pdf" {
			typ = "document"
		}
		return anthropicBlock{Type: typ, Source: &anthropicSource{Type: "base64", MediaType: mediaType, Data: data},
			CacheControl: p.CacheControl}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return anthropicBlock{Type: "image", Source: &anthropicSource{Type: "url", URL: u}, CacheControl: p.CacheControl}, nil
	}
	return anthropicBlock{}, domain.Invalid(param+".url", "an image url must be a base64 data: URL or an http(s) URL")
}

func anthropicAssistantBlocks(m *openai.Message, parts []openai.Part, param string, strict bool, legacyID map[string][]string) ([]anthropicBlock, error) {
	var blocks []anthropicBlock
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			if p.Text != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
			}
		case openai.PartRefusal:
			if p.Refusal != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: p.Refusal})
			}
		case openai.PartThinking:
			if !strict {
				blocks = append(blocks, anthropicBlock{Type: "thinking", Thinking: p.Thinking, Signature: p.Signature})
			}
		case openai.PartRedactedThinking:
			if !strict {
				blocks = append(blocks, anthropicBlock{Type: "redacted_thinking", Data: p.Data})
			}
		default:
			return nil, &domain.Error{Code: domain.CodeUnsupported, Param: fmt.Sprintf("%s.content[%d].type", param, j),
				Message: fmt.Sprintf("assistant content parts of type %q cannot be sent to anthropic", p.Type)}
		}
	}
	for j, tc := range m.ToolCalls {
		input, err := translate.Args(tc.Function.Arguments, fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, j))
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
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
		blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: id, Name: fc.Name, Input: input})
	}
	return blocks, nil
}

// Answer translation, Anthropic → OpenAI.

type anthropicMessageResponse struct {
	ID         string           `json:"id"`
	Model      string           `json:"model"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      anthropicUsage   `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// usage: OpenAI's prompt_tokens count every input token, cached or not; Anthropic's
// input_tokens leave out those read from or written to the cache.
func (u anthropicUsage) usage() providers.Usage {
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return providers.Usage{PromptTokens: prompt, CompletionTokens: u.OutputTokens, TotalTokens: prompt + u.OutputTokens,
		CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}

// anthropicFinish maps stop_reason (https://docs.anthropic.com/en/api/handling-stop-reasons).
func anthropicFinish(stop string, legacy bool) string {
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

func anthropicTranslate(msg *anthropicMessageResponse, tr anthropicTranslation) (*translate.Completion, providers.Usage) {
	var (
		text     strings.Builder
		hasText  bool
		calls    []translate.ToolCall
		blocks   []translate.Block
		thinking bool
	)
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			hasText = true
			blocks = append(blocks, translate.Block{Type: "text", Text: b.Text})
		case "tool_use":
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, translate.ToolCall{ID: b.ID, Type: "function", Function: translate.FunctionCall{Name: b.Name, Arguments: args}})
		case "thinking":
			thinking = true
			blocks = append(blocks, translate.Block{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			thinking = true
			blocks = append(blocks, translate.Block{Type: "redacted_thinking", Data: b.Data})
		}
	}
	out := translate.Message{Role: "assistant"}
	if hasText || len(calls) == 0 {
		out.Content = translate.Str(text.String())
	}
	if tr.legacy && len(calls) > 0 {
		out.FunctionCall = &calls[0].Function
	} else {
		out.ToolCalls = calls
	}
	if thinking && !tr.strict {
		out.ContentBlocks = blocks
	}
	model := msg.Model
	if model == "" {
		model = tr.model
	}
	usage := msg.Usage.usage()
	return &translate.Completion{
		ID: msg.ID, Object: "chat.completion", Created: time.Now().Unix(), Model: model,
		Choices: []translate.Choice{{Index: 0, Message: out, Logprobs: translate.Null, FinishReason: anthropicFinish(msg.StopReason, tr.legacy)}},
		Usage:   translate.UsageOf(usage),
	}, usage
}

// Errors (https://docs.anthropic.com/en/api/errors): {"type":"error","error":{"type","message"}}.

// anthropicUpstreamError reads a refusal into OpenAI's error shape, keeping Anthropic's error
// object and type (its names are OpenAI's where the two overlap); a body of another shape (a
// proxy's HTML page) is wrapped as ProviderErrorBody says.
func anthropicUpstreamError(ctx context.Context, t providers.Target, resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && ctx.Err() != nil {
		return providers.TransportError(ctx, anthropicName, err, t.APIKey)
	}
	return &providers.UpstreamError{
		Status:     resp.StatusCode,
		RetryAfter: providers.RetryAfter(resp.Header, time.Now()),
		Body:       providers.ProviderErrorBody(anthropicName, resp.StatusCode, providers.Scrub(raw, t.APIKey)),
		Provider:   anthropicName,
	}
}

// anthropicErrorStatus is the HTTP status Anthropic gives each error type, for an error that
// arrives as a stream event after a 200.
func anthropicErrorStatus(typ string) int {
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

type anthropicEvent struct {
	Type         string                    `json:"type"`
	Message      *anthropicMessageResponse `json:"message"`
	Index        int                       `json:"index"`
	ContentBlock *anthropicBlock           `json:"content_block"`
	Delta        *anthropicDelta           `json:"delta"`
	Usage        *anthropicUsage           `json:"usage"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
}

type anthropicStream struct {
	ctx     context.Context
	body    io.ReadCloser
	r       *sse.Reader
	tr      anthropicTranslation
	key     string
	chunker translate.Chunker

	pending [][]byte
	tools   map[int]int // content block index → tool call index
	usage   anthropicUsage
	stop    string
	done    bool
	err     error
}

func (s *anthropicStream) Usage() providers.Usage { return s.usage.usage() }

// Close ends the stream. Before message_stop it drops the connection, which is how Anthropic
// learns that the client went away; after it, the rest is drained so the connection can be
// reused.
func (s *anthropicStream) Close() error {
	if s.done && s.err == nil {
		_, _ = io.CopyN(io.Discard, s.body, 4<<10)
	}
	return s.body.Close()
}

// Next returns the next chunk. A stream that ends before message_stop, or carries an error
// event, ends in an error: the caller must never take a truncated answer for a whole one.
func (s *anthropicStream) Next() ([]byte, error) {
	for {
		if len(s.pending) > 0 {
			c := s.pending[0]
			s.pending = s.pending[1:]
			return c, nil
		}
		if s.err != nil {
			return nil, s.err
		}
		if s.done {
			return nil, io.EOF
		}
		ev, err := s.r.Next()
		if err != nil {
			s.err = s.readError(err)
			continue
		}
		s.err = s.handle(ev)
	}
}

func (s *anthropicStream) readError(err error) error {
	if s.ctx.Err() != nil {
		return providers.TransportError(s.ctx, anthropicName, err, s.key)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &providers.ConnectionError{Provider: anthropicName,
		Err: fmt.Errorf("the stream ended before message_stop: %w", providers.RedactError(err, s.key))}
}

func (s *anthropicStream) handle(ev sse.Event) error {
	var e anthropicEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return &providers.UpstreamError{Status: http.StatusBadGateway, Provider: anthropicName,
			Body: translate.ErrorBody("anthropic sent a malformed stream event", "api_error", nil)}
	}
	typ := e.Type
	if typ == "" {
		typ = ev.Name
	}
	switch typ {
	case "message_start":
		if e.Message != nil {
			s.chunker.ID = e.Message.ID
			if e.Message.Model != "" {
				s.chunker.Model = e.Message.Model
			}
			s.usage = e.Message.Usage
		}
		s.emit(translate.Delta{Role: "assistant", Content: translate.Str("")})
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
		finish := anthropicFinish(s.stop, s.tr.legacy)
		s.pending = append(s.pending, s.chunker.Chunk(translate.ChunkChoice{Delta: translate.Delta{}, FinishReason: &finish}))
		if s.tr.includeUsage {
			s.pending = append(s.pending, s.chunker.Usage(s.Usage()))
		}
		s.done = true
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
		return &providers.UpstreamError{Status: anthropicErrorStatus(etype), Provider: anthropicName, Body: translate.ErrorBody(msg, etype, nil)}
	}
	// ping, content_block_stop and event types added later carry nothing to translate
	// (https://docs.anthropic.com/en/api/versioning: new event types may appear).
	return nil
}

func (s *anthropicStream) emit(d translate.Delta) {
	s.pending = append(s.pending, s.chunker.Chunk(translate.ChunkChoice{Delta: d}))
}

func (s *anthropicStream) blockStart(index int, b *anthropicBlock) {
	switch b.Type {
	case "text":
		if b.Text != "" {
			s.emit(translate.Delta{Content: translate.Str(b.Text)})
		}
	case "tool_use":
		n := len(s.tools)
		s.tools[index] = n
		if s.tr.legacy {
			s.emit(translate.Delta{FunctionCall: &translate.FunctionDelta{Name: b.Name}})
			return
		}
		s.emit(translate.Delta{ToolCalls: []translate.ToolCallDelta{{Index: n, ID: b.ID, Type: "function",
			Function: translate.FunctionDelta{Name: b.Name}}}})
	case "thinking":
		if !s.tr.strict && (b.Thinking != "" || b.Signature != "") {
			s.emit(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index,
				Delta: translate.Block{Thinking: b.Thinking, Signature: b.Signature}}}})
		}
	case "redacted_thinking":
		if !s.tr.strict {
			s.emit(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index, Delta: translate.Block{Data: b.Data}}}})
		}
	}
}

func (s *anthropicStream) blockDelta(index int, d *anthropicDelta) {
	switch d.Type {
	case "text_delta":
		if d.Text != "" {
			s.emit(translate.Delta{Content: translate.Str(d.Text)})
		}
	case "input_json_delta":
		n, ok := s.tools[index]
		if !ok || d.PartialJSON == "" {
			return
		}
		if s.tr.legacy {
			s.emit(translate.Delta{FunctionCall: &translate.FunctionDelta{Arguments: d.PartialJSON}})
			return
		}
		s.emit(translate.Delta{ToolCalls: []translate.ToolCallDelta{{Index: n, Function: translate.FunctionDelta{Arguments: d.PartialJSON}}}})
	case "thinking_delta":
		if !s.tr.strict && d.Thinking != "" {
			s.emit(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index, Delta: translate.Block{Thinking: d.Thinking}}}})
		}
	case "signature_delta":
		if !s.tr.strict && d.Signature != "" {
			s.emit(translate.Delta{ContentBlocks: []translate.BlockDelta{{Index: index, Delta: translate.Block{Signature: d.Signature}}}})
		}
	}
}
