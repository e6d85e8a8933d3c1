package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// GeminiServer stands in for Google's Gemini API as its documentation shows it:
//   - POST /v1beta/models/{model}:generateContent and :streamGenerateContent
//     (https://ai.google.dev/api/generate-content); with alt=sse the stream is server-sent
//     events of whole GenerateContentResponse objects framed with CRLF and no end marker,
//     without it one JSON array of them;
//   - the key in x-goog-api-key or the key query parameter (https://ai.google.dev/gemini-api/docs/api-key);
//   - the request (https://ai.google.dev/api/generate-content#request-body): unknown fields
//     refused, as the JSON mapping of its protocol buffers refuses them; contents required,
//     roles user and model only, no empty parts;
//   - function calling (https://ai.google.dev/gemini-api/docs/function-calling): a
//     functionCall part when the request declares functions, unless the mode is NONE, or is
//     AUTO (or unset) and the last turn brings function responses; as many function responses
//     as the previous turn had calls;
//   - thinking (https://ai.google.dev/gemini-api/docs/thinking): with
//     thinkingConfig.includeThoughts, a thought part first; with any thinkingConfig, a
//     thoughtSignature on function calls, and earlier function calls refused without theirs
//     (https://ai.google.dev/gemini-api/docs/thought-signatures);
//   - errors (https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes):
//     {"error":{"code","message","status"}}.
//
// A candidate's text is Reply (streamed: StreamWord(0..Chunks-1), finishReason on the last
// piece); maxOutputTokens below its word count cuts it with MAX_TOKENS. candidateCount gives
// that many candidates. Any other path is echoed back as JSON, as the OpenAI stand-in does.
type GeminiServer struct {
	*core

	cached, thoughts int
}

// GeminiThought and GeminiSignature are the thought part's text and the signature on function
// calls.
const (
	GeminiThought   = "Considering the request."
	GeminiSignature = "CiQBVKhc7thoughtSignatureStandIn=="
)

// NewGemini starts a Gemini stand-in, closed when the test ends.
func NewGemini(t testing.TB) *GeminiServer {
	s := &GeminiServer{}
	s.core = newCore(t, http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the stand-in's Gemini base (Google's is https://generativelanguage.googleapis.com).
func (s *GeminiServer) BaseURL() string { return s.URL }

// SetUsageDetails sets the cachedContentTokenCount and thoughtsTokenCount answers report.
func (s *GeminiServer) SetUsageDetails(cached, thoughts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cached, s.thoughts = cached, thoughts
}

// GeminiErrorBody is Google's error body, for scripted answers.
func GeminiErrorBody(code int, status, message string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
	return string(b)
}

// GeminiEvent is one alt=sse event as Google frames it, for scripted streams.
func GeminiEvent(data any) string {
	b, _ := json.Marshal(data)
	return "data: " + string(b) + "\r\n\r\n"
}

func geminiError(w http.ResponseWriter, code int, status, message string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(GeminiErrorBody(code, status, message)))
}

func (s *GeminiServer) serve(w http.ResponseWriter, r *http.Request) {
	req, scripted, plan, key, seq := s.receive(r)
	if scripted != nil {
		s.answerScripted(w, r, scripted)
		return
	}
	rest, found := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	i := strings.LastIndex(rest, ":")
	if !found || i < 0 || r.Method != http.MethodPost {
		writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(req.Body)})
		return
	}
	model, method := rest[:i], rest[i+1:]
	if method != "generateContent" && method != "streamGenerateContent" {
		geminiError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("Method %q is not found for models/%s.", method, model))
		return
	}
	got := r.Header.Get("X-Goog-Api-Key")
	if got == "" {
		got = r.URL.Query().Get("key")
	}
	switch {
	case got == "":
		geminiError(w, http.StatusForbidden, "PERMISSION_DENIED",
			"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
		return
	case key != "" && got != key:
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	var body geminiBody
	if msg := body.decode(req.Body); msg != "" {
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg)
		return
	}
	s.mu.Lock()
	cached, thoughts := s.cached, s.thoughts
	s.mu.Unlock()
	a := geminiAnswer{w: w, r: r, core: s.core, body: &body, plan: plan, model: model, seq: seq, cached: cached, thoughts: thoughts}
	switch {
	case method == "generateContent":
		writeJSON(w, http.StatusOK, a.whole())
	case r.URL.Query().Get("alt") == "sse":
		a.stream()
	default:
		writeJSON(w, http.StatusOK, []any{a.whole()})
	}
}

