package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// errorOf decodes an answer's error object.
func errorOf(t *testing.T, r response) (code, typ, message, param string) {
	t.Helper()
	e, ok := r.Body["error"].(map[string]any)
	require.True(t, ok, "not an error answer: %s", r.Raw)
	code, _ = e["code"].(string)
	typ, _ = e["type"].(string)
	message, _ = e["message"].(string)
	param, _ = e["param"].(string)
	return code, typ, message, param
}

// A mistyped admin path answers 404 "no such route" with the nearest route, on both
// spellings of the admin routes; a far-off path gets no guess; a path that answers another
// method is still 405; the real routes are untouched.
func TestUnknownPathIsNoSuchRoute(t *testing.T) {
	api := newTestAPI(t)
	for _, tc := range []struct {
		method, path, message string
	}{
		{http.MethodGet, "/workspace", "no such route: GET /v1/workspace; did you mean /v1/workspaces?"},
		{http.MethodGet, "/audit-log", "no such route: GET /v1/audit-log; did you mean /v1/audit-logs?"},
		{http.MethodGet, "/workspaces/0b0e8f4e-6a53-4f8e-9d1c-1f0e2b3c4d5e/user",
			"no such route: GET /v1/workspaces/0b0e8f4e-6a53-4f8e-9d1c-1f0e2b3c4d5e/user; did you mean /v1/workspaces/{id}/users?"},
		{http.MethodGet, "/admin/workspace", "no such route: GET /v1/admin/workspace; did you mean /v1/admin/workspaces?"},
		{http.MethodGet, "/nothing-like-it", "no such route: GET /v1/nothing-like-it"},
		{http.MethodPost, "/foo", "no such route: POST /v1/foo"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := api.Admin(tc.method, tc.path, nil)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Raw))
			code, typ, msg, _ := errorOf(t, r)
			assert.Equal(t, "not_found", code)
			assert.Equal(t, "not_found_error", typ)
			assert.Equal(t, tc.message, msg)
			assert.NotEmpty(t, r.Header.Get(TraceIDHeader))
		})
	}
	// No key is needed to learn that a route does not exist.
	r := api.Do(http.MethodGet, "/workspace", "", nil)
	require.Equal(t, http.StatusNotFound, r.Status)
	assert.Equal(t, "no such route: GET /v1/workspace; did you mean /v1/workspaces?", r.ErrorMessage())

	r = api.Admin(http.MethodDelete, "/audit-logs", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.Status, "a known path with another method")
	assert.Equal(t, "method DELETE is not allowed on /v1/audit-logs", r.ErrorMessage())
	r = api.Admin(http.MethodDelete, "/admin/audit-logs", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.Status, "the same under /v1/admin: %s", r.Raw)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/workspaces", nil).Status)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/admin/workspaces", nil).Status)
}

func TestNearestRouteIsOnlySuggestedWhenClose(t *testing.T) {
	m := &misses{templates: []routeTemplate{
		{path: "/v1/workspaces", segments: splitPath("/v1/workspaces"), methods: map[string]bool{"GET": true, "POST": true}},
		{path: "/v1/workspaces/{id}", segments: splitPath("/v1/workspaces/{id}"), methods: map[string]bool{"GET": true}},
		{path: "/v1/logs", segments: splitPath("/v1/logs"), methods: map[string]bool{"GET": true}},
		{path: "/v1/chat/completions", segments: splitPath("/v1/chat/completions"), methods: map[string]bool{"POST": true}},
	}}
	for path, want := range map[string]string{
		"/v1/workspace":        "/v1/workspaces",
		"/v1/Workspaces":       "/v1/workspaces",
		"/v1/workspace/abc":    "/v1/workspaces/{id}",
		"/workspaces":          "/v1/workspaces",
		"/v1/chat/completion":  "/v1/chat/completions",
		"/v1/log":              "/v1/logs",
		"/v1/foo":              "",
		"/v1/models":           "",
		"/v1/responses":        "",
		"/v1/workspaces/a/b/c": "",
		"/":                    "",
	} {
		assert.Equal(t, want, m.nearest(http.MethodGet, path), path)
	}
}

