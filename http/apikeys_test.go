package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// akAPI is the test API that remembers every plaintext key its answers showed, and checks at
// the end of the test that none of them was ever stored in an event.
type akAPI struct {
	*testAPI
	plaintexts []string
}

func newAKAPI(t *testing.T) *akAPI {
	t.Helper()
	api := &akAPI{testAPI: newTestAPI(t), plaintexts: []string{testAdminKey}}
	// The harness answers before its read model has folded the bootstrap admin key.
	api.settle()
	// Registered after the harness's own cleanup, so it runs while the store is still open.
	t.Cleanup(func() { api.assertNoPlaintextStored(t) })
	return api
}

func (a *akAPI) assertNoPlaintextStored(t *testing.T) {
	evs, err := a.Store.ReadAll(context.Background(), eventstore.Start, 100000)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	for _, ev := range evs {
		md, err := json.Marshal(ev.Metadata)
		require.NoError(t, err)
		for _, p := range a.plaintexts {
			assert.False(t, bytes.Contains(ev.Data, []byte(p)), "event %s (%s) holds a plaintext key", ev.ID, ev.Type)
			assert.False(t, bytes.Contains(md, []byte(p)), "the metadata of event %s (%s) holds a plaintext key", ev.ID, ev.Type)
		}
	}
}

// keep remembers the plaintext key an answer shows.
func (a *akAPI) keep(r response) response {
	if k := r.Str("key"); k != "" {
		a.plaintexts = append(a.plaintexts, k)
	}
	return r
}

// create posts a key to path as key (empty: the admin key).
func (a *akAPI) create(path, key string, body any, headers ...string) response {
	a.t.Helper()
	if key == "" {
		key = a.AdminKey
	}
	return a.keep(a.Do(http.MethodPost, path, key, body, headers...))
}

// mustCreate creates a key and returns its id and plaintext.
func (a *akAPI) mustCreate(path, key string, body any) (string, string) {
	a.t.Helper()
	r := a.create(path, key, body)
	require.Equal(a.t, http.StatusOK, r.Status, string(r.Raw))
	require.NotEmpty(a.t, r.Str("id"))
	require.NotEmpty(a.t, r.Str("key"))
	return r.Str("id"), r.Str("key")
}

func (a *akAPI) rotate(id, key string, body any, headers ...string) response {
	a.t.Helper()
	if key == "" {
		key = a.AdminKey
	}
	return a.keep(a.Do(http.MethodPost, "/api-keys/"+id+"/rotate", key, body, headers...))
}

