package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/translate"
	"github.com/causeway/causeway/gateway/sse"
)

// New returns the Gemini adapter; client sends calls whose Target carries no client (nil: a
// pooled client of its own).
func New(client *http.Client) *translate.Adapter {
	return translate.New(family{}, client)
}

// family is what sets the Gemini API apart: its URL, key header and translation.
type family struct{}

const (
	name       = "google"
	defaultURL = "https://generativelanguage.googleapis.com"
	// thoughtMark separates a tool call id from the thought signature it carries.
	thoughtMark = "__thought__"
)

// Name is the provider name.
func (family) Name() string { return name }

// Base is the API's versioned base: the Target's base URL (or Google's) with /v1beta, unless it
// already names a version (a proxy's https://host/v1beta).
func (family) Base(t providers.Target) string {
	base := translate.BaseURL(t, defaultURL)
	if !strings.HasSuffix(base, "/v1beta") && !strings.HasSuffix(base, "/v1") {
		base += "/v1beta"
	}
	return base
}

// Authorize sets the key. It goes in a header, never the query, so that no URL (in a log or an
// error) holds it (https://ai.google.dev/gemini-api/docs/api-key).
func (family) Authorize(h http.Header, t providers.Target) {
	h.Set("X-Goog-Api-Key", t.APIKey)
}

// Header is the answer's content type: Gemini's headers carry nothing worth passing back.
func (family) Header(http.Header) http.Header {
	return http.Header{"Content-Type": {"application/json"}}
}

// Request translation, OpenAI → Gemini (https://ai.google.dev/api/generate-content#request-body).

type request struct {
	Contents          []content   `json:"contents"`
	SystemInstruction *content    `json:"systemInstruction,omitempty"`
	Tools             []tool      `json:"tools,omitempty"`
	ToolConfig        *toolConfig `json:"toolConfig,omitempty"`
	GenerationConfig  *genConfig  `json:"generationConfig,omitempty"`
}

// content and part: https://ai.google.dev/api/caching#Content.
type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// tool declares functions with parametersJsonSchema, which takes OpenAI's JSON Schema
// unchanged (https://ai.google.dev/api/caching#FunctionDeclaration).
type tool struct {
	FunctionDeclarations []functionDecl `json:"functionDeclarations"`
}

type functionDecl struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// toolConfig: https://ai.google.dev/api/caching#ToolConfig.
type toolConfig struct {
	FunctionCallingConfig callingConfig `json:"functionCallingConfig"`
}

type callingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// genConfig: https://ai.google.dev/api/generate-content#generationconfig.
type genConfig struct {
	StopSequences      []string        `json:"stopSequences,omitempty"`
	CandidateCount     *int            `json:"candidateCount,omitempty"`
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *thinking       `json:"thinkingConfig,omitempty"`
}

type thinking struct {
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

// Build translates the OpenAI request in c into a GenerateContentRequest for
// models.generateContent, or streamGenerateContent with alt=sse: each event of its answer is a
// whole GenerateContentResponse holding the next piece of each candidate.
func (family) Build(t providers.Target, c providers.Call, stream bool) (translate.Request, error) {
	req, tr, err := translate.Parse(t, c)
	if err != nil {
		return translate.Request{}, err
	}
	tr.Model = strings.TrimPrefix(tr.Model, "models/")
	if tr.Model == "" {
		return translate.Request{}, domain.Invalid("model", "a model is required")
	}
	out := request{}

	gc := genConfig{Temperature: req.Temperature, TopP: req.TopP, MaxOutputTokens: translate.MaxTokens(req),
		PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty, Seed: req.Seed,
		StopSequences: req.Stop}
	if req.N > 1 {
		n := req.N
		gc.CandidateCount = &n
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			gc.ResponseMimeType = "application/json"
		case "json_schema":
			gc.ResponseMimeType = "application/json"
			gc.ResponseJSONSchema = rf.Schema
		}
	}
	if !t.StrictOpenAI {
		if gc.ThinkingConfig, err = thinkingConfig(req.Thinking); err != nil {
			return translate.Request{}, err
		}
	}
	if b, _ := json.Marshal(gc); string(b) != "{}" {
		out.GenerationConfig = &gc
	}

	fns, legacy, err := translate.Functions(req)
	if err != nil {
		return translate.Request{}, err
	}
	tr.Legacy = legacy
	if len(fns) > 0 {
		decls := make([]functionDecl, 0, len(fns))
		for _, f := range fns {
			decls = append(decls, functionDecl{Name: f.Name, Description: f.Description, ParametersJSONSchema: f.Parameters})
		}
		out.Tools = []tool{{FunctionDeclarations: decls}}
		// Function calling modes: https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes
		switch choice := req.Choice(); choice.Mode {
		case openai.ChoiceNone:
			out.ToolConfig = &toolConfig{callingConfig{Mode: "NONE"}}
		case openai.ChoiceAuto:
			out.ToolConfig = &toolConfig{callingConfig{Mode: "AUTO"}}
		case openai.ChoiceRequired:
			out.ToolConfig = &toolConfig{callingConfig{Mode: "ANY"}}
		case openai.ChoiceFunction:
			out.ToolConfig = &toolConfig{callingConfig{Mode: "ANY", AllowedFunctionNames: []string{choice.Name}}}
		}
	}

	w := turns{names: map[string]string{}}
	if err := translate.Walk(req.Messages, &w); err != nil {
		return translate.Request{}, err
	}
	out.SystemInstruction, out.Contents = w.system, w.out
	b, err := json.Marshal(out)
	if err != nil {
		return translate.Request{}, err
	}
	r := translate.Request{Path: "/models/" + url.PathEscape(tr.Model) + ":generateContent", Body: b, Translation: tr}
	if stream {
		r.Path, r.Query = "/models/"+url.PathEscape(tr.Model)+":streamGenerateContent", "alt=sse"
	}
	return r, nil
}

