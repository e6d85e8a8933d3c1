package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// workspacesTestKey creates a workspace user key for a member of ws with the given scopes.
func workspacesTestKey(t *testing.T, api *testAPI, ws, user string, scopes ...string) string {
	t.Helper()
	r := api.Admin(http.MethodPost, "/api-keys/workspace/user", map[string]any{"name": "member key",
		"workspace_id": ws, "user_id": user, "scopes": scopes})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("key")
}

// workspacesTestOrgKey creates an organisation admin key with only the given scopes.
func workspacesTestOrgKey(t *testing.T, api *testAPI, scopes ...string) string {
	t.Helper()
	r := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "narrow", "scopes": scopes})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("key")
}

// workspacesTestSystem runs a command as the system and waits until the read model has it.
func workspacesTestSystem(t *testing.T, api *testAPI, run func(ctx context.Context) (commands.Result, error)) error {
	t.Helper()
	ctx := commands.WithRequest(context.Background(), commands.Request{Actor: domain.System(api.OrgID), RequestID: "test"})
	res, err := run(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, api.Read.WaitFor(wctx, res.Position))
	return nil
}

func TestWorkspaceLifecycle(t *testing.T) {
	api := newTestAPI(t)
	created := api.Admin(http.MethodPost, "/workspaces", map[string]any{
		"name": "Team A", "description": "the A team", "defaults": map[string]any{"metadata": map[string]string{"env": "prod"}},
		"usage_limits":        []map[string]any{{"credit_limit": 100, "type": "cost", "alert_threshold": 80}},
		"rate_limits":         []map[string]any{{"type": "requests", "unit": "rpm", "value": 60}},
		"periodic_reset_days": 30,
	})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	id := created.Str("id")
	require.True(t, isUUID(id))
	assert.NotEmpty(t, created.Header.Get(PositionHeader))
	assert.Equal(t, "workspace", created.Str("object"))
	assert.Equal(t, "team-a", created.Str("slug"), "the slug is derived from the name")
	assert.Equal(t, "active", created.Str("status"))
	assert.Equal(t, "active", created.Str("budget_status"))
	assert.EqualValues(t, 30, created.Body["periodic_reset_days"])
	assert.Equal(t, api.Now().AddDate(0, 0, 30).Format(time.RFC3339), created.Str("next_usage_reset_at"))
	assert.Equal(t, map[string]any{"metadata": map[string]any{"env": "prod"}}, created.Body["defaults"])

	got := api.Admin(http.MethodGet, "/workspaces/"+id, nil)
	require.Equal(t, http.StatusOK, got.Status, "read your write at once")
	assert.Equal(t, "Team A", got.Str("name"))
	assert.Equal(t, "the A team", got.Str("description"))
	assert.Equal(t, api.OrgID, got.Str("organisation_id"))
	assert.Equal(t, []any{}, got.Body["users"])
	require.Len(t, got.Body["usage_limits"], 1)
	require.Len(t, got.Body["rate_limits"], 1)
	assert.Equal(t, id, api.Admin(http.MethodGet, "/workspaces/team-a", nil).Str("id"), "by slug")
	assert.Equal(t, id, api.Admin(http.MethodGet, "/admin/workspaces/"+id, nil).Str("id"), "the reference's path")

	upd := api.Admin(http.MethodPut, "/workspaces/"+id, map[string]any{"name": "Team Alpha", "periodic_reset": "weekly"})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "Team Alpha", upd.Str("name"))
	assert.Equal(t, "team-a", upd.Str("slug"), "renaming keeps the slug")
	assert.Equal(t, "weekly", upd.Str("periodic_reset"))
	assert.Nil(t, upd.Body["periodic_reset_days"], "the reset kinds exclude each other")
	assert.Equal(t, "the A team", upd.Str("description"), "absent fields stay")
	cleared := api.Admin(http.MethodPut, "/workspaces/"+id, map[string]any{"periodic_reset": nil, "rate_limits": []any{}})
	require.Equal(t, http.StatusOK, cleared.Status, string(cleared.Raw))
	assert.Nil(t, cleared.Body["periodic_reset"])
	assert.Nil(t, cleared.Body["next_usage_reset_at"])
	assert.Equal(t, []any{}, cleared.Body["rate_limits"])
	assert.Len(t, cleared.Body["usage_limits"], 1)

	list := api.Admin(http.MethodGet, "/workspaces", nil)
	require.Equal(t, http.StatusOK, list.Status)
	assert.Equal(t, "list", list.Str("object"))
	require.Len(t, list.Data(), 1)
	assert.Len(t, api.Admin(http.MethodGet, "/workspaces?name=Alpha", nil).Data(), 1)
	assert.Empty(t, api.Admin(http.MethodGet, "/workspaces?name=alpha", nil).Data(), "name is case-sensitive")
	assert.Len(t, api.Admin(http.MethodGet, "/workspaces?exact_name=Team%20Alpha", nil).Data(), 1)
	assert.Empty(t, api.Admin(http.MethodGet, "/workspaces?exact_name=Team", nil).Data())

	del := api.Admin(http.MethodDelete, "/workspaces/"+id, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, "archived", del.Str("status"))
	assert.Empty(t, api.Admin(http.MethodGet, "/workspaces", nil).Data(), "status defaults to active")
	assert.Len(t, api.Admin(http.MethodGet, "/workspaces?status=archived", nil).Data(), 1)
	assert.Len(t, api.Admin(http.MethodGet, "/workspaces?status=active,archived", nil).Data(), 1)
	assert.Equal(t, "archived", api.Admin(http.MethodGet, "/workspaces/"+id, nil).Str("status"))
	assert.Equal(t, http.StatusConflict, api.Admin(http.MethodPut, "/workspaces/"+id, map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusConflict, api.Admin(http.MethodDelete, "/workspaces/"+id, nil).Status)

	restored := api.Admin(http.MethodPost, "/workspaces/"+id+"/restore", nil)
	require.Equal(t, http.StatusOK, restored.Status, string(restored.Raw))
	assert.Equal(t, "active", restored.Str("status"))
	assert.Equal(t, http.StatusConflict, api.Admin(http.MethodPost, "/workspaces/"+id+"/restore", nil).Status)
	assert.Len(t, api.Admin(http.MethodGet, "/workspaces", nil).Data(), 1)
}

