package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

func orgTestSecurity(r response) map[string]any {
	s, _ := r.Body["security_settings"].(map[string]any)
	return s
}

func TestOrganisationSettings(t *testing.T) {
	api := newTestAPI(t)
	got := api.Admin(http.MethodGet, "/organisation/settings", nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	sec := orgTestSecurity(got)
	require.Len(t, sec, 11, "every setting of 2.8")
	assert.Equal(t, true, sec["membersViewAnalytics"])
	assert.Equal(t, false, sec["membersWritePrompts"], "the one default that is false")
	assert.Equal(t, map[string]any{"max_session_ttl": nil}, got.Body["session_settings"])

	upd := api.Admin(http.MethodPut, "/organisation/settings", map[string]any{
		"security_settings": map[string]any{"membersViewAnalytics": false, "membersWritePrompts": true},
		"session_settings":  map[string]any{"max_session_ttl": 900}})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	sec = orgTestSecurity(upd)
	assert.Equal(t, false, sec["membersViewAnalytics"])
	assert.Equal(t, true, sec["membersWritePrompts"])
	assert.Equal(t, true, sec["managersViewAnalytics"], "settings not sent stay as they were")
	assert.EqualValues(t, 900, upd.Body["session_settings"].(map[string]any)["max_session_ttl"])

	again := api.Admin(http.MethodPut, "/organisations/"+api.OrgID+"/settings", map[string]any{
		"security_settings": map[string]any{"managersWriteMcpServers": false}})
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	sec = orgTestSecurity(api.Admin(http.MethodGet, "/organisations/"+api.OrgID+"/settings", nil))
	assert.Equal(t, false, sec["managersWriteMcpServers"])
	assert.Equal(t, false, sec["membersViewAnalytics"], "the earlier change stays")
	assert.EqualValues(t, 900, api.Admin(http.MethodGet, "/organisation/settings", nil).Body["session_settings"].(map[string]any)["max_session_ttl"])

	cases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"max_session_ttl at 899", map[string]any{"session_settings": map[string]any{"max_session_ttl": 899}}, 400, "session_settings.max_session_ttl"},
		{"max_session_ttl at 900", map[string]any{"session_settings": map[string]any{"max_session_ttl": 900}}, 200, ""},
		{"max_session_ttl fractional", map[string]any{"session_settings": map[string]any{"max_session_ttl": 900.5}}, 400, "session_settings.max_session_ttl"},
		{"unknown setting", map[string]any{"security_settings": map[string]any{"everyoneIsAdmin": true}}, 400, "security_settings.everyoneIsAdmin"},
		{"null setting", map[string]any{"security_settings": map[string]any{"membersViewPrompts": nil}}, 400, "security_settings.membersViewPrompts"},
		{"setting not a boolean", map[string]any{"security_settings": map[string]any{"membersViewPrompts": "yes"}}, 400, "security_settings.membersViewPrompts"},
		{"nothing", map[string]any{}, 400, ""},
		{"unknown field", map[string]any{"name": "x"}, 400, "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/organisation/settings", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			}
		})
	}
	assert.Contains(t, api.Admin(http.MethodPut, "/organisation/settings",
		map[string]any{"session_settings": map[string]any{"max_session_ttl": 899}}).ErrorMessage(), "900")

	other := uuid.NewString()
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/organisations/"+other+"/settings", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, "/organisations/"+other+"/settings",
		map[string]any{"security_settings": map[string]any{"membersViewPrompts": true}}).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/organisation/settings", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPut, "/organisation/settings", "cw-wrong", map[string]any{}).Status)

	readOnly := workspacesTestOrgKey(t, api, "organisations.read")
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/organisation/settings", readOnly, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/organisation/settings", readOnly,
		map[string]any{"security_settings": map[string]any{"membersViewPrompts": true}}).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/organisation/settings", workspacesTestOrgKey(t, api, "logs.view"), nil).Status)

	ws := api.seedWorkspace("team-a", nil)
	user := api.seedUser("u@example.com", domain.RoleAdmin)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, ws),
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: user, Role: domain.RoleAdmin, At: api.Now()})
	wsKey := workspacesTestKey(t, api, ws, user, "workspaces.read")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/organisation/settings", wsKey, nil).Status,
		"organisation settings are not for workspace keys, even an organisation admin's")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/organisation/settings", wsKey,
		map[string]any{"security_settings": map[string]any{"membersViewPrompts": true}}).Status)
}

