package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Adapter adapts Google's Gemini API (https://ai.google.dev/api/generate-content):
// models.generateContent and models.streamGenerateContent with alt=sse. OpenAI chat requests
// become GenerateContentRequests; candidates become choices.
//
// Tool call ids: Gemini names a function call but usually gives it no id, so the adapter makes
// one up. When the call carries a thought signature (thinking models, which refuse a later
// turn whose function calls lack theirs: https://ai.google.dev/gemini-api/docs/thought-signatures),
// the signature rides in the id after "__thought__" and is put back on the functionCall part
// when the client sends the tool call back.
//
// Thinking: the request's thinking object becomes generationConfig.thinkingConfig only when
// the Target is not strict; then thought parts are exposed in message.content_blocks (and
// delta.content_blocks), as for Anthropic. A strict Target drops both.
type Adapter struct {
	client *http.Client
}

var (
	_ providers.Provider      = (*Adapter)(nil)
	_ providers.ChatStreamer  = (*Adapter)(nil)
	_ providers.PassThrougher = (*Adapter)(nil)
)

// New returns the Gemini adapter; client sends calls whose Target carries no client
// (nil: a pooled client of its own).
func New(client *http.Client) *Adapter {
	if client == nil {
		client = providers.NewClient()
	}
	return &Adapter{client: client}
}

const (
	geminiName       = "google"
	geminiDefaultURL = "https://generativelanguage.googleapis.com"
	geminiThought    = "__thought__"
)

// Name is the provider name.
func (*Adapter) Name() string { return geminiName }

// Chat calls generateContent and translates its answer.
func (g *Adapter) Chat(ctx context.Context, t providers.Target, c providers.Call) (*providers.Response, error) {
	body, tr, err := geminiBuild(t, c)
	if err != nil {
		return nil, err
	}
	resp, err := g.do(ctx, t, c, tr.model, "generateContent", "", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := translate.ReadBody(ctx, t, geminiName, resp)
	if err != nil {
		return nil, err
	}
	var gr geminiResponse
	if err := json.Unmarshal(raw, &gr); err != nil {
		return nil, &providers.UpstreamError{Status: http.StatusBadGateway, Provider: geminiName,
			Body: translate.ErrorBody("google answered with a malformed response", "api_error", nil)}
	}
	out, usage := geminiTranslate(&gr, tr)
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &providers.Response{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: b, Usage: usage}, nil
}

// ChatStream calls streamGenerateContent with alt=sse: each event is a whole
// GenerateContentResponse holding the next piece of each candidate.
func (g *Adapter) ChatStream(ctx context.Context, t providers.Target, c providers.Call) (providers.Stream, error) {
	body, tr, err := geminiBuild(t, c)
	if err != nil {
		return nil, err
	}
	resp, err := g.do(ctx, t, c, tr.model, "streamGenerateContent", "alt=sse", body)
	if err != nil {
		return nil, err
	}
	return &geminiStream{
		ctx: ctx, body: resp.Body, r: sse.NewReader(resp.Body), tr: tr, key: t.APIKey,
		chunker: translate.Chunker{ID: translate.NewID("chatcmpl-"), Created: time.Now().Unix(), Model: tr.model},
		choices: map[int]*geminiChoiceState{},
	}, nil
}

// geminiTranslation is what the answer's translation needs to know of the request.
type geminiTranslation struct {
	strict       bool
	legacy       bool
	includeUsage bool
	model        string
}

// geminiBase is the API's versioned base: the Target's base URL (or Google's) with /v1beta,
// unless it already names a version (a proxy's https://host/v1beta).
func geminiBase(t providers.Target) string {
	base := translate.BaseURL(t, geminiDefaultURL)
	if !strings.HasSuffix(base, "/v1beta") && !strings.HasSuffix(base, "/v1") {
		base += "/v1beta"
	}
	return base
}

// PassThrough sends any other call (embedContent, countTokens, models, files) to the Gemini API
// with the Target's key, and returns the answer unchanged whatever its status.
func (g *Adapter) PassThrough(ctx context.Context, t providers.Target, c providers.Call) (*http.Response, error) {
	req, err := translate.PassThroughRequest(ctx, geminiBase(t), c)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Goog-Api-Key", t.APIKey)
	return translate.Send(ctx, translate.Client(t, g.client), geminiName, t.APIKey, req)
}

func (g *Adapter) do(ctx context.Context, t providers.Target, c providers.Call, model, method, query string, body []byte) (*http.Response, error) {
	u := geminiBase(t) + "/models/" + url.PathEscape(model) + ":" + method
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, &providers.ConnectionError{Provider: geminiName, Reason: "its base URL is not a valid URL", Err: errors.New("the base URL is not a valid URL")}
	}
	providers.ForwardHeaders(req.Header, c.Header, false)
	req.Header.Set("Content-Type", "application/json")
	// The key goes in a header, never the query, so that no URL (in a log or an error) holds it
	// (https://ai.google.dev/gemini-api/docs/api-key).
	req.Header.Set("X-Goog-Api-Key", t.APIKey)
	resp, err := translate.Send(ctx, translate.Client(t, g.client), geminiName, t.APIKey, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, geminiUpstreamError(ctx, t, resp)
	}
	return resp, nil
}

