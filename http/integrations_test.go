package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/internal/syncbuf"
)

// gatewayAPI is the test API with the gateway's admin resources routed in front of the rest
// (so these tests hold whether or not Register adds them), and a record of every answer body
// and log line, which the tests scan for the plaintext secrets they sent.
type gatewayAPI struct {
	*testAPI
	mu      sync.Mutex
	bodies  [][]byte
	logs    *syncbuf.Buffer
	secrets []string
}

func newGatewayAPI(t *testing.T) *gatewayAPI {
	t.Helper()
	api := newTestAPI(t)
	g := &gatewayAPI{testAPI: api, logs: &syncbuf.Buffer{}}
	log := slog.New(slog.NewTextHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	admin := &Admin{Log: log, Read: api.Read, Commands: api.AdminAPI.Commands, Deps: api.Deps, Secret: bytes.Repeat([]byte("s"), 32), Now: api.Now,
		WriteWait: 5 * time.Second, Features: Features{APIAccess: true, Policy: true, UsageLimits: true, AuditLogs: true, Guardrails: true},
		RecordDenial: func(ctx context.Context, d domain.AccessDenied, md eventstore.Metadata) {
			data, _ := json.Marshal(d)
			_, _ = api.Store.Append(ctx, domain.AuditStream, eventstore.Any, eventstore.EventData{
				ID: uuid.New(), Type: d.EventType(), Data: data, Metadata: md})
		},
	}
	root := mux.NewRouter()
	admin.registerGatewayResources(root.PathPrefix(BasePath).Subrouter())
	rest := api.Server
	root.NotFoundHandler, root.MethodNotAllowedHandler = rest.Config.Handler, rest.Config.Handler
	api.Server = httptest.NewServer(withTraceID(withRecover(log, root)))
	t.Cleanup(rest.Close)
	return g
}

// Do sends a request and keeps its answer's body for the leak check.
func (g *gatewayAPI) Do(method, path, key string, body any, headers ...string) response {
	g.t.Helper()
	r := g.testAPI.Do(method, path, key, body, headers...)
	g.mu.Lock()
	g.bodies = append(g.bodies, r.Raw)
	g.mu.Unlock()
	return r
}

// Admin sends a request as the bootstrap admin key.
func (g *gatewayAPI) Admin(method, path string, body any, headers ...string) response {
	g.t.Helper()
	return g.Do(method, path, g.AdminKey, body, headers...)
}

// secret returns a plaintext secret for the test to send, remembered for the leak check.
func (g *gatewayAPI) secret(name string) string {
	s := "sk-" + name + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")
	g.secrets = append(g.secrets, s)
	return s
}

// assertNoSecretLeaks checks that no plaintext secret the test sent is in any stored event's
// data or metadata, in any answer (the audit log's included), or in the log; and, when the
// test stored secrets (stored), that events hold them sealed.
func (g *gatewayAPI) assertNoSecretLeaks(t *testing.T, stored bool) {
	t.Helper()
	require.NotEmpty(t, g.secrets)
	audit := g.Admin(http.MethodGet, "/audit-logs?page_size=1000", nil)
	require.Equal(t, http.StatusOK, audit.Status, string(audit.Raw))
	events, err := g.Store.ReadAll(context.Background(), eventstore.Start, 100_000)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	sealed := 0
	for _, ev := range events {
		md, err := json.Marshal(ev.Metadata)
		require.NoError(t, err)
		for _, s := range g.secrets {
			assert.NotContains(t, string(ev.Data), s, "event %s of %s", ev.Type, ev.Stream)
			assert.NotContains(t, string(md), s, "metadata of event %s", ev.Type)
		}
		sealed += strings.Count(string(ev.Data), `"v1:`)
	}
	if stored {
		assert.Positive(t, sealed, "the secrets are stored, sealed")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, b := range g.bodies {
		for _, s := range g.secrets {
			assert.NotContains(t, string(b), s, "an answer holds a secret")
			// Nor its sealed form's neighbour: an answer never shows more than the last four.
			assert.NotContains(t, string(b), s[:len(s)-4], "an answer holds most of a secret")
		}
		assert.NotContains(t, string(b), `"v1:`, "an answer holds a sealed value")
	}
	for _, s := range g.secrets {
		assert.NotContains(t, g.logs.String(), s, "the log holds a secret")
	}
}

// newKey creates an API key and returns it.
func (g *gatewayAPI) newKey(t *testing.T, path string, body map[string]any) string {
	t.Helper()
	r := g.Admin(http.MethodPost, path, body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("key")
}

// obj returns an object field of a body.
func obj(m map[string]any, field string) map[string]any {
	o, _ := m[field].(map[string]any)
	return o
}

func TestIntegrationLifecycle(t *testing.T) {
	api := newGatewayAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	key := api.secret("openai")

	created := api.Admin(http.MethodPost, "/integrations", map[string]any{"name": "OpenAI prod", "ai_provider_id": "openai",
		"key": key, "description": "the main account", "tags": map[string]string{"env": "prod", "team": "ml"},
		"configurations": map[string]any{"openai_organization": "org-1"}})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	assert.Equal(t, "openai-prod", created.Str("slug"), "a slug derived from the name")
	require.NotEmpty(t, created.Str("id"))

	got := api.Admin(http.MethodGet, "/integrations/openai-prod", nil)
	require.Equal(t, http.StatusOK, got.Status, "read your write at once")
	assert.Equal(t, "integration", got.Str("object"))
	assert.Equal(t, "openai", got.Str("ai_provider_id"))
	assert.Equal(t, "active", got.Str("status"))
	assert.Equal(t, true, got.Body["has_key"])
	assert.Equal(t, "****"+key[len(key)-4:], got.Str("masked_key"))
	assert.Equal(t, "org-1", obj(got.Body, "configurations")["openai_organization"])
	assert.EqualValues(t, 0, got.Body["workspace_count"])
	assert.Nil(t, got.Body["workspace_id"], "an organisation integration")

	for _, c := range []struct {
		query string
		n     int
	}{{"", 1}, {"?tags=env:prod", 1}, {"?tags=env:prod,team:ml", 1}, {"?tags=env:dev", 0}, {"?tags=env:prod&tags=team:x", 0},
		{"?type=organisation", 1}, {"?type=workspace", 0}, {"?ai_provider_id=anthropic", 0}, {"?status=archived", 0}} {
		list := api.Admin(http.MethodGet, "/integrations"+c.query, nil)
		require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
		assert.Len(t, list.Data(), c.n, c.query)
	}

	newKey := api.secret("openai-rotated")
	upd := api.Admin(http.MethodPut, "/integrations/openai-prod", map[string]any{"name": "OpenAI", "key": newKey,
		"configurations": map[string]any{"openai_organization": nil, "openai_project": "p-1"}, "tags": nil})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "OpenAI", upd.Str("name"))
	assert.Equal(t, "****"+newKey[len(newKey)-4:], upd.Str("masked_key"))
	assert.Equal(t, map[string]any{"openai_project": "p-1"}, obj(upd.Body, "configurations"))
	assert.Empty(t, obj(upd.Body, "tags"))

	// Giving a workspace access creates its default provider, named by the integration's slug.
	access := api.Admin(http.MethodPut, "/integrations/openai-prod/workspaces", map[string]any{
		"workspaces": []map[string]any{{"id": ws, "enabled": true, "rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 10}}}}})
	require.Equal(t, http.StatusOK, access.Status, string(access.Raw))
	assert.EqualValues(t, 1, access.Body["total"])
	providers := api.Admin(http.MethodGet, "/providers?workspace_id="+ws, nil)
	require.Equal(t, http.StatusOK, providers.Status, string(providers.Raw))
	require.Len(t, providers.Data(), 1)
	assert.Equal(t, "openai-prod", providers.Data()[0]["slug"])
	assert.Equal(t, "openai-prod", providers.Data()[0]["integration_id"])
	assert.Equal(t, false, providers.Data()[0]["has_key"], "a provider of an integration holds no key of its own")

	again := api.Admin(http.MethodPut, "/integrations/openai-prod/workspaces", map[string]any{
		"workspaces": []map[string]any{{"id": ws, "enabled": true}}})
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	assert.Len(t, api.Admin(http.MethodGet, "/providers?workspace_id="+ws, nil).Data(), 1, "no second default provider")
	off := api.Admin(http.MethodPut, "/integrations/openai-prod/workspaces", map[string]any{
		"workspaces": []map[string]any{{"id": ws, "enabled": false}}})
	require.Equal(t, http.StatusOK, off.Status, string(off.Raw))
	on := api.Admin(http.MethodPut, "/integrations/openai-prod/workspaces", map[string]any{
		"workspaces": []map[string]any{{"id": ws, "enabled": true}}})
	require.Equal(t, http.StatusOK, on.Status, "re-enabling keeps the provider of this integration: %s", on.Raw)
	assert.Len(t, api.Admin(http.MethodGet, "/providers?workspace_id="+ws, nil).Data(), 1)

	listed := api.Admin(http.MethodGet, "/integrations/openai-prod/workspaces", nil)
	require.Equal(t, http.StatusOK, listed.Status)
	assert.EqualValues(t, 1, listed.Body["total"])
	assert.EqualValues(t, 1, api.Admin(http.MethodGet, "/integrations/openai-prod", nil).Body["workspace_count"])
	assert.Len(t, api.Admin(http.MethodGet, "/integrations?workspace_id="+ws, nil).Data(), 1)

	del := api.Admin(http.MethodDelete, "/integrations/openai-prod", nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/integrations/openai-prod", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/integrations/openai-prod", nil).Status)
	assert.Len(t, api.Admin(http.MethodGet, "/integrations?status=archived", nil).Data(), 1)
	again = api.Admin(http.MethodPost, "/integrations", map[string]any{"name": "again", "slug": "openai-prod", "ai_provider_id": "openai"})
	assert.Equal(t, http.StatusOK, again.Status, "a deleted integration frees its slug: %s", again.Raw)

	api.assertNoSecretLeaks(t, true)
}

func TestWorkspaceIntegrations(t *testing.T) {
	api := newGatewayAPI(t)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{manager: domain.RoleManager})
	other := api.seedWorkspace("team-b", nil)

	created := api.Admin(http.MethodPost, "/integrations", map[string]any{"name": "Claude", "ai_provider_id": "anthropic",
		"key": api.secret("anthropic"), "workspace_id": ws})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	assert.Equal(t, "claude", created.Str("default_provider_slug"))
	got := api.Admin(http.MethodGet, "/providers/claude?workspace_id="+ws, nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Equal(t, "anthropic", got.Str("ai_provider_id"))
	assert.Len(t, api.Admin(http.MethodGet, "/integrations?type=workspace", nil).Data(), 1)

	custom := api.Admin(http.MethodPost, "/integrations", map[string]any{"name": "Claude 2", "ai_provider_id": "anthropic",
		"workspace_id": ws, "default_provider_slug": "claude-two"})
	require.Equal(t, http.StatusOK, custom.Status, string(custom.Raw))
	assert.Equal(t, "claude-two", custom.Str("default_provider_slug"))
	none := api.Admin(http.MethodPost, "/integrations", map[string]any{"name": "Claude 3", "ai_provider_id": "anthropic",
		"workspace_id": ws, "create_default_provider": false})
	require.Equal(t, http.StatusOK, none.Status, string(none.Raw))
	assert.Empty(t, none.Str("default_provider_slug"))
	assert.Len(t, api.Admin(http.MethodGet, "/providers?workspace_id="+ws, nil).Data(), 2)

	taken := api.Admin(http.MethodPost, "/integrations", map[string]any{"name": "Claude 4", "ai_provider_id": "anthropic",
		"workspace_id": ws, "default_provider_slug": "claude"})
	assert.Equal(t, http.StatusConflict, taken.Status, string(taken.Raw))
	assert.Equal(t, "default_provider_slug", taken.ErrorParam())
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/integrations/claude-4", nil).Status, "nothing was written")

	foreign := api.Admin(http.MethodPut, "/integrations/claude/workspaces", map[string]any{
		"workspaces": []map[string]any{{"id": other, "enabled": true}}})
	assert.Equal(t, http.StatusBadRequest, foreign.Status, "a workspace integration serves its own workspace only")
	assert.Equal(t, "workspaces[0].id", foreign.ErrorParam())

	// A workspace manager's key creates integrations of its own workspace, unless the
	// workspace's security settings say managers may not.
	mgrKey := api.newKey(t, "/api-keys/workspace/user", map[string]any{"name": "mgr", "workspace_id": ws, "user_id": manager,
		"scopes": domain.WorkspaceScopes()})
	mine := api.Do(http.MethodPost, "/integrations", mgrKey, map[string]any{"name": "Groq", "ai_provider_id": "groq"})
	require.Equal(t, http.StatusOK, mine.Status, string(mine.Raw))
	assert.Equal(t, ws, api.Do(http.MethodGet, "/integrations/groq", mgrKey, nil).Str("workspace_id"))
	assert.Equal(t, http.StatusNotFound, api.Do(http.MethodGet, "/integrations/groq?x=1", api.newKey(t, "/api-keys/workspace/service",
		map[string]any{"name": "svc-b", "workspace_id": other, "scopes": domain.WorkspaceScopes()}), nil).Status,
		"another workspace does not see it")
	off := false
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, ws), domain.WorkspaceSecurityUpdated{WorkspaceID: ws,
		Security: domain.SecurityOverrides{ManagersWriteWsIntegrations: &off}, At: api.Now()})
	refused := api.Do(http.MethodPost, "/integrations", mgrKey, map[string]any{"name": "Groq 2", "ai_provider_id": "groq"})
	assert.Equal(t, http.StatusForbidden, refused.Status, string(refused.Raw))
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/integrations/groq", mgrKey, map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodPut, "/integrations/groq", map[string]any{"name": "x"}).Status,
		"organisation admins always may")

	api.assertNoSecretLeaks(t, true)
}

func TestIntegrationErrors(t *testing.T) {
	api := newGatewayAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	valid := func() map[string]any {
		return map[string]any{"name": "Prod", "ai_provider_id": "openai", "key": api.secret("valid")}
	}
	with := func(k string, v any) map[string]any { b := valid(); b[k] = v; return b }
	n := 0
	unique := func(b map[string]any) map[string]any {
		n++
		if _, ok := b["slug"]; !ok {
			b["slug"] = "s-" + strings.Repeat("x", n%3) + uuid.NewString()[:8]
		}
		return b
	}
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
		{"slug with capitals", with("slug", "Prod"), 400, "slug"},
		{"provider missing", with("ai_provider_id", ""), 400, "ai_provider_id"},
		{"provider unknown", with("ai_provider_id", "openia"), 400, "ai_provider_id"},
		{"key blank", with("key", " "), 400, "key"},
		{"key with a line break", with("key", "sk-a\nb"), 400, "key"},
		{"key of 8193", with("key", strings.Repeat("k", 8193)), 400, "key"},
		{"key not a string", with("key", 5), 400, "key"},
		{"description of 1025", with("description", strings.Repeat("d", 1025)), 400, "description"},
		{"custom host on loopback", with("configurations", map[string]any{"custom_host": "http://127.0.0.1:8000/v1"}), 400, "configurations.custom_host"},
		{"custom host mapped", with("configurations", map[string]any{"custom_host": "http://[::ffff:169.254.169.254]/"}), 400, "configurations.custom_host"},
		{"base url on a private network", with("configurations", map[string]any{"base_url": "https://10.1.2.3"}), 400, "configurations.base_url"},
		{"base url as a number", with("configurations", map[string]any{"base_url": "http://2130706433/"}), 400, "configurations.base_url"},
		{"custom host not http", with("configurations", map[string]any{"custom_host": "ftp://models.example.com"}), 400, "configurations.custom_host"},
		{"custom host public", with("configurations", map[string]any{"custom_host": "https://models.example.com/v1"}), 200, ""},
		{"azure without a resource", func() map[string]any { b := with("ai_provider_id", "azure-openai"); return b }(), 400, "configurations.azure_resource_name"},
		{"azure auth mode", func() map[string]any {
			b := with("ai_provider_id", "azure-openai")
			b["configurations"] = map[string]any{"azure_resource_name": "r", "azure_auth_mode": "password"}
			return b
		}(), 400, "configurations.azure_auth_mode"},
		{"configuration object where a string belongs", with("configurations", map[string]any{"openai_project": map[string]any{}}), 400, "configurations.openai_project"},
		{"configuration field name", with("configurations", map[string]any{"Bad-Name": "x"}), 400, "configurations"},
		{"51 tags", with("tags", func() map[string]string {
			m := map[string]string{}
			for i := 0; i < 51; i++ {
				m[uuid.NewString()] = "v"
			}
			return m
		}()), 400, "tags"},
		{"tag value of 256", with("tags", map[string]string{"env": strings.Repeat("v", 256)}), 400, "tags.env"},
		{"tag key with a colon", with("tags", map[string]string{"a:b": "v"}), 400, "tags"},
		{"default provider slug without a workspace", with("default_provider_slug", "x"), 400, "default_provider_slug"},
		{"unknown workspace", with("workspace_id", uuid.NewString()), 404, "workspace_id"},
		{"bad default provider slug", func() map[string]any { b := with("workspace_id", ws); b["default_provider_slug"] = "A B"; return b }(), 400, "default_provider_slug"},
		{"unknown field", with("colour", "red"), 400, "colour"},
		{"not JSON", "{", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if m, ok := body.(map[string]any); ok {
				body = unique(m)
			}
			r := api.Admin(http.MethodPost, "/integrations", body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}

	first := api.Admin(http.MethodPost, "/integrations", with("slug", "dup"))
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	dup := api.Admin(http.MethodPost, "/integrations", with("slug", "dup"))
	assert.Equal(t, http.StatusConflict, dup.Status)
	assert.Equal(t, "slug", dup.ErrorParam())

	for _, c := range []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"name at 256", map[string]any{"name": strings.Repeat("n", 256)}, 400, "name"},
		{"name at 255", map[string]any{"name": strings.Repeat("n", 255)}, 200, ""},
		{"nothing", map[string]any{}, 400, ""},
		{"key blank", map[string]any{"key": ""}, 400, "key"},
		{"custom host on a private network", map[string]any{"configurations": map[string]any{"custom_host": "http://192.168.1.1"}}, 400, "configurations.custom_host"},
		{"ai_provider_id cannot change", map[string]any{"ai_provider_id": "anthropic"}, 400, "ai_provider_id"},
	} {
		t.Run("update "+c.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/integrations/dup", c.body)
			require.Equal(t, c.status, r.Status, string(r.Raw))
			assert.Equal(t, c.param, r.ErrorParam(), r.ErrorMessage())
		})
	}

	for _, c := range []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"no workspaces", map[string]any{"workspaces": []any{}}, 400, "workspaces"},
		{"enabled missing", map[string]any{"workspaces": []map[string]any{{"id": ws}}}, 400, "workspaces[0].enabled"},
		{"unknown workspace", map[string]any{"workspaces": []map[string]any{{"id": uuid.NewString(), "enabled": true}}}, 404, "workspaces[0].id"},
		{"repeated workspace", map[string]any{"workspaces": []map[string]any{{"id": ws, "enabled": true}, {"id": ws, "enabled": false}}}, 400, "workspaces[1].id"},
		{"two rate limits", map[string]any{"workspaces": []map[string]any{{"id": ws, "enabled": true, "rate_limits": []map[string]any{
			{"type": "requests", "unit": "rpm", "value": 1}, {"type": "requests", "unit": "rph", "value": 1}}}}}, 400, "workspaces[0].rate_limits"},
		{"bad rate limit", map[string]any{"workspaces": []map[string]any{{"id": ws, "enabled": true, "rate_limits": []map[string]any{
			{"type": "requests", "unit": "rps", "value": 1}}}}}, 400, "workspaces[0].rate_limits[0].unit"},
		{"bad usage limit", map[string]any{"workspaces": []map[string]any{{"id": ws, "enabled": true, "usage_limits": []map[string]any{
			{"type": "cost", "credit_limit": 0}}}}}, 400, "workspaces[0].usage_limits[0].credit_limit"},
		{"bad default slug", map[string]any{"default_provider_slug": "No", "workspaces": []map[string]any{{"id": ws, "enabled": true}}}, 400, "default_provider_slug"},
	} {
		t.Run("workspaces "+c.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/integrations/dup/workspaces", c.body)
			require.Equal(t, c.status, r.Status, string(r.Raw))
			assert.Equal(t, c.param, r.ErrorParam(), r.ErrorMessage())
		})
	}
	assert.Empty(t, api.Admin(http.MethodGet, "/providers?workspace_id="+ws, nil).Data(), "refused requests wrote nothing")

	// The default provider's slug is taken in the workspace by another provider: 409, and
	// the workspace does not get access.
	other := api.Admin(http.MethodPost, "/providers", map[string]any{"name": "x", "slug": "dup", "workspace_id": ws,
		"ai_provider_id": "openai", "key": api.secret("other")})
	require.Equal(t, http.StatusOK, other.Status, string(other.Raw))
	clash := api.Admin(http.MethodPut, "/integrations/dup/workspaces", map[string]any{"workspaces": []map[string]any{{"id": ws, "enabled": true}}})
	assert.Equal(t, http.StatusConflict, clash.Status, string(clash.Raw))
	assert.Equal(t, "default_provider_slug", clash.ErrorParam())
	assert.EqualValues(t, 0, api.Admin(http.MethodGet, "/integrations/dup/workspaces", nil).Body["total"])
	named := api.Admin(http.MethodPut, "/integrations/dup/workspaces", map[string]any{"workspaces": []map[string]any{
		{"id": ws, "enabled": true, "default_provider_slug": "dup-two"}}})
	require.Equal(t, http.StatusOK, named.Status, string(named.Raw))
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/providers/dup-two?workspace_id="+ws, nil).Status)

	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/integrations", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPost, "/integrations", "cw-wrong", valid()).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/integrations/nope", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, "/integrations/nope", map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/integrations/nope/workspaces", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/integrations?type=global", nil).Status)
	bad := api.Admin(http.MethodGet, "/integrations?tags=env", nil)
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, "tags", bad.ErrorParam())

	logsOnly := api.newKey(t, "/api-keys/organisation/service", map[string]any{"name": "logs", "scopes": []string{"logs.view"}})
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/integrations", logsOnly, valid()).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/integrations", logsOnly, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/integrations/dup", logsOnly, nil).Status)
	member := api.seedUser("member@example.com", domain.RoleMember)
	ws2 := api.seedWorkspace("team-m", map[string]domain.Role{member: domain.RoleMember})
	memberKey := api.newKey(t, "/api-keys/workspace/user", map[string]any{"name": "mem", "workspace_id": ws2, "user_id": member,
		"scopes": domain.WorkspaceScopes()})
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/integrations", memberKey, valid()).Status)

	api.assertNoSecretLeaks(t, true)
}

