package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSeal stands in for the command layer's sealer: its output names the field and holds
// nothing of the plaintext, so a test can see that a plaintext never reaches an event.
func fakeSeal(_ []byte, field string) (string, error) { return "sealed(" + field + ")", nil }

const testKey = "sk-test-0123456789abcdef"

func TestIntegrationDecisions(t *testing.T) {
	key := testKey
	created := IntegrationCreated{IntegrationID: "i-1", OrganisationID: "org", Slug: "prod", Name: "Prod", AIProviderID: "bedrock",
		Configurations: map[string]any{"aws_region": "eu-west-1"},
		Sealed:         SealedCredential{Key: "sealed(key)", Secrets: map[string]string{"aws_secret_access_key": "sealed(configurations.aws_secret_access_key)"}},
		Masked:         MaskedCredential{Key: "****cdef", Secrets: map[string]string{"aws_secret_access_key": "****WXYZ"}},
		Tags:           map[string]string{"env": "prod"}, At: t0}
	create := func(mod func(*CreateIntegration)) func(*Integration) ([]Event, error) {
		return func(i *Integration) ([]Event, error) {
			c := CreateIntegration{IntegrationID: "i-1", OrganisationID: "org", Slug: "prod", Name: "Prod", AIProviderID: "bedrock",
				Key: &key, Configurations: map[string]any{"aws_region": "eu-west-1", "aws_secret_access_key": "aws-secret-ABCDWXYZ"},
				Tags: map[string]string{"env": "prod"}}
			if mod != nil {
				mod(&c)
			}
			return i.Create(c, fakeSeal, t0)
		}
	}
	later := t0.Add(time.Hour)
	archived := IntegrationArchived{IntegrationID: "i-1", At: later}
	update := func(c UpdateIntegration) func(*Integration) ([]Event, error) {
		return func(i *Integration) ([]Event, error) { return i.Update(c, fakeSeal, later) }
	}
	workspaces := func(entries ...IntegrationWorkspace) func(*Integration) ([]Event, error) {
		return func(i *Integration) ([]Event, error) { return i.UpdateWorkspaces(entries, later) }
	}
	newKey := "sk-new-key-000000001111"
	runScenarios(t, func() *Integration { return &Integration{} }, []scenario[*Integration]{
		{name: "create seals the key and the secret fields", when: create(nil), then: []Event{created}},
		{name: "create twice", given: []Event{created}, when: create(nil), wantCode: CodeConflict},
		{name: "name of 256", when: create(func(c *CreateIntegration) { c.Name = strings.Repeat("n", 256) }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "no name", when: create(func(c *CreateIntegration) { c.Name = " " }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "slug of 256", when: create(func(c *CreateIntegration) { c.Slug = strings.Repeat("s", 256) }), wantCode: CodeInvalid, wantParam: "slug"},
		{name: "unknown provider type", when: create(func(c *CreateIntegration) { c.AIProviderID = "gpt" }), wantCode: CodeInvalid, wantParam: "ai_provider_id"},
		{name: "blank key", when: create(func(c *CreateIntegration) { c.Key = ptr("  ") }), wantCode: CodeInvalid, wantParam: "key"},
		{name: "bedrock needs a region", when: create(func(c *CreateIntegration) { c.Configurations = nil }), wantCode: CodeInvalid, wantParam: "configurations.aws_region"},
		{name: "bad auth type", when: create(func(c *CreateIntegration) {
			c.Configurations = map[string]any{"aws_region": "x", "aws_auth_type": "password"}
		}), wantCode: CodeInvalid, wantParam: "configurations.aws_auth_type"},
		{name: "custom host not http", when: create(func(c *CreateIntegration) {
			c.Configurations = map[string]any{"aws_region": "x", "custom_host": "file:///etc/passwd"}
		}), wantCode: CodeInvalid, wantParam: "configurations.custom_host"},
		{name: "description of 1025", when: create(func(c *CreateIntegration) { c.Description = strings.Repeat("d", 1025) }), wantCode: CodeInvalid, wantParam: "description"},
		{name: "tag value with a comma", when: create(func(c *CreateIntegration) { c.Tags = map[string]string{"env": "a,b"} }), wantCode: CodeInvalid, wantParam: "tags.env"},
		{name: "update the key", given: []Event{created}, when: update(UpdateIntegration{Key: &newKey}),
			then: []Event{IntegrationUpdated{IntegrationID: "i-1", Configuration: &ConfigurationSet{SealedKey: "sealed(key)", MaskedKey: "****1111"}, At: later}}},
		{name: "remove a secret field and set another", given: []Event{created},
			when: update(UpdateIntegration{Configurations: map[string]any{"aws_secret_access_key": nil, "aws_role_arn": "arn:x"}}),
			then: []Event{IntegrationUpdated{IntegrationID: "i-1", Configuration: &ConfigurationSet{Set: map[string]any{"aws_role_arn": "arn:x"},
				Removed: []string{"aws_secret_access_key"}}, At: later}}},
		{name: "remove a required field", given: []Event{created}, when: update(UpdateIntegration{Configurations: map[string]any{"aws_region": nil}}),
			wantCode: CodeInvalid, wantParam: "configurations.aws_region"},
		{name: "update nothing", given: []Event{created}, when: update(UpdateIntegration{}), wantCode: CodeInvalid},
		{name: "rename to 256", given: []Event{created}, when: update(UpdateIntegration{Name: ptr(strings.Repeat("n", 256))}), wantCode: CodeInvalid, wantParam: "name"},
		{name: "update a deleted one", given: []Event{created, archived}, when: update(UpdateIntegration{Name: ptr("x")}), wantCode: CodeNotFound},
		{name: "give a workspace access", given: []Event{created}, when: workspaces(IntegrationWorkspace{ID: "ws-1", Enabled: true}),
			then: []Event{IntegrationWorkspacesUpdated{IntegrationID: "i-1", Workspaces: []IntegrationWorkspace{{ID: "ws-1", Enabled: true}}, At: later}}},
		{name: "no workspaces", given: []Event{created}, when: workspaces(), wantCode: CodeInvalid, wantParam: "workspaces"},
		{name: "a workspace twice", given: []Event{created}, when: workspaces(IntegrationWorkspace{ID: "ws-1"}, IntegrationWorkspace{ID: "ws-1"}),
			wantCode: CodeInvalid, wantParam: "workspaces[1].id"},
		{name: "two usage limits", given: []Event{created}, when: workspaces(IntegrationWorkspace{ID: "ws-1", UsageLimits: []UsageLimits{
			{Type: UsageCost, CreditLimit: ptr(5.0)}, {Type: UsageCost, CreditLimit: ptr(6.0)}}}), wantCode: CodeInvalid, wantParam: "workspaces[0].usage_limits"},
		{name: "a workspace integration serves its own workspace",
			given: []Event{func() Event { e := created; e.WorkspaceID = "ws-1"; return e }()},
			when:  workspaces(IntegrationWorkspace{ID: "ws-2", Enabled: true}), wantCode: CodeInvalid, wantParam: "workspaces[0].id"},
		{name: "archive", given: []Event{created}, when: func(i *Integration) ([]Event, error) { return i.Archive(later) }, then: []Event{archived}},
		{name: "archive twice", given: []Event{created, archived}, when: func(i *Integration) ([]Event, error) { return i.Archive(later) }, wantCode: CodeNotFound},
	})
}

func TestIntegrationEventsNeverHoldPlaintext(t *testing.T) {
	key := testKey
	i := &Integration{}
	events, err := i.Create(CreateIntegration{IntegrationID: "i-1", OrganisationID: "org", Slug: "s", Name: "n", AIProviderID: "vertex-ai",
		Key: &key, Configurations: map[string]any{"vertex_region": "eu", "vertex_service_account_json": map[string]any{"private_key": "PRIVATE-KEY-XYZ"}}},
		fakeSeal, t0)
	require.NoError(t, err)
	for _, ev := range events {
		raw := string(mustJSON(t, ev))
		assert.NotContains(t, raw, key)
		assert.NotContains(t, raw, "PRIVATE-KEY-XYZ")
	}
	i.Apply(events[0])
	state := string(mustJSON(t, i))
	assert.NotContains(t, state, "sealed(", "an aggregate's JSON holds not even the ciphertext")
	assert.Contains(t, state, "****cdef")
	assert.Equal(t, "sealed(key)", i.Sealed.Key, "the in-memory state keeps it for the gateway")
	assert.Equal(t, "****", i.Masked.Secrets["vertex_service_account_json"], "an object secret shows nothing of itself")
}

func TestIntegrationApplyCopiesOnWrite(t *testing.T) {
	i := &Integration{}
	i.Apply(IntegrationCreated{IntegrationID: "i-1", Configurations: map[string]any{"a_field": "1"}, Masked: MaskedCredential{Secrets: map[string]string{"custom_headers": "****"}}, At: t0})
	i.Apply(IntegrationWorkspacesUpdated{IntegrationID: "i-1", Workspaces: []IntegrationWorkspace{{ID: "ws-1", Enabled: true}}, At: t0})
	copied := *i
	i.Apply(IntegrationWorkspacesUpdated{IntegrationID: "i-1", Workspaces: []IntegrationWorkspace{{ID: "ws-1", Enabled: false}, {ID: "ws-2", Enabled: true}}, At: t0})
	i.Apply(IntegrationUpdated{IntegrationID: "i-1", Configuration: &ConfigurationSet{Set: map[string]any{"b_field": "2"}, Removed: []string{"a_field", "custom_headers"}}, At: t0})
	assert.True(t, copied.Serves("ws-1"), "an earlier copy is not changed by later events")
	assert.Len(t, copied.Workspaces, 1)
	assert.Equal(t, map[string]any{"a_field": "1"}, copied.Configurations)
	assert.Equal(t, "****", copied.Masked.Secrets["custom_headers"])
	assert.False(t, i.Serves("ws-1"))
	assert.True(t, i.Serves("ws-2"))
	assert.Equal(t, 1, i.EnabledWorkspaces())
	assert.Equal(t, map[string]any{"b_field": "2"}, i.Configurations)
	assert.Empty(t, i.Masked.Secrets)
}

func TestTags(t *testing.T) {
	assert.True(t, TagsMatch(map[string]string{"env": "prod", "team": "ml"}, map[string]string{"env": "prod"}))
	assert.True(t, TagsMatch(nil, nil))
	assert.False(t, TagsMatch(map[string]string{"env": "prod"}, map[string]string{"env": "dev"}))
	assert.False(t, TagsMatch(nil, map[string]string{"env": ""}))
	for _, c := range []struct {
		tags  map[string]string
		param string
	}{
		{map[string]string{strings.Repeat("k", 255): strings.Repeat("v", 255)}, ""},
		{map[string]string{strings.Repeat("k", 256): "v"}, "tags"},
		{map[string]string{"k": strings.Repeat("v", 256)}, "tags.k"},
		{map[string]string{"a,b": "v"}, "tags"},
		{map[string]string{"k": "line\nbreak"}, "tags.k"},
	} {
		err := ValidateTags("tags", c.tags)
		if c.param == "" {
			assert.NoError(t, err)
			continue
		}
		var appErr *Error
		require.ErrorAs(t, err, &appErr)
		assert.Equal(t, c.param, appErr.Param)
	}
}

func TestMaskSecret(t *testing.T) {
	assert.Equal(t, "****cdef", MaskSecret(testKey))
	assert.Equal(t, "****", MaskSecret("short-key"), "a short secret shows nothing")
	assert.Equal(t, "****", MaskSecret(""))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

func TestGatewayStreamPrefixesAreKnown(t *testing.T) {
	reg := NewRegistry()
	for _, prefix := range []string{IntegrationPrefix, ProviderPrefix, SavedConfigPrefix, ConfigDefaultPrefix, GuardrailPrefix} {
		agg, ok := reg.NewAggregate(prefix + "-0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1")
		require.True(t, ok, prefix)
		require.NotNil(t, agg)
	}
	for _, typ := range []string{"IntegrationCreated", "IntegrationUpdated", "IntegrationWorkspacesUpdated", "IntegrationArchived",
		"ProviderCreated", "ProviderUpdated", "ProviderUsageReset", "ProviderArchived", "ConfigCreated", "ConfigUpdated",
		"ConfigArchived", "ConfigDefaultSet", "GuardrailCreated", "GuardrailUpdated", "GuardrailArchived"} {
		_, ok := reg.New(typ)
		assert.True(t, ok, typ)
	}
}
