package providers

// Target.Options keys the adapters read, by the names the gateway stores them under: an
// x-gateway-<cloud>-<name> header becomes the option <cloud>_<name> (x-gateway-azure-resource-name:
// azure_resource_name), and managed providers and integrations store their configurations under
// the same names. Target.Option also accepts the other spellings in optionAliases.
const (
	OptionAzureResource   = "azure_resource_name" // the resource: https://{resource}.openai.azure.com
	OptionAzureDeployment = "azure_deployment_id" // the deployment a call goes to; the call's model when unset
	OptionAzureAPIVersion = "azure_api_version"   // the api-version query; AzureDefaultAPIVersion when unset
	// OptionAzureModelName names the model behind a deployment, for pricing and logs: no
	// adapter sends it, since Azure reads the deployment from the URL.
	OptionAzureModelName   = "azure_model_name"
	OptionOpenAIOrg        = "openai_organization" // the OpenAI-Organization header
	OptionOpenAIProject    = "openai_project"      // the OpenAI-Project header
	OptionAnthropicBeta    = "anthropic_beta"      // the Anthropic-Beta header
	OptionAnthropicVersion = "anthropic_version"   // the Anthropic-Version header, unless forwarded
)

// optionAliases are the other names an option is found under, after its own: a config node's
// short names (resource_name, deployment_id, api_version: domain.ConfigOptionFields), a virtual
// key's deployment name (deploymentName becomes azure_deployment_name), and the names this
// package read before it read the canonical ones (organization, project). The request's and the
// config's names come before the stored configuration's, which is the default.
var optionAliases = map[string][]string{
	OptionAzureResource:   {"resource_name"},
	OptionAzureDeployment: {"deployment_id", "azure_deployment_name", "deployment_name"},
	OptionAzureAPIVersion: {"api_version"},
	OptionOpenAIOrg:       {"organization"},
	OptionOpenAIProject:   {"project"},
}

// Option is the Target's option name (one of the Option constants), read under its own name or
// else its aliases, in order; "" when none is set.
func (t Target) Option(name string) string {
	if v := t.Options[name]; v != "" {
		return v
	}
	for _, alias := range optionAliases[name] {
		if v := t.Options[alias]; v != "" {
			return v
		}
	}
	return ""
}