// settle waits until the read model has every stored event (after work done outside HTTP).
func (a *akAPI) settle() {
	a.t.Helper()
	evs, err := a.Store.ReadAll(context.Background(), a.Read.Position(), 100000)
	require.NoError(a.t, err)
	if len(evs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(a.t, a.Read.WaitFor(ctx, evs[len(evs)-1].Position))
}

func (a *akAPI) events(typ string) []eventstore.RecordedEvent {
	a.t.Helper()
	evs, err := a.Store.ReadAll(context.Background(), eventstore.Start, 100000)
	require.NoError(a.t, err)
	var out []eventstore.RecordedEvent
	for _, ev := range evs {
		if typ == "" || ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func (a *akAPI) notifications(kind, keyID string) []domain.NotificationRecorded {
	var out []domain.NotificationRecorded
	for _, ev := range a.events("NotificationRecorded") {
		var n domain.NotificationRecorded
		require.NoError(a.t, json.Unmarshal(ev.Data, &n))
		if n.Kind == kind && n.ResourceID == keyID {
			out = append(out, n)
		}
	}
	return out
}

func (a *akAPI) worker() *commands.KeyWorker {
	a.t.Helper()
	w, err := commands.NewKeyWorker(a.Deps, a.Read, bytes.Repeat([]byte("s"), 32))
	require.NoError(a.t, err)
	return w
}

var maskedKey = regexp.MustCompile(`^cw-[0-9A-Za-z]{4}\*{4}[0-9A-Za-z]{4}$`)

func masked(plain string) string { return plain[:7] + "****" + plain[len(plain)-4:] }

func TestAPIKeyLifecycle(t *testing.T) {
	api := newAKAPI(t)
	id, plain := api.mustCreate("/api-keys/organisation/service", "", map[string]any{"name": "ci",
		"scopes": []string{"organisation_service_api_keys.read", "completions.write"}})

	got := api.Admin(http.MethodGet, "/api-keys/"+id, nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Equal(t, "api-key", got.Str("object"))
	assert.Equal(t, "active", got.Str("status"))
	assert.Equal(t, domain.KeyOrganisationService, got.Str("type"))
	assert.Equal(t, masked(plain), got.Str("key"))
	assert.Regexp(t, maskedKey, got.Str("key"))
	assert.NotContains(t, string(got.Raw), plain)
	assert.NotContains(t, string(got.Raw), domain.HashKey(plain), "the hash never leaves the process")
	assert.NotContains(t, got.Body, "hash")

	list := api.Admin(http.MethodGet, "/api-keys", nil)
	require.Equal(t, http.StatusOK, list.Status)
	assert.Equal(t, "list", list.Str("object"))
	assert.EqualValues(t, 2, list.Body["total"], "the bootstrap key and this one")
	assert.NotContains(t, string(list.Raw), plain)
	var found bool
	for _, k := range list.Data() {
		if k["id"] == id {
			found = true
			assert.Equal(t, masked(plain), k["key"])
		}
	}
	assert.True(t, found)
	paged := api.Admin(http.MethodGet, "/api-keys?page_size=1&current_page=1", nil)
	require.Equal(t, http.StatusOK, paged.Status)
	assert.Len(t, paged.Data(), 1)

	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/api-keys/"+id, plain, nil).Status, "the key reads itself")

	expires := api.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	upd := api.Admin(http.MethodPut, "/api-keys/"+id, map[string]any{
		"name":            "ci-2",
		"scopes":          []string{"organisation_service_api_keys.read", "logs.view"},
		"rate_limits":     []map[string]any{{"type": "requests", "unit": "rpm", "value": 100}},
		"usage_limits":    map[string]any{"type": "cost", "credit_limit": 50, "alert_threshold": 40, "periodic_reset_days": 30},
		"defaults":        map[string]any{"metadata": map[string]any{"team": "ml"}, "config_id": "cfg-1", "allow_config_override": false},
		"alert_emails":    []string{"ops@example.com"},
		"expires_at":      expires.Format(time.RFC3339),
		"rotation_policy": map[string]any{"rotation_period": "weekly", "key_transition_period_ms": 3600000},
	})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "ci-2", upd.Str("name"))
	assert.Equal(t, masked(plain), upd.Str("key"), "the answer is the key, masked")
	assert.Equal(t, []any{"organisation_service_api_keys.read", "logs.view"}, upd.Body["scopes"])
	assert.Equal(t, []any{map[string]any{"type": "requests", "unit": "rpm", "value": 100.0}}, upd.Body["rate_limits"])
	usage := upd.Body["usage_limits"].(map[string]any)
	assert.EqualValues(t, 50, usage["credit_limit"])
	assert.EqualValues(t, 0, usage["current_usage"])
	assert.Equal(t, api.Now().AddDate(0, 0, 30).Format(time.RFC3339), usage["next_usage_reset_at"])
	assert.Equal(t, map[string]any{"metadata": map[string]any{"team": "ml"}, "config_id": "cfg-1", "allow_config_override": false}, upd.Body["defaults"])
	assert.Equal(t, []any{"ops@example.com"}, upd.Body["alert_emails"])
	assert.Equal(t, expires.Format(time.RFC3339), upd.Str("expires_at"))
	policy := upd.Body["rotation_policy"].(map[string]any)
	assert.Equal(t, "weekly", policy["rotation_period"])
	assert.Equal(t, api.Now().AddDate(0, 0, 7).Format(time.RFC3339), policy["next_rotation_at"])
	assert.Equal(t, upd.Raw, api.Admin(http.MethodGet, "/api-keys/"+id, nil).Raw, "GET answers what PUT answered")

	// null clears what may be cleared; absent fields stay.
	cleared := api.Admin(http.MethodPut, "/api-keys/"+id, `{"rate_limits":null,"usage_limits":null,"defaults":null,"alert_emails":null,"expires_at":null,"rotation_policy":null}`)
	require.Equal(t, http.StatusOK, cleared.Status, string(cleared.Raw))
	assert.Equal(t, "ci-2", cleared.Str("name"))
	assert.Equal(t, []any{}, cleared.Body["rate_limits"])
	assert.Equal(t, []any{}, cleared.Body["alert_emails"])
	for _, f := range []string{"usage_limits", "defaults", "expires_at", "rotation_policy"} {
		assert.Nil(t, cleared.Body[f], f)
	}
	updates := api.events("ApiKeyUpdated")
	require.NotEmpty(t, updates)
	var last domain.APIKeyUpdated
	require.NoError(t, json.Unmarshal(updates[len(updates)-1].Data, &last))
	assert.True(t, last.ClearRateLimits && last.ClearUsageLimits && last.ClearDefaults && last.ClearAlertEmails &&
		last.ClearExpiresAt && last.ClearRotationPolicy, "null is recorded as a Clear flag")

	del := api.Admin(http.MethodDelete, "/api-keys/"+id, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, true, del.Body["deleted"])
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/api-keys/"+id, plain, nil).Status, "a deleted key is refused at once")
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/api-keys/"+id, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/api-keys/"+id, nil).Status)
	assert.EqualValues(t, 1, api.Admin(http.MethodGet, "/api-keys", nil).Body["total"])
}

func TestAPIKeyUsageStatusAndReset(t *testing.T) {
	api := newAKAPI(t)
	id, _ := api.mustCreate("/api-keys/organisation/service", "", map[string]any{"name": "budget", "scopes": []string{"completions.write"},
		"usage_limits": map[string]any{"type": "cost", "credit_limit": 10}})
	api.seedEvents(domain.Stream(domain.APIKeyPrefix, id), domain.APIKeyExhausted{KeyID: id, Usage: 10.25, At: api.Now()})

	got := api.Admin(http.MethodGet, "/api-keys/"+id, nil)
	assert.Equal(t, "exhausted", got.Str("status"))
	assert.Equal(t, 10.25, got.Body["current_usage"], "usage may be fractional")
	assert.Equal(t, 10.25, got.Body["usage_limits"].(map[string]any)["current_usage"])

	raised := api.Admin(http.MethodPut, "/api-keys/"+id, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 20}})
	require.Equal(t, http.StatusOK, raised.Status, string(raised.Raw))
	assert.Equal(t, "active", raised.Str("status"), "raising the credit limit reactivates an exhausted key")
	assert.Equal(t, false, raised.Body["is_exhausted_alerts_sent"], "and resets its exhausted alert")
	assert.Len(t, api.events("ApiKeyUsageAlertsReset"), 1)

	api.seedEvents(domain.Stream(domain.APIKeyPrefix, id), domain.APIKeyExhausted{KeyID: id, Usage: 20.5, At: api.Now()})
	reset := api.Admin(http.MethodPut, "/api-keys/"+id, map[string]any{"reset_usage": true})
	require.Equal(t, http.StatusOK, reset.Status, string(reset.Raw))
	assert.Equal(t, "active", reset.Str("status"))
	assert.EqualValues(t, 0, reset.Body["current_usage"])
	assert.NotNil(t, reset.Body["last_reset_at"])
	assert.Len(t, api.events("ApiKeyUsageReset"), 1)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodPut, "/api-keys/"+id, map[string]any{"reset_usage": false}).Status,
		"reset_usage false alone changes nothing")
}

