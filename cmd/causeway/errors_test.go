package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/internal/syncbuf"
)

// Errors say whose they are and why: a provider's error keeps its status and body and is
// marked as the provider's; the gateway's own errors are marked as the gateway's and say what
// to do next. Every case goes through the HTTP API of the real binary.

// apiError is the error shape with every field an answer may carry.
type apiError struct {
	Message  string  `json:"message"`
	Type     string  `json:"type"`
	Param    *string `json:"param"`
	Code     any     `json:"code"`
	Provider string  `json:"provider"`
	Status   int     `json:"status"`
}

func decodeAPIError(t *testing.T, raw []byte) apiError {
	t.Helper()
	var body struct {
		Error apiError `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
	return body.Error
}

// startLogged is startGateway with the server's log kept, and the allowed hosts given.
func startLogged(t *testing.T, allowed string) (*Main, *syncbuf.Buffer) {
	t.Helper()
	cfg, err := LoadConfig(env(map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": t.TempDir(),
		"CAUSEWAY_STARTUP_TIMEOUT": "5s", "CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": allowed}))
	require.NoError(t, err)
	logs := &syncbuf.Buffer{}
	m := NewMain(cfg, logs, "test")
	require.NoError(t, m.Run(context.Background()))
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m, logs
}

const chatBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`

// A provider's error comes back with its status and its error, marked as the provider's: in
// the x-gateway-error-source header and by its name and status in the body. A plain-text
// answer is wrapped with the provider's name; an OpenAI-shaped one keeps its type, param and
// code. The provider key it quotes never comes back.
func TestProviderErrorsAreMarkedAsTheProviders(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)

	oa.Script(providertest.Answer{Status: http.StatusNotFound, Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, Body: "404 page not found\n"})
	resp, raw := chatThrough(t, m, gatewayKey, oa.BaseURL(), chatBody, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "provider", resp.Header.Get("x-gateway-error-source"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	e := decodeAPIError(t, raw)
	assert.Equal(t, "openai answered 404: 404 page not found", e.Message)
	assert.Equal(t, "provider_error", e.Type)
	assert.Equal(t, "openai", e.Provider)
	assert.Equal(t, http.StatusNotFound, e.Status)
	assert.Nil(t, e.Param)
	assert.Nil(t, e.Code)

	oa.Script(providertest.Answer{Status: http.StatusUnauthorized, Body: `{"error":{"message":"Incorrect API key provided: sk-provider-key.",` +
		`"type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`})
	resp, raw = chatThrough(t, m, gatewayKey, oa.BaseURL(), chatBody, nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, "provider", resp.Header.Get("x-gateway-error-source"))
	e = decodeAPIError(t, raw)
	assert.Equal(t, "Incorrect API key provided: [redacted].", e.Message, "OpenAI's own error is passed on")
	assert.Equal(t, "invalid_request_error", e.Type)
	assert.Equal(t, "invalid_api_key", e.Code)
	assert.Equal(t, "openai", e.Provider)
	assert.Equal(t, http.StatusUnauthorized, e.Status)
	assert.NotContains(t, string(raw), "sk-provider-key")

	oa.Script(providertest.Answer{Status: http.StatusBadRequest, Body: `{"error":{"message":"Invalid 'temperature'","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`})
	resp, raw = chatThrough(t, m, gatewayKey, oa.BaseURL(), chatBody, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	e = decodeAPIError(t, raw)
	require.NotNil(t, e.Param)
	assert.Equal(t, "temperature", *e.Param)
	assert.Equal(t, "invalid_value", e.Code)

	// A pass-through's error is the provider's bytes, unchanged, and marked by the header.
	const fileErr = `{"error":{"message":"No such File object: file-x","type":"invalid_request_error","param":"id","code":null}}`
	oa.Script(providertest.Answer{Status: http.StatusNotFound, Header: http.Header{"X-Request-Id": {"req_9"}}, Body: fileErr})
	req, err := http.NewRequest(http.MethodGet, m.URL()+"/files/file-x", nil)
	require.NoError(t, err)
	req.Header.Set("x-gateway-api-key", gatewayKey)
	req.Header.Set("x-gateway-provider", "openai")
	req.Header.Set("x-gateway-custom-host", oa.BaseURL())
	req.Header.Set("Authorization", "Bearer sk-provider-key")
	pass, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	passRaw, _ := io.ReadAll(pass.Body)
	pass.Body.Close()
	assert.Equal(t, http.StatusNotFound, pass.StatusCode)
	assert.Equal(t, fileErr, string(passRaw), "a pass-through error is the provider's bytes")
	assert.Equal(t, "provider", pass.Header.Get("x-gateway-error-source"))
	assert.Equal(t, "req_9", pass.Header.Get("X-Request-Id"))
}

// The gateway's own errors are marked as the gateway's, on the gateway and the admin API.
func TestGatewayErrorsAreMarkedAsTheGateways(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	for _, tc := range []struct {
		name, key, body string
		status          int
		typ, param      string
	}{
		{"an unknown key", "nope-not-a-key", chatBody, http.StatusUnauthorized, "authentication_error", ""},
		{"no messages", gatewayKey, `{"model":"gpt-4o-mini"}`, http.StatusBadRequest, "invalid_request_error", "messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, raw := chatThrough(t, m, tc.key, oa.BaseURL(), tc.body, nil)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, "gateway", resp.Header.Get("x-gateway-error-source"))
			e := decodeAPIError(t, raw)
			assert.Equal(t, tc.typ, e.Type)
			assert.Empty(t, e.Provider)
			if tc.param != "" {
				require.NotNil(t, e.Param)
				assert.Equal(t, tc.param, *e.Param)
			}
		})
	}
	assert.Empty(t, oa.Requests(), "nothing reached the provider")

	req, _ := http.NewRequest(http.MethodGet, m.URL()+"/workspaces/no-such-workspace", nil)
	req.Header.Set("x-gateway-api-key", gatewayKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "gateway", resp.Header.Get("x-gateway-error-source"), "the admin API's errors too")
}

// A custom host the egress guard refuses is a 400 that names the setting that allows it.
func TestEgressRefusalNamesTheVariable(t *testing.T) {
	m := startGateway(t) // allows 127.0.0.1 only
	resp, raw := chatThrough(t, m, gatewayKey, "http://127.0.0.2:9/v1", chatBody, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "gateway", resp.Header.Get("x-gateway-error-source"))
	e := decodeAPIError(t, raw)
	assert.Equal(t, `host "127.0.0.2" not allowed: loopback address; set CAUSEWAY_ALLOWED_HOSTS to allow it`, e.Message)
	require.NotNil(t, e.Param)
	assert.Equal(t, "x-gateway-custom-host", *e.Param)

	resp, raw = chatThrough(t, m, gatewayKey, "http://169.254.169.254/v1", chatBody, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.NotContains(t, decodeAPIError(t, raw).Message, "CAUSEWAY_ALLOWED_HOSTS", "allowing the metadata service is not suggested")
}

// A provider that cannot be reached is a 502 naming the host the caller gave and the class
// of failure; the address a name resolved to, and the provider key, appear nowhere: not in
// the answer, nor in the request log.
func TestUnreachableProviderNamesHostAndClass(t *testing.T) {
	m, _ := startLogged(t, "127.0.0.1,localhost")
	g := newGoverned(t, m)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, closedPort, _ := net.SplitHostPort(closed)
	tlsServer := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsServer.Close)
	hangUp := providertest.SilentServer(t, true, false)

	for _, tc := range []struct {
		name, host, want string
	}{
		{"refused", "http://" + closed + "/v1",
			"the provider openai could not be reached at " + closed + ": connection refused (nothing listens on that port)"},
		{"refused, by name", "http://localhost:" + closedPort + "/v1",
			"the provider openai could not be reached at localhost:" + closedPort + ": connection refused (nothing listens on that port)"},
		{"an untrusted certificate", tlsServer.URL + "/v1",
			"the provider openai could not be reached at " + strings.TrimPrefix(tlsServer.URL, "https://") + ": TLS: the certificate is signed by an unknown authority"},
		{"a hang-up", "http://" + hangUp + "/v1",
			"the provider openai could not be reached at " + hangUp + ": the connection was reset or closed before the answer was complete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := "unreachable-" + strings.NewReplacer(" ", "-", ",", "").Replace(tc.name)
			resp, raw := chatThrough(t, m, gatewayKey, tc.host, chatBody, map[string]string{"x-gateway-trace-id": trace})
			assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
			assert.Equal(t, "gateway", resp.Header.Get("x-gateway-error-source"))
			e := decodeAPIError(t, raw)
			assert.Equal(t, tc.want, e.Message)
			assert.Equal(t, "provider_unreachable", e.Code)
			assert.NotContains(t, string(raw), "sk-provider-key")
			if strings.Contains(tc.host, "localhost") {
				assert.NotContains(t, string(raw), "127.0.0.1", "the address localhost resolved to stays out")
				assert.NotContains(t, string(raw), "::1")
			}
			row := g.logRow(trace)
			metrics := row["metrics"].(map[string]any)
			assert.Equal(t, tc.want, metrics["error"], "the log row says what the client was told")
			assert.EqualValues(t, http.StatusBadGateway, metrics["response_status_code"])
		})
	}
}

// sseEvents reads a stream's data events.
func sseEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

// The request timeout, when it runs out, says how long it was and what set it: 408 before
// the answer, an error event naming it in a stream, and 408 in the log either way.
func TestRequestTimeoutNamesItself(t *testing.T) {
	g := newGoverned(t, startGateway(t))

	g.oa.Script(providertest.Answer{Delay: 3 * time.Second, Body: `{}`})
	resp, raw := chatThrough(t, g.m, gatewayKey, g.oa.BaseURL(), chatBody, map[string]string{"x-gateway-request-timeout": "200"})
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Equal(t, "gateway", resp.Header.Get("x-gateway-error-source"))
	e := decodeAPIError(t, raw)
	assert.Equal(t, "the request timeout of 200ms (x-gateway-request-timeout) ran out before the provider answered", e.Message)
	assert.Equal(t, "timeout_error", e.Type)
	assert.Equal(t, "request_timeout", e.Code)

	g.oa.Script(providertest.Answer{Delay: 3 * time.Second, Body: `{}`})
	config := fmt.Sprintf(`{"provider":"openai","api_key":"sk-provider-key","custom_host":%q,"request_timeout":200}`, g.oa.BaseURL())
	resp, raw = chatThrough(t, g.m, gatewayKey, g.oa.BaseURL(), chatBody, map[string]string{"x-gateway-config": config,
		"x-gateway-provider": "", "x-gateway-custom-host": ""})
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "%s", raw)
	assert.Equal(t, "the request timeout of 200ms (the config's request_timeout) ran out before the provider answered", decodeAPIError(t, raw).Message)

	g.oa.SetStream(providertest.StreamPlan{Chunks: 200, Delay: 10 * time.Millisecond})
	req, err := http.NewRequest(http.MethodPost, g.m.URL()+"/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"a long story"}]}`))
	require.NoError(t, err)
	for k, v := range map[string]string{"x-gateway-api-key": gatewayKey, "x-gateway-provider": "openai", "x-gateway-custom-host": g.oa.BaseURL(),
		"Authorization": "Bearer sk-provider-key", "x-gateway-request-timeout": "400", "x-gateway-trace-id": "stream-timeout"} {
		req.Header.Set(k, v)
	}
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	events := sseEvents(t, stream.Body)
	stream.Body.Close()
	assert.Equal(t, http.StatusOK, stream.StatusCode, "the stream had begun")
	require.Greater(t, len(events), 2, "chunks came before the timeout")
	last := decodeAPIError(t, []byte(events[len(events)-1]))
	assert.Equal(t, "the request timeout of 400ms (x-gateway-request-timeout) ran out while streaming", last.Message)
	assert.Equal(t, "timeout_error", last.Type)
	assert.Equal(t, "request_timeout", last.Code)
	row := g.logRow("stream-timeout")
	assert.EqualValues(t, http.StatusRequestTimeout, row["metrics"].(map[string]any)["response_status_code"])
	assert.Equal(t, last.Message, row["metrics"].(map[string]any)["error"])
}

// A pass-through under a request timeout is relayed whole when it answers in time: the
// timeout lasts while its answer is read, and ends no sooner.
func TestPassThroughAnswersWithinItsTimeout(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	big := `{"data":"` + strings.Repeat("x", 256<<10) + `"}`
	g.oa.Script(providertest.Answer{Body: big})
	req, err := http.NewRequest(http.MethodGet, g.m.URL()+"/files", nil)
	require.NoError(t, err)
	for k, v := range map[string]string{"x-gateway-api-key": gatewayKey, "x-gateway-provider": "openai", "x-gateway-custom-host": g.oa.BaseURL(),
		"Authorization": "Bearer sk-provider-key", "x-gateway-request-timeout": "5000"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, len(big), len(raw), "the answer is whole")
	assert.True(t, big == string(raw), "and unchanged")
}

// A rate limit's 429 names the limit in its unit and kind, what set it, and how long to wait.
func TestRateLimitRefusalNamesUnitAndKind(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	keyID, key := g.key(map[string]any{"rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 1}}})
	freshMinute(t)
	refusal := func(key string) (*http.Response, apiError) {
		t.Helper()
		for i := 0; i < 5; i++ {
			resp, raw := g.chat(key, nil)
			if resp.StatusCode == http.StatusTooManyRequests {
				return resp, decodeAPIError(t, raw)
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		}
		t.Fatal("no 429 in 5 requests")
		return nil, apiError{}
	}
	resp, e := refusal(key)
	assert.Equal(t, "gateway", resp.Header.Get("x-gateway-error-source"))
	// The wait reads as a duration: "12s", or "1m" when the refusal falls as a window opens.
	assert.Regexp(t, `^rate limit of 1 request per minute reached \(api_key:`+regexp.QuoteMeta(keyID)+`:requests/rpm@v\d+\); retry after (\d+s|1m)$`, e.Message)
	assert.Equal(t, "rate_limit_error", e.Type)
	wait, err := time.ParseDuration(e.Message[strings.LastIndex(e.Message, " ")+1:])
	require.NoError(t, err)
	assert.Equal(t, resp.Header.Get("Retry-After"), strconv.Itoa(int(wait.Seconds())), "the wait is Retry-After's")

	_, key2 := g.key(nil)
	policy := g.admin(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": g.ws, "type": "tokens", "unit": "rpm", "value": 5,
		"conditions": []map[string]string{{"key": "workspace_id", "value": g.ws}}, "group_by": []map[string]string{{"key": "api_key"}}})["id"].(string)
	_, e = refusal(key2)
	assert.Regexp(t, `^rate limit of 5 tokens per minute reached \(rate_limit_policy:`+regexp.QuoteMeta(policy)+`@v1\); retry after (\d+s|1m)$`, e.Message)
}

// A client that goes away before the answer is logged as 499, not as the gateway's internal
// error, and the server's log has no error for it.
func TestClientThatLeavesIsLogged499(t *testing.T) {
	m, logs := startLogged(t, "127.0.0.1")
	g := newGoverned(t, m)
	g.oa.Script(providertest.Answer{Delay: 3 * time.Second, Body: `{}`})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL()+"/chat/completions", strings.NewReader(chatBody))
	require.NoError(t, err)
	for k, v := range map[string]string{"x-gateway-api-key": gatewayKey, "x-gateway-provider": "openai", "x-gateway-custom-host": g.oa.BaseURL(),
		"Authorization": "Bearer sk-provider-key", "x-gateway-trace-id": "client-left"} {
		req.Header.Set(k, v)
	}
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = http.DefaultClient.Do(req)
	require.Error(t, err)

	row := g.logRow("client-left")
	metrics := row["metrics"].(map[string]any)
	assert.EqualValues(t, 499, metrics["response_status_code"])
	assert.Equal(t, "client closed the request", metrics["error"])
	assert.NotContains(t, logs.String(), "level=ERROR", "a client that left is not an internal error")
	assert.NotContains(t, logs.String(), "context canceled")
}

// A stream that fails after it began ends with an error event that says whose the failure
// is: the provider's own error event passed on, marked with its name; a connection that
// broke, named as such, with no address in it.
func TestMidStreamFailuresSayWhose(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	streamOnce := func(plan providertest.StreamPlan) apiError {
		t.Helper()
		g.oa.SetStream(plan)
		req, err := http.NewRequest(http.MethodPost, g.m.URL()+"/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		for k, v := range map[string]string{"x-gateway-api-key": gatewayKey, "x-gateway-provider": "openai",
			"x-gateway-custom-host": g.oa.BaseURL(), "Authorization": "Bearer sk-provider-key"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		events := sseEvents(t, resp.Body)
		resp.Body.Close()
		require.NotEmpty(t, events)
		return decodeAPIError(t, []byte(events[len(events)-1]))
	}

	e := streamOnce(providertest.StreamPlan{Chunks: 10, ErrorAfter: 2})
	assert.Equal(t, "The server had an error while processing your request. Sorry about that!", e.Message)
	assert.Equal(t, "server_error", e.Type)
	assert.Equal(t, "openai", e.Provider, "the provider's own error event, marked as its")

	e = streamOnce(providertest.StreamPlan{Chunks: 10, CutAfter: 3})
	assert.Equal(t, "the stream from openai broke off: the connection was reset or closed before the answer was complete", e.Message)
	assert.Equal(t, "stream_error", e.Code)
	assert.NotContains(t, e.Message, "127.0.0.1")
}