// Every read of a gateway resource answers ?as_of= with the resource as it was then.
func TestGatewayResourcesAsOf(t *testing.T) {
	api := newGatewayAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	before := asOfMark()
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/integrations", map[string]any{"name": "Old", "slug": "integ",
		"ai_provider_id": "openai", "key": api.secret("k"), "workspace_id": ws, "default_provider_slug": "prov"}).Status)
	cfg := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "Old", "slug": "cfg", "workspace_id": ws,
		"config": map[string]any{"provider": "@prov"}, "is_default": true})
	require.Equal(t, http.StatusOK, cfg.Status, string(cfg.Raw))
	mid := asOfMark()
	for _, c := range []struct{ path, body string }{
		{"/integrations/integ", `{"name":"New"}`}, {"/providers/prov", `{"name":"New"}`},
		{"/configs/cfg", `{"name":"New","config":{"provider":"@other"},"is_default":false}`},
	} {
		r := api.Admin(http.MethodPut, c.path, c.body)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	}
	for _, c := range []struct {
		path string
		name func(response) any
	}{
		{"/integrations/integ", func(r response) any { return r.Body["name"] }},
		{"/providers/prov", func(r response) any { return r.Body["name"] }},
		{"/virtual-keys/prov", func(r response) any { return r.Body["name"] }},
		{"/configs/cfg", func(r response) any { return obj(r.Body, "data")["name"] }},
	} {
		t.Run(c.path, func(t *testing.T) {
			now := api.Admin(http.MethodGet, c.path, nil)
			require.Equal(t, http.StatusOK, now.Status, string(now.Raw))
			assert.Equal(t, "New", c.name(now))
			past := api.Admin(http.MethodGet, c.path+"?"+asOfQuery(mid), nil)
			require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
			assert.Equal(t, "Old", c.name(past))
			asOfHeaderTime(t, past)
			gone := api.Admin(http.MethodGet, c.path+"?"+asOfQuery(before), nil)
			assert.Equal(t, http.StatusNotFound, gone.Status, string(gone.Raw))
		})
	}
	past := obj(api.Admin(http.MethodGet, "/configs/cfg?"+asOfQuery(mid), nil).Body, "data")
	assert.EqualValues(t, 1, past["is_default"], "it was the default then")
	assert.Equal(t, map[string]any{"provider": "@prov"}, past["config"], "with the version then in force")
	assert.EqualValues(t, 0, obj(api.Admin(http.MethodGet, "/configs/cfg", nil).Body, "data")["is_default"])
	bad := api.Admin(http.MethodGet, "/integrations/integ?as_of=yesterday", nil)
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, "as_of", bad.ErrorParam())
	api.assertNoSecretLeaks(t, true)
}