// An Idempotency-Key replays its first request's result when the retry asks the same (keys
// in another order, other spacing); reused for another body, path or method it answers 422
// naming the first request, and writes nothing.
func TestIdempotencyKeyReusedForAnotherRequest(t *testing.T) {
	api := newTestAPI(t)
	first := api.Admin(http.MethodPost, "/workspaces", `{"name":"Alpha","slug":"alpha"}`, "Idempotency-Key", "key-1")
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	assert.Empty(t, first.Header.Get("Idempotent-Replayed"))
	again := api.Admin(http.MethodPost, "/workspaces", "{ \"slug\": \"alpha\",\n \"name\": \"Alpha\" }", "Idempotency-Key", "key-1")
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, first.Str("id"), again.Str("id"))

	events := func() int {
		evs, err := api.Store.ReadAll(context.Background(), eventstore.Start, 100_000)
		require.NoError(t, err)
		return len(evs)
	}
	before := events()
	workspaces := api.Admin(http.MethodGet, "/workspaces", nil).Body["total"]
	audit := api.Admin(http.MethodGet, "/audit-logs?page_size=1000", nil).Body["total"]

	for _, tc := range []struct {
		name, method, path, body, message string
	}{
		{"another body", http.MethodPost, "/workspaces", `{"name":"Beta","slug":"beta"}`,
			`the Idempotency-Key "key-1" was first used for POST /v1/workspaces, with a different body or query; nothing was written: send a new key for a new request`},
		{"another path", http.MethodPost, "/api-keys/organisation/service", `{"name":"k","scopes":["logs.view"]}`,
			`the Idempotency-Key "key-1" was first used for POST /v1/workspaces, not for POST /v1/api-keys/organisation/service; nothing was written: send a new key for a new request`},
		{"another method on the resource", http.MethodDelete, "/workspaces/" + first.Str("id"), "",
			`the Idempotency-Key "key-1" was first used for POST /v1/workspaces, not for DELETE /v1/workspaces/` + first.Str("id") + `; nothing was written: send a new key for a new request`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			r := api.Admin(tc.method, tc.path, body, "Idempotency-Key", "key-1")
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Raw))
			code, typ, msg, param := errorOf(t, r)
			assert.Equal(t, "idempotency_key_reused", code)
			assert.Equal(t, "invalid_request_error", typ)
			assert.Equal(t, "Idempotency-Key", param)
			assert.Equal(t, tc.message, msg)
			assert.NotContains(t, msg, "Alpha", "the first request's body is never shown")
		})
	}
	assert.Equal(t, before, events(), "no event was appended")
	assert.Equal(t, workspaces, api.Admin(http.MethodGet, "/workspaces", nil).Body["total"])
	assert.Equal(t, audit, api.Admin(http.MethodGet, "/audit-logs?page_size=1000", nil).Body["total"])
	assert.Equal(t, "active", api.Admin(http.MethodGet, "/workspaces/"+first.Str("id"), nil).Str("status"))

	// Another actor's key of the same name is its own.
	other := api.Admin(http.MethodPost, "/workspaces", `{"name":"Gamma","slug":"gamma"}`, "Idempotency-Key", "key-2")
	require.Equal(t, http.StatusOK, other.Status, string(other.Raw))
}

// Without the cross-resource index, a key reused on the resource it wrote is still refused by
// the command, before it appends.
func TestIdempotencyKeyReusedOnTheSameResourceWithoutTheIndex(t *testing.T) {
	api := newTestAPI(t)
	api.AdminAPI.Idempotency = nil
	ws := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Delta"}).Str("id")
	first := api.Admin(http.MethodPut, "/workspaces/"+ws, map[string]any{"description": "one"}, "Idempotency-Key", "upd-1")
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	replay := api.Admin(http.MethodPut, "/workspaces/"+ws, map[string]any{"description": "one"}, "Idempotency-Key", "upd-1")
	require.Equal(t, http.StatusOK, replay.Status, string(replay.Raw))
	assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))

	evs, err := api.Store.ReadStream(context.Background(), domain.Stream(domain.WorkspacePrefix, ws), eventstore.Forwards, 0, 0)
	require.NoError(t, err)
	r := api.Admin(http.MethodPut, "/workspaces/"+ws, map[string]any{"description": "two"}, "Idempotency-Key", "upd-1")
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Raw))
	assert.Contains(t, r.ErrorMessage(), "first used for PUT /v1/workspaces/"+ws+", with a different body")
	after, err := api.Store.ReadStream(context.Background(), domain.Stream(domain.WorkspacePrefix, ws), eventstore.Forwards, 0, 0)
	require.NoError(t, err)
	assert.Len(t, after, len(evs), "nothing appended")
	assert.Equal(t, "one", api.Admin(http.MethodGet, "/workspaces/"+ws, nil).Str("description"))
}

