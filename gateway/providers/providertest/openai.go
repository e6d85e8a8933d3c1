package providertest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is the assistant's answer in a whole (non-streamed) chat or text completion.
const Reply = "Hello from the stand-in."

// StreamWord is the content of the i-th chunk of a streamed answer; StreamText(n) is all n.
func StreamWord(i int) string { return "w" + strconv.Itoa(i) + " " }

// StreamText is the whole text of a stream of n content chunks.
func StreamText(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(StreamWord(i))
	}
	return b.String()
}

// Request is one request a stand-in received.
type Request struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
}

// Query is the request's query, parsed.
func (r Request) Query() url.Values {
	q, _ := url.ParseQuery(r.RawQuery)
	return q
}

// Organization and Project are the OpenAI-Organization and OpenAI-Project headers the request
// carried (platform.openai.com/docs/api-reference/authentication).
func (r Request) Organization() string { return r.Header.Get("OpenAI-Organization") }

// Project is the OpenAI-Project header the request carried.
func (r Request) Project() string { return r.Header.Get("OpenAI-Project") }

// JSON decodes the request's body into a map, for assertions on fields.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Answer is a scripted answer, sent whatever the request's path: Status (200 when zero),
// Header, Body, after Delay (cut short when the client goes away).
type Answer struct {
	Status int
	Header http.Header
	Body   string
	Delay  time.Duration
}

// StreamPlan shapes streamed answers.
type StreamPlan struct {
	Chunks     int           // content chunks; 5 when zero
	Delay      time.Duration // before each content chunk
	CutAfter   int           // > 0: drop the connection after this many content chunks
	ErrorAfter int           // > 0: send an in-band error event after this many, then end
	OmitDone   bool          // end cleanly but without data: [DONE]
}

// Disconnect reports a client that went away before the stand-in finished its answer.
type Disconnect struct {
	Path   string
	Chunks int // content chunks written before the stand-in noticed
	At     time.Time
}

// core is what every stand-in shares: recording, scripting, credentials, disconnects.
type core struct {
	*httptest.Server

	mu          sync.Mutex
	requests    []Request
	script      []Answer
	key         string
	plan        StreamPlan
	disconnects chan Disconnect
	seq         int
}

func newCore(t testing.TB, h http.Handler) *core {
	c := &core{disconnects: make(chan Disconnect, 64)}
	c.Server = httptest.NewServer(h)
	t.Cleanup(func() {
		c.CloseClientConnections()
		c.Close()
	})
	return c
}

// Requests returns every request received so far, in order.
func (c *core) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.requests...)
}

// LastRequest returns the latest request; the zero Request when there was none.
func (c *core) LastRequest() Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.requests) == 0 {
		return Request{}
	}
	return c.requests[len(c.requests)-1]
}

// Script queues answers for the next requests, one each, before the normal behaviour resumes.
func (c *core) Script(answers ...Answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.script = append(c.script, answers...)
}

// RequireKey makes the stand-in refuse (401) any credential but key; by default any
// non-empty credential passes and a missing one gets a 401.
func (c *core) RequireKey(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key = key
}

// SetStream shapes the streamed answers that follow.
func (c *core) SetStream(p StreamPlan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plan = p
}

// Disconnects reports each client that went away mid-answer, when the stand-in noticed: a
// test of cancellation waits on it with a deadline.
func (c *core) Disconnects() <-chan Disconnect { return c.disconnects }

// receive records r and pops the next scripted answer, if any.
func (c *core) receive(r *http.Request) (Request, *Answer, StreamPlan, string, int) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests = append(c.requests, req)
	c.seq++
	var a *Answer
	if len(c.script) > 0 {
		first := c.script[0]
		a = &first
		c.script = c.script[1:]
	}
	plan := c.plan
	if plan.Chunks <= 0 {
		plan.Chunks = 5
	}
	return req, a, plan, c.key, c.seq
}

func (c *core) gone(path string, chunks int) {
	select {
	case c.disconnects <- Disconnect{Path: path, Chunks: chunks, At: time.Now()}:
	default:
	}
}

// answerScripted sends a scripted answer.
func (c *core) answerScripted(w http.ResponseWriter, r *http.Request, a *Answer) {
	if a.Delay > 0 {
		if !c.wait(r, a.Delay) {
			c.gone(r.URL.Path, 0)
			return
		}
	}
	for name, values := range a.Header {
		w.Header()[http.CanonicalHeaderKey(name)] = values
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, a.Body)
}