type geminiPartIn struct {
	Text             *string         `json:"text"`
	Thought          bool            `json:"thought"`
	ThoughtSignature string          `json:"thoughtSignature"`
	InlineData       json.RawMessage `json:"inlineData"`
	FileData         json.RawMessage `json:"fileData"`
	FunctionCall     *struct {
		Name string `json:"name"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name string `json:"name"`
	} `json:"functionResponse"`
}

type geminiContentIn struct {
	Role  string         `json:"role"`
	Parts []geminiPartIn `json:"parts"`
}

// geminiBody is what the stand-in reads of a GenerateContentRequest.
type geminiBody struct {
	Contents          []geminiContentIn `json:"contents"`
	SystemInstruction *geminiContentIn  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig *struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		CandidateCount  int `json:"candidateCount"`
		MaxOutputTokens int `json:"maxOutputTokens"`
		ThinkingConfig  *struct {
			IncludeThoughts bool `json:"includeThoughts"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

// geminiFields are the GenerateContentRequest's fields in the spelling this stand-in
// understands (camelCase; Google also takes snake_case, which the adapter does not send).
var geminiFields = map[string]map[string]bool{
	"": {"contents": true, "systemInstruction": true, "tools": true, "toolConfig": true, "generationConfig": true,
		"safetySettings": true, "cachedContent": true},
	"generationConfig": {"stopSequences": true, "responseMimeType": true, "responseSchema": true, "responseJsonSchema": true,
		"candidateCount": true, "maxOutputTokens": true, "temperature": true, "topP": true, "topK": true, "seed": true,
		"presencePenalty": true, "frequencyPenalty": true, "responseLogprobs": true, "logprobs": true, "thinkingConfig": true,
		"responseModalities": true},
	"part": {"text": true, "thought": true, "thoughtSignature": true, "inlineData": true, "fileData": true,
		"functionCall": true, "functionResponse": true, "executableCode": true, "codeExecutionResult": true},
}

func geminiUnknown(raw json.RawMessage, kind, where string) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return ""
	}
	for name := range fields {
		if !geminiFields[kind][name] {
			return fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", name, where)
		}
	}
	return ""
}

// decode reads the request; it returns the first rule it breaks, in Google's words, or "".
func (b *geminiBody) decode(raw []byte) string {
	if err := json.Unmarshal(raw, b); err != nil {
		return "Invalid JSON payload received. " + err.Error()
	}
	if msg := geminiUnknown(raw, "", ""); msg != "" {
		return msg
	}
	var top struct {
		GenerationConfig json.RawMessage `json:"generationConfig"`
		Contents         []struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(raw, &top)
	if msg := geminiUnknown(top.GenerationConfig, "generationConfig", "generation_config"); msg != "" {
		return msg
	}
	for i, c := range top.Contents {
		for j, p := range c.Parts {
			if msg := geminiUnknown(p, "part", fmt.Sprintf("contents[%d].parts[%d]", i, j)); msg != "" {
				return msg
			}
		}
	}
	if len(b.Contents) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified"
	}
	calls := 0
	for i, c := range b.Contents {
		if c.Role != "" && c.Role != "user" && c.Role != "model" {
			return "Please use a valid role: user, model."
		}
		if len(c.Parts) == 0 {
			return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i)
		}
		responses, turnCalls := 0, 0
		for j, p := range c.Parts {
			if p.FunctionCall != nil && p.ThoughtSignature == "" && b.thinks() {
				return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call `%s`, position %d.", p.FunctionCall.Name, j+1)
			}
			if p.Text != nil && *p.Text == "" && p.ThoughtSignature == "" {
				return "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again."
			}
			if p.FunctionResponse != nil {
				responses++
			}
			if p.FunctionCall != nil {
				turnCalls++
			}
		}
		if responses > 0 && responses != calls {
			return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
		}
		calls = turnCalls
	}
	return ""
}

