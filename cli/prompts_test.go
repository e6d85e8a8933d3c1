package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const labelID = "3c0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11"

// Each prompt, partial, label and collection command sends its route's method, path, query
// and body. Workspaces go as given: these routes take a slug, so none is looked up.
func TestPromptResourceCommandsSendTheirRoutes(t *testing.T) {
	a := newAPI(t)
	for _, route := range []string{"POST /prompts", "PUT /prompts/support", "DELETE /prompts/support",
		"PUT /prompts/support/makeDefault", "PUT /prompts/support/versions/2", "POST /prompts/partials",
		"PUT /prompts/partials/tone", "DELETE /prompts/partials/tone", "PUT /prompts/partials/tone/makeDefault",
		"PUT /prompts/partials/tone/versions/1", "POST /labels", "PUT /labels/production", "DELETE /labels/production",
		"POST /collections", "PUT /collections/support", "DELETE /collections/support"} {
		a.answer(route, http.StatusOK, `{}`)
	}
	for _, route := range []string{"GET /prompts", "GET /prompts/partials", "GET /labels", "GET /collections"} {
		a.answer(route, http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	}
	a.answer("GET /labels/production", http.StatusOK, `{"id":"`+labelID+`","name":"production","object":"label"}`)
	a.answer("GET /prompts/support/versions/2", http.StatusOK, `{"id":"p1","slug":"support","prompt_version":2}`)
	a.answer("GET /prompts/support@production", http.StatusOK, `{"id":"p1","slug":"support","prompt_version":2}`)
	a.answer("GET /collections/support", http.StatusOK, `{"id":"c1","slug":"support"}`)
	template := filepath.Join(t.TempDir(), "support.mustache")
	require.NoError(t, os.WriteFile(template, []byte("[{\"role\":\"user\",\"content\":\"{{question}}\"}]\n"), 0o600))
	env := envFor(a)

	for _, tc := range []struct {
		name   string
		args   []string
		route  string
		query  map[string]string
		body   string // JSON; "" for none
		prints string
	}{
		{"create a prompt", []string{"prompts", "create", "--workspace", "team-a", "--name", "Support", "--slug", "support",
			"--collection", "support", "--string", "@" + template, "--parameters", `{"temperature":0.3}`, "--model", "gpt-4o-mini",
			"--virtual-key", "standin", "--template-metadata", `{"owner":"ops"}`, "--raw-template=false"},
			"POST /v1/prompts", nil, `{"workspace_id":"team-a","name":"Support","slug":"support","collection_id":"support",
			"string":"[{\"role\":\"user\",\"content\":\"{{question}}\"}]\n","parameters":{"temperature":0.3},"model":"gpt-4o-mini",
			"virtual_key":"standin","template_metadata":{"owner":"ops"},"is_raw_template":false}`, ""},
		{"a patch update", []string{"prompts", "update", "support", "--patch", "--model", "gpt-4o", "--template-metadata", `{}`,
			"--version-description", "bigger model"},
			"PUT /v1/prompts/support", nil, `{"patch":true,"model":"gpt-4o","prompt_metadata":{},"version_description":"bigger model"}`, ""},
		{"list prompts", []string{"prompts", "list", "--workspace", "team-a", "--collection", "support", "--search", "sup",
			"--status", "archived", "--page-size", "5"},
			"GET /v1/prompts", map[string]string{"workspace_id": "team-a", "collection_id": "support", "search": "sup",
				"status": "archived", "page_size": "5"}, "", ""},
		{"a version by its label", []string{"prompts", "get", "support@production"}, "GET /v1/prompts/support@production", nil, "", "version"},
		{"one version", []string{"prompts", "version", "support", "2"}, "GET /v1/prompts/support/versions/2", nil, "", "version"},
		{"make a version the default", []string{"prompts", "make-default", "support", "2"},
			"PUT /v1/prompts/support/makeDefault", nil, `{"version":2}`, "prompt support: version 2 is the default"},
		{"a label named by its name", []string{"prompts", "label", "support", "2", "production"},
			"PUT /v1/prompts/support/versions/2", nil, `{"label_id":"` + labelID + `"}`, "version 2 is labelled production"},
		{"a label taken away", []string{"prompts", "unlabel", "support", "2"},
			"PUT /v1/prompts/support/versions/2", nil, `{"label_id":null}`, "version 2 has no label"},
		{"delete a prompt", []string{"prompts", "delete", "support"}, "DELETE /v1/prompts/support", nil, "", "prompt support archived"},
		{"archive is delete", []string{"prompts", "archive", "support"}, "DELETE /v1/prompts/support", nil, "", "archived"},

		{"create a partial", []string{"prompts", "partials", "create", "--workspace", "team-a", "--name", "Tone",
			"--string", "Answer in a {{tone}} tone.", "--version-description", "first"},
			"POST /v1/prompts/partials", nil, `{"workspace_id":"team-a","name":"Tone","string":"Answer in a {{tone}} tone.","version_description":"first"}`, ""},
		{"update a partial", []string{"prompts", "partials", "update", "tone", "--string", "Be {{tone}}."},
			"PUT /v1/prompts/partials/tone", nil, `{"string":"Be {{tone}}."}`, ""},
		{"list partials", []string{"prompts", "partials", "list", "--workspace", "team-a", "--status", "active,archived"},
			"GET /v1/prompts/partials", map[string]string{"workspace_id": "team-a", "status": "active,archived"}, "", ""},
		{"a partial's default", []string{"prompts", "partials", "make-default", "tone", "3"},
			"PUT /v1/prompts/partials/tone/makeDefault", nil, `{"version":3}`, "partial tone: version 3 is the default"},
		{"a partial's label by id", []string{"prompts", "partials", "label", "tone", "1", labelID},
			"PUT /v1/prompts/partials/tone/versions/1", nil, `{"label_id":"` + labelID + `"}`, ""},
		{"delete a partial", []string{"prompts", "partials", "delete", "tone"}, "DELETE /v1/prompts/partials/tone", nil, "", "partial tone archived"},

		{"create a workspace label", []string{"labels", "create", "--workspace", "team-a", "--name", "production",
			"--description", "live", "--color", "#1f883d"},
			"POST /v1/labels", nil, `{"workspace_id":"team-a","name":"production","description":"live","color_code":"#1f883d"}`, ""},
		{"update a label", []string{"labels", "update", "production", "--color", "#000000"},
			"PUT /v1/labels/production", nil, `{"color_code":"#000000"}`, "label production updated"},
		{"list labels", []string{"labels", "list", "--workspace", "team-a", "--search", "prod"},
			"GET /v1/labels", map[string]string{"workspace_id": "team-a", "search": "prod"}, "", ""},
		{"delete a label", []string{"labels", "delete", "production"}, "DELETE /v1/labels/production", nil, "", "label production archived"},

		{"create a nested collection", []string{"collections", "create", "--workspace", "team-a", "--name", "Support", "--parent", "root"},
			"POST /v1/collections", nil, `{"workspace_id":"team-a","name":"Support","parent_collection_id":"root"}`, ""},
		{"a collection by slug in its workspace", []string{"collections", "get", "support", "--workspace", "team-a"},
			"GET /v1/collections/support", map[string]string{"workspace_id": "team-a"}, "", "support"},
		{"rename a collection", []string{"collections", "update", "support", "--name", "Help desk"},
			"PUT /v1/collections/support", nil, `{"name":"Help desk"}`, "collection support updated"},
		{"delete a collection", []string{"collections", "delete", "support", "--workspace", "team-a"},
			"DELETE /v1/collections/support", map[string]string{"workspace_id": "team-a"}, "", "collection support archived"},
		{"list collections", []string{"collections", "list", "--search", "sup"}, "GET /v1/collections", map[string]string{"search": "sup"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(a.requests())
			r := run(t, env, "", tc.args...)
			require.Equal(t, 0, r.code, r.stderr)
			got := a.last(t)
			assert.Equal(t, tc.route, got.method+" "+got.path)
			for k, v := range tc.query {
				assert.Equal(t, v, got.query.Get(k), k)
			}
			if tc.query != nil {
				assert.Len(t, got.query, len(tc.query), "only the parameters given: %v", got.query)
			}
			if tc.body == "" {
				assert.Empty(t, got.body)
			} else {
				assert.JSONEq(t, tc.body, string(got.body))
			}
			for _, req := range a.requests()[before:] {
				assert.NotEqual(t, "/v1/workspaces/team-a", req.path, "a workspace slug is sent as it is")
			}
			assert.Contains(t, r.stdout, tc.prints)
		})
	}

	before := len(a.requests())
	for _, args := range [][]string{
		{"prompts", "make-default", "support", "two"},
		{"prompts", "make-default", "support", "0"},
		{"prompts", "label", "support", "2"},
		{"prompts", "render"},
		{"prompts", "render", "support", "--var", "novalue"},
		{"prompts", "run", "support", "--metadata", "novalue"},
		{"prompts", "create", "--string", "@" + filepath.Join(t.TempDir(), "missing")},
		{"prompts", "partials"},
		{"collections", "frob"},
	} {
		r := run(t, env, "", args...)
		assert.Equal(t, 2, r.code, "%q is a usage error: %s", args, r.stderr)
	}
	assert.Len(t, a.requests(), before, "a usage error sends nothing")

	a.answer("GET /labels/nope", http.StatusNotFound, `{"error":{"message":"label nope not found","type":"invalid_request_error","param":"labelId","code":"not_found"}}`)
	r := run(t, env, "", "prompts", "label", "support", "2", "nope")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `label "nope": label nope not found`)
	assert.NotEqual(t, http.MethodPut, a.last(t).method, "nothing is labelled")
}