func TestAPIKeyCreateKinds(t *testing.T) {
	api := newAKAPI(t)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	member := api.seedUser("member@example.com", domain.RoleMember)
	outsider := api.seedUser("outsider@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{manager: domain.RoleManager, member: domain.RoleMember})

	cases := []struct {
		name, path string
		body       map[string]any
		status     int
		param      string
		keyType    string
		userID     string
	}{
		{"organisation service", "/api-keys/organisation/service", map[string]any{"name": "org", "scopes": []string{"workspaces.create"}}, 200, "", domain.KeyOrganisationService, ""},
		{"workspace service", "/api-keys/workspace/service", map[string]any{"name": "svc", "workspace_id": ws, "scopes": []string{"completions.write"}}, 200, "", domain.KeyWorkspaceService, ""},
		{"workspace user on behalf of a member", "/api-keys/workspace/user", map[string]any{"name": "u", "workspace_id": ws, "user_id": member, "scopes": []string{"completions.write"}}, 200, "", domain.KeyWorkspaceUser, member},
		{"the reference's body fields type and sub-type", "/api-keys/organisation/service", map[string]any{"name": "org2", "type": "organisation", "sub-type": "service", "scopes": []string{"logs.view"}}, 200, "", domain.KeyOrganisationService, ""},
		{"organisation user keys do not exist", "/api-keys/organisation/user", map[string]any{"name": "x", "scopes": []string{"logs.view"}}, 400, "type", "", ""},
		{"unknown key type", "/api-keys/team/service", map[string]any{"name": "x", "scopes": []string{"logs.view"}}, 400, "type", "", ""},
		{"workspace key without workspace", "/api-keys/workspace/service", map[string]any{"name": "x", "scopes": []string{"logs.view"}}, 400, "workspace_id", "", ""},
		{"workspace user key without user", "/api-keys/workspace/user", map[string]any{"name": "x", "workspace_id": ws, "scopes": []string{"logs.view"}}, 400, "user_id", "", ""},
		{"user who is not a member", "/api-keys/workspace/user", map[string]any{"name": "x", "workspace_id": ws, "user_id": outsider, "scopes": []string{"logs.view"}}, 400, "user_id", "", ""},
		{"unknown workspace", "/api-keys/workspace/service", map[string]any{"name": "x", "workspace_id": "7b0d0e9e-0000-4000-8000-000000000000", "scopes": []string{"logs.view"}}, 404, "workspace_id", "", ""},
		{"another organisation", "/api-keys/organisation/service", map[string]any{"name": "x", "organisation_id": "7b0d0e9e-0000-4000-8000-000000000000", "scopes": []string{"logs.view"}}, 400, "organisation_id", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.create(tc.path, "", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				return
			}
			assert.Equal(t, "api-key", r.Str("object"))
			got := api.Admin(http.MethodGet, "/api-keys/"+r.Str("id"), nil)
			require.Equal(t, http.StatusOK, got.Status)
			assert.Equal(t, tc.keyType, got.Str("type"))
			assert.Equal(t, tc.userID, got.Str("user_id"))
		})
	}

	// A manager creates keys in their own workspace, for themselves by default.
	_, mgrKey := api.mustCreate("/api-keys/workspace/user", "", map[string]any{"name": "mgr", "workspace_id": ws, "user_id": manager,
		"scopes": []string{"workspace_user_api_keys.create", "workspace_user_api_keys.read", "completions.write"}})
	own := api.create("/api-keys/workspace/user", mgrKey, map[string]any{"name": "mine", "scopes": []string{"completions.write"}})
	require.Equal(t, http.StatusOK, own.Status, string(own.Raw))
	assert.Equal(t, manager, api.Admin(http.MethodGet, "/api-keys/"+own.Str("id"), nil).Str("user_id"))
	behalf := api.create("/api-keys/workspace/user", mgrKey, map[string]any{"name": "theirs", "user_id": member, "scopes": []string{"completions.write"}})
	require.Equal(t, http.StatusOK, behalf.Status, string(behalf.Raw))
	assert.Equal(t, member, api.Admin(http.MethodGet, "/api-keys/"+behalf.Str("id"), nil).Str("user_id"))
}

