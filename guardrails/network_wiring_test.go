package guardrails_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/guardrails"
)

// Every check, local or network, takes the runner's shared parameters failOnError and
// timeout, so that one guardrail shape configures them all.
func TestEveryCheckTakesTheSharedParameters(t *testing.T) {
	r := guardrails.NewRegistry()
	guardrails.AddNetworkChecks(r)
	deps := guardrails.Deps{Client: http.DefaultClient, CheckURL: func(string) error { return nil }, Secret: []byte("s"), Now: time.Now}
	required := map[string]map[string]any{
		"default.webhook":                  {"webhookURL": "https://hooks.example.com/x"},
		"default.externalPolicy":           {"policyId": "p", "url": "https://policy.example.com"},
		"lasso.classify":                   {"credentials": map[string]any{"apiKey": "k"}},
		"default.inlineImage":              {"providers": []any{"openai"}},
		"default.jwt":                      {"jwksUri": "https://idp.example.com/jwks"},
		"default.regexMatch":               {"rule": "a"},
		"default.regexReplace":             {"rule": "a"},
		"default.jsonSchema":               {"schema": map[string]any{"type": "object"}},
		"default.jsonKeys":                 {"keys": []any{"a"}},
		"default.contains":                 {"words": []any{"a"}},
		"default.containsCode":             {"format": "SQL"},
		"default.endsWith":                 {"suffix": "."},
		"default.modelWhitelist":           {"models": []any{"m"}},
		"default.modelRules":               {"rules": map[string]any{"defaults": []any{"m"}}},
		"default.requiredMetadataKeys":     {"metadataKeys": []any{"k"}},
		"default.requiredMetadataKeyPairs": {"metadataPairs": map[string]any{"k": "v"}},
		"default.addPrefix":                {"prefix": "p"},
	}
	for _, id := range r.IDs() {
		params := map[string]any{"failOnError": true, "timeout": 1500.0}
		for k, v := range required[id] {
			params[k] = v
		}
		c, err := r.Configure(id, "", params, deps)
		require.NoError(t, err, id)
		require.True(t, c.FailOnError, id)
		require.Equal(t, 1500*time.Millisecond, c.Timeout, id)
	}
}