// The list and read views: chosen columns, a version's model from its template.
func TestPromptViews(t *testing.T) {
	a := newAPI(t)
	a.answer("GET /prompts/support/versions", http.StatusOK, `[`+
		`{"id":"v2","prompt_id":"p1","prompt_template":{"string":"x","model":"gpt-4o"},"prompt_version":2,"prompt_description":"bigger",`+
		`"label_id":"`+labelID+`","is_default":false,"created_by":"u1","created_at":"2026-01-02T03:04:06Z","status":"active","object":"prompt"},`+
		`{"id":"v1","prompt_id":"p1","prompt_template":{"string":"x","model":"gpt-4o-mini"},"prompt_version":1,"prompt_description":"",`+
		`"label_id":null,"is_default":true,"created_by":"u1","created_at":"2026-01-02T03:04:05Z","status":"active","object":"prompt"}]`)
	a.answer("GET /prompts/support", http.StatusOK, `{"id":"p1","slug":"support","name":"Support","collection_id":"c1","workspace_id":"w1",`+
		`"string":"[{\"role\":\"user\",\"content\":\"{{question}}\"}]","parameters":{"temperature":0.3},"prompt_version":1,`+
		`"prompt_version_id":"v1","prompt_version_status":"active","prompt_version_description":"","prompt_version_label_id":null,`+
		`"virtual_key":"standin","model":"gpt-4o-mini","functions":[],"tools":[],"tool_choice":null,"template_metadata":null,`+
		`"is_raw_template":false,"default_version":1,"status":"active","created_at":"2026-01-02T03:04:05Z","last_updated_at":"2026-01-02T03:04:05Z","object":"prompt"}`)
	a.answer("GET /collections", http.StatusOK, `{"object":"list","total":1,"current_page":0,"page_size":50,"data":[{"id":"c1","name":"Support",`+
		`"workspace_id":"w1","slug":"support","parent_collection_id":null,"is_default":false,"status":"active",`+
		`"collection_details":{"child_collections_count":2,"prompts_count":7},"object":"collection"}]}`)
	a.answer("GET /collections/support", http.StatusOK, `{"id":"c1","name":"Support","workspace_id":"w1","slug":"support",`+
		`"collection_details":{"child_collections_count":1,"prompts_count":7},"child_collections":[{"id":"c2","name":"Refunds"}],"object":"collection"}`)
	env := envFor(a)

	r := run(t, env, "", "prompts", "versions", "support")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, r.stdout)
	assert.Equal(t, []string{"VERSION", "DEFAULT", "LABEL", "MODEL", "DESCRIPTION", "CREATED", "BY", "CREATED", "ID"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"2", "false", labelID, "gpt-4o", "bigger", "u1", "2026-01-02T03:04:06Z", "v2"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"1", "true", "-", "gpt-4o-mini", "-", "u1", "2026-01-02T03:04:05Z", "v1"}, strings.Fields(lines[2]))

	r = run(t, env, "", "prompts", "get", "support")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^model\s+gpt-4o-mini$`, r.stdout)
	assert.Regexp(t, `(?m)^version\s+1$`, r.stdout)
	assert.Regexp(t, `(?m)^parameters\s+\{"temperature":0.3\}$`, r.stdout)
	assert.Regexp(t, `(?m)^string\s+\[\{"role":"user","content":"\{\{question\}\}"\}\]$`, r.stdout)

	r = run(t, env, "", "collections", "list")
	require.Equal(t, 0, r.code, r.stderr)
	lines = strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2, r.stdout)
	assert.Equal(t, []string{"c1", "support", "Support", "w1", "-", "false", "7", "2", "active"}, strings.Fields(lines[1]))

	r = run(t, env, "", "collections", "get", "support")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^child_collections\s+Refunds \(c2\)$`, r.stdout)
	assert.Regexp(t, `(?m)^prompts\s+7$`, r.stdout)
}

