package httpapi

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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

// The audit log answers one spelling of each resource type, the one notifications answer, and
// every enumerated filter takes the spellings the API answers (and the old ones) and refuses an
// unknown value with a 400 that names the parameter and lists the valid values.
func TestAuditLogFilterSpellings(t *testing.T) {
	api := newTestAPI(t)
	key := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "rotating", "scopes": []string{"logs.view"}})
	require.Equal(t, http.StatusOK, key.Status, string(key.Raw))
	id := key.Str("id")
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/api-keys/"+id+"/rotate", map[string]any{}).Status)

	// The rotation's notification and the key's audit records spell the type alike.
	var notes response
	require.Eventually(t, func() bool { // the rotation's notification follows the rotation
		notes = api.Admin(http.MethodGet, "/notifications?kind=API_KEY.ROTATED", nil)
		return notes.Status == http.StatusOK && len(notes.Data()) == 1
	}, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, "api_key", notes.Data()[0]["resource_type"])
	ids := func(q string) []string {
		t.Helper()
		r := api.Admin(http.MethodGet, "/audit-logs?page_size=1000&"+q, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", q, r.Raw)
		var out []string
		for _, rec := range r.Data() {
			out = append(out, rec["id"].(string))
		}
		return out
	}
	byType := api.Admin(http.MethodGet, "/audit-logs?resource_type=api_key&resource_id="+id, nil)
	require.Len(t, byType.Data(), 2, "created and rotated")
	for _, rec := range byType.Data() {
		assert.Equal(t, "api_key", rec["resource_type"])
	}
	want := ids("resource_type=api_key")
	for _, spelling := range []string{"apikey", "API_KEY", "api-keys", "api_keys"} {
		assert.Equal(t, want, ids("resource_type="+spelling), spelling)
	}
	byID := api.Admin(http.MethodGet, "/audit-logs/"+want[0], nil)
	assert.Equal(t, "api_key", byID.Str("resource_type"), "one record answers the same spelling")
	assert.Equal(t, ids("user_type=api_key"), ids("user_type=apikey"))
	assert.NotEmpty(t, ids("user_type=api_key"))
	assert.Equal(t, ids("action=ApiKeyRotated"), ids("action=apikeyrotated"))
	assert.Len(t, ids("action=ApiKeyRotated"), 1)
	assert.Equal(t, ids("method=POST"), ids("method=post"))
	assert.NotEmpty(t, ids("method=POST"))
	assert.NotEmpty(t, ids("resource_type=organisation"), "the bootstrap")

	for _, bad := range []struct{ query, param, lists string }{
		{"resource_type=apikeys2", "resource_type", "api_key, audit_log, bootstrap"},
		{"user_type=robot", "user_type", "api_key, system, user"},
		{"action=KeyMade", "action", "ApiKeyCreated"},
		{"method=FETCH", "method", "GET, POST, PUT, PATCH, DELETE"},
		{"order=sideways", "order", "desc"},
	} {
		r := api.Admin(http.MethodGet, "/audit-logs?"+bad.query, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, bad.query)
		assert.Equal(t, bad.param, r.ErrorParam(), bad.query)
		assert.Contains(t, r.ErrorMessage(), bad.lists, bad.query)
	}
	r := api.Admin(http.MethodGet, "/notifications?kind=api_key.exploded", nil)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, "kind", r.ErrorParam())
	assert.Contains(t, r.ErrorMessage(), "api_key.rotated")
}

// The audit log is newest first by default and oldest first with order=asc; its pages, read
// one after another, are the whole log in that order, without overlap or gap.
func TestAuditLogOrderAndPages(t *testing.T) {
	api := newTestAPI(t)
	for i := range 7 {
		require.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Team " + strconv.Itoa(i)}).Status)
	}
	positions := func(q string) []float64 {
		t.Helper()
		r := api.Admin(http.MethodGet, "/audit-logs?"+q, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		var out []float64
		for _, rec := range r.Data() {
			out = append(out, rec["position"].(float64))
		}
		return out
	}
	all := positions("page_size=1000&resource_type=workspace")
	require.Len(t, all, 7)
	assert.True(t, slices.IsSortedFunc(all, func(a, b float64) int { return cmp.Compare(b, a) }), "newest first by default: %v", all)
	assert.Equal(t, all, positions("page_size=1000&resource_type=workspace&order=DESC"))
	asc := positions("page_size=1000&resource_type=workspace&order=asc")
	assert.True(t, slices.IsSorted(asc), "oldest first: %v", asc)
	assert.ElementsMatch(t, all, asc)

	for _, order := range []string{"desc", "asc"} {
		whole := positions("page_size=1000&order=" + order)
		var paged []float64
		for p := 0; ; p++ {
			got := positions("page_size=3&current_page=" + strconv.Itoa(p) + "&order=" + order)
			if len(got) == 0 {
				break
			}
			paged = append(paged, got...)
		}
		assert.Equal(t, whole, paged, "the pages of order=%s are the whole log", order)
	}
	first := api.Admin(http.MethodGet, "/audit-logs?page_size=3", nil)
	assert.EqualValues(t, len(positions("page_size=1000")), first.Body["total"], "total counts every page")
}

// The audit log as of an instant holds the records of the events recorded by then.
func TestAuditLogAsOf(t *testing.T) {
	api := newTestAPI(t)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Before"}).Status)
	then := api.Admin(http.MethodGet, "/audit-logs?page_size=1000", nil)
	mark := asOfMark()
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "After"}).Status)
	past := api.Admin(http.MethodGet, "/audit-logs?page_size=1000&"+asOfQuery(mark), nil)
	require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
	assert.Equal(t, then.Body, past.Body)
	now := api.Admin(http.MethodGet, "/audit-logs?page_size=1000", nil)
	newest := now.Data()[0]["id"].(string)
	assert.Greater(t, len(now.Data()), len(past.Data()))
	gone := api.Admin(http.MethodGet, "/audit-logs/"+newest+"?"+asOfQuery(mark), nil)
	assert.Equal(t, http.StatusNotFound, gone.Status)
	assert.Contains(t, gone.ErrorMessage(), "did not exist at")
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/audit-logs/"+past.Data()[0]["id"].(string)+"?"+asOfQuery(mark), nil).Status)
}
