package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

const managedSecret = "sk-managed-secret-of-the-integration"

// credentialTrap is a listener that counts the requests carrying the managed credential, in
// any header or the body.
func credentialTrap(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		found := strings.Contains(string(body), managedSecret)
		for _, vs := range r.Header {
			for _, v := range vs {
				found = found || strings.Contains(v, managedSecret)
			}
		}
		if found {
			seen.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// A managed provider's credential goes only to its own base URL: a custom host, an inline
// config pointing it elsewhere, or another provider type naming it, are refused with a 400
// that says why, and the listener elsewhere receives the credential 0 times.
func TestManagedCredentialGoesOnlyToItsOwnBaseURL(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	trap, seen := credentialTrap(t)
	// A workspace integration, and the default provider @main it creates.
	g.admin(http.MethodPost, "/integrations", map[string]any{"name": "Main", "slug": "main", "ai_provider_id": "openai",
		"key": managedSecret, "workspace_id": g.ws, "configurations": map[string]any{"custom_host": g.oa.BaseURL()}})
	_, key := g.key(nil)

	// It works where it belongs.
	resp, raw := chatTo(t, g, key, map[string]string{"x-gateway-provider": "@main"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	assert.Equal(t, "Bearer "+managedSecret, g.oa.LastRequest().Header.Get("Authorization"))

	for _, tc := range []struct {
		name    string
		headers map[string]string
		param   string
	}{
		{"custom host header", map[string]string{"x-gateway-provider": "@main", "x-gateway-custom-host": trap.URL}, "x-gateway-custom-host"},
		{"inline config custom_host", map[string]string{"x-gateway-config": `{"provider":"@main","custom_host":"` + trap.URL + `"}`}, "x-gateway-config.custom_host"},
		{"inline config virtual key", map[string]string{"x-gateway-config": `{"virtual_key":"main","custom_host":"` + trap.URL + `"}`}, "x-gateway-config.custom_host"},
		{"another provider type", map[string]string{"x-gateway-config": `{"provider":"anthropic","virtual_key":"main"}`}, "x-gateway-config.provider"},
		{"a nested target", map[string]string{"x-gateway-config": `{"strategy":{"mode":"fallback"},"targets":[{"provider":"openai","api_key":"k","custom_host":"` + trap.URL + `"},{"provider":"@main","custom_host":"` + trap.URL + `"}]}`}, "x-gateway-config.targets[1].custom_host"},
		{"a destination option", map[string]string{"x-gateway-config": `{"provider":"@main","resource_name":"elsewhere"}`}, "x-gateway-config.resource_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, raw := chatTo(t, g, key, tc.headers)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
			var e struct {
				Error struct {
					Message string `json:"message"`
					Param   string `json:"param"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(raw, &e))
			assert.Equal(t, tc.param, e.Error.Param, e.Error.Message)
			assert.Contains(t, e.Error.Message, "credential")
			assert.NotContains(t, string(raw), managedSecret)
		})
	}
	assert.Zero(t, seen.Load(), "the trap never received the managed credential")
}

// chatTo sends a chat with key and the given credential headers (no custom host by default).
func chatTo(t *testing.T, g *governed, key string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.m.URL()+"/chat/completions",
		strings.NewReader(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-gateway-api-key", key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

// More than one gateway key in a request is refused with a 400 naming the headers, on the
// gateway and on the admin API; a key is compared exactly.
func TestAmbiguousKeysAreRefused(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	_, key := g.key(nil)
	send := func(path string, set func(h http.Header)) (int, string) {
		method := http.MethodGet
		var body io.Reader
		if path == "/chat/completions" {
			method, body = http.MethodPost, strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		}
		req, _ := http.NewRequest(method, g.m.URL()+path, body)
		req.Header.Set("x-gateway-provider", "openai")
		req.Header.Set("x-gateway-custom-host", g.oa.BaseURL())
		req.Header.Set("Authorization", "Bearer sk-provider")
		set(req.Header)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	for _, path := range []string{"/chat/completions", "/workspaces"} {
		for _, tc := range []struct {
			name string
			set  func(h http.Header)
			want int
			says string
		}{
			{"a repeated header", func(h http.Header) {
				h.Add("x-gateway-api-key", gatewayKey)
				h.Add("x-gateway-api-key", "bogus-key-000000000000000")
			}, http.StatusBadRequest, "repeated"},
			{"a repeated header, the same key", func(h http.Header) {
				h.Add("x-gateway-api-key", gatewayKey)
				h.Add("x-gateway-api-key", gatewayKey)
			}, http.StatusBadRequest, "repeated"},
			{"aliases that disagree", func(h http.Header) {
				h.Set("x-gateway-api-key", gatewayKey)
				h.Set("api_key", key)
			}, http.StatusBadRequest, "different"},
			{"apiKey against the header", func(h http.Header) {
				h.Set("apiKey", gatewayKey)
				h.Set("x-gateway-api-key", key)
			}, http.StatusBadRequest, "different"},
			{"aliases that agree", func(h http.Header) {
				h.Set("x-gateway-api-key", gatewayKey)
				h.Set("api_key", gatewayKey)
			}, http.StatusOK, ""},
			{"a no-break space appended", func(h http.Header) { h.Set("x-gateway-api-key", gatewayKey+"\u00a0") }, http.StatusUnauthorized, "invalid"},
			{"an ideographic space appended", func(h http.Header) { h.Set("x-gateway-api-key", gatewayKey+"\u3000") }, http.StatusUnauthorized, "invalid"},
		} {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				status, raw := send(path, tc.set)
				assert.Equal(t, tc.want, status, raw)
				assert.Contains(t, raw, tc.says)
				assert.NotContains(t, raw, gatewayKey, "no key is echoed")
			})
		}
	}
}

// A chat whose body holds invalid UTF-8 is logged in a form JSON parsers accept, marked.
func TestLogOfInvalidUTF8ParsesAsJSON(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	body := "{\"model\":\"budget-model\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9 \xff\"}]}"
	resp, _ := chatThrough(t, g.m, gatewayKey, g.oa.BaseURL(), body, nil)
	trace := resp.Header.Get("x-gateway-trace-id")
	row := g.logRow(trace)
	id := row["_id"].(string)
	req, _ := http.NewRequest(http.MethodGet, g.m.URL()+"/logs/"+id, nil)
	req.Header.Set("x-gateway-api-key", gatewayKey)
	got, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer got.Body.Close()
	raw, _ := io.ReadAll(got.Body)
	assert.True(t, json.Valid(raw), "the log is JSON: %q", raw)
	var parsed map[string]any
	require.NoError(t, json.Unmarshal(raw, &parsed))
	assert.Contains(t, string(raw), "base64", "the body is marked as encoded")
}

// Azure OpenAI through its headers and through a managed provider: the stand-in checks the
// deployment URL, the api-version and the api-key header; the OpenAI organisation and project
// settings reach OpenAI.
func TestAzureAndOpenAISettingsReachTheProvider(t *testing.T) {
	g := newGoverned(t, startGateway(t))
	_, key := g.key(nil)
	az := providertest.NewAzureOpenAI(t)
	az.SetDeployments("gpt4o-prod")

	resp, raw := chatTo(t, g, key, map[string]string{"x-gateway-provider": "azure-openai", "x-gateway-custom-host": az.BaseURL(),
		"Authorization": "Bearer sk-azure", "x-gateway-azure-resource-name": "contoso", "x-gateway-azure-deployment-id": "gpt4o-prod",
		"x-gateway-azure-api-version": "2024-10-21"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	last := az.LastRequest()
	assert.Equal(t, "/openai/deployments/gpt4o-prod/chat/completions", last.Path)
	assert.Equal(t, "2024-10-21", last.Query().Get("api-version"))
	assert.Equal(t, "sk-azure", last.Header.Get("api-key"))

	g.admin(http.MethodPost, "/integrations", map[string]any{"name": "Azure", "slug": "azure-eu", "ai_provider_id": "azure-openai",
		"key": "sk-azure-managed", "workspace_id": g.ws, "configurations": map[string]any{"azure_resource_name": "contoso",
			"azure_deployment_id": "gpt4o-prod", "azure_api_version": "2024-06-01", "custom_host": az.BaseURL()}})
	resp, raw = chatTo(t, g, key, map[string]string{"x-gateway-provider": "@azure-eu"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	last = az.LastRequest()
	assert.Equal(t, "/openai/deployments/gpt4o-prod/chat/completions", last.Path)
	assert.Equal(t, "2024-06-01", last.Query().Get("api-version"))
	assert.Equal(t, "sk-azure-managed", last.Header.Get("api-key"))

	g.oa.RequireOrganization("org-acme", "proj-search")
	resp, raw = chatTo(t, g, key, map[string]string{"x-gateway-provider": "openai", "x-gateway-custom-host": g.oa.BaseURL(),
		"Authorization": "Bearer sk-openai", "x-gateway-openai-organization": "org-acme", "x-gateway-openai-project": "proj-search"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	assert.Equal(t, "org-acme", g.oa.LastRequest().Organization())
	assert.Equal(t, "proj-search", g.oa.LastRequest().Project())
	g.admin(http.MethodPost, "/integrations", map[string]any{"name": "OpenAI org", "slug": "openai-org", "ai_provider_id": "openai",
		"key": "sk-openai-managed", "workspace_id": g.ws, "configurations": map[string]any{"openai_organization": "org-acme",
			"openai_project": "proj-search", "custom_host": g.oa.BaseURL()}})
	resp, raw = chatTo(t, g, key, map[string]string{"x-gateway-provider": "@openai-org"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	assert.Equal(t, "org-acme", g.oa.LastRequest().Organization())
}