// A refusal of a missing or unknown key on the admin API is the deployment organisation's: its
// admins find it in the audit log, listed and by id, without the key or its hash.
func TestUnknownKeyRefusalIsInTheOrganisationsAuditLog(t *testing.T) {
	api := newTestAPI(t)
	const presented = "cw-unknown-key-0123456789abcdefghij"
	for _, key := range []string{presented, ""} {
		r := api.Do(http.MethodGet, "/workspaces", key, nil, TraceIDHeader, "trace-401-"+fmt.Sprint(len(key)))
		require.Equal(t, http.StatusUnauthorized, r.Status)
	}
	var recs []map[string]any
	require.Eventually(t, func() bool {
		recs = api.Admin(http.MethodGet, "/audit-logs?response_status_code=401", nil).Data()
		return len(recs) == 2
	}, 5*time.Second, 20*time.Millisecond)
	for _, rec := range recs {
		assert.Equal(t, api.OrgID, rec["organisation_id"])
		assert.Equal(t, "AccessDenied", rec["action"])
		assert.Equal(t, "/v1/workspaces", rec["uri"])
		one := api.Admin(http.MethodGet, "/audit-logs/"+rec["id"].(string), nil)
		require.Equal(t, http.StatusOK, one.Status, string(one.Raw))
		assert.Equal(t, rec["id"], one.Str("id"))
		assert.Equal(t, "trace-401-"+fmt.Sprint(len(presented)), api.Admin(http.MethodGet,
			"/audit-logs?response_status_code=401&request_id=trace-401-"+fmt.Sprint(len(presented)), nil).Data()[0]["request_id"])
		for _, secret := range []string{presented, domain.HashKey(presented)} {
			assert.NotContains(t, string(one.Raw), secret)
		}
	}
	evs, err := api.Store.ReadStream(context.Background(), domain.AuditStream, eventstore.Forwards, 0, 0)
	require.NoError(t, err)
	for _, ev := range evs {
		raw, _ := json.Marshal(ev)
		assert.NotContains(t, string(raw), presented, "the stored event holds no key")
		assert.NotContains(t, string(raw), domain.HashKey(presented), "nor its hash")
	}
}

// rawRequest writes a whole request, body included, on a plain TCP connection before reading
// anything, as a client that streams its upload does, and reads the answer.
func rawRequest(t *testing.T, addr, method, path string, headers map[string]string, bodySize int) (*http.Response, []byte, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	// A small send buffer, as over a real network: the kernel cannot take in the whole body
	// on the client's behalf, so the client is still sending when the server answers.
	require.NoError(t, conn.(*net.TCPConn).SetWriteBuffer(32<<10))
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, addr, bodySize)
	for k, v := range headers {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		return nil, nil, err
	}
	chunk := []byte(`{"name":"` + strings.Repeat("x", 64<<10) + `",`)
	for sent := 0; sent < bodySize; {
		n := min(len(chunk), bodySize-sent)
		if _, err := conn.Write(chunk[:n]); err != nil {
			return nil, nil, fmt.Errorf("sending the body after %d bytes: %w", sent, err)
		}
		sent += n
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

// An admin body over the admin limit, sent whole before the client reads, gets the 413 that
// names the limit, not a reset connection; with an Idempotency-Key too.
func TestOverLimitAdminBodyGetsAReadable413(t *testing.T) {
	api := newTestAPI(t)
	addr := strings.TrimPrefix(api.Server.URL, "http://")
	for _, headers := range []map[string]string{
		{"x-gateway-api-key": api.AdminKey},
		{"x-gateway-api-key": api.AdminKey, "Idempotency-Key": "big-1"},
	} {
		resp, raw, err := rawRequest(t, addr, http.MethodPost, "/v1/workspaces", headers, 4<<20)
		require.NoError(t, err)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(raw))
		var e errorBody
		require.NoError(t, json.Unmarshal(raw, &e), string(raw))
		assert.Equal(t, "the request body is larger than the admin API's limit of 1048576 bytes", e.Error.Message)
		assert.Equal(t, "too_large", *e.Error.Code)
	}
}

// corsServer is the admin API's router with CORS origins set.
func corsServer(t *testing.T, api *testAPI, origins ...string) *httptest.Server {
	srv := httptest.NewServer(NewRouter(Deps{Admin: api.AdminAPI, Health: &Health{}, CORSOrigins: origins}))
	t.Cleanup(srv.Close)
	return srv
}

