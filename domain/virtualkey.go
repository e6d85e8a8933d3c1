package domain

import (
	"maps"
	"strings"
)

// Virtual keys are the legacy spelling of managed providers (part 1: "virtual keys are the
// legacy equivalent of providers"; part 9: the legacy virtual-key header and parameter are
// deprecated in favour of @<provider_slug>). They are not an aggregate of their own: a virtual
// key is a Provider that carries its own credential, created, read and changed through the
// /virtual-keys paths with the virtual_keys.* scopes. A provider and a virtual key therefore
// share one slug space per workspace, and `x-gateway-virtual-key: <slug>` and
// `x-gateway-provider: @<slug>` name the same thing.
//
// The legacy body spells its provider settings in camelCase at the top level (resourceName,
// awsRegion...); they are stored under the configuration names of integrations, so that the
// gateway reads one set of names whichever path wrote them.

// legacyModelConfig maps a virtual key's camelCase setting to its configuration field.
var legacyModelConfig = map[string]string{
	"apiVersion":               "azure_api_version",
	"resourceName":             "azure_resource_name",
	"deploymentName":           "azure_deployment_name",
	"deploymentConfig":         "azure_deployment_config",
	"azureAuthMode":            "azure_auth_mode",
	"azureModelName":           "azure_model_name",
	"awsAuthType":              "aws_auth_type",
	"awsAccessKeyId":           "aws_access_key_id",
	"awsSecretAccessKey":       "aws_secret_access_key",
	"awsSessionToken":          "aws_session_token",
	"awsRegion":                "aws_region",
	"awsRoleArn":               "aws_role_arn",
	"awsExternalId":            "aws_external_id",
	"vertexProjectId":          "vertex_project_id",
	"vertexRegion":             "vertex_region",
	"vertexServiceAccountJson": "vertex_service_account_json",
	"workersAiAccountId":       "workers_ai_account_id",
	"customHost":               "custom_host",
	"openaiOrganization":       "openai_organization",
	"openaiProject":            "openai_project",
}

// LegacyModelConfigFields lists the camelCase settings a virtual key body may carry.
func LegacyModelConfigFields() []string { return sortedKeys(legacyModelConfig) }

// LegacyModelConfigField returns the configuration field of a virtual key's camelCase
// setting, or false when the setting is unknown.
func LegacyModelConfigField(camel string) (string, bool) {
	f, ok := legacyModelConfig[camel]
	return f, ok
}

// LegacyModelConfig renders configuration fields the way a virtual key shows them, in its
// camelCase names (masked_<field> as masked_<camelCase>); fields without a legacy name keep
// theirs.
func LegacyModelConfig(configs map[string]any) map[string]any {
	back := map[string]string{}
	for camel, f := range legacyModelConfig {
		back[f] = camel
	}
	out := make(map[string]any, len(configs))
	for f, v := range maps.All(configs) {
		bare, masked := strings.CutPrefix(f, "masked_")
		camel, ok := back[bare]
		switch {
		case ok && masked:
			out["masked_"+camel] = v
		case ok:
			out[camel] = v
		default:
			out[f] = v
		}
	}
	return out
}
