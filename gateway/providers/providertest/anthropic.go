package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// AnthropicServer stands in for Anthropic's Messages API, POST /v1/messages, as its
// documentation shows it:
//   - the request: https://docs.anthropic.com/en/api/messages (x-api-key and anthropic-version
//     headers required, https://docs.anthropic.com/en/api/versioning; model, max_tokens and
//     messages required; roles user and assistant only; no empty text blocks);
//   - tool use: https://docs.anthropic.com/en/docs/build-with-claude/tool-use (a tool_use
//     answer when the request has tools, unless tool_choice is none or the last turn holds
//     tool results under tool_choice auto; every tool_use answered by a tool_result in the
//     next message);
//   - extended thinking: https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
//     (a thinking block with a signature first when thinking is enabled);
//   - streaming: https://docs.anthropic.com/en/docs/build-with-claude/streaming ("Event types"
//     and "Raw HTTP Stream response": message_start, content_block_start, ping,
//     content_block_delta, content_block_stop, message_delta, message_stop, and error);
//   - errors: https://docs.anthropic.com/en/api/errors ({"type":"error","error":{"type",
//     "message"}}).
//
// The answer's text is Reply; a streamed text is StreamWord(0..Chunks-1). A tool answer says
// AnthropicToolPreamble in a text block, then calls the tool with arguments of its schema's
// types. Any other path is echoed back as JSON, as the OpenAI stand-in does.
type AnthropicServer struct {
	*core

	cacheRead, cacheCreation int
}

// AnthropicToolPreamble is the text block before a tool_use block, as Claude often writes one.
const AnthropicToolPreamble = "Let me call a tool."

// AnthropicThinking and AnthropicSignature are the thinking block's text and signature.
const (
	AnthropicThinking  = "The user wants an answer."
	AnthropicSignature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
)

// NewAnthropic starts an Anthropic stand-in, closed when the test ends.
func NewAnthropic(t testing.TB) *AnthropicServer {
	s := &AnthropicServer{}
	s.core = newCore(t, http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the stand-in's Anthropic base (Anthropic's is https://api.anthropic.com).
func (s *AnthropicServer) BaseURL() string { return s.URL }

// SetCacheUsage sets the cache_read_input_tokens and cache_creation_input_tokens answers
// report.
func (s *AnthropicServer) SetCacheUsage(read, creation int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cacheRead, s.cacheCreation = read, creation
}

// AnthropicErrorBody is Anthropic's error body, for scripted answers.
func AnthropicErrorBody(typ, message string) string {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})
	return string(b)
}

// AnthropicEvent is one named server-sent event as Anthropic frames it, for scripted streams
// (an Answer whose Header has Content-Type text/event-stream and whose Body is events joined).
func AnthropicEvent(name string, data any) string {
	b, _ := json.Marshal(data)
	return "event: " + name + "\ndata: " + string(b) + "\n\n"
}

func anthropicError(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(AnthropicErrorBody(typ, message)))
}

func (s *AnthropicServer) serve(w http.ResponseWriter, r *http.Request) {
	req, scripted, plan, key, seq := s.receive(r)
	if scripted != nil {
		s.answerScripted(w, r, scripted)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(req.Body)})
		return
	}
	w.Header().Set("Request-Id", "req_standin_"+strconv.Itoa(seq))
	got := r.Header.Get("X-Api-Key")
	switch {
	case got == "":
		anthropicError(w, http.StatusUnauthorized, "authentication_error", "x-api-key header is required")
		return
	case key != "" && got != key:
		anthropicError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	case r.Header.Get("Anthropic-Version") == "":
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	var body anthropicBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "There was an error parsing the body of your request")
		return
	}
	if msg := body.problem(); msg != "" {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	s.mu.Lock()
	cacheRead, cacheCreation := s.cacheRead, s.cacheCreation
	s.mu.Unlock()
	a := anthropicAnswer{w: w, r: r, core: s.core, body: &body, plan: plan, seq: seq,
		usage: map[string]any{"input_tokens": body.inputTokens(), "cache_read_input_tokens": cacheRead,
			"cache_creation_input_tokens": cacheCreation}}
	if body.Stream {
		a.stream()
		return
	}
	a.whole()
}

// anthropicBody is what the stand-in reads of a Messages request.
type anthropicBody struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	StopSequences []string `json:"stop_sequences"`
	Stream        bool     `json:"stream"`
}

type anthropicBlockIn struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// blocks reads a message's content: a string or an array of blocks.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlockIn, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlockIn{{Type: "text", Text: &s}}, true
	}
	var blocks []anthropicBlockIn
	return blocks, json.Unmarshal(raw, &blocks) == nil
}

