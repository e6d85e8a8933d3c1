package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The admin API is the outside world here: these tests stand it in with an httptest server
// that records what the CLI sent and answers what a test scripts. The CLI against the real
// binary is cmd/causeway's TestCLIScenario.

const testKey = "cw-test-admin-key-never-printed-0001"

// request is one request the stand-in received.
type request struct {
	method, path string
	query        url.Values
	header       http.Header
	body         []byte
}

func (r request) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m), "the body is a JSON object: %s", r.body)
	return m
}

// api is the stand-in admin API: routes by "METHOD /path" (path under /v1).
type api struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []request
	routes map[string]http.HandlerFunc
}

func newAPI(t *testing.T) *api {
	a := &api{routes: map[string]http.HandlerFunc{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.seen = append(a.seen, request{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: body})
		h := a.routes[r.Method+" "+strings.TrimPrefix(r.URL.Path, "/v1")]
		a.mu.Unlock()
		if h == nil {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"message":"no such route in the stand-in","type":"invalid_request_error","param":null,"code":"not_found"}}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

// answer makes route answer status with body.
func (a *api) answer(route string, status int, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.routes[route] = func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func (a *api) handle(route string, h http.HandlerFunc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.routes[route] = h
}

func (a *api) requests() []request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]request(nil), a.seen...)
}

// last is the last request the stand-in received.
func (a *api) last(t *testing.T) request {
	t.Helper()
	seen := a.requests()
	require.NotEmpty(t, seen, "the CLI sent nothing")
	return seen[len(seen)-1]
}

// result is one run of the CLI.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the CLI with env as its environment (nil values leave a variable unset).
func run(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, Options{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
		Getenv: func(k string) string { return env[k] }, Version: "test"})
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// envFor is the environment that points the CLI at the stand-in with the test key.
func envFor(a *api) map[string]string {
	return map[string]string{envURL: a.URL + "/v1", envAPIKey: testKey}
}

const workspaceJSON = `{"object":"workspace","id":"7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11","slug":"team-a","name":"Team A",` +
	`"description":null,"status":"active","organisation_id":"0b1e9a43-1111-4c43-9d1a-5a7e0b6c2d11","usage_limits":[],"rate_limits":[],` +
	`"current_usage":0,"budget_status":"active","created_at":"2026-01-02T03:04:05Z","last_updated_at":"2026-01-02T03:04:05Z","users":[]}`

func TestGlobalSettingsComeFromFlagsThenEnvironmentThenDefaults(t *testing.T) {
	a := newAPI(t)
	a.answer("GET /health", http.StatusOK, `{"status":"ok","checks":{}}`)
	other := newAPI(t)
	other.answer("GET /health", http.StatusOK, `{"status":"ok","checks":{}}`)

	r := run(t, envFor(a), "", "health")
	require.Equal(t, 0, r.code, r.stderr)
	got := a.last(t)
	assert.Equal(t, "/v1/health", got.path)
	assert.Equal(t, testKey, got.header.Get("x-gateway-api-key"), "the key from CAUSEWAY_API_KEY")
	assert.Equal(t, "causeway-cli/test", got.header.Get("User-Agent"))

	r = run(t, envFor(a), "", "health", "--url", other.URL+"/v1/", "--api-key", "flag-key")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Len(t, a.requests(), 1, "--url wins over CAUSEWAY_URL")
	assert.Equal(t, "flag-key", other.last(t).header.Get("x-gateway-api-key"), "--api-key wins over CAUSEWAY_API_KEY")
	assert.Equal(t, "/v1/health", other.last(t).path, "a trailing slash is dropped")

	// The defaults, read without calling anything.
	app := &app{opts: Options{Getenv: func(string) string { return "" }}, workspaces: map[string]workspaceRef{}}
	root := app.root()
	require.NoError(t, app.setUp(root, nil))
	assert.Equal(t, DefaultURL, app.url)
	assert.Equal(t, "table", app.output)
	assert.Equal(t, defaultTimeout, app.timeout)
	assert.Empty(t, app.apiKey)

	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		param string
	}{
		{"output flag", nil, []string{"-o", "yaml"}, "--output"},
		{"output variable", map[string]string{envOutput: "xml"}, nil, envOutput},
		{"timeout variable", map[string]string{envTimeout: "soon"}, nil, envTimeout},
		{"timeout flag", nil, []string{"--timeout", "-1s"}, "--timeout"},
		{"url", map[string]string{envURL: "localhost:8787"}, nil, "--url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := envFor(a)
			for k, v := range tc.env {
				env[k] = v
			}
			r := run(t, env, "", append([]string{"health"}, tc.args...)...)
			assert.Equal(t, 2, r.code, "a bad setting is a usage error")
			assert.Contains(t, r.stderr, tc.param)
		})
	}

	slow := newAPI(t)
	slow.handle("GET /health", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	start := time.Now()
	r = run(t, envFor(slow), "", "health", "--timeout", "100ms")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "Timeout")
	assert.Less(t, time.Since(start), 2*time.Second, "the call gave up at --timeout")
}

