package providers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/causeway/causeway/gateway/providers"
)

func TestTargetOption(t *testing.T) {
	cases := []struct {
		name    string
		options map[string]string
		option  string
		want    string
	}{
		{"the canonical name", map[string]string{"azure_resource_name": "contoso"}, providers.OptionAzureResource, "contoso"},
		{"a config's short name", map[string]string{"resource_name": "contoso"}, providers.OptionAzureResource, "contoso"},
		{"the canonical name first", map[string]string{"resource_name": "b", "azure_resource_name": "a"}, providers.OptionAzureResource, "a"},
		{"a header's deployment id", map[string]string{"azure_deployment_id": "d1"}, providers.OptionAzureDeployment, "d1"},
		{"a virtual key's deployment name", map[string]string{"azure_deployment_name": "d2"}, providers.OptionAzureDeployment, "d2"},
		{"a config's deployment over a stored one", map[string]string{"azure_deployment_name": "stored", "deployment_id": "config"}, providers.OptionAzureDeployment, "config"},
		{"an empty value is unset", map[string]string{"azure_api_version": "", "api_version": "2024-06-01"}, providers.OptionAzureAPIVersion, "2024-06-01"},
		{"the model behind a deployment", map[string]string{"azure_model_name": "gpt-4o"}, providers.OptionAzureModelName, "gpt-4o"},
		{"the OpenAI organization", map[string]string{"openai_organization": "org-1"}, providers.OptionOpenAIOrg, "org-1"},
		{"its old short name", map[string]string{"organization": "org-1"}, providers.OptionOpenAIOrg, "org-1"},
		{"the OpenAI project", map[string]string{"project": "proj_1"}, providers.OptionOpenAIProject, "proj_1"},
		{"unset", nil, providers.OptionAzureResource, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, providers.Target{Options: tc.options}.Option(tc.option))
		})
	}
}