// thinks reports a thinkingConfig: the stand-in then holds earlier function calls to the rule of
// thinking models, which refuse them without their thought signatures.
func (b *geminiBody) thinks() bool {
	return b.GenerationConfig != nil && b.GenerationConfig.ThinkingConfig != nil
}

// call picks the function the answer calls, if any.
func (b *geminiBody) call() (name, args string, ok bool) {
	var decls []struct {
		name   string
		schema json.RawMessage
	}
	for _, t := range b.Tools {
		for _, d := range t.FunctionDeclarations {
			schema := d.ParametersJSONSchema
			if len(schema) == 0 {
				schema = d.Parameters
			}
			decls = append(decls, struct {
				name   string
				schema json.RawMessage
			}{d.Name, schema})
		}
	}
	if len(decls) == 0 {
		return "", "", false
	}
	mode, allowed := "AUTO", []string(nil)
	if b.ToolConfig != nil && b.ToolConfig.FunctionCallingConfig.Mode != "" {
		mode, allowed = b.ToolConfig.FunctionCallingConfig.Mode, b.ToolConfig.FunctionCallingConfig.AllowedFunctionNames
	}
	switch mode {
	case "NONE":
		return "", "", false
	case "AUTO":
		for _, p := range b.Contents[len(b.Contents)-1].Parts {
			if p.FunctionResponse != nil {
				return "", "", false
			}
		}
	}
	picked := decls[0]
	if len(allowed) > 0 {
		for _, d := range decls {
			if d.name == allowed[0] {
				picked = d
			}
		}
	}
	return picked.name, argumentsFor(picked.schema), true
}

func (b *geminiBody) promptTokens() int {
	n := 0
	count := func(c *geminiContentIn) {
		for _, p := range c.Parts {
			if p.Text != nil {
				n += len(strings.Fields(*p.Text))
			}
		}
	}
	if b.SystemInstruction != nil {
		count(b.SystemInstruction)
	}
	for i := range b.Contents {
		count(&b.Contents[i])
	}
	return max(n, 1)
}

// geminiAnswer writes one answer.
type geminiAnswer struct {
	w                http.ResponseWriter
	r                *http.Request
	core             *core
	body             *geminiBody
	plan             StreamPlan
	model            string
	seq              int
	cached, thoughts int
}

func (a *geminiAnswer) candidates() int {
	if g := a.body.GenerationConfig; g != nil && g.CandidateCount > 1 {
		return g.CandidateCount
	}
	return 1
}

func (a *geminiAnswer) thinking() (config, include bool) {
	if g := a.body.GenerationConfig; g != nil && g.ThinkingConfig != nil {
		return true, g.ThinkingConfig.IncludeThoughts
	}
	return false, false
}

// usage is UsageMetadata (https://ai.google.dev/api/generate-content#UsageMetadata).
func (a *geminiAnswer) usage(candidates int) map[string]any {
	prompt := a.body.promptTokens() + a.cached
	u := map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": candidates,
		"totalTokenCount":     prompt + candidates + a.thoughts,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": prompt}}}
	if a.cached > 0 {
		u["cachedContentTokenCount"] = a.cached
	}
	if a.thoughts > 0 {
		u["thoughtsTokenCount"] = a.thoughts
	}
	return u
}

