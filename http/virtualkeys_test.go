package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

func TestVirtualKeysAreProvidersByTheirLegacyName(t *testing.T) {
	api := newGatewayAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	key := api.secret("azure")
	awsSecret := api.secret("aws")

	created := api.Admin(http.MethodPost, "/virtual-keys", map[string]any{"name": "Azure main", "provider": "azure-openai",
		"key": key, "note": "legacy", "workspace_id": ws, "resourceName": "my-resource", "apiVersion": "2024-06-01",
		"deploymentConfig": []map[string]any{{"apiVersion": "2024-06-01", "deploymentName": "gpt-4o", "is_default": true}},
		"usage_limits":     map[string]any{"credit_limit": 10, "type": "cost"}})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	assert.Equal(t, true, created.Body["success"])
	slug, _ := obj(created.Body, "data")["slug"].(string)
	require.NotEmpty(t, slug)

	got := api.Admin(http.MethodGet, "/virtual-keys/"+slug, nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Equal(t, "virtual-key", got.Str("object"))
	assert.Equal(t, "azure-openai", got.Str("provider"))
	assert.Equal(t, "****"+key[len(key)-4:], got.Str("masked_key"))
	assert.Equal(t, "my-resource", obj(got.Body, "model_config")["resourceName"])
	assert.NotNil(t, obj(got.Body, "model_config")["deploymentConfig"])

	// The same aggregate: a provider by its new name, in one slug space.
	asProvider := api.Admin(http.MethodGet, "/providers/"+slug, nil)
	require.Equal(t, http.StatusOK, asProvider.Status, string(asProvider.Raw))
	assert.Equal(t, "my-resource", obj(asProvider.Body, "configurations")["azure_resource_name"])
	clash := api.Admin(http.MethodPost, "/providers", map[string]any{"name": "x", "slug": slug, "workspace_id": ws,
		"ai_provider_id": "openai", "key": api.secret("x")})
	assert.Equal(t, http.StatusConflict, clash.Status, string(clash.Raw))
	assert.Len(t, api.Admin(http.MethodGet, "/virtual-keys", nil).Data(), 1)

	upd := api.Admin(http.MethodPut, "/virtual-keys/"+slug, map[string]any{"name": "Azure", "deploymentName": "gpt-4o-mini",
		"note": nil, "reset_usage": true})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	data := obj(upd.Body, "data")
	assert.Equal(t, "Azure", data["name"])
	assert.Equal(t, "gpt-4o-mini", obj(data, "model_config")["deploymentName"])
	assert.Equal(t, "my-resource", obj(data, "model_config")["resourceName"], "settings merge")

	bedrock := api.Admin(http.MethodPost, "/virtual-keys", map[string]any{"name": "Bedrock", "provider": "bedrock",
		"workspace_id": ws, "awsAccessKeyId": api.secret("akid"), "awsSecretAccessKey": awsSecret, "awsRegion": "eu-west-1"})
	require.Equal(t, http.StatusOK, bedrock.Status, string(bedrock.Raw))
	br := api.Admin(http.MethodGet, "/virtual-keys/"+obj(bedrock.Body, "data")["slug"].(string), nil)
	assert.Equal(t, "****"+awsSecret[len(awsSecret)-4:], obj(br.Body, "model_config")["masked_awsSecretAccessKey"])
	assert.Equal(t, "eu-west-1", obj(br.Body, "model_config")["awsRegion"])
	assert.Equal(t, false, br.Body["has_key"])

	del := api.Admin(http.MethodDelete, "/virtual-keys/"+slug, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/virtual-keys/"+slug, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/providers/"+slug, nil).Status)

	api.assertNoSecretLeaks(t, true)
}

func TestVirtualKeyErrors(t *testing.T) {
	api := newGatewayAPI(t)
	member := api.seedUser("member@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{member: domain.RoleMember})
	valid := func() map[string]any {
		return map[string]any{"name": "k", "provider": "openai", "key": api.secret("vk"), "workspace_id": ws}
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
		{"slug at 256", with("slug", strings.Repeat("s", 256)), 400, "slug"},
		{"provider missing", with("provider", ""), 400, "provider"},
		{"provider unknown", with("provider", "gpt"), 400, "provider"},
		{"azure without its resource", with("provider", "azure-openai"), 400, "resourceName"},
		{"custom host on loopback", with("customHost", "http://localhost:11434"), 400, "customHost"},
		{"key with a line break", with("key", "a\r\nb"), 400, "key"},
		{"unknown setting", with("resource_name", "x"), 400, "resource_name"},
		{"configurations is the new path's", with("configurations", map[string]any{}), 400, "configurations"},
		{"rate limits as one object", with("rate_limits", map[string]any{"type": "requests", "unit": "rpm", "value": 3}), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/virtual-keys", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			}
		})
	}

	dupBody := with("slug", "dup")
	require.Equal(t, http.StatusOK, api.Admin(http.MethodPost, "/virtual-keys", dupBody).Status)
	dup := api.Admin(http.MethodPost, "/virtual-keys", with("slug", "dup"))
	assert.Equal(t, http.StatusConflict, dup.Status)
	assert.Equal(t, "slug", dup.ErrorParam())
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodPut, "/virtual-keys/dup", map[string]any{"name": strings.Repeat("n", 256)}).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/virtual-keys/nope", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/virtual-keys", "", nil).Status)

	// virtual_keys.create is enforced on the legacy path; providers.create does not stand in.
	noVK := api.newKey(t, "/api-keys/organisation/service", map[string]any{"name": "providers only",
		"scopes": []string{"providers.create", "providers.read", "providers.list", "virtual_keys.list"}})
	refused := api.Do(http.MethodPost, "/virtual-keys", noVK, valid())
	assert.Equal(t, http.StatusForbidden, refused.Status, string(refused.Raw))
	assert.Contains(t, refused.ErrorMessage(), "virtual_keys.create")
	assert.Equal(t, http.StatusOK, api.Do(http.MethodPost, "/providers", noVK, map[string]any{"name": "p", "workspace_id": ws,
		"ai_provider_id": "openai", "key": api.secret("p")}).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/virtual-keys/dup", noVK, nil).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/virtual-keys", noVK, nil).Status)
	memberKey := api.newKey(t, "/api-keys/workspace/user", map[string]any{"name": "m", "workspace_id": ws, "user_id": member,
		"scopes": domain.WorkspaceScopes()})
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/virtual-keys", memberKey, valid()).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/virtual-keys/dup", memberKey, nil).Status)

	api.assertNoSecretLeaks(t, true)
}
