package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

// send makes one request to the running binary and returns its answer and body.
func send(t *testing.T, method, u, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, raw
}

// A mistyped admin path answers 404 with the nearest route, even with a gateway key; a
// request naming no provider on a path the gateway does not know is told how to name one; a
// request that names a provider, by its header or an SDK spelling, is passed through as before.
func TestUnknownPathIsNoSuchRouteUnlessAProviderIsNamed(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)

	resp, raw := send(t, http.MethodGet, m.URL()+"/workspace", "", map[string]string{"x-gateway-api-key": gatewayKey})
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", raw)
	e := decodeError(t, raw)
	assert.Equal(t, "no such route: GET /v1/workspace; did you mean /v1/workspaces?", e.Error.Message)
	assert.Equal(t, "not_found", e.Error.Code)

	body := `{"model":"m","input":"hi"}`
	resp, raw = send(t, http.MethodPost, m.URL()+"/responses", body, map[string]string{"x-gateway-api-key": gatewayKey,
		"Authorization": "Bearer sk-provider-key", "Content-Type": "application/json"})
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", raw)
	assert.Equal(t, "no such route: POST /v1/responses; a request for a provider's own API must name the provider (x-gateway-provider or x-gateway-config)",
		decodeError(t, raw).Error.Message)
	assert.Empty(t, oa.Requests(), "nothing went to a provider")

	for _, named := range []map[string]string{
		{"x-gateway-provider": "openai", "x-gateway-custom-host": oa.BaseURL()},
		{"provider": "openai", "customHost": oa.BaseURL()}, // an SDK's spelling
		{"x-gateway-config": `{"provider":"openai","api_key":"sk-provider-key","custom_host":"` + oa.BaseURL() + `"}`},
	} {
		oa.Script(providertest.Answer{Body: responsesAnswer})
		headers := map[string]string{"x-gateway-api-key": gatewayKey, "Authorization": "Bearer sk-provider-key", "Content-Type": "application/json"}
		for k, v := range named {
			headers[k] = v
		}
		resp, raw := send(t, http.MethodPost, m.URL()+"/responses", body, headers)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%v: %s", named, raw)
		assert.JSONEq(t, responsesAnswer, string(raw))
	}
	assert.Len(t, oa.Requests(), 3)
}

// rawPost writes a whole request on a plain TCP connection, with a small send buffer as over
// a real network, before reading anything (as curl or an SDK streaming an upload does), and
// reads the answer.
func rawPost(t *testing.T, base, path string, headers map[string]string, bodySize int) (*http.Response, []byte, error) {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetWriteBuffer(32<<10))
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	var head strings.Builder
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", u.Path+path, u.Host, bodySize)
	for k, v := range headers {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		return nil, nil, err
	}
	chunk := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 64<<10))
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

// A client that sends a whole body over CAUSEWAY_MAX_BODY_BYTES (or over the admin API's
// limit) reads a 413 that names the limit, not a reset connection.
func TestOverLimitBodyGetsAReadable413(t *testing.T) {
	m := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_MAX_BODY_BYTES": "65536"})
	for _, tc := range []struct {
		path    string
		size    int
		message string
	}{
		{"/chat/completions", 2 << 20, "the request body is larger than the limit of 65536 bytes"},
		{"/responses", 2 << 20, "the request body is larger than the limit of 65536 bytes"},
		{"/workspaces", 4 << 20, "the request body is larger than the admin API's limit of 1048576 bytes"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, raw, err := rawPost(t, m.URL(), tc.path, map[string]string{"x-gateway-api-key": gatewayKey,
				"x-gateway-provider": "openai", "Authorization": "Bearer sk-provider-key"}, tc.size)
			require.NoError(t, err, "the client must read the answer")
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s", raw)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			e := decodeError(t, raw)
			assert.Equal(t, tc.message, e.Error.Message)
			assert.Equal(t, "too_large", e.Error.Code)
		})
	}
}