func TestAPIKeyCreateValidation(t *testing.T) {
	api := newAKAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	valid := func() map[string]any { return map[string]any{"name": "k", "scopes": []string{"completions.write"}} }
	with := func(k string, v any) map[string]any { b := valid(); b[k] = v; return b }
	usage := func(extra map[string]any) map[string]any {
		u := map[string]any{"type": "cost", "credit_limit": 10}
		for k, v := range extra {
			u[k] = v
		}
		return with("usage_limits", u)
	}
	rate := func(typ, unit string, value any) map[string]any {
		return with("rate_limits", []map[string]any{{"type": typ, "unit": unit, "value": value}})
	}
	policy := func(p map[string]any) map[string]any { return with("rotation_policy", p) }
	now := api.Now()
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		param  string
	}{
		{"name at 255", "", with("name", strings.Repeat("n", 255)), 200, ""},
		{"name at 256", "", with("name", strings.Repeat("n", 256)), 400, "name"},
		{"name missing", "", map[string]any{"scopes": []string{"logs.view"}}, 400, "name"},
		{"no scopes", "", with("scopes", []string{}), 400, "scopes"},
		{"unknown scope", "", with("scopes", []string{"logs.view", "logs.burn"}), 400, "scopes[1]"},
		{"organisation scope on a workspace key", "/api-keys/workspace/service", map[string]any{"name": "k", "workspace_id": ws,
			"scopes": []string{"organisation_users.read"}}, 400, "scopes[0]"},
		{"rate limit value 1", "", rate("requests", "rpm", 1), 200, ""},
		{"rate limit value 0", "", rate("requests", "rpm", 0), 400, "rate_limits[0].value"},
		{"rate limit value 2.5", "", rate("tokens", "rpd", 2.5), 400, "rate_limits[0].value"},
		{"rate limit unit rps", "", rate("requests", "rps", 5), 400, "rate_limits[0].unit"},
		{"rate limit unit rpw", "", rate("requests", "rpw", 5), 200, ""},
		{"rate limit type cost", "", rate("cost", "rpm", 5), 400, "rate_limits[0].type"},
		{"rate limit unknown field", "", with("rate_limits", []map[string]any{{"type": "requests", "unit": "rpm", "value": 5, "burst": 2}}), 400, "burst"},
		{"credit limit 1", "", usage(map[string]any{"credit_limit": 1}), 200, ""},
		{"credit limit 0", "", usage(map[string]any{"credit_limit": 0}), 400, "usage_limits.credit_limit"},
		{"usage type requests", "", usage(map[string]any{"type": "requests"}), 400, "usage_limits.type"},
		{"periodic_reset_days 0", "", usage(map[string]any{"periodic_reset_days": 0}), 400, "usage_limits.periodic_reset_days"},
		{"periodic_reset_days 1", "", usage(map[string]any{"periodic_reset_days": 1}), 200, ""},
		{"periodic_reset_days 365", "", usage(map[string]any{"periodic_reset_days": 365}), 200, ""},
		{"periodic_reset_days 366", "", usage(map[string]any{"periodic_reset_days": 366}), 400, "usage_limits.periodic_reset_days"},
		{"both periodic resets", "", usage(map[string]any{"periodic_reset": "weekly", "periodic_reset_days": 7}), 400, "usage_limits.periodic_reset_days"},
		{"alert threshold at the limit", "", usage(map[string]any{"alert_threshold": 10}), 400, "usage_limits.alert_threshold"},
		{"bad alert e-mail", "", with("alert_emails", []string{"ops"}), 400, "alert_emails[0]"},
		{"expires_at in the past", "", with("expires_at", now.Add(-time.Minute).Format(time.RFC3339)), 400, "expires_at"},
		{"expires_at in a minute", "", with("expires_at", now.Add(time.Minute).Format(time.RFC3339)), 200, ""},
		{"key_transition_period_ms 1799999", "", policy(map[string]any{"rotation_period": "monthly", "key_transition_period_ms": 1799999}), 400, "rotation_policy.key_transition_period_ms"},
		{"key_transition_period_ms 1800000", "", policy(map[string]any{"rotation_period": "monthly", "key_transition_period_ms": 1800000}), 200, ""},
		{"rotation period daily", "", policy(map[string]any{"rotation_period": "daily"}), 400, "rotation_policy.rotation_period"},
		{"rotation policy with neither period nor date", "", policy(map[string]any{"key_transition_period_ms": 1800000}), 400, "rotation_policy"},
		{"next rotation in the past", "", policy(map[string]any{"next_rotation_at": now.Add(-time.Hour).Format(time.RFC3339)}), 400, "rotation_policy.next_rotation_at"},
		{"unknown field", "", with("colour", "red"), 400, "colour"},
		{"not JSON", "", "{", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/api-keys/organisation/service"
			}
			r := api.create(path, "", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
}

func TestAPIKeyAccess(t *testing.T) {
	api := newAKAPI(t)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	member := api.seedUser("member@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{manager: domain.RoleManager, member: domain.RoleMember})
	other := api.seedWorkspace("team-b", nil)

	svcID, svcKey := api.mustCreate("/api-keys/workspace/service", "", map[string]any{"name": "svc", "workspace_id": ws,
		"scopes": []string{"workspace_service_api_keys.create", "workspace_service_api_keys.read", "workspace_service_api_keys.update", "completions.write"}})
	mgrID, mgrKey := api.mustCreate("/api-keys/workspace/user", "", map[string]any{"name": "mgr", "workspace_id": ws, "user_id": manager,
		"scopes": []string{"workspace_user_api_keys.create", "workspace_user_api_keys.read", "workspace_user_api_keys.update",
			"workspace_user_api_keys.rotate", "completions.write"}})
	memberID, memberKey := api.mustCreate("/api-keys/workspace/user", "", map[string]any{"name": "member", "workspace_id": ws, "user_id": member,
		"scopes": []string{"workspace_user_api_keys.create", "workspace_service_api_keys.read", "workspace_user_api_keys.read",
			"workspace_user_api_keys.update", "workspace_service_api_keys.rotate", "completions.write"}})
	orgID, _ := api.mustCreate("/api-keys/organisation/service", "", map[string]any{"name": "org", "scopes": []string{"logs.view"}})
	missing := "7b0d0e9e-0000-4000-8000-000000000000"

	cases := []struct {
		name   string
		method string
		path   string
		key    string
		body   any
		status int
		param  string
	}{
		{"no key", http.MethodGet, "/api-keys", "", nil, 401, ""},
		{"an unknown key", http.MethodGet, "/api-keys", "cw-unknown", nil, 401, ""},
		{"no key to create", http.MethodPost, "/api-keys/organisation/service", "", map[string]any{"name": "x", "scopes": []string{"logs.view"}}, 401, ""},
		{"a workspace key creating an organisation key", http.MethodPost, "/api-keys/organisation/service", svcKey,
			map[string]any{"name": "x", "scopes": []string{"logs.view"}}, 403, ""},
		{"a manager granting scopes they lack", http.MethodPost, "/api-keys/workspace/user", mgrKey,
			map[string]any{"name": "x", "user_id": member, "scopes": []string{"logs.view"}}, 403, "scopes"},
		{"a member creating a key", http.MethodPost, "/api-keys/workspace/user", memberKey,
			map[string]any{"name": "x", "scopes": []string{"completions.write"}}, 403, ""},
		{"a workspace key creating in another workspace", http.MethodPost, "/api-keys/workspace/service", svcKey,
			map[string]any{"name": "x", "workspace_id": other, "scopes": []string{"completions.write"}}, 403, ""},
		{"a workspace service key creating a service key", http.MethodPost, "/api-keys/workspace/service", svcKey,
			map[string]any{"name": "x", "scopes": []string{"completions.write"}}, 200, ""},
		{"a manager reads their own key", http.MethodGet, "/api-keys/" + mgrID, mgrKey, nil, 200, ""},
		{"a member reads their own key", http.MethodGet, "/api-keys/" + memberID, memberKey, nil, 200, ""},
		{"a member reading a service key", http.MethodGet, "/api-keys/" + svcID, memberKey, nil, 403, ""},
		{"a workspace key reading an organisation key", http.MethodGet, "/api-keys/" + orgID, svcKey, nil, 404, ""},
		{"a workspace key listing another workspace", http.MethodGet, "/api-keys?workspace_id=" + other, svcKey, nil, 403, ""},
		{"a bad page size", http.MethodGet, "/api-keys?page_size=-1", api.AdminKey, nil, 400, "page_size"},
		{"a malformed id", http.MethodGet, "/api-keys/not-a-uuid", api.AdminKey, nil, 400, "id"},
		{"an unknown id", http.MethodGet, "/api-keys/" + missing, api.AdminKey, nil, 404, ""},
		{"update an unknown id", http.MethodPut, "/api-keys/" + missing, api.AdminKey, map[string]any{"name": "x"}, 404, ""},
		{"update a malformed id", http.MethodPut, "/api-keys/nope", api.AdminKey, map[string]any{"name": "x"}, 400, "id"},
		{"delete an unknown id", http.MethodDelete, "/api-keys/" + missing, api.AdminKey, nil, 404, ""},
		{"rotate an unknown id", http.MethodPost, "/api-keys/" + missing + "/rotate", api.AdminKey, nil, 404, ""},
		{"rotate a malformed id", http.MethodPost, "/api-keys/nope/rotate", api.AdminKey, nil, 400, "id"},
		{"a member updating a service key", http.MethodPut, "/api-keys/" + svcID, memberKey, map[string]any{"name": "x"}, 403, ""},
		{"a member rotating a service key", http.MethodPost, "/api-keys/" + svcID + "/rotate", memberKey, nil, 403, ""},
		{"a member deleting a service key", http.MethodDelete, "/api-keys/" + svcID, memberKey, nil, 403, ""},
		{"a workspace key updating an organisation key", http.MethodPut, "/api-keys/" + orgID, svcKey, map[string]any{"name": "x"}, 404, ""},
		{"a manager widening their own key's scopes", http.MethodPut, "/api-keys/" + mgrID, mgrKey,
			map[string]any{"scopes": []string{"completions.write", "logs.view"}}, 403, "scopes"},
		{"a manager narrowing their own key's scopes", http.MethodPut, "/api-keys/" + mgrID, mgrKey,
			map[string]any{"scopes": []string{"workspace_user_api_keys.read", "workspace_user_api_keys.update", "workspace_user_api_keys.rotate"}}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Do(tc.method, tc.path, tc.key, tc.body)
			if tc.method == http.MethodPost {
				api.keep(r)
			}
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}

	// Lists hold what the reader may read, and never a plaintext key.
	ids := func(r response) []string {
		var out []string
		for _, k := range r.Data() {
			out = append(out, k["id"].(string))
			assert.Regexp(t, maskedKey, k["key"])
		}
		return out
	}
	memberList := api.Do(http.MethodGet, "/api-keys", memberKey, nil)
	require.Equal(t, http.StatusOK, memberList.Status)
	assert.Contains(t, ids(memberList), memberID)
	assert.NotContains(t, ids(memberList), svcID, "a member reads only their own keys")
	assert.NotContains(t, ids(memberList), mgrID)
	svcList := api.Do(http.MethodGet, "/api-keys?workspace_id="+ws, svcKey, nil)
	require.Equal(t, http.StatusOK, svcList.Status)
	assert.Contains(t, ids(svcList), svcID)
	assert.NotContains(t, ids(svcList), orgID)
	for _, p := range api.plaintexts {
		assert.NotContains(t, string(memberList.Raw)+string(svcList.Raw), p)
	}
}

func TestAPIKeyUpdateValidation(t *testing.T) {
	api := newAKAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	orgID, _ := api.mustCreate("/api-keys/organisation/service", "", map[string]any{"name": "org", "scopes": []string{"logs.view"}})
	wsID, _ := api.mustCreate("/api-keys/workspace/service", "", map[string]any{"name": "svc", "workspace_id": ws, "scopes": []string{"logs.view"}})
	now := api.Now()
	cases := []struct {
		name   string
		id     string
		body   any
		status int
		param  string
	}{
		{"name at 255", orgID, map[string]any{"name": strings.Repeat("n", 255)}, 200, ""},
		{"name at 256", orgID, map[string]any{"name": strings.Repeat("n", 256)}, 400, "name"},
		{"name null", orgID, `{"name":null}`, 400, "name"},
		{"name a number", orgID, `{"name":5}`, 400, "name"},
		{"scopes null", orgID, `{"scopes":null}`, 400, "scopes"},
		{"scopes empty", orgID, map[string]any{"scopes": []string{}}, 400, "scopes"},
		{"an organisation scope on a workspace key", wsID, map[string]any{"scopes": []string{"workspaces.create"}}, 400, "scopes[0]"},
		{"a workspace scope on a workspace key", wsID, map[string]any{"scopes": []string{"workspaces.read"}}, 200, ""},
		{"rate limit unit rps", orgID, map[string]any{"rate_limits": []map[string]any{{"type": "requests", "unit": "rps", "value": 1}}}, 400, "rate_limits[0].unit"},
		{"rate limit value 0", orgID, map[string]any{"rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 0}}}, 400, "rate_limits[0].value"},
		{"rate limit value 1", orgID, map[string]any{"rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 1}}}, 200, ""},
		{"rate limit unknown field", orgID, map[string]any{"rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 1, "x": 1}}}, 400, "rate_limits.x"},
		{"usage limits unknown field", orgID, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 5, "colour": "red"}}, 400, "usage_limits.colour"},
		{"credit limit a string", orgID, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": "5"}}, 400, "usage_limits.credit_limit"},
		{"credit limit 0", orgID, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 0}}, 400, "usage_limits.credit_limit"},
		{"periodic_reset_days 0", orgID, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 5, "periodic_reset_days": 0}}, 400, "usage_limits.periodic_reset_days"},
		{"periodic_reset_days 365", orgID, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 5, "periodic_reset_days": 365}}, 200, ""},
		{"periodic_reset_days 366", orgID, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 5, "periodic_reset_days": 366}}, 400, "usage_limits.periodic_reset_days"},
		{"both periodic resets", orgID, map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 5, "periodic_reset": "monthly", "periodic_reset_days": 3}}, 400, "usage_limits.periodic_reset_days"},
		{"reset_usage a string", orgID, map[string]any{"reset_usage": "yes"}, 400, "reset_usage"},
		{"reset_usage null", orgID, `{"reset_usage":null}`, 400, "reset_usage"},
		{"defaults unknown field", orgID, map[string]any{"defaults": map[string]any{"cache": true}}, 400, "defaults.cache"},
		{"bad alert e-mail", orgID, map[string]any{"alert_emails": []string{"a@b.c", "nope"}}, 400, "alert_emails[1]"},
		{"expires_at in the past", orgID, map[string]any{"expires_at": now.Add(-time.Second).Format(time.RFC3339)}, 400, "expires_at"},
		{"expires_at not a date", orgID, map[string]any{"expires_at": "tomorrow"}, 400, "expires_at"},
		{"key_transition_period_ms 1799999", orgID, map[string]any{"rotation_policy": map[string]any{"rotation_period": "monthly", "key_transition_period_ms": 1799999}}, 400, "rotation_policy.key_transition_period_ms"},
		{"key_transition_period_ms 1800000", orgID, map[string]any{"rotation_policy": map[string]any{"rotation_period": "monthly", "key_transition_period_ms": 1800000}}, 200, ""},
		{"next rotation in the past", orgID, map[string]any{"rotation_policy": map[string]any{"next_rotation_at": now.Add(-time.Hour).Format(time.RFC3339)}}, 400, "rotation_policy.next_rotation_at"},
		{"an unknown field", orgID, map[string]any{"description": "x"}, 400, "description"},
		{"nothing to update", orgID, map[string]any{}, 400, ""},
		{"not an object", orgID, `[1]`, 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/api-keys/"+tc.id, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
}