// thinkingConfig maps thinking {type, budget_tokens} to thinkingConfig
// (https://ai.google.dev/gemini-api/docs/thinking#set-budget): enabled asks for the thoughts
// and sets the budget; disabled sets the budget to zero.
func thinkingConfig(th *openai.Thinking) (*thinking, error) {
	if th == nil {
		return nil, nil
	}
	switch th.Type {
	case "disabled":
		zero := 0
		return &thinking{ThinkingBudget: &zero}, nil
	case "enabled", "":
		return &thinking{ThinkingBudget: th.BudgetTokens, IncludeThoughts: true}, nil
	}
	return nil, domain.Invalid("thinking.type", "thinking.type must be enabled or disabled")
}

// turns turns OpenAI's messages into a system instruction and user/model turns. The answers
// to one turn's function calls go together in one user turn, as Gemini wants as many function
// responses as there were calls
// (https://ai.google.dev/gemini-api/docs/function-calling#multi-turn).
type turns struct {
	system *content
	out    []content
	names  map[string]string // tool call id → function name
}

func (w *turns) System(p openai.Part) {
	if w.system == nil {
		w.system = &content{}
	}
	w.system.Parts = append(w.system.Parts, part{Text: p.Text})
}

func (w *turns) User(parts []openai.Part, param string) error {
	gp, err := userParts(parts, param)
	if err != nil {
		return err
	}
	if len(gp) > 0 {
		w.out = append(w.out, content{Role: "user", Parts: gp})
	}
	return nil
}

func (w *turns) Assistant(m *openai.Message, parts []openai.Part, param string) error {
	gp, err := modelParts(m, parts, param, w.names)
	if err != nil {
		return err
	}
	if len(gp) > 0 {
		w.out = append(w.out, content{Role: "model", Parts: gp})
	}
	return nil
}

func (w *turns) Tool(m *openai.Message, parts []openai.Part, param string, join bool) error {
	fn := m.Name
	if m.Role == openai.RoleTool {
		if n, ok := w.names[m.ToolCallID]; ok {
			fn = n
		}
	}
	if fn == "" {
		return domain.Invalid(param+".tool_call_id", "a tool message must answer an earlier tool call")
	}
	p := part{FunctionResponse: &functionResponse{Name: fn, Response: result(translate.Text(parts))}}
	if join {
		last := &w.out[len(w.out)-1]
		last.Parts = append(last.Parts, p)
	} else {
		w.out = append(w.out, content{Role: "user", Parts: []part{p}})
	}
	return nil
}

// result is a function response: a JSON object as it is, anything else wrapped as
// {"content": ...}, since Gemini takes an object (https://ai.google.dev/api/caching#FunctionResponse).
func result(text string) json.RawMessage {
	trimmed := strings.TrimSpace(text)
	if strings.HasPrefix(trimmed, "{") {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(trimmed), &obj) == nil {
			return json.RawMessage(trimmed)
		}
	}
	var v any = text
	if json.Valid([]byte(trimmed)) && trimmed != "" {
		v = json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(map[string]any{"content": v})
	return b
}