// Request translation, OpenAI → Gemini (https://ai.google.dev/api/generate-content#request-body).

type geminiRequest struct {
	Contents          []geminiContent   `json:"contents"`
	SystemInstruction *geminiContent    `json:"systemInstruction,omitempty"`
	Tools             []geminiTool      `json:"tools,omitempty"`
	ToolConfig        *geminiToolConfig `json:"toolConfig,omitempty"`
	GenerationConfig  *geminiGenConfig  `json:"generationConfig,omitempty"`
}

// geminiContent and geminiPart: https://ai.google.dev/api/caching#Content.
type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text             string                  `json:"text,omitempty"`
	Thought          bool                    `json:"thought,omitempty"`
	ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	InlineData       *geminiBlob             `json:"inlineData,omitempty"`
	FileData         *geminiFileData         `json:"fileData,omitempty"`
	FunctionCall     *geminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiFunctionResponse `json:"functionResponse,omitempty"`
}

type geminiBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type geminiFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type geminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiFunctionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// geminiTool declares functions with parametersJsonSchema, which takes OpenAI's JSON Schema
// unchanged (https://ai.google.dev/api/caching#FunctionDeclaration).
type geminiTool struct {
	FunctionDeclarations []geminiFunctionDecl `json:"functionDeclarations"`
}

type geminiFunctionDecl struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// geminiToolConfig: https://ai.google.dev/api/caching#ToolConfig.
type geminiToolConfig struct {
	FunctionCallingConfig geminiCallingConfig `json:"functionCallingConfig"`
}

type geminiCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// geminiGenConfig: https://ai.google.dev/api/generate-content#generationconfig.
type geminiGenConfig struct {
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
	ThinkingConfig     *geminiThinking `json:"thinkingConfig,omitempty"`
}