func TestAPIKeyRotationTransition(t *testing.T) {
	api := newAKAPI(t)
	id, oldKey := api.mustCreate("/api-keys/organisation/service", "", map[string]any{"name": "rotating",
		"scopes": []string{"organisation_service_api_keys.read"}, "alert_emails": []string{"ops@example.com"}})

	assert.Equal(t, http.StatusBadRequest, api.rotate(id, "", map[string]any{"key_transition_period_ms": 1799999}).Status)
	r := api.rotate(id, "", map[string]any{"key_transition_period_ms": 1800000})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	newKey := r.Str("key")
	require.NotEmpty(t, newKey)
	assert.NotEqual(t, oldKey, newKey)
	assert.Equal(t, id, r.Str("id"))
	assert.Equal(t, api.Now().Add(30*time.Minute).Format(time.RFC3339), r.Str("key_transition_expires_at"))
	assert.Equal(t, masked(newKey), api.Admin(http.MethodGet, "/api-keys/"+id, nil).Str("key"))
	rotated := api.events("ApiKeyRotated")
	require.Len(t, rotated, 1)
	assert.Equal(t, string(eventstore.ActorAPIKey), string(rotated[0].Metadata.ActorKind))
	notes := api.notifications(domain.NotifyKeyRotated, id)
	require.Len(t, notes, 1)
	assert.Equal(t, []string{"ops@example.com"}, notes[0].Recipients)

	api.Advance(29 * time.Minute)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/api-keys/"+id, oldKey, nil).Status, "the old key during the transition")
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/api-keys/"+id, newKey, nil).Status, "the new key at once")

	api.Advance(2 * time.Minute)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/api-keys/"+id, oldKey, nil).Status, "the old key after the transition")
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/api-keys/"+id, newKey, nil).Status)

	// A retried rotation answers the same new key and rotates once.
	first := api.rotate(id, "", nil, "Idempotency-Key", "rotate-1")
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	again := api.rotate(id, "", nil, "Idempotency-Key", "rotate-1")
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	assert.Equal(t, first.Str("key"), again.Str("key"))
	assert.Equal(t, first.Str("key_transition_expires_at"), again.Str("key_transition_expires_at"))
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.Len(t, api.events("ApiKeyRotated"), 2)
	assert.Len(t, api.notifications(domain.NotifyKeyRotated, id), 2)
}