// wait sleeps d unless the client goes away first (false).
func (c *core) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// openAIError writes OpenAI's error object (platform.openai.com/docs/guides/error-codes).
func openAIError(w http.ResponseWriter, status int, typ, message string, param, code any) {
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": param, "code": code}})
}

// OpenAIServer stands in for OpenAI's API (platform.openai.com/docs/api-reference) and the
// providers that speak it: POST …/chat/completions (JSON and server-sent events, tool calls
// when the request has tools, usage in a last chunk when stream_options.include_usage),
// …/completions and …/embeddings, under any base path (/v1, Azure's
// /openai/deployments/{id}, Groq's /openai/v1); anything else is echoed back as JSON
// {"method","path","query","body"}, for pass-through tests.
type OpenAIServer struct {
	*core

	cached, reasoning int
	org, project      string // the key's organization and project; "" takes any
	vectors           map[string][]float32
}

// SetEmbeddings makes /embeddings answer these vectors for these input texts, as a test of
// similarity needs: any other text gets its own deterministic unit vector.
func (s *OpenAIServer) SetEmbeddings(vectors map[string][]float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vectors = vectors
}

// NewOpenAI starts an OpenAI stand-in, closed when the test ends.
func NewOpenAI(t testing.TB) *OpenAIServer {
	s := &OpenAIServer{}
	s.core = newCore(t, http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the stand-in's OpenAI base, URL + "/v1".
func (s *OpenAIServer) BaseURL() string { return s.URL + "/v1" }

// RequireOrganization gives the key an organization and a project, as an OpenAI key belongs to
// both: a request naming another in OpenAI-Organization or OpenAI-Project is refused (401), one
// naming none is served under the key's. Answers name them in the openai-organization and
// openai-project headers, as OpenAI's do.
func (s *OpenAIServer) RequireOrganization(org, project string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.org, s.project = org, project
}

// SetUsageDetails sets the cached and reasoning token counts the usage objects report.
func (s *OpenAIServer) SetUsageDetails(cached, reasoning int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cached, s.reasoning = cached, reasoning
}

func (s *OpenAIServer) serve(w http.ResponseWriter, r *http.Request) {
	req, scripted, plan, key, seq := s.receive(r)
	if scripted != nil {
		s.answerScripted(w, r, scripted)
		return
	}
	s.serveOpenAI(w, r, req, plan, key, seq)
}

// serveOpenAI answers as OpenAI does; the Cohere stand-in's Compatibility API reuses it.
func (s *OpenAIServer) serveOpenAI(w http.ResponseWriter, r *http.Request, req Request, plan StreamPlan, key string, seq int) {
	s.serveOpenAIAs(w, r, req, plan, key, seq, "")
}

// serveOpenAIAs answers as OpenAI does, taking model as the request's model when its body names
// none (an Azure deployment implies its model).
func (s *OpenAIServer) serveOpenAIAs(w http.ResponseWriter, r *http.Request, req Request, plan StreamPlan, key string, seq int, model string) {
	route := ""
	if r.Method == http.MethodPost {
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			route = "chat"
		case strings.HasSuffix(r.URL.Path, "/completions"):
			route = "completions"
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			route = "embeddings"
		}
	}
	if route == "" {
		writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(req.Body)})
		return
	}
	if !authorized(w, r, key) {
		return
	}
	if !s.organization(w, r) {
		return
	}
	// Azure answers a deployment URL without api-version with 404 (learn.microsoft.com,
	// "Azure OpenAI REST API reference": api-version is required).
	if strings.Contains(r.URL.Path, "/openai/deployments/") && r.URL.Query().Get("api-version") == "" {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "404", "message": "Resource not found"}})
		return
	}
	w.Header().Set("X-Request-Id", "req_"+strconv.Itoa(seq))
	w.Header().Set("Openai-Processing-Ms", "1")
	var body map[string]json.RawMessage
	if err := json.Unmarshal(req.Body, &body); err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error",
			"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)", nil, nil)
		return
	}
	if raw, ok := body["model"]; ok || model == "" {
		model = ""
		_ = json.Unmarshal(raw, &model)
	}
	if model == "" {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "you must provide a model parameter", nil, nil)
		return
	}
	s.mu.Lock()
	cached, reasoning, vectors := s.cached, s.reasoning, s.vectors
	s.mu.Unlock()
	a := answerer{w: w, r: r, core: s.core, model: model, id: seq, plan: plan, cached: cached, reasoning: reasoning, body: body,
		vectors: vectors}
	switch route {
	case "chat":
		a.chat()
	case "completions":
		a.completion()
	case "embeddings":
		a.embeddings()
	}
}

