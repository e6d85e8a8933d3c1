package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

func TestConfigLifecycle(t *testing.T) {
	api := newGatewayAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	config := map[string]any{"retry": map[string]any{"attempts": 3, "on_status_codes": []int{429, 529}},
		"request_timeout": 30000, "strategy": map[string]any{"mode": "fallback"},
		"targets": []map[string]any{{"provider": "@openai-main"}, {"provider": "azure-openai", "virtual_key": "azure-test"}}}

	created := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "Fallback", "config": config, "workspace_id": ws, "isDefault": 1})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	assert.Equal(t, true, created.Body["success"])
	data := obj(created.Body, "data")
	id, slug, v1 := data["id"].(string), data["slug"].(string), data["version_id"].(string)
	require.NotEmpty(t, id)
	require.NotEmpty(t, v1)
	assert.True(t, strings.HasPrefix(slug, "fallback-"), slug)

	for _, ref := range []string{slug, id} {
		got := api.Admin(http.MethodGet, "/configs/"+ref, nil)
		require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
		d := obj(got.Body, "data")
		assert.Equal(t, id, d["id"])
		assert.EqualValues(t, 1, d["is_default"])
		assert.Equal(t, v1, d["version_id"])
		want, _ := json.Marshal(config)
		have, _ := json.Marshal(d["config"])
		assert.JSONEq(t, string(want), string(have), "the config as saved")
	}

	newConfig := map[string]any{"provider": "@openai-main", "request_timeout": 10000}
	upd := api.Admin(http.MethodPut, "/configs/"+slug, map[string]any{"name": "Single", "config": newConfig, "status": "active"})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	v2 := obj(upd.Body, "data")["version_id"].(string)
	assert.NotEqual(t, v1, v2, "a new config is a new version")
	renamed := api.Admin(http.MethodPut, "/configs/"+slug, map[string]any{"name": "Single only"})
	require.Equal(t, http.StatusOK, renamed.Status, string(renamed.Raw))
	assert.Equal(t, v2, obj(renamed.Body, "data")["version_id"], "a rename is no new version")

	versions := api.Admin(http.MethodGet, "/configs/"+slug+"/versions", nil)
	require.Equal(t, http.StatusOK, versions.Status, string(versions.Raw))
	require.Len(t, versions.Data(), 2)
	assert.Equal(t, v2, versions.Data()[0]["version_id"], "newest first")
	assert.Equal(t, v1, versions.Data()[1]["version_id"])
	assert.JSONEq(t, `{"provider":"@openai-main","request_timeout":10000}`, versions.Data()[0]["config"].(string))
	assert.Equal(t, "json", versions.Data()[0]["format"])

	other := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "Other", "slug": "other", "workspace_id": ws,
		"config": map[string]any{"provider": "openai"}, "is_default": true})
	require.Equal(t, http.StatusOK, other.Status, string(other.Raw))
	assert.EqualValues(t, 0, obj(api.Admin(http.MethodGet, "/configs/"+slug, nil).Body, "data")["is_default"], "one default per workspace")
	assert.EqualValues(t, 1, obj(api.Admin(http.MethodGet, "/configs/other", nil).Body, "data")["is_default"])
	list := api.Admin(http.MethodGet, "/configs", nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	assert.Equal(t, true, list.Body["success"])
	assert.Len(t, list.Data(), 2)
	assert.Nil(t, list.Data()[0]["config"], "lists leave the config out")
	assert.Len(t, api.Admin(http.MethodGet, "/configs?workspace_id="+ws, nil).Data(), 2)

	unset := api.Admin(http.MethodPut, "/configs/other", map[string]any{"isDefault": 0})
	require.Equal(t, http.StatusOK, unset.Status, string(unset.Raw))
	assert.EqualValues(t, 0, obj(api.Admin(http.MethodGet, "/configs/other", nil).Body, "data")["is_default"])

	del := api.Admin(http.MethodDelete, "/configs/"+slug, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/configs/"+slug, nil).Status)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/configs/"+id+"?status=archived", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/configs/"+slug, nil).Status)
	assert.Len(t, api.Admin(http.MethodGet, "/configs", nil).Data(), 1)
	assert.Len(t, api.Admin(http.MethodGet, "/configs?status=archived", nil).Data(), 1)
}

// Every code of the AB catalogue, over HTTP: the answer's code is the AB code and its param
// the path of the field in the body.
func TestConfigValidationCodes(t *testing.T) {
	api := newGatewayAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	target := func(extra map[string]any) map[string]any {
		out := map[string]any{"provider": "@main"}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	nested := func(depth int) map[string]any {
		node := map[string]any{"provider": "@leaf"}
		for i := 0; i < depth; i++ {
			node = map[string]any{"strategy": map[string]any{"mode": "fallback"}, "targets": []any{node}}
		}
		return node
	}
	cases := []struct {
		name   string
		config any
		code   string
		param  string
	}{
		{"not an object", []int{1}, "AB01", "config"},
		{"a string", "fallback", "AB01", "config"},
		{"unknown field", map[string]any{"provider": "@a", "colour": "red"}, "AB01", "config.colour"},
		{"unknown target field", map[string]any{"strategy": map[string]any{"mode": "fallback"}, "targets": []any{target(map[string]any{"priority": 1})}}, "AB01", "config.targets[0].priority"},
		{"strict not a boolean", map[string]any{"provider": "@a", "strict_openai_compliance": "no"}, "AB01", "config.strict_openai_compliance"},
		{"strategy mode", map[string]any{"strategy": map[string]any{"mode": "random"}, "targets": []any{target(nil)}}, "AB02", "config.strategy.mode"},
		{"targets without a strategy", map[string]any{"targets": []any{target(nil)}}, "AB02", "config.strategy"},
		{"no targets", map[string]any{"strategy": map[string]any{"mode": "fallback"}, "targets": []any{}}, "AB03", "config.targets"},
		{"strategy without targets", map[string]any{"strategy": map[string]any{"mode": "loadbalance"}}, "AB03", "config.targets"},
		{"101 targets", map[string]any{"strategy": map[string]any{"mode": "fallback"}, "targets": func() []any {
			out := make([]any, 101)
			for i := range out {
				out[i] = target(nil)
			}
			return out
		}()}, "AB03", "config.targets"},
		{"negative weight", map[string]any{"strategy": map[string]any{"mode": "loadbalance"}, "targets": []any{target(nil), target(map[string]any{"weight": -1})}}, "AB04", "config.targets[1].weight"},
		{"all weights zero", map[string]any{"strategy": map[string]any{"mode": "loadbalance"}, "targets": []any{target(map[string]any{"weight": 0}), target(map[string]any{"weight": 0})}}, "AB04", "config.targets"},
		{"weight on the config", map[string]any{"provider": "@a", "weight": 1}, "AB04", "config.weight"},
		{"retry attempts 6", map[string]any{"provider": "@a", "retry": map[string]any{"attempts": 6}}, "AB05", "config.retry.attempts"},
		{"retry attempts -1", map[string]any{"provider": "@a", "retry": map[string]any{"attempts": -1}}, "AB05", "config.retry.attempts"},
		{"retry not an object", map[string]any{"provider": "@a", "retry": 3}, "AB05", "config.retry"},
		{"status code 600", map[string]any{"provider": "@a", "retry": map[string]any{"attempts": 1, "on_status_codes": []int{429, 600}}}, "AB06", "config.retry.on_status_codes[1]"},
		{"fallback status codes not a list", map[string]any{"strategy": map[string]any{"mode": "fallback", "on_status_codes": 500}, "targets": []any{target(nil)}}, "AB06", "config.strategy.on_status_codes"},
		{"timeout 0", map[string]any{"provider": "@a", "request_timeout": 0}, "AB07", "config.request_timeout"},
		{"timeout fractional", map[string]any{"provider": "@a", "request_timeout": 1.5}, "AB07", "config.request_timeout"},
		{"timeout over an hour", map[string]any{"provider": "@a", "request_timeout": 3600001}, "AB07", "config.request_timeout"},
		{"target with no provider", map[string]any{"strategy": map[string]any{"mode": "fallback"}, "targets": []any{map[string]any{"override_params": map[string]any{"model": "x"}}}}, "AB08", "config.targets[0]"},
		{"cache mode", map[string]any{"provider": "@a", "cache": map[string]any{"mode": "forever"}}, "AB09", "config.cache.mode"},
		{"cache max age 0", map[string]any{"provider": "@a", "cache": map[string]any{"mode": "semantic", "max_age": 0}}, "AB09", "config.cache.max_age"},
		{"cache below the root", map[string]any{"strategy": map[string]any{"mode": "single"}, "targets": []any{map[string]any{"provider": "@a", "cache": map[string]any{"mode": "simple", "max_age": 60}}}}, "AB09", "config.targets[0].cache"},
		{"cache max_age over a year", map[string]any{"provider": "@a", "cache": map[string]any{"mode": "simple", "max_age": 31536001}}, "AB09", "config.cache.max_age"},
		{"override params not an object", map[string]any{"provider": "@a", "override_params": []int{1}}, "AB10", "config.override_params"},
		{"nested 6 deep", nested(6), "AB11", "config.targets[0].targets[0].targets[0].targets[0].targets[0].targets"},
		{"an api key in a saved config", map[string]any{"provider": "openai", "api_key": api.secret("inline")}, "AB12", "config.api_key"},
		{"an aws secret in a target", map[string]any{"strategy": map[string]any{"mode": "fallback"}, "targets": []any{map[string]any{"provider": "bedrock", "aws_secret_access_key": api.secret("aws")}}}, "AB12", "config.targets[0].aws_secret_access_key"},
		{"unknown provider type", map[string]any{"provider": "gpt"}, "AB13", "config.provider"},
		{"bad managed provider", map[string]any{"provider": "@Main Key"}, "AB13", "config.provider"},
		{"both spellings", map[string]any{"provider": "@a", "virtual_key": "b"}, "AB13", "config.virtual_key"},
		{"custom host not a URL", map[string]any{"provider": "openai", "custom_host": "llm.local"}, "AB14", "config.custom_host"},
		{"custom host on a metadata address", map[string]any{"provider": "openai", "custom_host": "http://169.254.169.254/latest"}, "AB14", "config.custom_host"},
		{"forward headers", map[string]any{"provider": "@a", "forward_headers": []string{"x-ok", "bad header"}}, "AB15", "config.forward_headers[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "c", "workspace_id": ws, "config": tc.config})
			require.Equal(t, http.StatusBadRequest, r.Status, string(r.Raw))
			assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			code, _ := obj(r.Body, "error")["code"].(string)
			assert.Equal(t, tc.code, code, r.ErrorMessage())
		})
	}
	ok := []struct {
		name   string
		config any
	}{
		{"nested 5 deep", nested(5)},
		{"retry attempts 5", map[string]any{"provider": "@a", "retry": map[string]any{"attempts": 5}}},
		{"retry attempts 0", map[string]any{"provider": "@a", "retry": map[string]any{"attempts": 0}}},
		{"timeout of an hour", map[string]any{"provider": "@a", "request_timeout": 3600000}},
		{"weights", map[string]any{"strategy": map[string]any{"mode": "loadbalance"}, "targets": []any{target(map[string]any{"weight": 0}), target(map[string]any{"weight": 0.5})}}},
		{"100 targets", map[string]any{"strategy": map[string]any{"mode": "fallback"}, "targets": func() []any {
			out := make([]any, 100)
			for i := range out {
				out[i] = target(nil)
			}
			return out
		}()}},
		{"settings only", map[string]any{"retry": map[string]any{"attempts": 2}, "request_timeout": 1000}},
		{"public custom host", map[string]any{"provider": "openai", "custom_host": "https://llm.example.com/v1"}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "c", "workspace_id": ws, "config": tc.config})
			require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		})
	}
	assert.Equal(t, "config", api.Admin(http.MethodPost, "/configs", `{"name":"c","workspace_id":"`+ws+`","config":null}`).ErrorParam())
	missing := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "c", "workspace_id": ws})
	assert.Equal(t, http.StatusBadRequest, missing.Status)
	assert.Equal(t, "config", missing.ErrorParam())
	bad := api.Admin(http.MethodPut, "/configs/"+api.anyConfig(t, ws), map[string]any{"config": map[string]any{"retry": map[string]any{"attempts": 9}}})
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, "config.retry.attempts", bad.ErrorParam())
	api.assertNoSecretLeaks(t, false)
}

