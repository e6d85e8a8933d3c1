package httpapi

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuditLogFiltersAndRefusals(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	created := api.Admin(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": ws, "type": "requests",
		"unit": "rpm", "value": 5, "conditions": []map[string]string{{"key": "api_key", "value": "k"}}, "group_by": []map[string]string{{"key": "api_key"}}},
		"x-gateway-trace-id", "trace-create-1")
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	policyID := created.Str("id")
	api.Advance(time.Hour)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, "/policies/rate-limits/"+policyID, map[string]any{"value": 6}).Status)

	// Refusals: an unknown key (401) and a key without the scope (403).
	require.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/policies/rate-limits", "cw-not-a-key", nil).Status)
	weak := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "weak", "scopes": []string{"logs.view"}})
	require.Equal(t, http.StatusOK, weak.Status)
	require.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/policies/rate-limits/"+policyID, weak.Str("key"), nil).Status)

	list := func(q url.Values) []map[string]any {
		t.Helper()
		var r response
		require.Eventually(t, func() bool { // refusals are recorded without holding up their answer
			r = api.Admin(http.MethodGet, "/audit-logs?"+q.Encode(), nil)
			return r.Status == http.StatusOK && len(r.Data()) > 0
		}, 5*time.Second, 20*time.Millisecond, "%v", q)
		return r.Data()
	}
	one := func(q url.Values) map[string]any {
		t.Helper()
		got := list(q)
		require.Len(t, got, 1, "%v", q)
		return got[0]
	}

	rec := one(url.Values{"request_id": {"trace-create-1"}})
	assert.Equal(t, "RateLimitPolicyCreated", rec["action"])
	assert.Equal(t, "rate_limit_policy", rec["resource_type"])
	assert.Equal(t, policyID, rec["resource_id"])
	assert.Equal(t, "api_key", rec["user_type"])
	assert.Equal(t, "POST", rec["method"])
	assert.Equal(t, "/v1/policies/rate-limits", rec["uri"])
	assert.Equal(t, "127.0.0.1", rec["client_ip"])
	assert.Nil(t, rec["before"], "nothing before a creation")
	assert.Equal(t, "active", rec["after"].(map[string]any)["status"])

	upd := one(url.Values{"action": {"RateLimitPolicyUpdated"}})
	assert.EqualValues(t, 5, upd["before"].(map[string]any)["value"], "the state before the change")
	assert.EqualValues(t, 6, upd["after"].(map[string]any)["value"], "and after it")
	byID := api.Admin(http.MethodGet, "/audit-logs/"+upd["id"].(string), nil)
	require.Equal(t, http.StatusOK, byID.Status)
	assert.Equal(t, upd["id"], byID.Str("id"))

	denied401 := one(url.Values{"response_status_code": {"401"}})
	assert.Equal(t, "AccessDenied", denied401["action"])
	assert.Equal(t, "GET", denied401["method"])
	assert.NotContains(t, string(api.Admin(http.MethodGet, "/audit-logs?page_size=1000", nil).Raw), "cw-not-a-key", "a presented key is never recorded")
	denied403 := one(url.Values{"response_status_code": {"403"}})
	assert.Equal(t, "DELETE", denied403["method"])
	assert.NotEmpty(t, denied403["user_id"], "a known key's refusal names it")

	assert.NotEmpty(t, list(url.Values{"method": {"PUT"}}))
	assert.NotEmpty(t, list(url.Values{"workspace_id": {""}, "resource_type": {"apikey"}}))
	assert.NotEmpty(t, list(url.Values{"client_ip": {"127.0.0.1"}}))
	assert.NotEmpty(t, list(url.Values{"user_type": {"system"}}), "the bootstrap's events")
	after := api.Now().Add(-30 * time.Minute).Format(time.RFC3339)
	for _, r := range list(url.Values{"start_time": {after}}) {
		ts, err := time.Parse(time.RFC3339Nano, r["timestamp"].(string))
		require.NoError(t, err)
		assert.False(t, ts.Before(api.Now().Add(-30*time.Minute)), "start_time filters by the recorded time")
	}

	for _, bad := range []struct{ query, param string }{
		{"start_time=yesterday", "start_time"},
		{"end_time=2026-13-01T00:00:00Z", "end_time"},
		{"start_time=2026-11-20T00:00:00Z&end_time=2026-11-19T00:00:00Z", "end_time"},
		{"response_status_code=99", "response_status_code"},
		{"response_status_code=600", "response_status_code"},
		{"user_type=robot", "user_type"},
		{"page_size=1001", "page_size"},
		{"current_page=-1", "current_page"},
	} {
		r := api.Admin(http.MethodGet, "/audit-logs?"+bad.query, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, bad.query)
		assert.Equal(t, bad.param, r.ErrorParam(), bad.query)
	}
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/audit-logs", weak.Str("key"), nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/audit-logs/00000000-0000-4000-8000-000000000000", nil).Status)
}