// organization checks the OpenAI-Organization and OpenAI-Project headers against the key's and
// names what served the request in the answer's headers.
func (s *OpenAIServer) organization(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	org, project := s.org, s.project
	s.mu.Unlock()
	if got := r.Header.Get("OpenAI-Organization"); got != "" && org != "" && got != org {
		openAIError(w, http.StatusUnauthorized, "invalid_request_error",
			"OpenAI-Organization header should match organization for API key", nil, "mismatched_organization")
		return false
	}
	if got := r.Header.Get("OpenAI-Project"); got != "" && project != "" && got != project {
		openAIError(w, http.StatusUnauthorized, "invalid_request_error",
			"OpenAI-Project header should match project for API key", nil, "mismatched_project")
		return false
	}
	if got := r.Header.Get("OpenAI-Organization"); got != "" {
		org = got
	}
	if got := r.Header.Get("OpenAI-Project"); got != "" {
		project = got
	}
	if org != "" {
		w.Header().Set("Openai-Organization", org)
	}
	if project != "" {
		w.Header().Set("Openai-Project", project)
	}
	return true
}

// authorized checks the credential as OpenAI (Authorization: Bearer) or Azure (api-key)
// sends it.
func authorized(w http.ResponseWriter, r *http.Request, key string) bool {
	got := r.Header.Get("Api-Key")
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		got = bearer
	}
	switch {
	case got == "":
		openAIError(w, http.StatusUnauthorized, "invalid_request_error",
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", nil, nil)
		return false
	case key != "" && got != key:
		openAIError(w, http.StatusUnauthorized, "invalid_request_error",
			"Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", nil, "invalid_api_key")
		return false
	}
	return true
}

// answerer writes one answer in OpenAI's shapes.
type answerer struct {
	w                 http.ResponseWriter
	r                 *http.Request
	core              *core
	model             string
	id                int
	plan              StreamPlan
	cached, reasoning int
	body              map[string]json.RawMessage
	vectors           map[string][]float32 // controlled embeddings, by input text
}

func (a *answerer) flag(name string) bool {
	var b bool
	_ = json.Unmarshal(a.body[name], &b)
	return b
}

func (a *answerer) includeUsage() bool {
	var opts struct {
		IncludeUsage bool `json:"include_usage"`
	}
	_ = json.Unmarshal(a.body["stream_options"], &opts)
	return opts.IncludeUsage
}

// usage is OpenAI's usage object (2.3): counts, and the details objects.
func (a *answerer) usage(prompt, completion int) map[string]any {
	return map[string]any{
		"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": a.cached, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": a.reasoning, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// toolCall picks the function the answer calls: the one tool_choice forces, else the first
// tool; none when there are no tools or tool_choice is "none".
func (a *answerer) toolCall() (name, arguments string, ok bool) {
	var tools []tool
	if json.Unmarshal(a.body["tools"], &tools) != nil || len(tools) == 0 {
		return "", "", false
	}
	var choice any
	_ = json.Unmarshal(a.body["tool_choice"], &choice)
	if choice == "none" {
		return "", "", false
	}
	picked := tools[0]
	if forced, isObj := choice.(map[string]any); isObj {
		if fn, _ := forced["function"].(map[string]any); fn != nil {
			for _, t := range tools {
				if t.Function.Name == fn["name"] {
					picked = t
				}
			}
		}
	}
	return picked.Function.Name, argumentsFor(picked.Function.Parameters), true
}

// argumentsFor fills a function's required parameters (all of them when none is required)
// with a value of their JSON Schema type.
func argumentsFor(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	names := s.Required
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
	}
	args := map[string]any{}
	for _, n := range names {
		switch s.Properties[n].Type {
		case "number", "integer":
			args[n] = 1
		case "boolean":
			args[n] = true
		case "array":
			args[n] = []any{}
		case "object":
			args[n] = map[string]any{}
		default:
			args[n] = "stand-in"
		}
	}
	out, _ := json.Marshal(args)
	return string(out)
}

// promptTokens counts words of the messages' text, at least one.
func (a *answerer) promptTokens() int {
	var messages []struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(a.body["messages"], &messages)
	n := 0
	for _, m := range messages {
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			n += len(strings.Fields(text))
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			n += len(strings.Fields(p.Text))
		}
	}
	var prompt any
	if json.Unmarshal(a.body["prompt"], &prompt) == nil {
		if s, ok := prompt.(string); ok {
			n += len(strings.Fields(s))
		}
	}
	return max(n, 1)
}