func userParts(parts []openai.Part, param string) ([]part, error) {
	var out []part
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			if p.Text != "" {
				out = append(out, part{Text: p.Text})
			}
		case openai.PartImageURL:
			gp, err := image(p, fmt.Sprintf("%s.content[%d].image_url", param, j))
			if err != nil {
				return nil, err
			}
			out = append(out, gp)
		default:
			return nil, translate.Unsupported(name, "content parts", param, j, p.Type)
		}
	}
	return out, nil
}

// image turns an image_url part into inline data (a data: URL,
// https://ai.google.dev/gemini-api/docs/image-understanding#inline-image) or file data (any
// other URL, which Gemini fetches itself; its MIME type is guessed from the extension).
func image(p openai.Part, param string) (part, error) {
	if p.ImageURL == nil || p.ImageURL.URL == "" {
		return part{}, domain.Invalid(param+".url", "an image_url part needs a url")
	}
	u := p.ImageURL.URL
	if mediaType, data, ok := translate.DataURL(u); ok {
		return part{InlineData: &blob{MimeType: mediaType, Data: data}}, nil
	}
	if strings.HasPrefix(u, "data:") {
		return part{}, domain.Invalid(param+".url", "a data: URL must be base64-encoded and name its media type")
	}
	return part{FileData: &fileData{MimeType: mimeType(u), FileURI: u}}, nil
}

func mimeType(u string) string {
	if parsed, err := url.Parse(u); err == nil {
		u = parsed.Path
	}
	switch strings.ToLower(path.Ext(u)) {
	case ".png":
		return "image/png"
	case ".webp":
		return "image/webp"
	case ".gif":
		return "image/gif"
	case ".heic":
		return "image/heic"
	case ".heif":
		return "image/heif"
	case ".pdf":
		return "application/pdf"
	}
	return "image/jpeg"
}

func modelParts(m *openai.Message, parts []openai.Part, param string, names map[string]string) ([]part, error) {
	var out []part
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			if p.Text != "" {
				out = append(out, part{Text: p.Text})
			}
		case openai.PartRefusal:
			if p.Refusal != "" {
				out = append(out, part{Text: p.Refusal})
			}
		case openai.PartThinking, openai.PartRedactedThinking:
			// Gemini's thoughts are not sent back; their signatures travel on function calls.
		default:
			return nil, translate.Unsupported(name, "assistant content parts", param, j, p.Type)
		}
	}
	for j, tc := range m.ToolCalls {
		args, err := translate.Args(tc.Function.Arguments, fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, j))
		if err != nil {
			return nil, err
		}
		names[tc.ID] = tc.Function.Name
		fp := part{FunctionCall: &functionCall{Name: tc.Function.Name, Args: args}}
		if _, sig, ok := strings.Cut(tc.ID, thoughtMark); ok {
			fp.ThoughtSignature = sig
		}
		out = append(out, fp)
	}
	if fc := m.FunctionCall; fc != nil {
		args, err := translate.Args(fc.Arguments, param+".function_call.arguments")
		if err != nil {
			return nil, err
		}
		out = append(out, part{FunctionCall: &functionCall{Name: fc.Name, Args: args}})
	}
	return out, nil
}

// Answer translation, Gemini → OpenAI
// (https://ai.google.dev/api/generate-content#generatecontentresponse).

