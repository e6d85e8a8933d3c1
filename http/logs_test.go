package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
)

func TestGetLog(t *testing.T) {
	ta := newTrafficAPI(t)
	rec := analytics.LogRecord{ID: uuid.NewString(), TraceID: "trace-x", SpanID: "span-x", ParentSpanID: "span-p", SpanName: "llm",
		OrganisationID: ta.OrgID, WorkspaceID: ta.WSA, APIKeyID: ta.Keys[1], Provider: "@openai-prod", AIService: "openai",
		Model: "gpt-4o", ConfigID: ta.ConfigID, PromptID: "prompt-9", Endpoint: "chatComplete", Method: "POST",
		Path: "/v1/chat/completions", StatusCode: 200, PromptTokens: 12, CompletionTokens: 30, TotalTokens: 42,
		CachedTokens: 4, CacheWriteTokens: 5, ReasoningTokens: 7, Cost: 0.0123, LatencyMS: 812.6, TTFTMS: 120.5, Stream: true, CacheStatus: "MISS",
		RetryCount: 1, FallbackTarget: "$.targets[1]", Target: "$.targets[1]", Metadata: map[string]string{"_user": "alice"},
		RequestBody:  json.RawMessage(`{"model":"gpt-4o","messages":[{"role":"user","content":"hello"}],"api_key":"[REDACTED]"}`),
		ResponseBody: json.RawMessage(`{"id":"chatcmpl-9"}`), LogFormat: "v1",
		StartedAt: ta.Now().Add(-time.Hour), EndedAt: ta.Now().Add(-time.Hour + 812*time.Millisecond)}
	text := rec
	text.ID, text.RequestBody, text.ResponseBody, text.StatusCode, text.Error = uuid.NewString(), []byte("not json"), nil, 502, "upstream failed"
	ta.insert(rec, text)

	r := ta.Admin(http.MethodGet, "/logs/"+rec.ID, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	var got map[string]any
	require.NoError(t, json.Unmarshal(r.Raw, &got))
	assert.Equal(t, rec.ID, got["_id"])
	assert.Equal(t, "log", got["object"])
	assert.Equal(t, ta.OrgID, got["organisation_id"])
	assert.Equal(t, rec.StartedAt.UTC().Format(time.RFC3339Nano), got["created_at"])
	assert.Equal(t, "v1", got["log_format"], "the specification's log_format")

	req := obj(got, "request")
	assert.Equal(t, "/v1/chat/completions", req["url"])
	assert.Equal(t, "POST", req["method"])
	assert.Equal(t, map[string]any{"model": "gpt-4o", "messages": []any{map[string]any{"role": "user", "content": "hello"}},
		"api_key": "[REDACTED]"}, req["body"], "bodies as stored, redacted")
	assert.Equal(t, map[string]any{"x-gateway-trace-id": "trace-x", "x-gateway-span-id": "span-x",
		"x-gateway-parent-span-id": "span-p", "x-gateway-span-name": "llm", "x-gateway-metadata": `{"_user":"alice"}`}, req["gatewayHeaders"])
	resp := obj(got, "response")
	assert.EqualValues(t, 200, resp["status"])
	assert.EqualValues(t, 812.6, resp["responseTime"], "milliseconds, as metrics.response_time")
	assert.Equal(t, "$.targets[1]", resp["lastUsedOptionJsonPath"])
	assert.Equal(t, map[string]any{"id": "chatcmpl-9"}, resp["body"])

	m := obj(got, "metrics")
	want := map[string]any{"id": rec.ID, "organisation_id": ta.OrgID, "workspace_id": ta.WSA, "workspace_slug": "team-a",
		"api_key_id": ta.Keys[1], "config_id": ta.ConfigID, "prompt_id": "prompt-9", "is_success": true, "ai_org": "openai",
		"ai_model": "gpt-4o", "provider": "@openai-prod", "endpoint": "chatComplete", "req_units": 12.0, "res_units": 30.0,
		"total_units": 42.0, "cached_units": 4.0, "cache_write_units": 5.0, "reasoning_units": 7.0, "cost": 0.0123, "request_url": "/v1/chat/completions",
		"request_method": "POST", "response_status_code": 200.0, "response_time": 812.6, "time_to_first_token": 120.5,
		"is_proxy_call": false, "cache_status": "MISS", "cache_saved_cost": 0.0, "cache_saved_latency": 0.0, "stream_mode": 1.0, "retry_count": 1.0, "fallback_target": "$.targets[1]",
		"trace_id": "trace-x", "span_id": "span-x", "span_name": "llm", "parent_span_id": "span-p",
		"metadata": map[string]any{"_user": "alice"}, "created_at": rec.StartedAt.UTC().Format(time.RFC3339Nano),
		"ended_at": rec.EndedAt.UTC().Format(time.RFC3339Nano)}
	assert.Equal(t, want, m)

	failed := ta.Admin(http.MethodGet, "/logs/"+text.ID, nil)
	require.Equal(t, http.StatusOK, failed.Status, string(failed.Raw))
	assert.Equal(t, "not json", obj(failed.Body, "request")["body"], "a body that is not JSON comes as a string")
	assert.NotContains(t, obj(failed.Body, "response"), "body")
	assert.Equal(t, false, obj(failed.Body, "metrics")["is_success"])
	assert.Equal(t, "upstream failed", obj(failed.Body, "metrics")["error"])

	for _, id := range []string{uuid.NewString(), "not-a-log"} {
		r := ta.Admin(http.MethodGet, "/logs/"+id, nil)
		assert.Equal(t, http.StatusNotFound, r.Status, id)
		assert.Contains(t, r.ErrorMessage(), id)
	}
	exports := ta.Admin(http.MethodGet, "/logs/exports", nil)
	assert.NotContains(t, exports.ErrorMessage(), "log exports not found", "the export routes own /logs/exports")
}

func TestListLogs(t *testing.T) {
	ta := newTrafficAPI(t)
	rows := ta.lastWeek(nil)
	slices.SortFunc(rows, func(a, b analytics.LogRecord) int { return b.StartedAt.Compare(a.StartedAt) })

	r := ta.Admin(http.MethodGet, "/logs?page_size=1000", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	assert.Equal(t, "list", r.Body["object"])
	assert.EqualValues(t, len(rows), r.Body["total"])
	require.Len(t, r.Data(), len(rows))
	for i, item := range r.Data() {
		assert.Equal(t, rows[i].StartedAt.UTC().Format(time.RFC3339Nano), item["created_at"], "newest first")
		assert.NotContains(t, obj(item, "request"), "body", "list items leave the bodies to GET /logs/{logId}")
		assert.NotContains(t, obj(item, "response"), "body")
	}

	def := ta.Admin(http.MethodGet, "/logs", nil)
	assert.Len(t, def.Data(), 20)
	assert.EqualValues(t, 20, def.Body["page_size"])
	assert.EqualValues(t, 0, def.Body["current_page"])

	seen := map[string]bool{}
	for p := 0; p*7 < len(rows); p++ {
		page := ta.Admin(http.MethodGet, "/logs?page_size=7&current_page="+strconv.Itoa(p), nil)
		require.Equal(t, http.StatusOK, page.Status)
		for i, item := range page.Data() {
			id := item["_id"].(string)
			assert.False(t, seen[id], "pages do not overlap")
			seen[id] = true
			assert.Equal(t, rows[p*7+i].StartedAt.UTC().Format(time.RFC3339Nano), item["created_at"])
		}
	}
	assert.Len(t, seen, len(rows))

	for _, tc := range []struct {
		query, param string
		status       int
	}{
		{"page_size=1000", "", 200},
		{"page_size=1001", "page_size", 400},
		{"current_page=-1", "current_page", 400},
		{"page_size=ten", "page_size", 400},
	} {
		r := ta.Admin(http.MethodGet, "/logs?"+tc.query, nil)
		require.Equal(t, tc.status, r.Status, string(r.Raw))
		if tc.status >= 400 {
			assert.Equal(t, tc.param, r.ErrorParam())
		}
	}
}