func (a *geminiAnswer) response(candidates []any, usage map[string]any) map[string]any {
	out := map[string]any{"candidates": candidates, "modelVersion": a.model, "responseId": "standin" + strconv.Itoa(a.seq)}
	if usage != nil {
		out["usageMetadata"] = usage
	}
	return out
}

func geminiCandidate(index int, parts []any, finish string) map[string]any {
	c := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": index}
	if finish != "" {
		c["finishReason"] = finish
	}
	return c
}

// whole is one GenerateContentResponse.
func (a *geminiAnswer) whole() map[string]any {
	config, include := a.thinking()
	var parts []any
	if include {
		parts = append(parts, map[string]any{"text": GeminiThought, "thought": true})
	}
	finish, output := "STOP", 0
	if name, args, ok := a.body.call(); ok {
		call := map[string]any{"functionCall": map[string]any{"name": name, "args": json.RawMessage(args)}}
		if config {
			call["thoughtSignature"] = GeminiSignature
		}
		parts = append(parts, call)
		output = len(strings.Fields(args))
	} else {
		text := Reply
		if g := a.body.GenerationConfig; g != nil && g.MaxOutputTokens > 0 {
			if words := strings.Fields(text); len(words) > g.MaxOutputTokens {
				text, finish = strings.Join(words[:g.MaxOutputTokens], " "), "MAX_TOKENS"
			}
		}
		parts = append(parts, map[string]any{"text": text})
		output = len(strings.Fields(text))
	}
	n := a.candidates()
	cands := make([]any, n)
	for i := range cands {
		cands[i] = geminiCandidate(i, parts, finish)
	}
	return a.response(cands, a.usage(output*n))
}

// stream writes alt=sse events: the thought (if asked), then Chunks pieces of text, the last
// with finishReason STOP and the whole usage; or one function call with STOP. CutAfter drops
// the connection after that many pieces, ErrorAfter sends an error object instead of the next,
// OmitDone leaves finishReason out (the stream ends cleanly but unfinished).
func (a *geminiAnswer) stream() {
	w, r, plan := a.w, a.r, a.plan
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	n := a.candidates()
	sent := 0
	send := func(parts []any, finish string, usage map[string]any) bool {
		if plan.CutAfter > 0 && sent == plan.CutAfter {
			panic(http.ErrAbortHandler) // drops the connection mid-stream, as a crashed upstream would
		}
		if plan.ErrorAfter > 0 && sent == plan.ErrorAfter {
			_, _ = w.Write([]byte(GeminiEvent(map[string]any{"error": map[string]any{"code": 503,
				"message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})))
			return false
		}
		if !a.core.wait(r, plan.Delay) {
			a.core.gone(r.URL.Path, sent)
			return false
		}
		if plan.OmitDone {
			finish = ""
		}
		cands := make([]any, n)
		for i := range cands {
			cands[i] = geminiCandidate(i, parts, finish)
		}
		if _, err := w.Write([]byte(GeminiEvent(a.response(cands, usage)))); err != nil {
			a.core.gone(r.URL.Path, sent)
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		sent++
		return true
	}
	config, include := a.thinking()
	partial := map[string]any{"promptTokenCount": a.body.promptTokens() + a.cached, "totalTokenCount": a.body.promptTokens() + a.cached}
	if include && !send([]any{map[string]any{"text": GeminiThought, "thought": true}}, "", partial) {
		return
	}
	if name, args, ok := a.body.call(); ok {
		call := map[string]any{"functionCall": map[string]any{"name": name, "args": json.RawMessage(args)}}
		if config {
			call["thoughtSignature"] = GeminiSignature
		}
		send([]any{call}, "STOP", a.usage(len(strings.Fields(args))*n))
		return
	}
	for i := range plan.Chunks {
		if i == plan.Chunks-1 {
			send([]any{map[string]any{"text": StreamWord(i)}}, "STOP", a.usage(plan.Chunks*n))
			return
		}
		if !send([]any{map[string]any{"text": StreamWord(i)}}, "", partial) {
			return
		}
	}
}
