package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestProviderDecisions(t *testing.T) {
	key := testKey
	ofIntegration := ProviderCreated{ProviderID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
		IntegrationID: "i-1", AIProviderID: "openai", At: t0}
	own := ProviderCreated{ProviderID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
		AIProviderID: "anthropic", Sealed: SealedCredential{Key: "sealed(key)"}, Masked: MaskedCredential{Key: "****cdef"}, At: t0}
	create := func(mod func(*CreateProvider)) func(*Provider) ([]Event, error) {
		return func(p *Provider) ([]Event, error) {
			c := CreateProvider{ProviderID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
				IntegrationID: "i-1", AIProviderID: "openai"}
			if mod != nil {
				mod(&c)
			}
			return p.Create(c, fakeSeal, t0)
		}
	}
	ownCreate := func(c *CreateProvider) { c.IntegrationID, c.AIProviderID, c.Key = "", "anthropic", &key }
	later := t0.Add(time.Hour)
	update := func(c UpdateProvider) func(*Provider) ([]Event, error) {
		return func(p *Provider) ([]Event, error) { return p.Update(c, fakeSeal, later) }
	}
	archived := ProviderArchived{ProviderID: "p-1", At: later}
	past, future := t0.Add(-time.Minute), t0.Add(24*time.Hour)
	runScenarios(t, func() *Provider { return &Provider{} }, []scenario[*Provider]{
		{name: "create of an integration", when: create(nil), then: []Event{ofIntegration}},
		{name: "create with its own key", when: create(ownCreate), then: []Event{own}},
		{name: "create twice", given: []Event{ofIntegration}, when: create(nil), wantCode: CodeConflict},
		{name: "name of 255", when: create(func(c *CreateProvider) { c.Name = strings.Repeat("n", 255) }),
			then: []Event{func() Event { e := ofIntegration; e.Name = strings.Repeat("n", 255); return e }()}},
		{name: "name of 256", when: create(func(c *CreateProvider) { c.Name = strings.Repeat("n", 256) }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "slug of 256", when: create(func(c *CreateProvider) { c.Slug = strings.Repeat("s", 256) }), wantCode: CodeInvalid, wantParam: "slug"},
		{name: "slug starting with a dash", when: create(func(c *CreateProvider) { c.Slug = "-x" }), wantCode: CodeInvalid, wantParam: "slug"},
		{name: "note of 1025", when: create(func(c *CreateProvider) { c.Note = strings.Repeat("n", 1025) }), wantCode: CodeInvalid, wantParam: "note"},
		{name: "a key beside an integration", when: create(func(c *CreateProvider) { c.Key = &key }), wantCode: CodeInvalid, wantParam: "key"},
		{name: "configurations beside an integration", when: create(func(c *CreateProvider) { c.Configurations = map[string]any{"openai_project": "p"} }),
			wantCode: CodeInvalid, wantParam: "configurations"},
		{name: "expired already", when: create(func(c *CreateProvider) { c.ExpiresAt = &past }), wantCode: CodeInvalid, wantParam: "expires_at"},
		{name: "rate limit of 0", when: create(func(c *CreateProvider) { c.RateLimits = []RateLimit{{Type: "requests", Unit: "rpm"}} }),
			wantCode: CodeInvalid, wantParam: "rate_limits[0].value"},
		{name: "usage limit type", when: create(func(c *CreateProvider) { c.UsageLimits = &UsageLimits{CreditLimit: ptr(5.0), Type: "euros"} }),
			wantCode: CodeInvalid, wantParam: "usage_limits.type"},
		{name: "update a note and clear limits", given: []Event{ofIntegration},
			when: update(UpdateProvider{Note: ptr("n"), ClearUsageLimits: true, ClearRateLimits: true}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", Note: ptr("n"), ClearUsageLimits: true, ClearRateLimits: true, At: later}}},
		{name: "reset usage only", given: []Event{ofIntegration}, when: update(UpdateProvider{ResetUsage: true}),
			then: []Event{ProviderUsageReset{ProviderID: "p-1", At: later}}},
		{name: "rename and reset", given: []Event{ofIntegration}, when: update(UpdateProvider{Name: ptr("x"), ResetUsage: true}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", Name: ptr("x"), At: later}, ProviderUsageReset{ProviderID: "p-1", At: later}}},
		{name: "a key on a provider of an integration", given: []Event{ofIntegration}, when: update(UpdateProvider{Key: &key}),
			wantCode: CodeInvalid, wantParam: "key"},
		{name: "a new key of its own", given: []Event{own}, when: update(UpdateProvider{Key: ptr("sk-another-key-9999")}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", Configuration: &ConfigurationSet{SealedKey: "sealed(key)", MaskedKey: "****9999"}, At: later}}},
		{name: "update nothing", given: []Event{ofIntegration}, when: update(UpdateProvider{}), wantCode: CodeInvalid},
		{name: "expires in the past", given: []Event{ofIntegration}, when: update(UpdateProvider{ExpiresAt: &past}), wantCode: CodeInvalid, wantParam: "expires_at"},
		{name: "expires later", given: []Event{ofIntegration}, when: update(UpdateProvider{ExpiresAt: &future}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", ExpiresAt: &future, At: later}}},
		{name: "update a deleted one", given: []Event{ofIntegration, archived}, when: update(UpdateProvider{Name: ptr("x")}), wantCode: CodeNotFound},
		{name: "archive", given: []Event{ofIntegration}, when: func(p *Provider) ([]Event, error) { return p.Archive(later) }, then: []Event{archived}},
		{name: "archive twice", given: []Event{ofIntegration, archived}, when: func(p *Provider) ([]Event, error) { return p.Archive(later) }, wantCode: CodeNotFound},
	})
}

func TestProviderStatusAt(t *testing.T) {
	exp := t0.Add(time.Hour)
	p := &Provider{}
	p.Apply(ProviderCreated{ProviderID: "p-1", UsageLimits: &UsageLimits{CreditLimit: ptr(10.0), Type: UsageCost}, ExpiresAt: &exp, At: t0})
	assert.Equal(t, StatusActive, p.StatusAt(t0))
	assert.Equal(t, ProviderExpired, p.StatusAt(exp))
	p.CurrentUsage = 10
	assert.Equal(t, ProviderExhausted, p.StatusAt(t0))
	p.Apply(ProviderUsageReset{ProviderID: "p-1", At: t0})
	assert.Equal(t, StatusActive, p.StatusAt(t0))
	assert.Equal(t, t0, *p.LastResetAt)
	p.Apply(ProviderArchived{ProviderID: "p-1", At: t0})
	assert.Equal(t, StatusArchived, p.StatusAt(t0))
	assert.False(t, p.Exists())
}

func TestLegacyModelConfig(t *testing.T) {
	f, ok := LegacyModelConfigField("resourceName")
	assert.True(t, ok)
	assert.Equal(t, "azure_resource_name", f)
	_, ok = LegacyModelConfigField("resource_name")
	assert.False(t, ok)
	assert.Equal(t, map[string]any{"resourceName": "r", "masked_awsSecretAccessKey": "****", "other_field": 1},
		LegacyModelConfig(map[string]any{"azure_resource_name": "r", "masked_aws_secret_access_key": "****", "other_field": 1}))
	for _, camel := range LegacyModelConfigFields() {
		f, _ := LegacyModelConfigField(camel)
		assert.Regexp(t, `^[a-z][a-z0-9_]*$`, f, "every legacy setting maps to a configuration field name")
	}
}

func TestValidHeaderNameAndBaseURL(t *testing.T) {
	for _, ok := range []string{"x-team", "X-Api-Key", "a!#$%&'*+-.^_`|~z"} {
		assert.True(t, ValidHeaderName(ok), ok)
	}
	for _, bad := range []string{"", "a b", "a:b", "é", strings.Repeat("h", 257)} {
		assert.False(t, ValidHeaderName(bad), bad)
	}
	for _, ok := range []string{"http://a.example", "https://a.example:8443/v1"} {
		assert.NoError(t, ValidateBaseURL("u", ok), ok)
	}
	for _, bad := range []string{"a.example", "ftp://a.example", "http://", "http://user:pw@a.example", "http://a.example/?k=v", "http://a.example/#f",
		"https://a.example/" + strings.Repeat("p", 2048)} {
		assert.Error(t, ValidateBaseURL("u", bad), bad)
	}
}