// render sends the variables (--variables and --var, a dotted name nesting) and the body's
// own fields, and prints the rendered body: its fields, then its messages.
func TestPromptRender(t *testing.T) {
	a := newAPI(t)
	a.answer("POST /prompts/support@3/render", http.StatusOK, `{"success":true,"data":{"model":"gpt-4o-mini","temperature":0.9,`+
		`"messages":[{"role":"system","content":"Answer in a warm tone.\nSign as Bo."},{"role":"user","content":[{"type":"text","text":"Where is "},{"type":"text","text":"my order?"}]}]}}`)
	env := envFor(a)

	r := run(t, env, "", "prompts", "render", "support@3", "--variables", `{"tone":"warm","customer":{"id":7}}`,
		"--var", "question=Where is my order?", "--var", "customer.name=Ann & Co", "--data", `{"temperature":0.9}`)
	require.Equal(t, 0, r.code, r.stderr)
	got := a.last(t)
	assert.Equal(t, "POST /v1/prompts/support@3/render", got.method+" "+got.path)
	assert.JSONEq(t, `{"variables":{"tone":"warm","question":"Where is my order?","customer":{"id":7,"name":"Ann & Co"}},"temperature":0.9}`,
		string(got.body), "--var sets its variable within --variables, a dotted name nested")
	fields, messages, found := strings.Cut(r.stdout, "\n\n")
	require.True(t, found, r.stdout)
	assert.Regexp(t, `(?m)^model\s+gpt-4o-mini$`, fields)
	assert.Regexp(t, `(?m)^temperature\s+0.9$`, fields)
	assert.NotContains(t, fields, "messages")
	lines := strings.Split(strings.TrimSpace(messages), "\n")
	require.Len(t, lines, 3, messages)
	assert.Regexp(t, `^ROLE\s+CONTENT$`, lines[0])
	assert.Regexp(t, `^system\s+Answer in a warm tone. Sign as Bo.$`, lines[1], "a line break does not break the table")
	assert.Regexp(t, `^user\s+Where is my order\?$`, lines[2], "text parts joined")

	r = run(t, env, "", "prompts", "render", "support@3", "--var", "q=x", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, true, doc["success"], "-o json is the API's answer")

	a.answer("POST /prompts/support/render", http.StatusBadRequest,
		`{"error":{"message":"the template needs variables the request does not give: agent, tone","type":"invalid_request_error","param":"variables","code":"invalid"}}`)
	r = run(t, env, "", "prompts", "render", "support")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "agent, tone")
	assert.Contains(t, r.stderr, "param variables")
}