type geminiThinking struct {
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

func geminiBuild(t providers.Target, c providers.Call) ([]byte, geminiTranslation, error) {
	req, err := c.ChatRequest()
	if err != nil {
		return nil, geminiTranslation{}, err
	}
	model := c.Model
	if model == "" {
		model = req.Model
	}
	model = strings.TrimPrefix(model, "models/")
	tr := geminiTranslation{strict: t.StrictOpenAI, model: model, includeUsage: req.StreamOptions.IncludeUsage}
	if model == "" {
		return nil, tr, domain.Invalid("model", "a model is required")
	}
	out := geminiRequest{}

	gc := geminiGenConfig{Temperature: req.Temperature, TopP: req.TopP, MaxOutputTokens: translate.MaxTokens(req),
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
		if gc.ThinkingConfig, err = geminiThinkingConfig(req.Thinking); err != nil {
			return nil, tr, err
		}
	}
	if b, _ := json.Marshal(gc); string(b) != "{}" {
		out.GenerationConfig = &gc
	}

	fns, legacy, err := translate.Functions(req)
	if err != nil {
		return nil, tr, err
	}
	tr.legacy = legacy
	if len(fns) > 0 {
		decls := make([]geminiFunctionDecl, 0, len(fns))
		for _, f := range fns {
			decls = append(decls, geminiFunctionDecl{Name: f.Name, Description: f.Description, ParametersJSONSchema: f.Parameters})
		}
		out.Tools = []geminiTool{{FunctionDeclarations: decls}}
		// Function calling modes: https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes
		switch choice := req.Choice(); choice.Mode {
		case openai.ChoiceNone:
			out.ToolConfig = &geminiToolConfig{geminiCallingConfig{Mode: "NONE"}}
		case openai.ChoiceAuto:
			out.ToolConfig = &geminiToolConfig{geminiCallingConfig{Mode: "AUTO"}}
		case openai.ChoiceRequired:
			out.ToolConfig = &geminiToolConfig{geminiCallingConfig{Mode: "ANY"}}
		case openai.ChoiceFunction:
			out.ToolConfig = &geminiToolConfig{geminiCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{choice.Name}}}
		}
	}

	if out.SystemInstruction, out.Contents, err = geminiContents(req.Messages); err != nil {
		return nil, tr, err
	}
	b, err := json.Marshal(out)
	return b, tr, err
}

// geminiThinkingConfig maps thinking {type, budget_tokens} to thinkingConfig
// (https://ai.google.dev/gemini-api/docs/thinking#set-budget): enabled asks for the thoughts
// and sets the budget; disabled sets the budget to zero.
func geminiThinkingConfig(th *openai.Thinking) (*geminiThinking, error) {
	if th == nil {
		return nil, nil
	}
	switch th.Type {
	case "disabled":
		zero := 0
		return &geminiThinking{ThinkingBudget: &zero}, nil
	case "enabled", "":
		return &geminiThinking{ThinkingBudget: th.BudgetTokens, IncludeThoughts: true}, nil
	}
	return nil, domain.Invalid("thinking.type", "thinking.type must be enabled or disabled")
}

// geminiContents turns OpenAI's messages into a system instruction and user/model turns.
// The answers to one turn's function calls go together in one user turn, as Gemini wants as
// many function responses as there were calls
// (https://ai.google.dev/gemini-api/docs/function-calling#multi-turn).
func geminiContents(msgs []openai.Message) (*geminiContent, []geminiContent, error) {
	var (
		system   *geminiContent
		out      []geminiContent
		lastTool bool
		names    = map[string]string{} // tool call id → function name
	)
	for i := range msgs {
		m := &msgs[i]
		param := fmt.Sprintf("messages[%d]", i)
		parts := m.Parts()
		switch m.Role {
		case openai.RoleSystem, openai.RoleDeveloper:
			if system == nil {
				system = &geminiContent{}
			}
			for j, p := range parts {
				if p.Type != openai.PartText {
					return nil, nil, domain.Invalid(fmt.Sprintf("%s.content[%d].type", param, j), "a system message holds only text")
				}
				if p.Text != "" {
					system.Parts = append(system.Parts, geminiPart{Text: p.Text})
				}
			}
			continue
		case openai.RoleUser:
			gp, err := geminiUserParts(parts, param)
			if err != nil {
				return nil, nil, err
			}
			if len(gp) > 0 {
				out = append(out, geminiContent{Role: "user", Parts: gp})
			}
		case openai.RoleAssistant:
			gp, err := geminiModelParts(m, parts, param, names)
			if err != nil {
				return nil, nil, err
			}
			if len(gp) > 0 {
				out = append(out, geminiContent{Role: "model", Parts: gp})
			}
		case openai.RoleTool, openai.RoleFunction:
			name := m.Name
			if m.Role == openai.RoleTool {
				if n, ok := names[m.ToolCallID]; ok {
					name = n
				}
			}
			if name == "" {
				return nil, nil, domain.Invalid(param+".tool_call_id", "a tool message must answer an earlier tool call")
			}
			part := geminiPart{FunctionResponse: &geminiFunctionResponse{Name: name, Response: geminiResult(translate.Text(parts))}}
			if lastTool {
				last := &out[len(out)-1]
				last.Parts = append(last.Parts, part)
			} else {
				out = append(out, geminiContent{Role: "user", Parts: []geminiPart{part}})
			}
			lastTool = true
			continue
		default:
			return nil, nil, domain.Invalid(param+".role", "role %q is not one of system, developer, user, assistant, tool, function", m.Role)
		}
		lastTool = false
	}
	if system != nil && len(system.Parts) == 0 {
		system = nil
	}
	return system, out, nil
}