func TestAPIKeyExpiry(t *testing.T) {
	api := newAKAPI(t)
	id, plain := api.mustCreate("/api-keys/organisation/service", "", map[string]any{"name": "expiring",
		"scopes": []string{"organisation_service_api_keys.read"}, "expires_at": api.Now().Add(time.Hour).Format(time.RFC3339)})
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/api-keys/"+id, plain, nil).Status)

	api.Advance(2 * time.Hour)
	denied := api.Do(http.MethodGet, "/api-keys/"+id, plain, nil)
	assert.Equal(t, http.StatusUnauthorized, denied.Status, "refused at once, before the worker runs")
	assert.Contains(t, denied.ErrorMessage(), "expired")
	assert.Equal(t, "expired", api.Admin(http.MethodGet, "/api-keys/"+id, nil).Str("status"), "reads show the status at once")
	assert.Empty(t, api.events("ApiKeyExpired"))
	assert.Equal(t, http.StatusConflict, api.rotate(id, "", nil).Status, "an expired key cannot be rotated")

	require.NoError(t, api.worker().Tick(context.Background()))
	api.settle()
	expired := api.events("ApiKeyExpired")
	require.Len(t, expired, 1)
	assert.Equal(t, domain.Stream(domain.APIKeyPrefix, id), expired[0].Stream)
	assert.Equal(t, "system", expired[0].Metadata.ActorID)
	assert.Equal(t, eventstore.ActorSystem, expired[0].Metadata.ActorKind)
	assert.Len(t, api.notifications(domain.NotifyKeyExpired, id), 1)
	assert.Equal(t, "expired", api.Admin(http.MethodGet, "/api-keys/"+id, nil).Str("status"))
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/api-keys/"+id, plain, nil).Status)

	// Extending the expiry revives the key.
	revived := api.Admin(http.MethodPut, "/api-keys/"+id, map[string]any{"expires_at": api.Now().Add(time.Hour).Format(time.RFC3339)})
	require.Equal(t, http.StatusOK, revived.Status, string(revived.Raw))
	assert.Equal(t, "active", revived.Str("status"))
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/api-keys/"+id, plain, nil).Status)
}