// A gateway request with an unknown key is logged under the deployment's organisation, so
// its admins see it in GET /v1/logs; an admin request with one is in the audit log.
func TestRefusalsOfUnknownKeysAreTheOrganisations(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	org := g.m.Bootstrap.OrganisationID
	require.NotEmpty(t, org)
	const unknown = "cw-not-a-key-of-this-deployment-0123456789"
	resp, raw := chatThrough(t, g.m, unknown, g.oa.BaseURL(), `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-gateway-trace-id": "trace-unknown-key"})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s", raw)
	row := g.logRow("trace-unknown-key")
	assert.Equal(t, org, row["organisation_id"], "%v", row)
	assert.EqualValues(t, http.StatusUnauthorized, row["response"].(map[string]any)["status"])
	rowJSON, _ := json.Marshal(row)
	assert.NotContains(t, string(rowJSON), unknown, "the presented key is not logged")

	// A pass-through refused for its method, before any key is read, is the organisation's too.
	resp, raw = send(t, http.MethodPatch, g.m.URL()+"/responses/resp_1", `{}`, map[string]string{"x-gateway-api-key": gatewayKey,
		"x-gateway-provider": "openai", "x-gateway-trace-id": "trace-refused-method"})
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s", raw)
	row = g.logRow("trace-refused-method")
	assert.Equal(t, org, row["organisation_id"], "%v", row)

	resp, _ = send(t, http.MethodGet, g.m.URL()+"/workspaces", "", map[string]string{"x-gateway-api-key": unknown,
		"x-gateway-trace-id": "trace-unknown-admin"})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	var rec map[string]any
	require.Eventually(t, func() bool {
		status, out := g.adminStatus(http.MethodGet, "/audit-logs?request_id=trace-unknown-admin", nil)
		data, _ := out["data"].([]any)
		if status != http.StatusOK || len(data) != 1 {
			return false
		}
		rec = data[0].(map[string]any)
		return true
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, org, rec["organisation_id"])
	assert.EqualValues(t, http.StatusUnauthorized, rec["response_status_code"])
	status, one := g.adminStatus(http.MethodGet, "/audit-logs/"+rec["id"].(string), nil)
	require.Equal(t, http.StatusOK, status, "%v", one)
}

// CAUSEWAY_CORS_ORIGINS turns CORS on for the listed origins; it is off by default.
func TestCORSThroughTheBinary(t *testing.T) {
	preflight := map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type,x-gateway-api-key,idempotency-key"}
	on := startMain(t, map[string]string{"CAUSEWAY_CORS_ORIGINS": "https://app.example.com, http://localhost:3000"})
	resp, _ := send(t, http.MethodOptions, on.URL()+"/chat/completions", "", preflight)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, "https://app.example.com", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "content-type,x-gateway-api-key,idempotency-key", resp.Header.Get("Access-Control-Allow-Headers"))

	off := startMain(t, nil)
	resp, _ = send(t, http.MethodOptions, off.URL()+"/chat/completions", "", preflight)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "as without CORS")
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

func TestCORSOriginsAreValidated(t *testing.T) {
	c, err := LoadConfig(env(nil))
	require.NoError(t, err)
	assert.Empty(t, c.CORSOrigins, "off by default")

	c, err = LoadConfig(env(map[string]string{"CAUSEWAY_CORS_ORIGINS": " https://app.example.com ,http://localhost:3000,, "}))
	require.NoError(t, err)
	assert.Equal(t, []string{"https://app.example.com", "http://localhost:3000"}, c.CORSOrigins)
	c, err = LoadConfig(env(map[string]string{"CAUSEWAY_CORS_ORIGINS": "*"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"*"}, c.CORSOrigins)

	for value, want := range map[string]string{
		"app.example.com":            `CAUSEWAY_CORS_ORIGINS: "app.example.com" is not an origin`,
		"ftp://files.example.com":    `CAUSEWAY_CORS_ORIGINS: "ftp://files.example.com" is not an origin`,
		"https://app.example.com/":   `CAUSEWAY_CORS_ORIGINS: "https://app.example.com/" must be only scheme://host[:port]`,
		"https://app.example.com/ui": `CAUSEWAY_CORS_ORIGINS: "https://app.example.com/ui" must be only scheme://host[:port]`,
		"https://:443":               `CAUSEWAY_CORS_ORIGINS: "https://:443" has no host`,
		"http://localhost:99999":     `CAUSEWAY_CORS_ORIGINS: "http://localhost:99999"`,
		"*,https://app.example.com":  "CAUSEWAY_CORS_ORIGINS: * allows every origin; set it alone",
	} {
		_, err := LoadConfig(env(map[string]string{"CAUSEWAY_CORS_ORIGINS": value}))
		require.Error(t, err, value)
		assert.Contains(t, err.Error(), want, value)
	}
}