// geminiResult is a function response: a JSON object as it is, anything else wrapped as
// {"content": ...}, since Gemini takes an object (https://ai.google.dev/api/caching#FunctionResponse).
func geminiResult(text string) json.RawMessage {
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

func geminiUserParts(parts []openai.Part, param string) ([]geminiPart, error) {
	var out []geminiPart
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			if p.Text != "" {
				out = append(out, geminiPart{Text: p.Text})
			}
		case openai.PartImageURL:
			gp, err := geminiImage(p, fmt.Sprintf("%s.content[%d].image_url", param, j))
			if err != nil {
				return nil, err
			}
			out = append(out, gp)
		default:
			return nil, &domain.Error{Code: domain.CodeUnsupported, Param: fmt.Sprintf("%s.content[%d].type", param, j),
				Message: fmt.Sprintf("content parts of type %q cannot be sent to google", p.Type)}
		}
	}
	return out, nil
}

// geminiImage turns an image_url part into inline data (a data: URL,
// https://ai.google.dev/gemini-api/docs/image-understanding#inline-image) or file data (any
// other URL, which Gemini fetches itself; its MIME type is guessed from the extension).
func geminiImage(p openai.Part, param string) (geminiPart, error) {
	if p.ImageURL == nil || p.ImageURL.URL == "" {
		return geminiPart{}, domain.Invalid(param+".url", "an image_url part needs a url")
	}
	u := p.ImageURL.URL
	if mediaType, data, ok := translate.DataURL(u); ok {
		return geminiPart{InlineData: &geminiBlob{MimeType: mediaType, Data: data}}, nil
	}
	if strings.HasPrefix(u, "data:") {
		return geminiPart{}, domain.Invalid(param+".url", "a data: URL must be base64-encoded and name its media type")
	}
	return geminiPart{FileData: &geminiFileData{MimeType: geminiMimeType(u), FileURI: u}}, nil
}

func geminiMimeType(u string) string {
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

func geminiModelParts(m *openai.Message, parts []openai.Part, param string, names map[string]string) ([]geminiPart, error) {
	var out []geminiPart
	for j, p := range parts {
		switch p.Type {
		case openai.PartText:
			if p.Text != "" {
				out = append(out, geminiPart{Text: p.Text})
			}
		case openai.PartRefusal:
			if p.Refusal != "" {
				out = append(out, geminiPart{Text: p.Refusal})
			}
		case openai.PartThinking, openai.PartRedactedThinking:
			// Gemini's thoughts are not sent back; their signatures travel on function calls.
		default:
			return nil, &domain.Error{Code: domain.CodeUnsupported, Param: fmt.Sprintf("%s.content[%d].type", param, j),
				Message: fmt.Sprintf("assistant content parts of type %q cannot be sent to google", p.Type)}
		}
	}
	for j, tc := range m.ToolCalls {
		args, err := translate.Args(tc.Function.Arguments, fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, j))
		if err != nil {
			return nil, err
		}
		names[tc.ID] = tc.Function.Name
		part := geminiPart{FunctionCall: &geminiFunctionCall{Name: tc.Function.Name, Args: args}}
		if _, sig, ok := strings.Cut(tc.ID, geminiThought); ok {
			part.ThoughtSignature = sig
		}
		out = append(out, part)
	}
	if fc := m.FunctionCall; fc != nil {
		args, err := translate.Args(fc.Arguments, param+".function_call.arguments")
		if err != nil {
			return nil, err
		}
		out = append(out, geminiPart{FunctionCall: &geminiFunctionCall{Name: fc.Name, Args: args}})
	}
	return out, nil
}