func send(t *testing.T, method, u string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// With CORS origins set, a preflight from a listed origin is answered with the origin, the
// methods, the headers it asked for and a max age; one from another origin gets no CORS
// headers; a real request names the headers scripts may read. "*" answers "*".
func TestCORSWhenOriginsAreSet(t *testing.T) {
	api := newTestAPI(t)
	srv := corsServer(t, api, "https://app.example.com", "http://localhost:3000")
	asked := "content-type,authorization,x-gateway-api-key,x-gateway-provider,x-gateway-trace-id,idempotency-key"
	pre := send(t, http.MethodOptions, srv.URL+"/v1/workspaces", map[string]string{
		"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": asked})
	assert.Equal(t, http.StatusNoContent, pre.StatusCode)
	assert.Equal(t, "https://app.example.com", pre.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "POST", pre.Header.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, asked, pre.Header.Get("Access-Control-Allow-Headers"))
	assert.Equal(t, "3600", pre.Header.Get("Access-Control-Max-Age"))
	assert.Contains(t, pre.Header.Get("Vary"), "Origin")

	for _, method := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		p := send(t, http.MethodOptions, srv.URL+"/v1/chat/completions", map[string]string{
			"Origin": "http://localhost:3000", "Access-Control-Request-Method": method})
		assert.Equal(t, "http://localhost:3000", p.Header.Get("Access-Control-Allow-Origin"), method)
		assert.Equal(t, method, p.Header.Get("Access-Control-Allow-Methods"))
	}

	refused := send(t, http.MethodOptions, srv.URL+"/v1/workspaces", map[string]string{
		"Origin": "https://evil.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": asked})
	for h := range refused.Header {
		assert.NotContains(t, strings.ToLower(h), "access-control-", "a refused origin gets no CORS header")
	}

	actual := send(t, http.MethodGet, srv.URL+"/v1/workspaces", map[string]string{"Origin": "https://app.example.com", "x-gateway-api-key": api.AdminKey})
	assert.Equal(t, http.StatusOK, actual.StatusCode)
	assert.Equal(t, "https://app.example.com", actual.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, actual.Header.Get("Vary"), "Origin")
	exposed := strings.ToLower(actual.Header.Get("Access-Control-Expose-Headers"))
	for _, h := range []string{"x-gateway-trace-id", "x-gateway-target", "x-ratelimit-limit", "x-ratelimit-remaining",
		"x-ratelimit-reset", "retry-after", "x-gateway-decided-by", "idempotent-replayed"} {
		assert.Contains(t, exposed, h)
	}
	// An error answer is readable by the page too.
	denied := send(t, http.MethodGet, srv.URL+"/v1/workspaces", map[string]string{"Origin": "https://app.example.com"})
	assert.Equal(t, http.StatusUnauthorized, denied.StatusCode)
	assert.Equal(t, "https://app.example.com", denied.Header.Get("Access-Control-Allow-Origin"))
	other := send(t, http.MethodGet, srv.URL+"/v1/workspaces", map[string]string{"Origin": "https://evil.example.com", "x-gateway-api-key": api.AdminKey})
	assert.Empty(t, other.Header.Get("Access-Control-Allow-Origin"))

	star := corsServer(t, api, "*")
	p := send(t, http.MethodOptions, star.URL+"/v1/workspaces", map[string]string{
		"Origin": "https://anywhere.example", "Access-Control-Request-Method": "DELETE", "Access-Control-Request-Headers": "x-gateway-api-key"})
	assert.Equal(t, "*", p.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "x-gateway-api-key", p.Header.Get("Access-Control-Allow-Headers"))
}

// CORS is off by default: no answer carries a CORS header, and OPTIONS is answered as any
// other method a route does not serve.
func TestCORSIsOffByDefault(t *testing.T) {
	api := newTestAPI(t)
	pre := send(t, http.MethodOptions, api.Server.URL+"/v1/workspaces", map[string]string{
		"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
	assert.Equal(t, http.StatusMethodNotAllowed, pre.StatusCode)
	actual := send(t, http.MethodGet, api.Server.URL+"/v1/workspaces", map[string]string{"Origin": "https://app.example.com", "x-gateway-api-key": api.AdminKey})
	assert.Equal(t, http.StatusOK, actual.StatusCode)
	for _, resp := range []*http.Response{pre, actual} {
		for h := range resp.Header {
			assert.NotContains(t, strings.ToLower(h), "access-control-")
		}
		assert.Empty(t, resp.Header.Get("Vary"))
	}
}