// problem is the first rule the request breaks, in Anthropic's words, or "".
func (b *anthropicBody) problem() string {
	switch {
	case b.Model == "":
		return "model: Field required"
	case b.MaxTokens == nil:
		return "max_tokens: Field required"
	case *b.MaxTokens < 1:
		return "max_tokens: Input should be greater than or equal to 1"
	case len(b.Messages) == 0:
		return "messages: at least one message is required"
	}
	if th := b.Thinking; th != nil && th.Type == "enabled" {
		if th.BudgetTokens < 1024 {
			return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
		}
		if th.BudgetTokens >= *b.MaxTokens {
			return "`max_tokens` must be greater than `thinking.budget_tokens`"
		}
	}
	var unanswered []string
	for i, m := range b.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Sprintf("messages: Unexpected role %q. The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.", m.Role)
		}
		blocks, ok := anthropicBlocks(m.Content)
		if !ok {
			return fmt.Sprintf("messages.%d.content: Input should be a valid list", i)
		}
		if len(blocks) == 0 {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		answered := map[string]bool{}
		for _, blk := range blocks {
			if blk.Type == "text" && (blk.Text == nil || *blk.Text == "") {
				return "messages: text content blocks must be non-empty"
			}
			if blk.Type == "tool_result" {
				answered[blk.ToolUseID] = true
			}
		}
		for _, id := range unanswered {
			if !answered[id] {
				return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, id)
			}
		}
		unanswered = nil
		if m.Role == "assistant" {
			for _, blk := range blocks {
				if blk.Type == "tool_use" {
					unanswered = append(unanswered, blk.ID)
				}
			}
		}
	}
	return ""
}

// inputTokens counts the words of the system prompt and the messages' text, at least one.
func (b *anthropicBody) inputTokens() int {
	n := 0
	count := func(raw json.RawMessage) {
		blocks, _ := anthropicBlocks(raw)
		for _, blk := range blocks {
			if blk.Text != nil {
				n += len(strings.Fields(*blk.Text))
			}
		}
	}
	if len(b.System) > 0 {
		count(b.System)
	}
	for _, m := range b.Messages {
		count(m.Content)
	}
	return max(n, 1)
}

// tool picks the tool the answer calls, if any: the forced one, else the first, unless
// tool_choice is none, or is auto (or absent) and the last turn brings tool results.
func (b *anthropicBody) tool() (name, input string, ok bool) {
	if len(b.Tools) == 0 {
		return "", "", false
	}
	choice := "auto"
	if b.ToolChoice != nil {
		choice = b.ToolChoice.Type
	}
	if choice == "none" {
		return "", "", false
	}
	if choice == "auto" {
		last, _ := anthropicBlocks(b.Messages[len(b.Messages)-1].Content)
		for _, blk := range last {
			if blk.Type == "tool_result" {
				return "", "", false
			}
		}
	}
	picked := b.Tools[0]
	if choice == "tool" {
		for _, t := range b.Tools {
			if t.Name == b.ToolChoice.Name {
				picked = t
			}
		}
	}
	return picked.Name, argumentsFor(picked.InputSchema), true
}

// anthropicAnswer writes one answer.
type anthropicAnswer struct {
	w     http.ResponseWriter
	r     *http.Request
	core  *core
	body  *anthropicBody
	plan  StreamPlan
	seq   int
	usage map[string]any
}

func (a *anthropicAnswer) id() string { return fmt.Sprintf("msg_standin%04d", a.seq) }

func (a *anthropicAnswer) toolID() string { return fmt.Sprintf("toolu_standin%04d", a.seq) }

func (a *anthropicAnswer) thinking() bool {
	return a.body.Thinking != nil && a.body.Thinking.Type == "enabled"
}

// text is the answer's text and stop reason: Reply, cut to max_tokens words (max_tokens), or
// before the first stop sequence it holds (stop_sequence).
func (a *anthropicAnswer) text() (text, stop string, sequence any) {
	text, stop = Reply, "end_turn"
	for _, seq := range a.body.StopSequences {
		if i := strings.Index(text, seq); seq != "" && i >= 0 {
			return text[:i], "stop_sequence", seq
		}
	}
	if words := strings.Fields(text); len(words) > *a.body.MaxTokens {
		return strings.Join(words[:*a.body.MaxTokens], " "), "max_tokens", nil
	}
	return text, stop, nil
}