// anyConfig creates a config and returns its slug.
func (g *gatewayAPI) anyConfig(t *testing.T, ws string) string {
	t.Helper()
	r := g.Admin(http.MethodPost, "/configs", map[string]any{"name": "any", "workspace_id": ws, "config": map[string]any{"provider": "@a"}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return obj(r.Body, "data")["slug"].(string)
}

func TestConfigErrors(t *testing.T) {
	api := newGatewayAPI(t)
	member := api.seedUser("member@example.com", domain.RoleMember)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{member: domain.RoleMember, manager: domain.RoleManager})
	wsB := api.seedWorkspace("team-b", nil)
	valid := func() map[string]any {
		return map[string]any{"name": "c", "workspace_id": ws, "config": map[string]any{"provider": "@a"}}
	}
	with := func(k string, v any) map[string]any { b := valid(); b[k] = v; return b }
	for _, tc := range []struct {
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
		{"is_default not a boolean", with("is_default", "yes"), 400, "is_default"},
		{"status on create", with("status", "active"), 400, "status"},
		{"workspace unknown", with("workspace_id", uuid.NewString()), 404, "workspace_id"},
		{"workspace missing", with("workspace_id", ""), 400, "workspace_id"},
		{"unknown field", with("colour", "red"), 400, "colour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/configs", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			}
		})
	}
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/configs", with("slug", "dup")).Status)
	dup := api.Admin(http.MethodPost, "/configs", func() map[string]any { b := with("slug", "dup"); b["workspace_id"] = wsB; return b }())
	assert.Equal(t, http.StatusConflict, dup.Status, "config slugs are unique in the organisation")
	assert.Equal(t, "slug", dup.ErrorParam())
	for _, c := range []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"nothing", map[string]any{}, 400, ""},
		{"name at 256", map[string]any{"name": strings.Repeat("n", 256)}, 400, "name"},
		{"status archived", map[string]any{"status": "archived"}, 400, "status"},
		{"slug cannot change", map[string]any{"slug": "x"}, 400, "slug"},
		{"workspace cannot change", map[string]any{"workspace_id": wsB}, 400, "workspace_id"},
	} {
		t.Run("update "+c.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/configs/dup", c.body)
			require.Equal(t, c.status, r.Status, string(r.Raw))
			assert.Equal(t, c.param, r.ErrorParam(), r.ErrorMessage())
		})
	}

	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/configs", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPost, "/configs", "cw-wrong", valid()).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/configs/nope", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, "/configs/nope", map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/configs/nope/versions", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/configs?status=deleted", nil).Status)

	keyOf := func(user string) string {
		return api.newKey(t, "/api-keys/workspace/user", map[string]any{"name": "k", "workspace_id": ws, "user_id": user,
			"scopes": domain.WorkspaceScopes()})
	}
	memberKey, mgrKey := keyOf(member), keyOf(manager)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/configs", memberKey, valid()).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPut, "/configs/dup", memberKey, map[string]any{"name": "x"}).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/configs/dup", memberKey, nil).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/configs/dup", memberKey, nil).Status, "members read")
	mine := api.Do(http.MethodPost, "/configs", mgrKey, map[string]any{"name": "mgr", "config": map[string]any{"provider": "@a"}})
	assert.Equal(t, http.StatusOK, mine.Status, "a manager saves configs in its workspace: %s", mine.Raw)
	other := api.Admin(http.MethodPost, "/configs", func() map[string]any { b := with("slug", "b-only"); b["workspace_id"] = wsB; return b }())
	require.Equal(t, http.StatusOK, other.Status)
	assert.Equal(t, http.StatusNotFound, api.Do(http.MethodGet, "/configs/b-only", mgrKey, nil).Status, "another workspace's config is out of sight")
	noScope := api.newKey(t, "/api-keys/organisation/service", map[string]any{"name": "ro", "scopes": []string{"configs.read"}})
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/configs", noScope, valid()).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/configs", noScope, nil).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/configs/dup", noScope, nil).Status)
}