// chat answers POST /chat/completions (platform.openai.com/docs/api-reference/chat/create and
// /chat-streaming).
func (a *answerer) chat() {
	var messages []json.RawMessage
	if json.Unmarshal(a.body["messages"], &messages) != nil || len(messages) == 0 {
		openAIError(a.w, http.StatusBadRequest, "invalid_request_error", "[] is too short - 'messages'", "messages", "empty_array")
		return
	}
	name, args, calls := a.toolCall()
	if a.flag("stream") {
		a.chatStream(name, args, calls)
		return
	}
	n := 1
	_ = json.Unmarshal(a.body["n"], &n)
	choices := make([]map[string]any, 0, n)
	for i := range max(n, 1) {
		message := map[string]any{"role": "assistant", "content": Reply, "refusal": nil, "annotations": []any{}}
		finish := "stop"
		if calls {
			message["content"] = nil
			message["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d_%d", a.id, i), "type": "function",
				"function": map[string]any{"name": name, "arguments": args}}}
			finish = "tool_calls"
		}
		choices = append(choices, map[string]any{"index": i, "message": message, "logprobs": nil, "finish_reason": finish})
	}
	writeJSON(a.w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", a.id), "object": "chat.completion", "created": time.Now().Unix(),
		"model": a.model, "choices": choices, "usage": a.usage(a.promptTokens(), len(strings.Fields(Reply))*max(n, 1)),
		"service_tier": "default", "system_fingerprint": "fp_standin",
	})
}

// chatStream streams chat.completion.chunk objects: the role, the content (or a tool call's
// arguments) in plan.Chunks pieces, the finish reason, then usage (choices empty) when asked.
func (a *answerer) chatStream(name, args string, calls bool) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{"id": fmt.Sprintf("chatcmpl-%d", a.id), "object": "chat.completion.chunk",
			"created": time.Now().Unix(), "model": a.model, "system_fingerprint": "fp_standin",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		if a.includeUsage() {
			c["usage"] = nil
		}
		return c
	}
	first := map[string]any{"role": "assistant", "content": "", "refusal": nil}
	pieces := make([]map[string]any, a.plan.Chunks)
	finish := "stop"
	if calls {
		first = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": fmt.Sprintf("call_%d_0", a.id), "type": "function",
			"function": map[string]any{"name": name, "arguments": ""}}}}
		for i, part := range split(args, a.plan.Chunks) {
			pieces[i] = map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": part}}}}
		}
		finish = "tool_calls"
	} else {
		for i := range pieces {
			pieces[i] = map[string]any{"content": StreamWord(i)}
		}
	}
	out := make([]any, len(pieces))
	for i, p := range pieces {
		out[i] = chunk(p, nil)
	}
	var usage any
	if a.includeUsage() {
		usage = map[string]any{"id": fmt.Sprintf("chatcmpl-%d", a.id), "object": "chat.completion.chunk",
			"created": time.Now().Unix(), "model": a.model, "system_fingerprint": "fp_standin",
			"choices": []any{}, "usage": a.usage(a.promptTokens(), a.plan.Chunks)}
	}
	a.stream(chunk(first, nil), out, chunk(map[string]any{}, finish), usage)
}