// Answer translation, Gemini → OpenAI
// (https://ai.google.dev/api/generate-content#generatecontentresponse).

type geminiResponse struct {
	Candidates     []geminiCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *geminiUsage `json:"usageMetadata"`
	ModelVersion  string       `json:"modelVersion"`
	ResponseID    string       `json:"responseId"`
	Error         *geminiError `json:"error"`
}

type geminiCandidate struct {
	Content      *geminiContent `json:"content"`
	FinishReason string         `json:"finishReason"`
	Index        int            `json:"index"`
}

// geminiUsage: https://ai.google.dev/api/generate-content#UsageMetadata. promptTokenCount
// already includes the cached tokens; thoughts are counted apart from the candidates.
type geminiUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
}

// usage: OpenAI's completion tokens include reasoning, so thoughts join the candidates.
func (u *geminiUsage) usage() providers.Usage {
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

// geminiFinish maps FinishReason (https://ai.google.dev/api/generate-content#FinishReason);
// Gemini ends a turn of function calls with STOP, OpenAI with tool_calls.
func geminiFinish(reason string, calls bool, legacy bool) string {
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

// geminiToolCall gives a function call an OpenAI tool call, with an id.
func geminiToolCall(fc *geminiFunctionCall, signature string) translate.ToolCall {
	id := fc.ID
	if id == "" {
		id = translate.NewID("call_")
	}
	if signature != "" {
		id += geminiThought + signature
	}
	args := string(bytes.TrimSpace(fc.Args))
	if args == "" || args == "null" {
		args = "{}"
	}
	return translate.ToolCall{ID: id, Type: "function", Function: translate.FunctionCall{Name: fc.Name, Arguments: args}}
}

func geminiTranslate(gr *geminiResponse, tr geminiTranslation) (*translate.Completion, providers.Usage) {
	out := &translate.Completion{Object: "chat.completion", Created: time.Now().Unix(), Model: tr.model}
	out.ID = translate.NewID("chatcmpl-")
	if gr.ResponseID != "" {
		out.ID = "chatcmpl-" + gr.ResponseID
	}
	if gr.ModelVersion != "" {
		out.Model = gr.ModelVersion
	}
	for i, cand := range gr.Candidates {
		var (
			text    strings.Builder
			calls   []translate.ToolCall
			blocks  []translate.Block
			thought bool
		)
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					calls = append(calls, geminiToolCall(p.FunctionCall, p.ThoughtSignature))
				case p.Thought:
					thought = true
					blocks = append(blocks, translate.Block{Type: "thinking", Thinking: p.Text, Signature: p.ThoughtSignature})
				case p.Text != "":
					text.WriteString(p.Text)
					blocks = append(blocks, translate.Block{Type: "text", Text: p.Text})
				}
			}
		}
		msg := translate.Message{Role: "assistant"}
		if text.Len() > 0 || len(calls) == 0 {
			msg.Content = translate.Str(text.String())
		}
		if tr.legacy && len(calls) > 0 {
			msg.FunctionCall = &calls[0].Function
		} else {
			msg.ToolCalls = calls
		}
		if thought && !tr.strict {
			msg.ContentBlocks = blocks
		}
		// Protocol buffers' JSON leaves a zero index out, so a missing one is the position.
		index := cand.Index
		if index == 0 {
			index = i
		}
		out.Choices = append(out.Choices, translate.Choice{Index: index, Message: msg, Logprobs: translate.Null,
			FinishReason: geminiFinish(cand.FinishReason, len(calls) > 0, tr.legacy)})
	}
	if len(out.Choices) == 0 {
		// A prompt blocked before any candidate: one empty choice, filtered.
		out.Choices = []translate.Choice{{Message: translate.Message{Role: "assistant", Content: translate.Str("")},
			Logprobs: translate.Null, FinishReason: "content_filter"}}
	}
	usage := gr.UsageMetadata.usage()
	out.Usage = translate.UsageOf(usage)
	return out, usage
}