func TestWorkspaceSlugs(t *testing.T) {
	api := newTestAPI(t)
	first := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Data Science"})
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	assert.Equal(t, "data-science", first.Str("slug"))

	second := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Data Science"})
	require.Equal(t, http.StatusOK, second.Status, "a derived slug that is taken gets a suffix: "+string(second.Raw))
	assert.Equal(t, "data-science-"+second.Str("id")[:8], second.Str("slug"))

	dup := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Other", "slug": "data-science"})
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	assert.Equal(t, "slug", dup.ErrorParam())

	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, "/workspaces/"+first.Str("id"), nil).Status)
	archived := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Other", "slug": "data-science"})
	assert.Equal(t, http.StatusConflict, archived.Status, "an archived workspace keeps its slug")
	assert.Equal(t, "slug", archived.ErrorParam())

	// A refused create holds no slug.
	bad := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Fresh", "slug": "fresh", "periodic_reset_days": 0})
	require.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Fresh", "slug": "fresh"}).Status)

	// The same idempotency key creates one workspace, and its retry is not a slug conflict.
	body := map[string]any{"name": "Once", "slug": "once"}
	a := api.Admin(http.MethodPost, "/workspaces", body, "Idempotency-Key", "ws-once")
	b := api.Admin(http.MethodPost, "/workspaces", body, "Idempotency-Key", "ws-once")
	require.Equal(t, http.StatusOK, a.Status, string(a.Raw))
	require.Equal(t, http.StatusOK, b.Status, string(b.Raw))
	assert.Equal(t, a.Str("id"), b.Str("id"))
}

