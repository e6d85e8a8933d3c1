package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// seedIntegration creates an organisation integration and gives the workspaces access,
// without default providers.
func (g *gatewayAPI) seedIntegration(t *testing.T, slug, provider string, workspaces ...string) {
	t.Helper()
	r := g.Admin(http.MethodPost, "/integrations", map[string]any{"name": slug, "slug": slug, "ai_provider_id": provider,
		"key": g.secret(slug)})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	if len(workspaces) == 0 {
		return
	}
	var access []map[string]any
	for _, ws := range workspaces {
		access = append(access, map[string]any{"id": ws, "enabled": true})
	}
	r = g.Admin(http.MethodPut, "/integrations/"+slug+"/workspaces", map[string]any{"workspaces": access, "create_default_provider": false})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
}

func TestProviderLifecycle(t *testing.T) {
	api := newGatewayAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	api.seedIntegration(t, "openai-prod", "openai", ws)

	created := api.Admin(http.MethodPost, "/providers", map[string]any{"name": "Main OpenAI", "integration_id": "openai-prod",
		"workspace_id": ws, "note": "for the chat app", "usage_limits": map[string]any{"credit_limit": 10, "type": "cost", "periodic_reset": "monthly"},
		"rate_limits": map[string]any{"type": "requests", "unit": "rpm", "value": 5}, "tags": map[string]string{"env": "prod"}})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	slug := created.Str("slug")
	assert.True(t, strings.HasPrefix(slug, "main-openai-"), "a slug from the name with a suffix: %s", slug)

	got := api.Admin(http.MethodGet, "/providers/"+slug+"?workspace_id="+ws, nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Equal(t, "provider", got.Str("object"))
	assert.Equal(t, "openai-prod", got.Str("integration_id"))
	assert.Equal(t, "openai", got.Str("ai_provider_id"))
	assert.Equal(t, "active", got.Str("status"))
	assert.Equal(t, "for the chat app", got.Str("note"))
	assert.Equal(t, false, got.Body["has_key"])
	assert.EqualValues(t, 10, obj(got.Body, "usage_limits")["credit_limit"])
	assert.NotNil(t, obj(got.Body, "usage_limits")["next_usage_reset_at"], "a periodic reset starts its first period")
	require.Len(t, got.Body["rate_limits"], 1, "one rate limit object is a list of one")
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/providers/"+slug, nil).Status,
		"an organisation key may leave workspace_id out when the slug is in one workspace")

	for _, c := range []struct {
		query string
		n     int
	}{{"", 1}, {"?workspace_id=" + ws, 1}, {"?tags=env:prod", 1}, {"?tags=env:dev", 0}, {"?integration_id=openai-prod", 1},
		{"?integration_id=other", 0}, {"?ai_provider_id=openai", 1}, {"?status=archived", 0}} {
		list := api.Admin(http.MethodGet, "/providers"+c.query, nil)
		require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
		assert.Len(t, list.Data(), c.n, c.query)
	}

	upd := api.Admin(http.MethodPut, "/providers/"+slug+"?workspace_id="+ws, map[string]any{"note": nil, "usage_limits": nil,
		"rate_limits": []map[string]any{{"type": "tokens", "unit": "rpd", "value": 1000}}, "reset_usage": true,
		"expires_at": api.Now().Add(time.Hour).Format(time.RFC3339), "tags": nil})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Nil(t, upd.Body["note"])
	assert.Nil(t, upd.Body["usage_limits"])
	assert.NotNil(t, upd.Body["last_reset_at"])
	assert.Empty(t, obj(upd.Body, "tags"))
	api.Advance(2 * time.Hour)
	assert.Equal(t, "expired", api.Admin(http.MethodGet, "/providers/"+slug, nil).Str("status"))
	upd = api.Admin(http.MethodPut, "/providers/"+slug, map[string]any{"expires_at": nil})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "active", upd.Str("status"))

	// A provider with a credential of its own.
	key := api.secret("anthropic")
	own := api.Admin(http.MethodPost, "/providers", map[string]any{"name": "Claude", "slug": "claude", "workspace_id": ws,
		"ai_provider_id": "anthropic", "key": key, "configurations": map[string]any{"custom_host": "https://llm.example.com/v1"}})
	require.Equal(t, http.StatusOK, own.Status, string(own.Raw))
	claude := api.Admin(http.MethodGet, "/providers/claude", nil)
	assert.Equal(t, true, claude.Body["has_key"])
	assert.Equal(t, "****"+key[len(key)-4:], claude.Str("masked_key"))
	assert.Equal(t, "https://llm.example.com/v1", obj(claude.Body, "configurations")["custom_host"])
	newKey := api.secret("anthropic-2")
	rotated := api.Admin(http.MethodPut, "/providers/claude", map[string]any{"key": newKey,
		"configurations": map[string]any{"custom_headers": map[string]any{"x-team": api.secret("header")}}})
	require.Equal(t, http.StatusOK, rotated.Status, string(rotated.Raw))
	assert.Equal(t, "****"+newKey[len(newKey)-4:], rotated.Str("masked_key"))
	assert.NotEmpty(t, obj(rotated.Body, "configurations")["masked_custom_headers"], "a secret configuration field shows masked")
	assert.Nil(t, obj(rotated.Body, "configurations")["custom_headers"])

	del := api.Admin(http.MethodDelete, "/providers/claude", nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/providers/claude", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/providers/claude", nil).Status)
	assert.Len(t, api.Admin(http.MethodGet, "/providers?status=archived", nil).Data(), 1)
	again := api.Admin(http.MethodPost, "/providers", map[string]any{"name": "Claude", "slug": "claude", "workspace_id": ws,
		"ai_provider_id": "anthropic", "key": api.secret("anthropic-3")})
	assert.Equal(t, http.StatusOK, again.Status, "a deleted provider frees its slug: %s", again.Raw)

	api.assertNoSecretLeaks(t, true)
}