// run sends the completion with the gateway headers its flags set and prints the answer's
// text; -o json prints the answer.
func TestPromptRun(t *testing.T) {
	a := newAPI(t)
	a.answer("POST /prompts/support/completions", http.StatusOK, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":"Your order ships today.\nTrack it online."},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":9,"completion_tokens":6,"total_tokens":15}}`)
	a.answer("POST /prompts/tools/completions", http.StatusOK, `{"object":"chat.completion","choices":[`+
		`{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"track","arguments":"{}"}}]}},`+
		`{"index":1,"message":{"role":"assistant","content":"Shipped."}}]}`)
	env := envFor(a)

	r := run(t, env, "", "prompts", "run", "support", "--var", "question=Where?", "--data", `{"max_tokens":20}`,
		"--config", "routing", "--provider", "@standin", "--metadata", "team=ops", "--metadata", "_user=ann", "--trace-id", "t-1")
	require.Equal(t, 0, r.code, r.stderr)
	got := a.last(t)
	assert.Equal(t, "POST /v1/prompts/support/completions", got.method+" "+got.path)
	assert.JSONEq(t, `{"variables":{"question":"Where?"},"max_tokens":20}`, string(got.body))
	assert.Equal(t, "routing", got.header.Get("x-gateway-config"))
	assert.Equal(t, "@standin", got.header.Get("x-gateway-provider"))
	assert.JSONEq(t, `{"team":"ops","_user":"ann"}`, got.header.Get("x-gateway-metadata"))
	assert.Equal(t, "t-1", got.header.Get("x-gateway-trace-id"))
	assert.Equal(t, testKey, got.header.Get("x-gateway-api-key"))
	assert.Equal(t, "Your order ships today.\nTrack it online.\n", r.stdout, "the answer's text, line breaks kept")

	r = run(t, env, "", "prompts", "run", "support", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"total_tokens": 15`)
	assert.NotContains(t, string(a.last(t).body), "stream")

	r = run(t, env, "", "prompts", "run", "tools")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "[0]\ntool_calls: [{\"function\":{\"arguments\":\"{}\",\"name\":\"track\"},\"id\":\"c1\",\"type\":\"function\"}]\n[1]\nShipped.\n", r.stdout)
}