func TestWorkspaceCreateValidation(t *testing.T) {
	api := newTestAPI(t)
	n := 0
	valid := func() map[string]any {
		n++
		return map[string]any{"name": "ws", "slug": "ws-" + strings.Repeat("x", n%50) + uuid.NewString()[:8]}
	}
	with := func(k string, v any) map[string]any { b := valid(); b[k] = v; return b }
	cases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"name at 255", with("name", strings.Repeat("n", 255)), 200, ""},
		{"name at 256", with("name", strings.Repeat("n", 256)), 400, "name"},
		{"name missing", with("name", ""), 400, "name"},
		{"slug at 255", with("slug", strings.Repeat("s", 255)), 200, ""},
		{"slug at 256", with("slug", strings.Repeat("t", 256)), 400, "slug"},
		{"slug with spaces", with("slug", "my slug"), 400, "slug"},
		{"periodic_reset_days 0", with("periodic_reset_days", 0), 400, "periodic_reset_days"},
		{"periodic_reset_days 1", with("periodic_reset_days", 1), 200, ""},
		{"periodic_reset_days 365", with("periodic_reset_days", 365), 200, ""},
		{"periodic_reset_days 366", with("periodic_reset_days", 366), 400, "periodic_reset_days"},
		{"periodic_reset_days not a number", with("periodic_reset_days", "7"), 400, "periodic_reset_days"},
		{"periodic_reset monthly", with("periodic_reset", "monthly"), 200, ""},
		{"periodic_reset daily", with("periodic_reset", "daily"), 400, "periodic_reset"},
		{"both reset fields", func() map[string]any { b := with("periodic_reset", "weekly"); b["periodic_reset_days"] = 7; return b }(), 400, "periodic_reset_days"},
		{"next reset in the past", with("next_usage_reset_at", "2020-01-01T00:00:00Z"), 400, "next_usage_reset_at"},
		{"next reset in the future", with("next_usage_reset_at", "2030-01-01T00:00:00Z"), 200, ""},
		{"unknown default", with("defaults", map[string]any{"colour": "red"}), 400, "defaults.colour"},
		{"metadata not strings", with("defaults", map[string]any{"metadata": map[string]any{"n": 1}}), 400, "defaults.metadata.n"},
		{"usage limit without credit", with("usage_limits", []map[string]any{{"type": "cost"}}), 400, "usage_limits[0].credit_limit"},
		{"usage limit unknown field", with("usage_limits", []map[string]any{{"type": "cost", "credit_limit": 1, "x": 1}}), 400, "x"},
		{"usage limit days 366", with("usage_limits", []map[string]any{{"type": "cost", "credit_limit": 5, "periodic_reset_days": 366}}),
			400, "usage_limits[0].periodic_reset_days"},
		{"rate limit unit", with("rate_limits", []map[string]any{{"type": "requests", "unit": "rps", "value": 1}}), 400, "rate_limits[0].unit"},
		{"users are added through /users", with("users", []string{"u"}), 400, "users"},
		{"not JSON", "{", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/workspaces", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
	assert.Contains(t, api.Admin(http.MethodPost, "/workspaces", with("name", strings.Repeat("n", 256))).ErrorMessage(), "255")
	assert.Contains(t, api.Admin(http.MethodPost, "/workspaces", with("periodic_reset_days", 366)).ErrorMessage(), "1 to 365")
}

func TestWorkspaceUpdateValidation(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	cases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"name at 255", map[string]any{"name": strings.Repeat("n", 255)}, 200, ""},
		{"name at 256", map[string]any{"name": strings.Repeat("n", 256)}, 400, "name"},
		{"periodic_reset_days 0", map[string]any{"periodic_reset_days": 0}, 400, "periodic_reset_days"},
		{"periodic_reset_days 1", map[string]any{"periodic_reset_days": 1}, 200, ""},
		{"periodic_reset_days 365", map[string]any{"periodic_reset_days": 365}, 200, ""},
		{"periodic_reset_days 366", map[string]any{"periodic_reset_days": 366}, 400, "periodic_reset_days"},
		{"both reset fields", map[string]any{"periodic_reset": "weekly", "periodic_reset_days": 3}, 400, "periodic_reset_days"},
		{"slug cannot change", map[string]any{"slug": "other"}, 400, "slug"},
		{"nothing", map[string]any{}, 400, ""},
		{"usage limit", map[string]any{"usage_limits": []map[string]any{{"type": "tokens", "credit_limit": 0}}}, 400, "usage_limits[0].credit_limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/workspaces/"+ws, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			}
		})
	}
	missing := uuid.NewString()
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/workspaces/"+missing, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/workspaces/no-such-slug", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, "/workspaces/"+missing, map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/workspaces/"+missing, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPost, "/workspaces/"+missing+"/restore", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/workspaces?status=deleted", nil).Status)
}