func TestProviderErrors(t *testing.T) {
	api := newGatewayAPI(t)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	member := api.seedUser("member@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{manager: domain.RoleManager, member: domain.RoleMember})
	wsB := api.seedWorkspace("team-b", nil)
	api.seedIntegration(t, "openai-prod", "openai", ws, wsB)
	api.seedIntegration(t, "not-here", "openai")

	valid := func() map[string]any {
		return map[string]any{"name": "p", "integration_id": "openai-prod", "workspace_id": ws}
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
		{"slug at 256", with("slug", strings.Repeat("s", 256)), 400, "slug"},
		{"slug with a space", with("slug", "a b"), 400, "slug"},
		{"note of 1025", with("note", strings.Repeat("n", 1025)), 400, "note"},
		{"no integration and no provider type", with("integration_id", ""), 400, "integration_id"},
		{"integration by its other name", func() map[string]any {
			b := with("integration_id", "")
			b["integration_slug"] = "openai-prod"
			return b
		}(), 200, ""},
		{"unknown integration", with("integration_id", "nope"), 404, "integration_id"},
		{"integration without access", with("integration_id", "not-here"), 400, "integration_id"},
		{"integration and a key", with("key", "sk-1234567890abcdef"), 400, "key"},
		{"integration of another type", with("ai_provider_id", "anthropic"), 400, "ai_provider_id"},
		{"own provider type unknown", func() map[string]any { b := with("integration_id", ""); b["ai_provider_id"] = "gpt"; return b }(), 400, "ai_provider_id"},
		{"expired already", with("expires_at", api.Now().Add(-time.Minute).Format(time.RFC3339)), 400, "expires_at"},
		{"usage limit of 0", with("usage_limits", map[string]any{"credit_limit": 0, "type": "cost"}), 400, "usage_limits.credit_limit"},
		{"usage limit unknown field", with("usage_limits", map[string]any{"credit_limit": 5, "type": "cost", "colour": 1}), 400, "colour"},
		{"rate limit unit", with("rate_limits", map[string]any{"type": "requests", "unit": "rps", "value": 1}), 400, "rate_limits[0].unit"},
		{"rate limits not a list", with("rate_limits", "fast"), 400, "rate_limits"},
		{"tag key blank", with("tags", map[string]string{" ": "v"}), 400, "tags"},
		{"workspace unknown", with("workspace_id", uuid.NewString()), 404, "workspace_id"},
		{"workspace missing", with("workspace_id", ""), 400, "workspace_id"},
		{"unknown field", with("colour", "red"), 400, "colour"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/providers", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}

	first := api.Admin(http.MethodPost, "/providers", with("slug", "dup"))
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	dup := api.Admin(http.MethodPost, "/providers", with("slug", "dup"))
	assert.Equal(t, http.StatusConflict, dup.Status)
	assert.Equal(t, "slug", dup.ErrorParam())
	elsewhere := api.Admin(http.MethodPost, "/providers", map[string]any{"name": "p", "slug": "dup", "integration_id": "openai-prod", "workspace_id": wsB})
	assert.Equal(t, http.StatusOK, elsewhere.Status, "slugs are unique per workspace: %s", elsewhere.Raw)
	ambiguous := api.Admin(http.MethodGet, "/providers/dup", nil)
	assert.Equal(t, http.StatusBadRequest, ambiguous.Status)
	assert.Equal(t, "workspace_id", ambiguous.ErrorParam())

	for _, c := range []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"name at 256", map[string]any{"name": strings.Repeat("n", 256)}, 400, "name"},
		{"name null", map[string]any{"name": nil}, 400, "name"},
		{"nothing", map[string]any{}, 400, ""},
		{"a key on a provider of an integration", map[string]any{"key": "sk-1234567890abcdef"}, 400, "key"},
		{"configurations on a provider of an integration", map[string]any{"configurations": map[string]any{"openai_project": "p"}}, 400, "configurations"},
		{"expired already", map[string]any{"expires_at": api.Now().Add(-time.Minute).Format(time.RFC3339)}, 400, "expires_at"},
		{"unknown field", map[string]any{"integration_id": "x"}, 400, "integration_id"},
		{"reset_usage not a boolean", map[string]any{"reset_usage": "yes"}, 400, "reset_usage"},
	} {
		t.Run("update "+c.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/providers/dup?workspace_id="+ws, c.body)
			require.Equal(t, c.status, r.Status, string(r.Raw))
			assert.Equal(t, c.param, r.ErrorParam(), r.ErrorMessage())
		})
	}

	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/providers", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPost, "/providers", "cw-wrong", valid()).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/providers/nope?workspace_id="+ws, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, "/providers/nope?workspace_id="+ws, map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/providers/nope?workspace_id="+ws, nil).Status)

	// Workspace managers manage their workspace's providers; members read them only.
	keyOf := func(user string) string {
		return api.newKey(t, "/api-keys/workspace/user", map[string]any{"name": "k", "workspace_id": ws, "user_id": user,
			"scopes": domain.WorkspaceScopes()})
	}
	mgrKey, memberKey := keyOf(manager), keyOf(member)
	mine := api.Do(http.MethodPost, "/providers", mgrKey, map[string]any{"name": "mgr", "integration_id": "openai-prod"})
	require.Equal(t, http.StatusOK, mine.Status, "a workspace key's workspace is the default: %s", mine.Raw)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/providers", mgrKey, map[string]any{"name": "x",
		"integration_id": "openai-prod", "workspace_id": wsB}).Status, "not another workspace")
	refused := api.Do(http.MethodPost, "/providers", memberKey, map[string]any{"name": "mem", "integration_id": "openai-prod"})
	assert.Equal(t, http.StatusForbidden, refused.Status, string(refused.Raw))
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/providers/dup", memberKey, map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/providers/dup", memberKey, nil).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/providers/dup", memberKey, nil).Status, "members read")
	assert.Len(t, api.Do(http.MethodGet, "/providers", memberKey, nil).Data(), 5, "a member lists its workspace's providers only")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/providers?workspace_id="+wsB, memberKey, nil).Status)
	noCreate := api.newKey(t, "/api-keys/organisation/service", map[string]any{"name": "ro", "scopes": []string{"providers.list", "providers.read"}})
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/providers", noCreate, valid()).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/providers", noCreate, nil).Status)

	api.assertNoSecretLeaks(t, true)
}
