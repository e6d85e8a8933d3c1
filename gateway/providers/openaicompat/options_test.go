package openaicompat_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// TestAzureOptionNames: whichever way the resource, deployment and API version were stored (the
// x-gateway-azure-* headers, a managed provider's configurations, a config's short names), the
// call reaches https://{resource}.openai.azure.com/openai/deployments/{deployment}/chat/completions
// with the api-version query and the key in api-key.
func TestAzureOptionNames(t *testing.T) {
	cases := []struct {
		name    string
		options map[string]string
	}{
		{"headers", map[string]string{"azure_resource_name": "contoso", "azure_deployment_id": "gpt4o-prod", "azure_api_version": "2024-06-01"}},
		{"managed provider configurations", map[string]string{"azure_resource_name": "contoso", "azure_deployment_name": "gpt4o-prod", "azure_api_version": "2024-06-01", "azure_model_name": "gpt-4o"}},
		{"config options", map[string]string{"resource_name": "contoso", "deployment_id": "gpt4o-prod", "api_version": "2024-06-01"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewAzureOpenAI(t)
			srv.RequireKey(testKey)
			srv.SetDeployments("gpt4o-prod")
			to, err := url.Parse(srv.URL)
			require.NoError(t, err)
			rw := &providertest.Rewrite{To: to}
			target := providers.Target{Provider: "azure-openai", APIKey: testKey, Options: tc.options, Client: &http.Client{Transport: rw}}

			resp, err := adapter(t, "azure-openai").Chat(context.Background(), target, chatCall(chatBody))
			require.NoError(t, err)
			assert.Equal(t, "https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-06-01", rw.Last())
			assert.Contains(t, string(resp.Body), providertest.Reply)
			got := srv.LastRequest()
			assert.Equal(t, "/openai/deployments/gpt4o-prod/chat/completions", got.Path)
			assert.Equal(t, "gpt4o-prod", got.Deployment())
			assert.Equal(t, url.Values{"api-version": {"2024-06-01"}}, got.Query())
			assert.Equal(t, testKey, got.Header.Get("Api-Key"))
			assert.Empty(t, got.Header.Get("Authorization"), "Azure's key goes in api-key")

			call := chatCall(chatBody)
			call.Stream = true
			st, err := adapter(t, "azure-openai").(providers.ChatStreamer).ChatStream(context.Background(), target, call)
			require.NoError(t, err)
			defer st.Close()
			_, err = drain(t, st)
			require.ErrorIs(t, err, io.EOF)
			assert.Equal(t, "/openai/deployments/gpt4o-prod/chat/completions", srv.LastRequest().Path)

			_, err = adapter(t, "azure-openai").(providers.Embedder).Embed(context.Background(), target, providers.Call{Endpoint: providers.EndpointEmbed,
				Model: "text-embedding-3-small", Body: json.RawMessage(`{"model":"text-embedding-3-small","input":"hi"}`)})
			require.NoError(t, err)
			assert.Equal(t, "/openai/deployments/gpt4o-prod/embeddings", srv.LastRequest().Path)
		})
	}
}

// TestAzureStandIn: the stand-in refuses what Azure refuses, so the adapter tests above mean
// something: a deployment it lacks, a request without api-version, a key not in api-key.
func TestAzureStandIn(t *testing.T) {
	srv := providertest.NewAzureOpenAI(t)
	srv.SetDeployments("gpt4o-prod")
	target := providers.Target{Provider: "azure-openai", BaseURL: srv.BaseURL(), APIKey: testKey,
		Options: map[string]string{providers.OptionAzureDeployment: "other"}}
	_, err := adapter(t, "azure-openai").Chat(context.Background(), target, chatCall(chatBody))
	var up *providers.UpstreamError
	require.ErrorAs(t, err, &up)
	assert.Equal(t, http.StatusNotFound, up.Status)
	assert.Contains(t, string(up.Body), "DeploymentNotFound")

	target.Options = map[string]string{providers.OptionAzureDeployment: "gpt4o-prod"}
	_, err = adapter(t, "azure-openai").Chat(context.Background(), target, chatCall(chatBody))
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		header http.Header
		query  string
		status int
	}{
		{"no api-version", http.Header{"Api-Key": {testKey}}, "", http.StatusNotFound},
		{"a bearer key", http.Header{"Authorization": {"Bearer " + testKey}}, "?api-version=2024-10-21", http.StatusUnauthorized},
		{"api-key", http.Header{"Api-Key": {testKey}}, "?api-version=2024-10-21", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/openai/deployments/gpt4o-prod/chat/completions"+tc.query,
				strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
			require.NoError(t, err)
			req.Header = tc.header
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode)
		})
	}
}

// TestOpenAIOrganizationOptions: the organization and project reach OpenAI as OpenAI-Organization
// and OpenAI-Project under the names the gateway stores them (x-gateway-openai-organization and
// -project, and configurations openai_organization and openai_project), and under the short
// names configs may have used.
func TestOpenAIOrganizationOptions(t *testing.T) {
	for name, options := range map[string]map[string]string{
		"canonical": {"openai_organization": "org-1", "openai_project": "proj_1"},
		"short":     {"organization": "org-1", "project": "proj_1"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := providertest.NewOpenAI(t)
			srv.RequireOrganization("org-1", "proj_1")
			target := providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey, Options: options}
			_, err := adapter(t, "openai").Chat(context.Background(), target, chatCall(chatBody))
			require.NoError(t, err)
			got := srv.LastRequest()
			assert.Equal(t, "org-1", got.Organization())
			assert.Equal(t, "proj_1", got.Project())

			resp, err := adapter(t, "openai").(providers.PassThrougher).PassThrough(context.Background(), target,
				providers.Call{Endpoint: providers.EndpointPassThrough, Method: http.MethodGet, Path: "/models"})
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, "org-1", srv.LastRequest().Organization(), "pass-through calls carry them too")
		})
	}
	t.Run("the stand-in refuses another organization", func(t *testing.T) {
		srv := providertest.NewOpenAI(t)
		srv.RequireOrganization("org-1", "")
		target := providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey,
			Options: map[string]string{providers.OptionOpenAIOrg: "org-2"}}
		_, err := adapter(t, "openai").Chat(context.Background(), target, chatCall(chatBody))
		var up *providers.UpstreamError
		require.ErrorAs(t, err, &up)
		assert.Equal(t, http.StatusUnauthorized, up.Status)
		assert.Contains(t, string(up.Body), "mismatched_organization")
	})
}