// split cuts s into n pieces (fewer when s is shorter), in order.
func split(s string, n int) []string {
	if n <= 1 || len(s) <= 1 {
		return []string{s}
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		k := min(size, len(s))
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// completion answers POST /completions (platform.openai.com/docs/api-reference/completions).
func (a *answerer) completion() {
	if _, ok := a.body["prompt"]; !ok {
		openAIError(a.w, http.StatusBadRequest, "invalid_request_error", "you must provide a prompt parameter", "prompt", nil)
		return
	}
	text := func(t string, finish any) map[string]any {
		c := map[string]any{"id": fmt.Sprintf("cmpl-%d", a.id), "object": "text_completion", "created": time.Now().Unix(),
			"model": a.model, "system_fingerprint": "fp_standin",
			"choices": []any{map[string]any{"text": t, "index": 0, "logprobs": nil, "finish_reason": finish}}}
		return c
	}
	if !a.flag("stream") {
		whole := text(Reply, "stop")
		whole["usage"] = map[string]any{"prompt_tokens": a.promptTokens(), "completion_tokens": len(strings.Fields(Reply)),
			"total_tokens": a.promptTokens() + len(strings.Fields(Reply))}
		writeJSON(a.w, http.StatusOK, whole)
		return
	}
	pieces := make([]any, a.plan.Chunks)
	for i := range pieces {
		pieces[i] = text(StreamWord(i), nil)
	}
	var usage any
	if a.includeUsage() {
		u := text("", nil)
		u["choices"] = []any{}
		u["usage"] = map[string]any{"prompt_tokens": a.promptTokens(), "completion_tokens": a.plan.Chunks,
			"total_tokens": a.promptTokens() + a.plan.Chunks}
		usage = u
	}
	a.stream(nil, pieces, text("", "stop"), usage)
}

// stream writes data-only events: first (if any), the pieces with the plan's delay, cut or
// error, the last, the usage chunk (if any), and [DONE].
func (a *answerer) stream(first any, pieces []any, last, usage any) {
	w, r, plan := a.w, a.r, a.plan
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(v any) bool {
		var buf bytes.Buffer
		buf.WriteString("data: ")
		if s, ok := v.(string); ok {
			buf.WriteString(s)
		} else {
			raw, _ := json.Marshal(v)
			buf.Write(raw)
		}
		buf.WriteString("\n\n")
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if first != nil && !send(first) {
		a.core.gone(r.URL.Path, 0)
		return
	}
	for i, p := range pieces {
		if plan.CutAfter > 0 && i == plan.CutAfter {
			panic(http.ErrAbortHandler) // drops the connection mid-stream, as a crashed upstream would
		}
		if plan.ErrorAfter > 0 && i == plan.ErrorAfter {
			send(map[string]any{"error": map[string]any{"message": "The server had an error while processing your request. Sorry about that!",
				"type": "server_error", "param": nil, "code": nil}})
			return
		}
		if !a.core.wait(r, plan.Delay) || !send(p) {
			a.core.gone(r.URL.Path, i)
			return
		}
	}
	if !send(last) {
		a.core.gone(r.URL.Path, len(pieces))
		return
	}
	if usage != nil && !send(usage) {
		a.core.gone(r.URL.Path, len(pieces))
		return
	}
	if !plan.OmitDone {
		send("[DONE]")
	}
}

// embeddings answers POST /embeddings (platform.openai.com/docs/api-reference/embeddings):
// one vector per input, of `dimensions` (8 by default) floats, or their little-endian float32
// bytes in base64 with encoding_format "base64".
func (a *answerer) embeddings() {
	var input any
	if json.Unmarshal(a.body["input"], &input) != nil || input == nil {
		openAIError(a.w, http.StatusBadRequest, "invalid_request_error", "'input' is a required property", "input", nil)
		return
	}
	var inputs []string
	switch v := input.(type) {
	case string:
		inputs = []string{v}
	case []any:
		if len(v) > 0 {
			if _, isNumber := v[0].(float64); isNumber {
				inputs = []string{fmt.Sprint(v)}
				break
			}
		}
		for _, item := range v {
			inputs = append(inputs, fmt.Sprint(item))
		}
	}
	dims := 8
	_ = json.Unmarshal(a.body["dimensions"], &dims)
	var format string
	_ = json.Unmarshal(a.body["encoding_format"], &format)
	data := make([]any, 0, len(inputs))
	tokens := 0
	for i, in := range inputs {
		tokens += max(len(strings.Fields(in)), 1)
		vec, controlled := a.vectors[in]
		if !controlled {
			vec = vector(in, max(dims, 1))
		}
		var embedding any = vec
		if format == "base64" {
			raw := make([]byte, 4*len(vec))
			for j, f := range vec {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(f))
			}
			embedding = base64.StdEncoding.EncodeToString(raw)
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": embedding})
	}
	writeJSON(a.w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": a.model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// vector is a deterministic unit vector for text.
func vector(text string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	seed := float64(h.Sum64() % 1000)
	out := make([]float32, dims)
	norm := 0.0
	for i := range out {
		v := math.Sin(seed + float64(i))
		out[i] = float32(v)
		norm += v * v
	}
	norm = math.Sqrt(norm)
	for i := range out {
		out[i] = float32(float64(out[i]) / norm)
	}
	return out
}