func TestBodiesFromFlagsDataFileAndStdin(t *testing.T) {
	a := newAPI(t)
	a.answer("POST /workspaces", http.StatusOK, workspaceJSON)
	a.answer("GET /workspaces/team-a", http.StatusOK, workspaceJSON)
	a.answer("POST /policies/rate-limits", http.StatusOK, `{"id":"5d6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11","object":"policy_rate_limits"}`)
	a.answer("POST /api-keys/workspace/service", http.StatusOK, `{"id":"6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11","key":"cw-new","object":"api-key"}`)
	a.answer("POST /workspaces/team-a/users", http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	a.answer("POST /api-keys/6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11/rotate", http.StatusOK, `{"id":"6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11","key":"cw-rotated","object":"api-key"}`)
	a.answer("PUT /api-keys/6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", http.StatusOK, `{"id":"6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11","object":"api-key"}`)
	env := envFor(a)
	file := filepath.Join(t.TempDir(), "body.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"From file","description":"kept"}`), 0o600))

	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		path  string
		want  map[string]any
	}{
		{"flags", "", []string{"workspaces", "create", "--name", "Team A", "--slug", "team-a", "--periodic-reset-days", "30"},
			"/v1/workspaces", map[string]any{"name": "Team A", "slug": "team-a", "periodic_reset_days": json.Number("30")}},
		{"data, a flag setting one of its fields", "", []string{"workspaces", "create", "--data", `{"name":"B","description":"d"}`, "--name", "C"},
			"/v1/workspaces", map[string]any{"name": "C", "description": "d"}},
		{"file", "", []string{"workspaces", "create", "--file", file},
			"/v1/workspaces", map[string]any{"name": "From file", "description": "kept"}},
		{"stdin", `{"name":"Piped"}`, []string{"workspaces", "create", "--file", "-"},
			"/v1/workspaces", map[string]any{"name": "Piped"}},
		{"numbers kept as written", "", []string{"workspaces", "create", "--data", `{"name":"N","defaults":{"n":12345678901234567890}}`},
			"/v1/workspaces", map[string]any{"name": "N", "defaults": map[string]any{"n": json.Number("12345678901234567890")}}},
		{"conditions and group_by, the workspace by its slug", "", []string{"policies", "rate-limits", "create", "--workspace", "team-a",
			"--type", "requests", "--unit", "rpm", "--value", "3", "--condition", "workspace_id=w1", "--condition", "metadata.team=x",
			"--group-by", "api_key,metadata._user"},
			"/v1/policies/rate-limits", map[string]any{"type": "requests", "unit": "rpm", "value": json.Number("3"),
				"workspace_id": "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11",
				"conditions":   []any{map[string]any{"key": "workspace_id", "value": "w1"}, map[string]any{"key": "metadata.team", "value": "x"}},
				"group_by":     []any{map[string]any{"key": "api_key"}, map[string]any{"key": "metadata._user"}}}},
		{"nested fields and lists", "", []string{"keys", "create", "--workspace", "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", "--name", "app",
			"--scopes", "completions.write,logs.list", "--scopes", "analytics.view", "--budget", "50", "--budget-type", "tokens"},
			"/v1/api-keys/workspace/service", map[string]any{"name": "app", "workspace_id": "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11",
				"scopes":       []any{"completions.write", "logs.list", "analytics.view"},
				"usage_limits": map[string]any{"credit_limit": json.Number("50"), "type": "tokens"}}},
		{"members, each with the role", "", []string{"workspaces", "members", "add", "--workspace", "team-a", "--user", "u1,u2", "--role", "manager"},
			"/v1/workspaces/team-a/users", map[string]any{"users": []any{map[string]any{"id": "u1", "role": "manager"},
				map[string]any{"id": "u2", "role": "manager"}}}},
		{"a duration in milliseconds", "", []string{"keys", "rotate", "6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", "--transition", "1h"},
			"/v1/api-keys/6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11/rotate", map[string]any{"key_transition_period_ms": json.Number("3600000")}},
		{"a boolean flag alone", "", []string{"keys", "update", "6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", "--reset-usage", "--name", "n"},
			"/v1/api-keys/6e6c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", map[string]any{"reset_usage": true, "name": "n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, env, tc.stdin, tc.args...)
			require.Equal(t, 0, r.code, r.stderr)
			got := a.last(t)
			assert.Equal(t, tc.path, got.path)
			assert.Contains(t, []string{http.MethodPost, http.MethodPut}, got.method)
			assert.Equal(t, "application/json", got.header.Get("Content-Type"))
			assert.Equal(t, tc.want, got.json(t))
		})
	}

	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"data and file", []string{"workspaces", "create", "--data", "{}", "--file", file}, "data"},
		{"data not JSON", []string{"workspaces", "create", "--data", "{name"}, "--data is not JSON"},
		{"data with trailing text", []string{"workspaces", "create", "--data", "{} {}"}, "--data is not JSON"},
		{"a number flag", []string{"policies", "rate-limits", "create", "--value", "lots"}, "--value must be a number"},
		{"a pair flag", []string{"policies", "rate-limits", "create", "--condition", "workspace_id"}, "--condition takes key=value"},
		{"a JSON flag", []string{"configs", "create", "--config", "{provider"}, "--config is not JSON"},
		{"flags on a body that is not an object", []string{"workspaces", "create", "--data", `["x"]`, "--name", "A"}, "must be a JSON object"},
		{"a missing file", []string{"workspaces", "create", "--file", filepath.Join(t.TempDir(), "none.json")}, "none.json"},
		{"a key with no workspace nor type", []string{"keys", "create", "--name", "x"}, "--workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(a.requests())
			r := run(t, env, "", tc.args...)
			assert.Equal(t, 2, r.code, "a usage error: %s", r.stderr)
			assert.Contains(t, r.stderr, tc.says)
			assert.Len(t, a.requests(), before, "nothing was sent")
		})
	}
}

