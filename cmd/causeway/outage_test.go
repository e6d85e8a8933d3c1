package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// adminAnswer is an admin API answer: its status and, for an error, its error object.
type adminAnswer struct {
	Status int `json:"-"`
	Error  struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

func adminGet(t *testing.T, url, key string) adminAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("x-gateway-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out adminAnswer
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("GET %s: the answer is not JSON: %v", url, err)
	}
	out.Status = resp.StatusCode
	return out
}

// PostgreSQL goes away while the server runs in server mode (events and read models in it):
// admin reads answer 503 read_model_unavailable with a message that says so, never 404 or an
// empty list; gateway traffic keeps flowing, as the gateway reads only its in-memory index;
// health says degraded and names the read models and the event store. When PostgreSQL is back,
// reads answer again and health is ok.
func TestPostgresOutageAnswers503AndTheGatewayFlows(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	u, err := url.Parse(pg)
	require.NoError(t, err)
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr()
	vars := serverEnv(u.String())
	vars["CAUSEWAY_ALLOWED_HOSTS"] = "127.0.0.1"
	m := startMain(t, vars)
	require.NotNil(t, m.Postgres, "server mode: admin reads come from PostgreSQL")
	oa := providertest.NewOpenAI(t)
	chatOK := func(msg string) {
		t.Helper()
		resp, body := chatThrough(t, m, serverAdminKey, oa.BaseURL(), `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", msg, body)
	}

	ws := post(t, m.URL()+"/workspaces", serverAdminKey, map[string]any{"name": "Before the outage"})
	wsURL := m.URL() + "/workspaces/" + ws["id"].(string)
	reads := []string{wsURL, m.URL() + "/workspaces", m.URL() + "/api-keys", m.URL() + "/users",
		m.URL() + "/policies/rate-limits", m.URL() + "/integrations", m.URL() + "/audit-logs"}
	for _, r := range reads {
		require.Equal(t, http.StatusOK, adminGet(t, r, serverAdminKey).Status, r)
	}
	chatOK("before the outage")
	require.Equal(t, "ok", getHealth(t, m).Status)

	proxy.setDown(true)
	for _, r := range reads {
		got := adminGet(t, r, serverAdminKey)
		assert.Equal(t, http.StatusServiceUnavailable, got.Status, "%s answers 503, not 404 or an empty list", r)
		assert.Equal(t, "read_model_unavailable", got.Error.Code, r)
		assert.Equal(t, "service_unavailable_error", got.Error.Type, r)
		assert.Contains(t, got.Error.Message, "read model is unavailable", r)
	}
	for i := 0; i < 5; i++ {
		chatOK("during the outage")
	}
	h := getHealth(t, m)
	assert.Equal(t, "degraded", h.Status)
	assert.Equal(t, "down", h.Checks["readmodels"].Status)
	assert.Equal(t, "postgres", h.Checks["readmodels"].Backend)
	assert.Equal(t, "down", h.Checks["eventstore"].Status)

	proxy.setDown(false)
	require.Eventually(t, func() bool { return adminGet(t, wsURL, serverAdminKey).Status == http.StatusOK }, 30*time.Second,
		50*time.Millisecond, "reads answer again once PostgreSQL is back")
	for _, r := range reads {
		assert.Equal(t, http.StatusOK, adminGet(t, r, serverAdminKey).Status, r)
	}
	require.Eventually(t, func() bool { return getHealth(t, m).Status == "ok" }, 30*time.Second, 100*time.Millisecond)
	chatOK("after the outage")
}