// lockedBuffer is a buffer written by the CLI while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// chunk is one chat.completion.chunk event carrying content.
func chunk(content string) string {
	raw, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}}}})
	return "data: " + string(raw) + "\n\n"
}

// run --stream prints the text as each chunk arrives: the stand-in holds the rest of its
// stream until the first piece is on stdout. An error event ends the run with exit code 1.
func TestPromptRunStreams(t *testing.T) {
	a := newAPI(t)
	firstSeen := make(chan struct{})
	a.handle("POST /prompts/support/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive\n\n"+`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`+"\n\n")
		io.WriteString(w, chunk("Your order "))
		w.(http.Flusher).Flush()
		select {
		case <-firstSeen:
		case <-time.After(10 * time.Second):
			return // the test fails below: the first piece never showed
		}
		io.WriteString(w, "event: message\n"+chunk("ships\ntoday."))
		io.WriteString(w, `data: {"object":"chat.completion.chunk","choices":[],"usage":{"total_tokens":15}}`+"\n\ndata: [DONE]\n\n")
	})
	a.handle("POST /prompts/broken/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk("Half"))
		io.WriteString(w, `data: {"error":{"message":"the provider's stream broke off","type":"api_error","param":null,"code":"stream_error"}}`+"\n\n")
	})
	env := envFor(a)

	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), []string{"prompts", "run", "support", "--stream", "--var", "q=x"},
			Options{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }})
	}()
	require.Eventually(t, func() bool { return out.String() == "Your order " }, 10*time.Second, 10*time.Millisecond,
		"the first piece is printed before the stream ends: %q", out.String())
	close(firstSeen)
	select {
	case code := <-done:
		require.Equal(t, 0, code, errOut.String())
	case <-time.After(10 * time.Second):
		t.Fatal("run --stream did not end with the stream")
	}
	assert.Equal(t, "Your order ships\ntoday.\n", out.String())
	got := a.last(t)
	assert.JSONEq(t, `{"variables":{"q":"x"},"stream":true}`, string(got.body))
	assert.Equal(t, "text/event-stream", got.header.Get("Accept"))

	r := run(t, env, "", "prompts", "run", "broken", "--stream")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "Half\n", r.stdout)
	assert.Contains(t, r.stderr, "the provider's stream broke off (code stream_error)")

	r = run(t, env, "", "prompts", "run", "broken", "--stream", "-o", "json")
	assert.Equal(t, 1, r.code)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 1, r.stdout)
	assert.JSONEq(t, strings.TrimSuffix(strings.TrimPrefix(chunk("Half"), "data: "), "\n\n"), lines[0], "each chunk as a line of JSON")

	a.answer("POST /prompts/limited/completions", http.StatusTooManyRequests,
		`{"error":{"message":"rate limit exceeded","type":"rate_limit_error","param":null,"code":"rate_limited"}}`)
	r = run(t, env, "", "prompts", "run", "limited", "--stream")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "rate limit exceeded (code rate_limited, HTTP 429)")
	assert.Empty(t, r.stdout)
}

// A streamed run whose answer's headers do not come within --timeout gives up; one whose
// body takes longer than --timeout does not.
func TestPromptRunStreamTimeoutBoundsOnlyTheHeaders(t *testing.T) {
	a := newAPI(t)
	a.handle("POST /prompts/slow/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i := range 3 {
			time.Sleep(150 * time.Millisecond)
			io.WriteString(w, chunk(fmt.Sprint(i)))
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	a.handle("POST /prompts/silent/completions", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	env := envFor(a)

	r := run(t, env, "", "prompts", "run", "slow", "--stream", "--timeout", "300ms")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "012\n", r.stdout, "a stream longer than --timeout is read whole")

	start := time.Now()
	r = run(t, env, "", "prompts", "run", "silent", "--stream", "--timeout", "200ms")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "timeout awaiting response headers")
	assert.Less(t, time.Since(start), 4*time.Second)
}