func TestExitCodesAndErrorMessages(t *testing.T) {
	a := newAPI(t)
	a.answer("POST /policies/rate-limits", http.StatusBadRequest,
		`{"error":{"message":"value must be a whole number from 1 to 1000000000000 (got 0)","type":"invalid_request_error","param":"value","code":"invalid"}}`)
	a.answer("GET /api-keys", http.StatusBadGateway, `<html>upstream down</html>`)
	a.answer("GET /health", http.StatusOK, `{"status":"degraded","checks":{"readmodels":{"status":"down","backend":"postgres","latency_ms":1,"error":"unreachable"}}}`)
	a.answer("GET /workspaces", http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	env := envFor(a)

	r := run(t, env, "", "policies", "rate-limits", "create", "--value", "0")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "value must be a whole number")
	assert.Contains(t, r.stderr, "code invalid")
	assert.Contains(t, r.stderr, "param value")
	assert.Contains(t, r.stderr, "HTTP 400")
	assert.Empty(t, r.stdout)

	r = run(t, env, "", "keys", "list")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "Bad Gateway: <html>upstream down</html>", "an answer not in the API's shape still says what came")

	r = run(t, env, "", "health")
	assert.Equal(t, 1, r.code, "health fails unless every backend is up")
	assert.Contains(t, r.stdout, "readmodels")
	assert.Contains(t, r.stderr, "degraded")

	r = run(t, map[string]string{envURL: a.URL + "/v1"}, "", "workspaces", "list")
	assert.Equal(t, 0, r.code, r.stderr)

	a.answer("GET /workspaces", http.StatusUnauthorized, `{"error":{"message":"missing API key","type":"authentication_error","param":null,"code":"unauthorized"}}`)
	r = run(t, map[string]string{envURL: a.URL + "/v1"}, "", "workspaces", "list")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "CAUSEWAY_API_KEY", "a refusal without a key says how to give one")

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	r = run(t, map[string]string{envURL: closed.URL + "/v1"}, "", "workspaces", "list")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "connection refused")

	for _, args := range [][]string{
		{"frobnicate"},
		{"keys"},
		{"keys", "frob"},
		{"keys", "get"},
		{"keys", "get", "a", "b"},
		{"keys", "list", "--bogus"},
		{"logs", "tail", "--to", "2026-01-01T00:00:00Z"},
		{"logs", "list", "--since", "1h", "--from", "2026-01-01T00:00:00Z"},
		{"logs", "list", "--from", "yesterday"},
		{"workspaces", "members", "list"},
	} {
		before := len(a.requests())
		r := run(t, env, "", args...)
		assert.Equal(t, 2, r.code, "%q is a usage error: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "--help", "%q points to the help", args)
		assert.Len(t, a.requests(), before, "%q sent nothing", args)
	}

	r = run(t, env, "", "keys", "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "rotate")
}

func TestOutputIsTheAPIsJSONOrChosenColumns(t *testing.T) {
	a := newAPI(t)
	// Keys in an order json.Marshal of a map would not keep, and a number it would change.
	list := `{"object":"list","total":3,"current_page":0,"page_size":2,"data":[` +
		`{"zeta":1,"id":"k1","name":"app","type":"workspace-service","workspace_id":"w1","status":"active","key":"cw-ab****wxyz","created_at":"2026-01-02T03:04:05Z","organisation_id":"org-hidden","current_usage":1.50},` +
		`{"id":"k2","name":"tab\there","type":"organisation-service","status":"exhausted","key":"cw-cd****1234","created_at":"2026-01-02T03:04:06Z","scopes":["a","b"]}]}`
	a.answer("GET /api-keys", http.StatusOK, list)
	a.answer("GET /configs/routing", http.StatusOK, `{"success":true,"data":{"id":"c1","slug":"routing","name":"Routing","workspace_id":"w1","is_default":1,"status":"active","version_id":"v1","config":{"provider":"@x"}}}`)
	env := envFor(a)

	r := run(t, env, "", "keys", "list", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var want bytes.Buffer
	require.NoError(t, json.Indent(&want, []byte(list), "", "  "))
	assert.Equal(t, want.String()+"\n", r.stdout, "the API's JSON, indented, keys and numbers as written")
	assert.True(t, json.Valid([]byte(r.stdout)))

	r = run(t, env, "", "keys", "list", "--page-size", "2")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.Len(t, lines, 3, r.stdout)
	assert.Equal(t, []string{"ID", "NAME", "TYPE", "WORKSPACE", "STATUS", "KEY", "CREATED"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"k1", "app", "workspace-service", "w1", "active", "cw-ab****wxyz", "2026-01-02T03:04:05Z"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"k2", "tab", "here", "organisation-service", "-", "exhausted", "cw-cd****1234", "2026-01-02T03:04:06Z"},
		strings.Fields(lines[2]), "a tab in a value does not break the row; a missing value is -")
	assert.NotContains(t, r.stdout, "org-hidden", "only the chosen columns")
	assert.Contains(t, r.stderr, "2 of 3 shown", "a page that is not the whole list says so, on stderr")
	assert.Equal(t, "2", a.last(t).query.Get("page_size"))

	r = run(t, env, "", "configs", "get", "routing")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "slug             routing\n", "an object as lines of a name and its value")
	assert.Contains(t, r.stdout, `{"provider":"@x"}`, "a structured value as compact JSON")
	assert.Contains(t, r.stdout, "is_default       1\n", "unwrapped from success/data")
}

func TestTheAPIKeyIsNeverPrinted(t *testing.T) {
	a := newAPI(t)
	a.answer("GET /workspaces", http.StatusUnauthorized, `{"error":{"message":"invalid API key","type":"authentication_error","param":null,"code":"unauthorized"}}`)
	a.answer("GET /api-keys", http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	a.handle("GET /health", func(w http.ResponseWriter, r *http.Request) { time.Sleep(300 * time.Millisecond) })
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, args := range [][]string{
		{"workspaces", "list"},
		{"health", "--timeout", "50ms"},
		{"workspaces", "list", "--url", closed.URL + "/v1"},
		{"workspaces", "list", "--url", "ftp://nowhere"},
		{"workspaces", "list", "--api-key", testKey, "-o", "yaml"},
		{"keys", "frob", "--api-key", testKey},
	} {
		r := run(t, envFor(a), "", args...)
		assert.NotEqual(t, 0, r.code, "%q", args)
		assert.NotContains(t, r.stdout+r.stderr, testKey, "%q printed the API key", args)
		assert.NotContains(t, r.stdout+r.stderr, testKey[len(testKey)-8:], "%q printed part of the API key", args)
	}
	r := run(t, envFor(a), "", "keys", "list", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout+r.stderr, testKey)
}

func TestWorkspaceNamedByIDOrSlug(t *testing.T) {
	a := newAPI(t)
	a.answer("GET /workspaces/team-a", http.StatusOK, workspaceJSON)
	a.answer("GET /workspaces/7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", http.StatusOK, workspaceJSON)
	a.answer("GET /api-keys", http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	a.answer("GET /logs", http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	env := envFor(a)

	// Admin lists filter by workspace_id: a slug is looked up once.
	require.Equal(t, 0, run(t, env, "", "keys", "list", "--workspace", "team-a").code)
	assert.Equal(t, "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", a.last(t).query.Get("workspace_id"))
	n := len(a.requests())
	require.Equal(t, 0, run(t, env, "", "keys", "list", "--workspace", "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11").code)
	assert.Len(t, a.requests(), n+1, "an id is used as it is")

	// The traffic routes filter by workspace_slug: an id is looked up.
	require.Equal(t, 0, run(t, env, "", "logs", "list", "--workspace", "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11").code)
	assert.Equal(t, "team-a", a.last(t).query.Get("workspace_slug"))
	n = len(a.requests())
	require.Equal(t, 0, run(t, env, "", "logs", "list", "--workspace", "team-a").code)
	assert.Len(t, a.requests(), n+1, "a slug is used as it is")

	r := run(t, env, "", "keys", "list", "--workspace", "nope")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `workspace "nope"`)
}

func TestLogFilters(t *testing.T) {
	a := newAPI(t)
	a.answer("GET /logs", http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	a.answer("GET /analytics/groups/metadata/team", http.StatusOK, `{"object":"list","total":0,"data":[]}`)
	before := time.Now()
	r := run(t, envFor(a), "", "logs", "list", "--since", "90m", "--model", "gpt-4o,llama3.2", "--status", "200", "--status", "429",
		"--metadata", "team=x", "--metadata", "_user=ann", "--provider", "standin", "--trace-id", "t-1", "--page", "2", "--page-size", "10")
	require.Equal(t, 0, r.code, r.stderr)
	q := a.last(t).query
	from, err := time.Parse(time.RFC3339Nano, q.Get("time_of_generation_min"))
	require.NoError(t, err)
	assert.WithinRange(t, from, before.Add(-90*time.Minute-time.Second), time.Now().Add(-90*time.Minute))
	assert.Equal(t, "gpt-4o,llama3.2", q.Get("models"))
	assert.Equal(t, "200,429", q.Get("status_code"))
	assert.JSONEq(t, `{"team":"x","_user":"ann"}`, q.Get("metadata"))
	assert.Equal(t, "standin", q.Get("providers"))
	assert.Equal(t, "t-1", q.Get("trace_id"))
	assert.Equal(t, "2", q.Get("current_page"))
	assert.Equal(t, "10", q.Get("page_size"))

	r = run(t, envFor(a), "", "analytics", "groups", "metadata/team", "--columns", "cost,total_tokens", "--order-by", "cost", "--order", "asc",
		"--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z")
	require.Equal(t, 0, r.code, r.stderr)
	q = a.last(t).query
	assert.Equal(t, "cost,total_tokens", q.Get("columns"))
	assert.Equal(t, "cost", q.Get("order_by"))
	assert.Equal(t, "asc", q.Get("order_by_type"))
	assert.Equal(t, "2026-01-01T00:00:00Z", q.Get("time_of_generation_min"))
	assert.Equal(t, "2026-01-02T00:00:00Z", q.Get("time_of_generation_max"))
}

func TestHasAndUsageNameEveryCommand(t *testing.T) {
	for _, c := range (&app{}).root().Commands() {
		if c.Name() == "help" {
			assert.False(t, Has("help"), "help is the binary's own")
			continue
		}
		assert.True(t, Has(c.Name()), c.Name())
		assert.Contains(t, Usage(), "  "+c.Name()+" ")
	}
	for _, own := range []string{"serve", "migrate", "replay", "version", "", "-h", "--help"} {
		assert.False(t, Has(own), own)
	}
	assert.True(t, Has("--url"), "global flags may come first")
	r := run(t, nil, "", "-o", "json")
	assert.Equal(t, 2, r.code, "flags without a command")
	assert.Contains(t, r.stderr, "a command is needed")
}