func TestWorkspaceAuthorisation(t *testing.T) {
	api := newTestAPI(t)
	mine := api.seedWorkspace("mine", nil)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, mine),
		domain.WorkspaceMemberAdded{WorkspaceID: mine, UserID: manager, Role: domain.RoleManager, At: api.Now()})
	other := api.seedWorkspace("other", nil)
	wsKey := workspacesTestKey(t, api, mine, manager, "workspaces.read", "workspaces.list", "workspaces.update")

	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/workspaces", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPost, "/workspaces", "cw-wrong", map[string]any{"name": "x"}).Status)

	create := api.Do(http.MethodPost, "/workspaces", wsKey, map[string]any{"name": "sneaky"})
	assert.Equal(t, http.StatusForbidden, create.Status, "a workspace key cannot create workspaces: "+string(create.Raw))
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/workspaces/"+mine, wsKey, map[string]any{"name": "x"}).Status,
		"nor manage its own")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/workspaces/"+mine, wsKey, nil).Status)

	own := api.Do(http.MethodGet, "/workspaces/"+mine, wsKey, nil)
	require.Equal(t, http.StatusOK, own.Status, "a workspace key reads its own workspace: "+string(own.Raw))
	assert.Len(t, own.Body["users"], 1)
	assert.Equal(t, http.StatusNotFound, api.Do(http.MethodGet, "/workspaces/"+other, wsKey, nil).Status)
	listed := api.Do(http.MethodGet, "/workspaces", wsKey, nil)
	require.Equal(t, http.StatusOK, listed.Status)
	require.Len(t, listed.Data(), 1, "a workspace key lists only its workspace")
	assert.Equal(t, mine, listed.Data()[0]["id"])
	archived := api.Do(http.MethodGet, "/workspaces?status=archived", wsKey, nil)
	assert.Equal(t, http.StatusForbidden, archived.Status, "only owners and admins list archived workspaces")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/workspaces?status=active,archived", wsKey, nil).Status)

	narrow := workspacesTestOrgKey(t, api, "workspaces.read")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/workspaces", narrow, map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/workspaces", narrow, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/workspaces/"+other, narrow, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/workspaces/"+other+"/restore", narrow, nil).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/workspaces/"+other, narrow, nil).Status)
}

