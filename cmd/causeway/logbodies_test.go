package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// getRaw GETs url with the admin key and answers the body, which must come with a 200.
func getRaw(t *testing.T, url string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("x-gateway-api-key", gatewayKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	return raw
}

// requireValidJSON fails unless raw is JSON that every parser takes: valid UTF-8 included,
// which encoding/json's own Valid does not check inside strings.
func requireValidJSON(t *testing.T, raw []byte) {
	t.Helper()
	require.True(t, utf8.Valid(raw), "not UTF-8: %q", raw)
	require.True(t, json.Valid(raw), "not JSON: %q", raw)
}

// requireBase64Body checks a served body that was not UTF-8: a JSON string of the base64 of
// exactly the bytes sent, marked base64.
func requireBase64Body(t *testing.T, body json.RawMessage, encoding string, sent []byte) {
	t.Helper()
	assert.Equal(t, "base64", encoding)
	var text string
	require.NoError(t, json.Unmarshal(body, &text), "%s", body)
	got, err := base64.StdEncoding.DecodeString(text)
	require.NoError(t, err)
	assert.Equal(t, sent, got)
}

type servedLog struct {
	ID      string `json:"_id"`
	Request struct {
		Body         json.RawMessage `json:"body"`
		BodyEncoding string          `json:"body_encoding"`
	} `json:"request"`
	Response struct {
		Body         json.RawMessage `json:"body"`
		BodyEncoding string          `json:"body_encoding"`
	} `json:"response"`
}

// A chat whose body is not valid UTF-8: GET /v1/logs/{id} answers valid JSON, the body as the
// base64 of its bytes, marked so.
func TestLogOfABodyNotUTF8IsValidJSON(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	sent := []byte("{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9 \xff\"}]}")
	chatThrough(t, m, gatewayKey, oa.BaseURL(), string(sent), nil)

	require.Eventually(t, func() bool { return m.Pipeline.Stats().Inserted == 1 }, 10*time.Second, 20*time.Millisecond)
	rawList := getRaw(t, m.URL()+"/logs")
	requireValidJSON(t, rawList)
	var list struct {
		Data []servedLog `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rawList, &list))
	require.Len(t, list.Data, 1)

	raw := getRaw(t, m.URL()+"/logs/"+list.Data[0].ID)
	requireValidJSON(t, raw)
	var got servedLog
	require.NoError(t, json.Unmarshal(raw, &got))
	requireBase64Body(t, got.Request.Body, got.Request.BodyEncoding, sent)
}

// A row stored before bodies had an encoding, its bytes not UTF-8: the log, the list and an
// export of it are all valid JSON.
func TestLogStoredBeforeEncodingsIsServedAsValidJSON(t *testing.T) {
	m := startGateway(t)
	ctx := context.Background()
	admin := func(method, path string, body any) map[string]any {
		t.Helper()
		var raw []byte
		if body != nil {
			raw, _ = json.Marshal(body)
		}
		req, _ := http.NewRequest(method, m.URL()+path, strings.NewReader(string(raw)))
		req.Header.Set("x-gateway-api-key", gatewayKey)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %v", method, path, out)
		return out
	}
	ws := admin(http.MethodPost, "/workspaces", map[string]any{"name": "Old rows"})["id"].(string)

	req := []byte("{\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}")
	resp := []byte("{\"choices\":[{\"text\":\"\xed\xa0\x80\xff\"}]}")
	now := time.Now().UTC()
	require.NoError(t, m.Analytics.Insert(ctx, []analytics.LogRecord{{
		ID: "log-before-encodings", TraceID: "trace-old", OrganisationID: m.Bootstrap.OrganisationID, WorkspaceID: ws,
		AIService: "openai", Model: "gpt-4o-mini", Endpoint: "chatComplete", Method: "POST", Path: "/v1/chat/completions",
		StatusCode: 200, CacheStatus: analytics.CacheMiss, LogFormat: "v1", RequestBody: req, ResponseBody: resp,
		StartedAt: now.Add(-time.Minute), EndedAt: now.Add(-time.Minute + time.Second),
	}}))

	raw := getRaw(t, m.URL()+"/logs/log-before-encodings")
	requireValidJSON(t, raw)
	var got servedLog
	require.NoError(t, json.Unmarshal(raw, &got))
	requireBase64Body(t, got.Request.Body, got.Request.BodyEncoding, req)
	requireBase64Body(t, got.Response.Body, got.Response.BodyEncoding, resp)
	requireValidJSON(t, getRaw(t, m.URL()+"/logs?workspace_id="+ws))

	id := admin(http.MethodPost, "/logs/exports", map[string]any{"workspace_id": ws, "filters": map[string]any{},
		"requested_data": []string{"id", "request", "response"}})["id"].(string)
	admin(http.MethodPost, "/logs/exports/"+id+"/start", nil)
	require.Eventually(t, func() bool { return admin(http.MethodGet, "/logs/exports/"+id, nil)["status"] == "success" },
		10*time.Second, 50*time.Millisecond)
	link := admin(http.MethodGet, "/logs/exports/"+id+"/download", nil)["signed_url"].(string)
	download, err := http.Get(link)
	require.NoError(t, err)
	defer download.Body.Close()
	require.Equal(t, http.StatusOK, download.StatusCode)
	exported, err := io.ReadAll(download.Body)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(exported)), "\n")
	require.Len(t, lines, 1)
	requireValidJSON(t, []byte(lines[0]))
	assert.Contains(t, lines[0], base64.StdEncoding.EncodeToString(req), "the request's bytes, whole")
}