// Errors (https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes):
// {"error":{"code","message","status","details"}}.

type geminiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

// geminiErrorType names a google.rpc status as OpenAI names its error types.
func geminiErrorType(status string, code int) string {
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
func (e *geminiError) retryDelay() time.Duration {
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && d.RetryDelay != "" {
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

func (e *geminiError) upstream(status int, key string) *providers.UpstreamError {
	msg := e.Message
	if msg == "" {
		msg = fmt.Sprintf("google answered %d", status)
	}
	var code any
	if e.Status != "" {
		code = e.Status
	}
	return &providers.UpstreamError{Status: status, RetryAfter: e.retryDelay(), Provider: geminiName,
		Body: translate.ErrorBody(string(providers.Scrub([]byte(msg), key)), geminiErrorType(e.Status, status), code)}
}

func geminiUpstreamError(ctx context.Context, t providers.Target, resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && ctx.Err() != nil {
		return providers.TransportError(ctx, geminiName, err, t.APIKey)
	}
	var eb struct {
		Error geminiError `json:"error"`
	}
	if json.Unmarshal(raw, &eb) != nil || eb.Error.Message == "" {
		// Not Google's error shape (a proxy's page, a bare text): the provider's words, wrapped.
		return &providers.UpstreamError{Status: resp.StatusCode, RetryAfter: providers.RetryAfter(resp.Header, time.Now()), Provider: geminiName,
			Body: providers.ProviderErrorBody(geminiName, resp.StatusCode, providers.Scrub(raw, t.APIKey))}
	}
	ue := eb.Error.upstream(resp.StatusCode, t.APIKey)
	if ra := providers.RetryAfter(resp.Header, time.Now()); ra > 0 {
		ue.RetryAfter = ra
	}
	return ue
}

// Streaming: each alt=sse event is a GenerateContentResponse; the stream has no end marker,
// so it is whole only when every candidate it began has a finishReason.

type geminiChoiceState struct {
	tools    int // tool calls so far, the next tool call's index
	finished bool
}

type geminiStream struct {
	ctx     context.Context
	body    io.ReadCloser
	r       *sse.Reader
	tr      geminiTranslation
	key     string
	chunker translate.Chunker

	pending [][]byte
	choices map[int]*geminiChoiceState
	usage   providers.Usage
	done    bool
	err     error
}

func (s *geminiStream) Usage() providers.Usage { return s.usage }

// Close ends the stream; before the end it drops the connection, which tells Google that the
// client went away.
func (s *geminiStream) Close() error {
	if s.done && s.err == nil {
		_, _ = io.CopyN(io.Discard, s.body, 4<<10)
	}
	return s.body.Close()
}

// Next returns the next chunk; a stream cut before every candidate finished, or carrying an
// error, ends in an error.
func (s *geminiStream) Next() ([]byte, error) {
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
			s.err = s.end(err)
			continue
		}
		s.err = s.handle(ev.Data)
	}
}

// end decides what the end of the upstream stream means.
func (s *geminiStream) end(err error) error {
	if s.ctx.Err() != nil {
		return providers.TransportError(s.ctx, geminiName, err, s.key)
	}
	if errors.Is(err, io.EOF) && s.complete() {
		if s.tr.includeUsage {
			s.pending = append(s.pending, s.chunker.Usage(s.usage))
		}
		s.done = true
		return nil
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &providers.ConnectionError{Provider: geminiName,
		Err: fmt.Errorf("the stream ended before every candidate finished: %w", providers.RedactError(err, s.key))}
}

func (s *geminiStream) complete() bool {
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

func (s *geminiStream) handle(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var gr geminiResponse
	if err := json.Unmarshal(data, &gr); err != nil {
		return &providers.UpstreamError{Status: http.StatusBadGateway, Provider: geminiName,
			Body: translate.ErrorBody("google sent a malformed stream event", "api_error", nil)}
	}
	if gr.Error != nil {
		status := gr.Error.Code
		if status < 400 {
			status = http.StatusInternalServerError
		}
		return gr.Error.upstream(status, s.key)
	}
	if gr.ResponseID != "" && len(s.choices) == 0 {
		s.chunker.ID = "chatcmpl-" + gr.ResponseID
	}
	if gr.ModelVersion != "" {
		s.chunker.Model = gr.ModelVersion
	}
	if gr.UsageMetadata != nil {
		s.usage = gr.UsageMetadata.usage() // cumulative: the last one is the whole
	}
	if len(gr.Candidates) == 0 && gr.PromptFeedback != nil && gr.PromptFeedback.BlockReason != "" {
		st := s.choice(0)
		st.finished = true
		finish := "content_filter"
		s.pending = append(s.pending, s.chunker.Chunk(translate.ChunkChoice{Index: 0, Delta: translate.Delta{}, FinishReason: &finish}))
		return nil
	}
	for _, cand := range gr.Candidates {
		st := s.choice(cand.Index)
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				s.part(cand.Index, st, p)
			}
		}
		if cand.FinishReason != "" && !st.finished {
			st.finished = true
			finish := geminiFinish(cand.FinishReason, st.tools > 0, s.tr.legacy)
			s.pending = append(s.pending, s.chunker.Chunk(translate.ChunkChoice{Index: cand.Index, Delta: translate.Delta{}, FinishReason: &finish}))
		}
	}
	return nil
}

// choice returns a candidate's state, announcing the choice with a role chunk the first time.
func (s *geminiStream) choice(index int) *geminiChoiceState {
	st, ok := s.choices[index]
	if !ok {
		st = &geminiChoiceState{}
		s.choices[index] = st
		s.pending = append(s.pending, s.chunker.Chunk(translate.ChunkChoice{Index: index,
			Delta: translate.Delta{Role: "assistant", Content: translate.Str("")}}))
	}
	return st
}

func (s *geminiStream) part(index int, st *geminiChoiceState, p geminiPart) {
	var d translate.Delta
	switch {
	case p.FunctionCall != nil:
		// Gemini sends a function call whole: one delta carries its name and all its arguments.
		tc := geminiToolCall(p.FunctionCall, p.ThoughtSignature)
		if s.tr.legacy {
			d.FunctionCall = &translate.FunctionDelta{Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		} else {
			d.ToolCalls = []translate.ToolCallDelta{{Index: st.tools, ID: tc.ID, Type: "function",
				Function: translate.FunctionDelta{Name: tc.Function.Name, Arguments: tc.Function.Arguments}}}
		}
		st.tools++
	case p.Thought:
		if s.tr.strict || (p.Text == "" && p.ThoughtSignature == "") {
			return
		}
		d.ContentBlocks = []translate.BlockDelta{{Delta: translate.Block{Thinking: p.Text, Signature: p.ThoughtSignature}}}
	case p.Text != "":
		d.Content = translate.Str(p.Text)
	default:
		return
	}
	s.pending = append(s.pending, s.chunker.Chunk(translate.ChunkChoice{Index: index, Delta: d}))
}