func TestWorkspaceMembers(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	ann := api.seedUser("ann@example.com", domain.RoleMember)
	bob := api.seedUser("bob@example.com", domain.RoleAdmin)

	add := api.Admin(http.MethodPost, "/workspaces/"+ws+"/users", map[string]any{"users": []map[string]string{
		{"id": ann, "role": "MANAGER"}, {"id": bob, "role": "member"}}})
	require.Equal(t, http.StatusOK, add.Status, string(add.Raw))
	require.Len(t, add.Data(), 2)

	list := api.Admin(http.MethodGet, "/workspaces/"+ws+"/users", nil)
	require.Equal(t, http.StatusOK, list.Status)
	require.Len(t, list.Data(), 2)
	first := list.Data()[0]
	assert.Equal(t, "workspace-user", first["object"])
	assert.Equal(t, ws, first["workspace_id"])
	assert.Equal(t, "active", first["status"])
	assert.NotEmpty(t, first["created_at"])
	managers := api.Admin(http.MethodGet, "/workspaces/"+ws+"/users?role=manager", nil)
	require.Len(t, managers.Data(), 1, "role is stored lower case")
	assert.Equal(t, ann, managers.Data()[0]["id"])
	assert.Len(t, api.Admin(http.MethodGet, "/workspaces/"+ws+"/users?email=BOB@example.com", nil).Data(), 1)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/workspaces/"+ws+"/users?role=owner", nil).Status)

	one := api.Admin(http.MethodGet, "/workspaces/"+ws+"/users/"+bob, nil)
	require.Equal(t, http.StatusOK, one.Status)
	assert.Equal(t, "bob@example.com", one.Str("email"))
	assert.Equal(t, "admin", one.Str("org_role"))
	assert.Equal(t, "member", one.Str("role"))
	got := api.Admin(http.MethodGet, "/workspaces/"+ws, nil)
	assert.Len(t, got.Body["users"], 2, "the workspace shows its users")

	changed := api.Admin(http.MethodPut, "/workspaces/"+ws+"/users/"+bob, map[string]any{"role": "Admin"})
	require.Equal(t, http.StatusOK, changed.Status, string(changed.Raw))
	assert.Equal(t, "admin", changed.Str("role"))

	removed := api.Admin(http.MethodDelete, "/workspaces/"+ws+"/users/"+bob, nil)
	require.Equal(t, http.StatusOK, removed.Status, string(removed.Raw))
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/workspaces/"+ws+"/users/"+bob, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/workspaces/"+ws+"/users/"+bob, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, "/workspaces/"+ws+"/users/"+bob, map[string]any{"role": "member"}).Status)

	strangerID := uuid.NewString()
	api.seedEvents(domain.Stream(domain.UserPrefix, strangerID), domain.UserJoined{UserID: strangerID,
		OrganisationID: uuid.NewString(), Email: "x@elsewhere.example", Role: domain.RoleMember, At: api.Now()})
	missingWS := uuid.NewString()
	archivedWS := api.seedWorkspace("old", nil)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, archivedWS), domain.WorkspaceArchived{WorkspaceID: archivedWS, At: api.Now()})
	users := func(id, role string) map[string]any {
		return map[string]any{"users": []map[string]string{{"id": id, "role": role}}}
	}
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		param  string
	}{
		{"not in the organisation", "/workspaces/" + ws + "/users", users(uuid.NewString(), "member"), 404, "users[0].id"},
		{"another organisation's user", "/workspaces/" + ws + "/users", users(strangerID, "member"), 404, "users[0].id"},
		{"unknown role", "/workspaces/" + ws + "/users", users(bob, "owner"), 400, "users[0].role"},
		{"no users", "/workspaces/" + ws + "/users", map[string]any{"users": []any{}}, 400, "users"},
		{"unknown field", "/workspaces/" + ws + "/users", map[string]any{"members": []any{}}, 400, "members"},
		{"missing workspace", "/workspaces/" + missingWS + "/users", users(bob, "member"), 404, ""},
		{"archived workspace", "/workspaces/" + archivedWS + "/users", users(bob, "member"), 409, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, tc.path, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
		})
	}
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodPut, "/workspaces/"+ws+"/users/"+ann, map[string]any{"role": "boss"}).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/workspaces/"+missingWS+"/users", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/workspaces/"+ws+"/users", "", nil).Status)
}