// whole answers with one Message object (https://docs.anthropic.com/en/api/messages, "Response").
func (a *anthropicAnswer) whole() {
	var content []any
	if a.thinking() {
		content = append(content, map[string]any{"type": "thinking", "thinking": AnthropicThinking, "signature": AnthropicSignature})
	}
	var stop string
	var sequence any
	output := 0
	if name, input, ok := a.body.tool(); ok {
		content = append(content,
			map[string]any{"type": "text", "text": AnthropicToolPreamble},
			map[string]any{"type": "tool_use", "id": a.toolID(), "name": name, "input": json.RawMessage(input)})
		stop = "tool_use"
		output = len(strings.Fields(AnthropicToolPreamble)) + len(strings.Fields(input))
	} else {
		var text string
		text, stop, sequence = a.text()
		content = append(content, map[string]any{"type": "text", "text": text})
		output = len(strings.Fields(text))
	}
	a.usage["output_tokens"] = output
	writeJSON(a.w, http.StatusOK, map[string]any{
		"id": a.id(), "type": "message", "role": "assistant", "model": a.body.Model, "content": content,
		"stop_reason": stop, "stop_sequence": sequence, "usage": a.usage,
	})
}

// stream answers with the documented event flow: message_start; per block a
// content_block_start, its deltas and a content_block_stop (a ping after the first start);
// message_delta with the stop reason and the output tokens; message_stop. The plan's Chunks
// are the text deltas (or the pieces of a tool's input); CutAfter drops the connection after
// that many, ErrorAfter sends an overloaded_error event instead of the next, OmitDone leaves
// out message_stop.
func (a *anthropicAnswer) stream() {
	w, r, plan := a.w, a.r, a.plan
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sent := 0
	send := func(name string, data any) bool {
		if _, err := w.Write([]byte(AnthropicEvent(name, data))); err != nil {
			a.core.gone(r.URL.Path, sent)
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	// piece sends one counted delta, after the plan's delay, cut or error.
	piece := func(data any) bool {
		if plan.CutAfter > 0 && sent == plan.CutAfter {
			panic(http.ErrAbortHandler) // drops the connection mid-stream, as a crashed upstream would
		}
		if plan.ErrorAfter > 0 && sent == plan.ErrorAfter {
			send("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
			return false
		}
		if !a.core.wait(r, plan.Delay) {
			a.core.gone(r.URL.Path, sent)
			return false
		}
		if !send("content_block_delta", data) {
			return false
		}
		sent++
		return true
	}
	start := map[string]any{}
	for k, v := range a.usage {
		start[k] = v
	}
	start["output_tokens"] = 1
	if !send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": a.id(), "type": "message", "role": "assistant", "model": a.body.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": start}}) {
		return
	}
	index := 0
	block := func(startBlock map[string]any, deltas []map[string]any) bool {
		if !send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": startBlock}) {
			return false
		}
		if index == 0 && !send("ping", map[string]any{"type": "ping"}) {
			return false
		}
		for _, d := range deltas {
			if !piece(map[string]any{"type": "content_block_delta", "index": index, "delta": d}) {
				return false
			}
		}
		ok := send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
		return ok
	}
	if a.thinking() {
		if !block(map[string]any{"type": "thinking", "thinking": ""}, []map[string]any{
			{"type": "thinking_delta", "thinking": AnthropicThinking},
			{"type": "signature_delta", "signature": AnthropicSignature},
		}) {
			return
		}
	}
	stop, output := "end_turn", 0
	if name, input, ok := a.body.tool(); ok {
		if !block(map[string]any{"type": "text", "text": ""}, []map[string]any{{"type": "text_delta", "text": AnthropicToolPreamble}}) {
			return
		}
		// The first input_json_delta is empty, as Anthropic's often is.
		deltas := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
		for _, part := range split(input, plan.Chunks) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": part})
		}
		if !block(map[string]any{"type": "tool_use", "id": a.toolID(), "name": name, "input": map[string]any{}}, deltas) {
			return
		}
		stop, output = "tool_use", len(strings.Fields(AnthropicToolPreamble))+len(deltas)
	} else {
		deltas := make([]map[string]any, plan.Chunks)
		for i := range deltas {
			deltas[i] = map[string]any{"type": "text_delta", "text": StreamWord(i)}
		}
		if !block(map[string]any{"type": "text", "text": ""}, deltas) {
			return
		}
		output = plan.Chunks
	}
	if !send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}}) {
		return
	}
	if !plan.OmitDone {
		send("message_stop", map[string]any{"type": "message_stop"})
	}
}