func TestWorkspaceSecuritySettings(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)

	got := api.Admin(http.MethodGet, "/workspaces/"+ws+"/settings", nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Empty(t, orgTestSecurity(got), "no overrides yet")
	effective := got.Body["effective"].(map[string]any)
	assert.Len(t, effective, 11)
	assert.Equal(t, true, effective["membersViewAnalytics"])

	upd := api.Admin(http.MethodPut, "/workspaces/"+ws+"/settings", map[string]any{
		"security_settings": map[string]any{"membersViewAnalytics": false, "managersWritePrompts": false}})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, map[string]any{"membersViewAnalytics": false, "managersWritePrompts": false}, orgTestSecurity(upd))
	assert.Equal(t, false, upd.Body["effective"].(map[string]any)["membersViewAnalytics"])

	// The organisation changes a setting the workspace does not override: the workspace
	// inherits it; the one it overrides stays.
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPut, "/organisation/settings", map[string]any{
		"security_settings": map[string]any{"managersViewAnalytics": false, "membersViewAnalytics": true}}).Status)
	eff, err := api.Read.EffectiveSecurity(context.Background(), api.OrgID, ws)
	require.NoError(t, err)
	assert.False(t, eff.ManagersViewAnalytics, "inherited")
	assert.False(t, eff.MembersViewAnalytics, "overridden")
	plain, err := api.Read.EffectiveSecurity(context.Background(), api.OrgID, api.seedWorkspace("plain", nil))
	require.NoError(t, err)
	assert.True(t, plain.MembersViewAnalytics)

	inherit := api.Admin(http.MethodPut, "/workspaces/"+ws+"/settings", map[string]any{
		"security_settings": map[string]any{"membersViewAnalytics": nil}})
	require.Equal(t, http.StatusOK, inherit.Status, string(inherit.Raw))
	assert.Equal(t, map[string]any{"managersWritePrompts": false}, orgTestSecurity(inherit), "null takes the override away")
	assert.Equal(t, true, inherit.Body["effective"].(map[string]any)["membersViewAnalytics"])

	archived := api.seedWorkspace("old", nil)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, archived), domain.WorkspaceArchived{WorkspaceID: archived, At: api.Now()})
	body := map[string]any{"security_settings": map[string]any{"membersViewPrompts": false}}
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		param  string
	}{
		{"unknown setting", "/workspaces/" + ws + "/settings", map[string]any{"security_settings": map[string]any{"x": true}}, 400, "security_settings.x"},
		{"not a boolean", "/workspaces/" + ws + "/settings", map[string]any{"security_settings": map[string]any{"membersViewPrompts": 1}}, 400, "security_settings.membersViewPrompts"},
		{"nothing", "/workspaces/" + ws + "/settings", map[string]any{}, 400, "security_settings"},
		{"missing workspace", "/workspaces/" + uuid.NewString() + "/settings", body, 404, ""},
		{"archived workspace", "/workspaces/" + archived + "/settings", body, 409, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, tc.path, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
		})
	}

	user := api.seedUser("m@example.com", domain.RoleMember)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, ws),
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: user, Role: domain.RoleManager, At: api.Now()})
	wsKey := workspacesTestKey(t, api, ws, user, "workspaces.read", "workspaces.update")
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/workspaces/"+ws+"/settings", wsKey, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/workspaces/"+ws+"/settings", wsKey, body).Status,
		"overrides need an organisation admin")
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/workspaces/"+ws+"/settings", "", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/workspaces/"+uuid.NewString()+"/settings", nil).Status)
}