func TestAPIKeyScheduledRotation(t *testing.T) {
	api := newAKAPI(t)
	id, oldKey := api.mustCreate("/api-keys/organisation/service", "", map[string]any{"name": "monthly",
		"scopes": []string{"organisation_service_api_keys.read"}, "rotation_policy": map[string]any{"rotation_period": "monthly"}})
	got := api.Admin(http.MethodGet, "/api-keys/"+id, nil)
	next := api.Now().AddDate(0, 1, 0)
	assert.Equal(t, next.Format(time.RFC3339), got.Body["rotation_policy"].(map[string]any)["next_rotation_at"])
	before, ok, err := api.Read.APIKey(context.Background(), api.OrgID, id)
	require.NoError(t, err)
	require.True(t, ok)
	worker := api.worker()

	api.Advance(next.Sub(api.Now()) - 23*time.Hour)
	require.NoError(t, worker.Tick(context.Background()))
	require.Len(t, api.notifications(domain.NotifyKeyRotationSoon, id), 1, "the upcoming rotation is announced a day ahead")

	api.Advance(23*time.Hour + time.Minute)
	require.NoError(t, worker.Tick(context.Background()))
	api.settle()
	after, ok, err := api.Read.APIKey(context.Background(), api.OrgID, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.NotEqual(t, before.Hash, after.Hash, "the key has a new hash")
	assert.Equal(t, api.Now().AddDate(0, 1, 0), *after.RotationPolicy.NextRotationAt)
	rotated := api.events("ApiKeyRotated")
	require.Len(t, rotated, 1)
	assert.Equal(t, eventstore.ActorSystem, rotated[0].Metadata.ActorKind)
	assert.Len(t, api.notifications(domain.NotifyKeyRotated, id), 1)
	assert.Len(t, api.notifications(domain.NotifyKeyRotationSoon, id), 1)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/api-keys/"+id, oldKey, nil).Status, "the old key during the transition")

	count := len(api.events(""))
	require.NoError(t, worker.Tick(context.Background()))
	api.settle()
	assert.Len(t, api.events(""), count, "a second pass does nothing")

	api.Advance(31 * time.Minute)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/api-keys/"+id, oldKey, nil).Status, "the transition has ended")
}

func TestAPIKeyCreateIsIdempotent(t *testing.T) {
	api := newAKAPI(t)
	body := map[string]any{"name": "once", "scopes": []string{"logs.view"}}
	first := api.create("/api-keys/organisation/service", "", body, "Idempotency-Key", "create-once")
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	assert.Empty(t, first.Header.Get("Idempotent-Replayed"))
	second := api.create("/api-keys/organisation/service", "", body, "Idempotency-Key", "create-once")
	require.Equal(t, http.StatusOK, second.Status, string(second.Raw))
	assert.Equal(t, first.Str("id"), second.Str("id"))
	assert.Equal(t, first.Str("key"), second.Str("key"))
	assert.Equal(t, "true", second.Header.Get("Idempotent-Replayed"))
	var created int
	for _, ev := range api.events("ApiKeyCreated") {
		if ev.Stream == domain.Stream(domain.APIKeyPrefix, first.Str("id")) {
			created++
		}
	}
	assert.Equal(t, 1, created)

	other := api.create("/api-keys/organisation/service", "", body, "Idempotency-Key", "create-twice")
	require.Equal(t, http.StatusOK, other.Status)
	assert.NotEqual(t, first.Str("id"), other.Str("id"), "another idempotency key is another key")
	assert.NotEqual(t, first.Str("key"), other.Str("key"))
}
