package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitPolicyLifecycle(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	body := map[string]any{"name": "per key", "workspace_id": ws, "type": "requests", "unit": "rpm", "value": 20,
		"conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}}

	created := api.Admin(http.MethodPost, "/policies/rate-limits", body)
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	id := created.Str("id")
	require.NotEmpty(t, id)
	assert.NotEmpty(t, created.Header.Get(PositionHeader), "a write says its position")

	got := api.Admin(http.MethodGet, "/policies/rate-limits/"+id, nil)
	require.Equal(t, http.StatusOK, got.Status, "read your write at once")
	assert.Equal(t, "policy_rate_limits", got.Str("object"))
	assert.Equal(t, "active", got.Str("status"))
	assert.Equal(t, "rpm", got.Str("unit"))
	assert.EqualValues(t, 20, got.Body["value"])
	assert.Equal(t, ws, got.Str("workspace_id"))
	assert.Equal(t, api.OrgID, got.Str("organisation_id"))

	upd := api.Admin(http.MethodPut, "/policies/rate-limits/"+id, map[string]any{"unit": "rpw", "value": 500})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "rpw", upd.Str("unit"))

	list := api.Admin(http.MethodGet, "/policies/rate-limits", nil)
	require.Equal(t, http.StatusOK, list.Status)
	assert.Equal(t, "list", list.Str("object"))
	require.Len(t, list.Data(), 1)

	del := api.Admin(http.MethodDelete, "/policies/rate-limits/"+id, nil)
	require.Equal(t, http.StatusOK, del.Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/policies/rate-limits/"+id, nil).Status,
		"status defaults to active")
	archived := api.Admin(http.MethodGet, "/policies/rate-limits/"+id+"?status=archived", nil)
	require.Equal(t, http.StatusOK, archived.Status)
	assert.Equal(t, "archived", archived.Str("status"))
	assert.Empty(t, api.Admin(http.MethodGet, "/policies/rate-limits", nil).Data())
	assert.Len(t, api.Admin(http.MethodGet, "/policies/rate-limits?status=archived", nil).Data(), 1)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/policies/rate-limits/"+id, nil).Status)
}

func TestRateLimitPolicyErrors(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	valid := func() map[string]any {
		return map[string]any{"workspace_id": ws, "type": "requests", "unit": "rpm", "value": 10,
			"conditions": []map[string]string{{"key": "metadata.team", "value": "x"}}, "group_by": []map[string]string{{"key": "metadata.user"}}}
	}
	with := func(k string, v any) map[string]any { b := valid(); b[k] = v; return b }
	cases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"unit rpw is accepted", with("unit", "rpw"), 200, ""},
		{"endpoint_type condition", with("conditions", []map[string]string{{"key": "endpoint_type", "value": "chatComplete"}}), 200, ""},
		{"bad unit", with("unit", "rps"), 400, "unit"},
		{"bad type", with("type", "cost"), 400, "type"},
		{"value zero", with("value", 0), 400, "value"},
		{"value fractional", with("value", 1.5), 400, "value"},
		{"value missing", func() map[string]any { b := valid(); delete(b, "value"); return b }(), 400, "value"},
		{"value not a number", with("value", "ten"), 400, "value"},
		{"unknown condition key", with("conditions", []map[string]string{{"key": "user", "value": "x"}}), 400, "conditions[0].key"},
		{"empty conditions", with("conditions", []map[string]string{}), 400, "conditions"},
		{"endpoint_type cannot group", with("group_by", []map[string]string{{"key": "endpoint_type"}}), 400, "group_by[0].key"},
		{"name at 255", with("name", strings.Repeat("n", 255)), 200, ""},
		{"name at 256", with("name", strings.Repeat("n", 256)), 400, "name"},
		{"unknown field", with("colour", "red"), 400, "colour"},
		{"workspace missing", with("workspace_id", "7b0d0e9e-0000-4000-8000-000000000000"), 404, "workspace_id"},
		{"not JSON", "{", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/policies/rate-limits", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}

	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/policies/rate-limits", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/policies/rate-limits", "cw-wrong", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/policies/rate-limits/not-a-uuid", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/policies/rate-limits/7b0d0e9e-0000-4000-8000-000000000000", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/policies/rate-limits?status=deleted", nil).Status)

	// A key without the policy scopes is refused with 403.
	k := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "logs only", "scopes": []string{"logs.view"}})
	require.Equal(t, http.StatusOK, k.Status, string(k.Raw))
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/policies/rate-limits", k.Str("key"), valid()).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/policies/rate-limits", k.Str("key"), nil).Status)
}