type response struct {
	Candidates     []candidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *usageMetadata `json:"usageMetadata"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
	Error         *rpcError      `json:"error"`
}

type candidate struct {
	Content      *content `json:"content"`
	FinishReason string   `json:"finishReason"`
	Index        int      `json:"index"`
}

// usageMetadata: https://ai.google.dev/api/generate-content#UsageMetadata. promptTokenCount
// already includes the cached tokens; thoughts are counted apart from the candidates.
type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
}

// usage: OpenAI's completion tokens include reasoning, so thoughts join the candidates.
func (u *usageMetadata) usage() providers.Usage {
	if u == nil {
		return providers.Usage{}
	}
	completion := u.CandidatesTokenCount + u.ThoughtsTokenCount
	total := u.TotalTokenCount
	if total == 0 {
		total = u.PromptTokenCount + completion
	}
	return providers.Usage{PromptTokens: u.PromptTokenCount, CompletionTokens: completion, TotalTokens: total,
		CachedTokens: u.CachedContentTokenCount, ReasoningTokens: u.ThoughtsTokenCount}
}

// finish maps FinishReason (https://ai.google.dev/api/generate-content#FinishReason);
// Gemini ends a turn of function calls with STOP, OpenAI with tool_calls.
func finish(reason string, calls bool, legacy bool) string {
	switch reason {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return "content_filter"
	}
	if calls {
		if legacy {
			return "function_call"
		}
		return "tool_calls"
	}
	return "stop"
}

// toolCall gives a function call an OpenAI tool call, with an id.
func toolCall(fc *functionCall, signature string) translate.ToolCall {
	id := fc.ID
	if id == "" {
		id = translate.NewID("call_")
	}
	if signature != "" {
		id += thoughtMark + signature
	}
	args := string(bytes.TrimSpace(fc.Args))
	if args == "" || args == "null" {
		args = "{}"
	}
	return translate.ToolCall{ID: id, Type: "function", Function: translate.FunctionCall{Name: fc.Name, Arguments: args}}
}

// Answer translates a whole GenerateContentResponse: its candidates become choices.
func (family) Answer(raw []byte, tr translate.Translation) (*translate.Completion, providers.Usage, error) {
	var gr response
	if err := json.Unmarshal(raw, &gr); err != nil {
		return nil, providers.Usage{}, translate.Malformed(name, "answered with a malformed response")
	}
	out := &translate.Completion{Object: "chat.completion", Created: time.Now().Unix(), Model: tr.Model}
	out.ID = translate.NewID("chatcmpl-")
	if gr.ResponseID != "" {
		out.ID = "chatcmpl-" + gr.ResponseID
	}
	if gr.ModelVersion != "" {
		out.Model = gr.ModelVersion
	}
	for i, cand := range gr.Candidates {
		var r translate.Reply
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					r.Call(toolCall(p.FunctionCall, p.ThoughtSignature))
				case p.Thought:
					r.Thinking(translate.Block{Type: "thinking", Thinking: p.Text, Signature: p.ThoughtSignature})
				case p.Text != "":
					r.Text(p.Text)
				}
			}
		}
		// Protocol buffers' JSON leaves a zero index out, so a missing one is the position.
		index := cand.Index
		if index == 0 {
			index = i
		}
		out.Choices = append(out.Choices, translate.Choice{Index: index, Message: r.Message(tr), Logprobs: translate.Null,
			FinishReason: finish(cand.FinishReason, r.Calls() > 0, tr.Legacy)})
	}
	if len(out.Choices) == 0 {
		// A prompt blocked before any candidate: one empty choice, filtered.
		out.Choices = []translate.Choice{{Message: translate.Message{Role: "assistant", Content: translate.Str("")},
			Logprobs: translate.Null, FinishReason: "content_filter"}}
	}
	usage := gr.UsageMetadata.usage()
	out.Usage = translate.UsageOf(usage)
	return out, usage, nil
}

// Errors (https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes):
// {"error":{"code","message","status","details"}}.

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

// errorType names a google.rpc status as OpenAI names its error types.
func errorType(status string, code int) string {
	switch status {
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return "invalid_request_error"
	case "UNAUTHENTICATED":
		return "authentication_error"
	case "PERMISSION_DENIED":
		return "permission_error"
	case "NOT_FOUND":
		return "not_found_error"
	case "RESOURCE_EXHAUSTED":
		return "rate_limit_error"
	}
	if code >= 400 && code < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// retryDelay is google.rpc.RetryInfo's delay, which Gemini sends with a 429 in place of
// Retry-After.
func (e *rpcError) retryDelay() time.Duration {
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && d.RetryDelay != "" {
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

func (e *rpcError) upstream(status int, key string) *providers.UpstreamError {
	msg := e.Message
	if msg == "" {
		msg = fmt.Sprintf("google answered %d", status)
	}
	var code any
	if e.Status != "" {
		code = e.Status
	}
	return &providers.UpstreamError{Status: status, RetryAfter: e.retryDelay(), Provider: name,
		Body: translate.ErrorBody(string(providers.Scrub([]byte(msg), key)), errorType(e.Status, status), code)}
}

// Refusal reads Google's error shape; a body of another shape (a proxy's page, a bare text) is
// the provider's words, wrapped.
func (family) Refusal(status int, h http.Header, raw []byte, key string) error {
	var eb struct {
		Error rpcError `json:"error"`
	}
	if json.Unmarshal(raw, &eb) != nil || eb.Error.Message == "" {
		return translate.Refused(name, status, h, raw, key)
	}
	ue := eb.Error.upstream(status, key)
	if ra := providers.RetryAfter(h, time.Now()); ra > 0 {
		ue.RetryAfter = ra
	}
	return ue
}

// Streaming: each alt=sse event is a GenerateContentResponse; the stream has no end marker,
// so it is whole only when every candidate it began has a finishReason.

type choiceState struct {
	tools    int // tool calls so far, the next tool call's index
	finished bool
}

// Stream translates a stream's GenerateContentResponses into chunks.
func (family) Stream(tr translate.Translation, key string, out *translate.Chunks) translate.Events {
	out.ID = translate.NewID("chatcmpl-")
	return &events{tr: tr, key: key, out: out, choices: map[int]*choiceState{}}
}

type events struct {
	tr  translate.Translation
	key string
	out *translate.Chunks

	choices map[int]*choiceState
	usage   providers.Usage
}

func (s *events) Usage() providers.Usage { return s.usage }

// End: the stream has no end marker, so it is whole when it ends with every candidate it began
// finished.
func (s *events) End(eof bool) string {
	if eof && s.complete() {
		if s.tr.IncludeUsage {
			s.out.AddUsage(s.usage)
		}
		return ""
	}
	return "every candidate finished"
}

func (s *events) complete() bool {
	if len(s.choices) == 0 {
		return false
	}
	for _, c := range s.choices {
		if !c.finished {
			return false
		}
	}
	return true
}

// Event translates one GenerateContentResponse; the answer ends only with the stream (End).
func (s *events) Event(ev sse.Event) (done bool, err error) {
	if len(bytes.TrimSpace(ev.Data)) == 0 {
		return false, nil
	}
	var gr response
	if err := json.Unmarshal(ev.Data, &gr); err != nil {
		return false, translate.Malformed(name, "sent a malformed stream event")
	}
	if gr.Error != nil {
		status := gr.Error.Code
		if status < 400 {
			status = http.StatusInternalServerError
		}
		return false, gr.Error.upstream(status, s.key)
	}
	if gr.ResponseID != "" && len(s.choices) == 0 {
		s.out.ID = "chatcmpl-" + gr.ResponseID
	}
	if gr.ModelVersion != "" {
		s.out.Model = gr.ModelVersion
	}
	if gr.UsageMetadata != nil {
		s.usage = gr.UsageMetadata.usage() // cumulative: the last one is the whole
	}
	if len(gr.Candidates) == 0 && gr.PromptFeedback != nil && gr.PromptFeedback.BlockReason != "" {
		st := s.choice(0)
		st.finished = true
		reason := "content_filter"
		s.out.Add(translate.ChunkChoice{Index: 0, Delta: translate.Delta{}, FinishReason: &reason})
		return false, nil
	}
	for _, cand := range gr.Candidates {
		st := s.choice(cand.Index)
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				s.addPart(cand.Index, st, p)
			}
		}
		if cand.FinishReason != "" && !st.finished {
			st.finished = true
			reason := finish(cand.FinishReason, st.tools > 0, s.tr.Legacy)
			s.out.Add(translate.ChunkChoice{Index: cand.Index, Delta: translate.Delta{}, FinishReason: &reason})
		}
	}
	return false, nil
}

// choice returns a candidate's state, announcing the choice with a role chunk the first time.
func (s *events) choice(index int) *choiceState {
	st, ok := s.choices[index]
	if !ok {
		st = &choiceState{}
		s.choices[index] = st
		s.out.Add(translate.ChunkChoice{Index: index, Delta: translate.Delta{Role: "assistant", Content: translate.Str("")}})
	}
	return st
}

func (s *events) addPart(index int, st *choiceState, p part) {
	var d translate.Delta
	switch {
	case p.FunctionCall != nil:
		// Gemini sends a function call whole: one delta carries its name and all its arguments.
		tc := toolCall(p.FunctionCall, p.ThoughtSignature)
		if s.tr.Legacy {
			d.FunctionCall = &translate.FunctionDelta{Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		} else {
			d.ToolCalls = []translate.ToolCallDelta{{Index: st.tools, ID: tc.ID, Type: "function",
				Function: translate.FunctionDelta{Name: tc.Function.Name, Arguments: tc.Function.Arguments}}}
		}
		st.tools++
	case p.Thought:
		if s.tr.Strict || (p.Text == "" && p.ThoughtSignature == "") {
			return
		}
		d.ContentBlocks = []translate.BlockDelta{{Delta: translate.Block{Thinking: p.Text, Signature: p.ThoughtSignature}}}
	case p.Text != "":
		d.Content = translate.Str(p.Text)
	default:
		return
	}
	s.out.Add(translate.ChunkChoice{Index: index, Delta: d})
}