func TestWorkspaceManagerCannotGrantMoreThanTheyHold(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	mgr := api.seedUser("mgr@example.com", domain.RoleMember)
	admin := api.seedUser("wsadmin@example.com", domain.RoleMember)
	plain := api.seedUser("plain@example.com", domain.RoleMember)
	newcomer := api.seedUser("new@example.com", domain.RoleMember)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, ws),
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: mgr, Role: domain.RoleManager, At: api.Now()},
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: admin, Role: domain.RoleAdmin, At: api.Now()},
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: plain, Role: domain.RoleMember, At: api.Now()})
	scopes := []string{"workspace_users.create", "workspace_users.update", "workspace_users.delete", "workspace_users.list", "workspace_users.read"}
	mgrKey := workspacesTestKey(t, api, ws, mgr, scopes...)
	memberKey := workspacesTestKey(t, api, ws, plain, scopes...)

	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/workspaces/"+ws+"/users", memberKey,
		map[string]any{"users": []map[string]string{{"id": newcomer, "role": "member"}}}).Status, "a member adds nobody")
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/workspaces/"+ws+"/users", memberKey, nil).Status, "but may list")

	up := api.Do(http.MethodPost, "/workspaces/"+ws+"/users", mgrKey, map[string]any{"users": []map[string]string{{"id": newcomer, "role": "admin"}}})
	require.Equal(t, http.StatusForbidden, up.Status, "a manager cannot add an admin: "+string(up.Raw))
	assert.Equal(t, "users[0].role", up.ErrorParam())
	same := api.Do(http.MethodPost, "/workspaces/"+ws+"/users", mgrKey, map[string]any{"users": []map[string]string{{"id": newcomer, "role": "manager"}}})
	require.Equal(t, http.StatusOK, same.Status, "a manager may add a manager: "+string(same.Raw))
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/workspaces/"+ws+"/users/"+admin, mgrKey, map[string]any{"role": "member"}).Status,
		"nor demote an admin")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/workspaces/"+ws+"/users/"+plain, mgrKey, map[string]any{"role": "admin"}).Status,
		"nor promote anyone to admin")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/workspaces/"+ws+"/users/"+admin, mgrKey, nil).Status, "nor remove an admin")
	assert.Equal(t, http.StatusOK, api.Do(http.MethodPut, "/workspaces/"+ws+"/users/"+plain, mgrKey, map[string]any{"role": "manager"}).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodDelete, "/workspaces/"+ws+"/users/"+newcomer, mgrKey, nil).Status)

	other := api.seedWorkspace("other", nil)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/workspaces/"+other+"/users", mgrKey,
		map[string]any{"users": []map[string]string{{"id": newcomer, "role": "member"}}}).Status, "another workspace is out of reach")
	assert.Equal(t, http.StatusNotFound, api.Do(http.MethodGet, "/workspaces/"+other+"/users", mgrKey, nil).Status)
}

func TestWorkspaceBudgetOverHTTP(t *testing.T) {
	api := newTestAPI(t)
	created := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Budgeted", "periodic_reset": "weekly",
		"usage_limits": []map[string]any{{"credit_limit": 100, "type": "cost"}}})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	id := created.Str("id")
	exhaust, err := commands.NewExhaustWorkspaceBudgetHandler(api.Deps)
	require.NoError(t, err)
	reset, err := commands.NewResetWorkspaceUsageHandler(api.Deps)
	require.NoError(t, err)

	// Only the system decides that a budget is exhausted.
	adminCtx := commands.WithRequest(context.Background(), commands.Request{Actor: domain.Actor{Kind: domain.ActorAPIKey,
		ID: "k", OrganisationID: api.OrgID, KeyType: domain.KeyOrganisationService, OrgRole: domain.RoleAdmin, Scopes: domain.AllScopes()}})
	_, err = exhaust.Handle(adminCtx, commands.ExhaustWorkspaceBudget{WorkspaceID: id, LimitType: domain.UsageCost, CurrentUsage: 100})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))

	require.NoError(t, workspacesTestSystem(t, api, func(ctx context.Context) (commands.Result, error) {
		return exhaust.Handle(ctx, commands.ExhaustWorkspaceBudget{WorkspaceID: id, LimitType: domain.UsageCost, CurrentUsage: 100})
	}))
	got := api.Admin(http.MethodGet, "/workspaces/"+id, nil)
	assert.Equal(t, "exhausted", got.Str("budget_status"))
	assert.EqualValues(t, 100, got.Body["current_usage"])

	same := api.Admin(http.MethodPut, "/workspaces/"+id, map[string]any{"usage_limits": []map[string]any{{"credit_limit": 100, "type": "cost"}}})
	require.Equal(t, http.StatusOK, same.Status)
	assert.Equal(t, "exhausted", same.Str("budget_status"), "the same credit limit stays exhausted")
	raised := api.Admin(http.MethodPut, "/workspaces/"+id, map[string]any{"usage_limits": []map[string]any{{"credit_limit": 150, "type": "cost"}}})
	require.Equal(t, http.StatusOK, raised.Status, string(raised.Raw))
	assert.Equal(t, "active", raised.Str("budget_status"), "raising the credit limit reactivates the budget")
	types := map[string]bool{}
	for _, rec := range api.Read.AuditLog(projections.AuditFilter{OrganisationID: api.OrgID, ResourceType: domain.WorkspacePrefix, ResourceID: id}) {
		types[rec.Action] = true
	}
	assert.True(t, types["WorkspaceBudgetExhausted"])
	assert.True(t, types["WorkspaceBudgetReactivated"])

	api.Advance(7 * 24 * time.Hour)
	require.NoError(t, workspacesTestSystem(t, api, func(ctx context.Context) (commands.Result, error) {
		return reset.Handle(ctx, commands.ResetWorkspaceUsage{WorkspaceID: id})
	}))
	after := api.Admin(http.MethodGet, "/workspaces/"+id, nil)
	assert.EqualValues(t, 0, after.Body["current_usage"])
	assert.Equal(t, api.Now().Format(time.RFC3339), after.Str("last_reset_at"))
	assert.Equal(t, api.Now().AddDate(0, 0, 7).Format(time.RFC3339), after.Str("next_usage_reset_at"), "the next reset advanced a period")
}

// Every workspace endpoint refuses a request without a key (401) and a key without its scope
// (403); member changes in an archived workspace are conflicts (409).
func TestWorkspaceEndpointsRefuse(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	user := api.seedUser("u@example.com", domain.RoleMember)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, ws),
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: user, Role: domain.RoleMember, At: api.Now()})
	logsOnly := workspacesTestOrgKey(t, api, "logs.view")
	endpoints := []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/workspaces", map[string]any{"name": "x"}},
		{http.MethodGet, "/workspaces", nil},
		{http.MethodGet, "/workspaces/" + ws, nil},
		{http.MethodPut, "/workspaces/" + ws, map[string]any{"name": "x"}},
		{http.MethodDelete, "/workspaces/" + ws, nil},
		{http.MethodPost, "/workspaces/" + ws + "/restore", nil},
		{http.MethodPost, "/workspaces/" + ws + "/users", map[string]any{"users": []map[string]string{{"id": user, "role": "admin"}}}},
		{http.MethodGet, "/workspaces/" + ws + "/users", nil},
		{http.MethodGet, "/workspaces/" + ws + "/users/" + user, nil},
		{http.MethodPut, "/workspaces/" + ws + "/users/" + user, map[string]any{"role": "admin"}},
		{http.MethodDelete, "/workspaces/" + ws + "/users/" + user, nil},
		{http.MethodGet, "/workspaces/" + ws + "/settings", nil},
		{http.MethodPut, "/workspaces/" + ws + "/settings", map[string]any{"security_settings": map[string]any{"membersViewPrompts": false}}},
		{http.MethodGet, "/organisation/settings", nil},
		{http.MethodPut, "/organisation/settings", map[string]any{"security_settings": map[string]any{"membersViewPrompts": false}}},
	}
	for _, e := range endpoints {
		t.Run(e.method+" "+e.path, func(t *testing.T) {
			assert.Equal(t, http.StatusUnauthorized, api.Do(e.method, e.path, "", e.body).Status)
			r := api.Do(e.method, e.path, logsOnly, e.body)
			assert.Equal(t, http.StatusForbidden, r.Status, string(r.Raw))
		})
	}

	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, "/workspaces/"+ws, nil).Status)
	assert.Equal(t, http.StatusConflict, api.Admin(http.MethodPut, "/workspaces/"+ws+"/users/"+user, map[string]any{"role": "admin"}).Status)
	assert.Equal(t, http.StatusConflict, api.Admin(http.MethodDelete, "/workspaces/"+ws+"/users/"+user, nil).Status)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/workspaces/"+ws+"/users/"+user, nil).Status,
		"an archived workspace's members stay readable")
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/workspaces/"+ws+"/users/"+uuid.NewString(), nil).Status)
}
