package domain

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func price(v float64) *TokenPrice { return &TokenPrice{Price: v} }

func TestModelPricingOverrideDecisions(t *testing.T) {
	id := ModelPricingOverrideID("org", "", "openai", "gpt-4o")
	prices := ModelPrices{RequestToken: price(0.0002), ResponseToken: price(0.0008)}
	set := ModelPricingOverrideSet{OverrideID: id, OrganisationID: "org", Provider: "openai", Model: "gpt-4o",
		PayAsYouGo: prices, At: t0}
	later := t0.Add(time.Hour)
	setWith := func(mod func(*SetModelPricing)) func(*ModelPricingOverride) ([]Event, error) {
		return func(o *ModelPricingOverride) ([]Event, error) {
			c := SetModelPricing{OverrideID: id, OrganisationID: "org", Provider: "openai", Model: "gpt-4o", PayAsYouGo: prices}
			if mod != nil {
				mod(&c)
			}
			return o.Set(c, t0)
		}
	}
	withPrices := func(p ModelPrices) func(*SetModelPricing) {
		return func(c *SetModelPricing) { c.PayAsYouGo = p }
	}
	removed := ModelPricingOverrideRemoved{OverrideID: id, At: later}
	runScenarios(t, func() *ModelPricingOverride { return &ModelPricingOverride{} }, []scenario[*ModelPricingOverride]{
		{name: "set", when: setWith(nil), then: []Event{set}},
		{name: "provider is normalised", when: setWith(func(c *SetModelPricing) { c.Provider = " Mistral " }),
			then: []Event{func() Event { e := set; e.Provider = "mistral-ai"; return e }()}},
		{name: "set the same prices again writes nothing", given: []Event{set}, when: setWith(nil), then: nil},
		{name: "change the price", given: []Event{set},
			when: setWith(withPrices(ModelPrices{RequestToken: price(0.0001)})),
			then: []Event{func() Event { e := set; e.PayAsYouGo = ModelPrices{RequestToken: price(0.0001)}; return e }()}},
		{name: "set again after removal", given: []Event{set, removed}, when: setWith(nil), then: []Event{set}},
		{name: "price 0 is free", when: setWith(withPrices(ModelPrices{RequestToken: price(0), ResponseToken: price(0)})),
			then: []Event{func() Event {
				e := set
				e.PayAsYouGo = ModelPrices{RequestToken: price(0), ResponseToken: price(0)}
				return e
			}()}},
		{name: "price at the bound", when: setWith(withPrices(ModelPrices{RequestToken: price(MaxPricePerUnit)})),
			then: []Event{func() Event { e := set; e.PayAsYouGo = ModelPrices{RequestToken: price(MaxPricePerUnit)}; return e }()}},
		{name: "price past the bound", when: setWith(withPrices(ModelPrices{RequestToken: price(math.Nextafter(MaxPricePerUnit, math.Inf(1)))})),
			wantCode: CodeInvalid, wantParam: "pay_as_you_go.request_token.price"},
		{name: "negative price", when: setWith(withPrices(ModelPrices{RequestToken: price(0.001), ResponseToken: price(-0.0000001)})),
			wantCode: CodeInvalid, wantParam: "pay_as_you_go.response_token.price"},
		{name: "NaN price", when: setWith(withPrices(ModelPrices{RequestToken: price(0.1), CacheReadInputToken: price(math.NaN())})),
			wantCode: CodeInvalid, wantParam: "pay_as_you_go.cache_read_input_token.price"},
		{name: "infinite price", when: setWith(withPrices(ModelPrices{RequestToken: price(0.1), CacheWriteInputToken: price(math.Inf(1))})),
			wantCode: CodeInvalid, wantParam: "pay_as_you_go.cache_write_input_token.price"},
		{name: "additional unit past the bound",
			when:     setWith(withPrices(ModelPrices{RequestToken: price(0.1), AdditionalUnits: map[string]TokenPrice{"web_search": {Price: 100_001}}})),
			wantCode: CodeInvalid, wantParam: "pay_as_you_go.additional_units.web_search.price"},
		{name: "additional unit without a name",
			when:     setWith(withPrices(ModelPrices{RequestToken: price(0.1), AdditionalUnits: map[string]TokenPrice{" ": {Price: 1}}})),
			wantCode: CodeInvalid, wantParam: "pay_as_you_go.additional_units"},
		{name: "too many additional units", when: setWith(withPrices(func() ModelPrices {
			p := ModelPrices{RequestToken: price(0.1), AdditionalUnits: map[string]TokenPrice{}}
			for i := 0; i <= MaxAdditionalUnits; i++ {
				p.AdditionalUnits[strings.Repeat("u", i+1)] = TokenPrice{Price: 1}
			}
			return p
		}())), wantCode: CodeInvalid, wantParam: "pay_as_you_go.additional_units"},
		{name: "no token price", when: setWith(withPrices(ModelPrices{CacheReadInputToken: price(0.1)})),
			wantCode: CodeInvalid, wantParam: "pay_as_you_go"},
		{name: "model of 255", when: setWith(func(c *SetModelPricing) { c.Model = strings.Repeat("m", 255) }),
			then: []Event{func() Event { e := set; e.Model = strings.Repeat("m", 255); return e }()}},
		{name: "model of 256", when: setWith(func(c *SetModelPricing) { c.Model = strings.Repeat("m", 256) }),
			wantCode: CodeInvalid, wantParam: "model"},
		{name: "provider of 256", when: setWith(func(c *SetModelPricing) { c.Provider = strings.Repeat("p", 256) }),
			wantCode: CodeInvalid, wantParam: "provider"},
		{name: "no model", when: setWith(func(c *SetModelPricing) { c.Model = " " }), wantCode: CodeInvalid, wantParam: "model"},
		{name: "control character in the model", when: setWith(func(c *SetModelPricing) { c.Model = "gpt\n4o" }),
			wantCode: CodeInvalid, wantParam: "model"},
		{name: "remove", given: []Event{set},
			when: func(o *ModelPricingOverride) ([]Event, error) { return o.Remove(later) }, then: []Event{removed}},
		{name: "remove twice", given: []Event{set, removed},
			when: func(o *ModelPricingOverride) ([]Event, error) { return o.Remove(later) }, wantCode: CodeNotFound},
		{name: "remove what was never set",
			when: func(o *ModelPricingOverride) ([]Event, error) { return o.Remove(later) }, wantCode: CodeNotFound},
	})
}

func TestModelPricingOverrideFold(t *testing.T) {
	id := ModelPricingOverrideID("org", "ws", "anthropic", "claude-sonnet-4-5")
	var o ModelPricingOverride
	o.Apply(ModelPricingOverrideSet{OverrideID: id, OrganisationID: "org", WorkspaceID: "ws", Provider: "anthropic",
		Model: "claude-sonnet-4-5", PayAsYouGo: ModelPrices{RequestToken: price(0.0003)}, At: t0})
	later := t0.Add(time.Hour)
	o.Apply(ModelPricingOverrideSet{OverrideID: id, OrganisationID: "org", WorkspaceID: "ws", Provider: "anthropic",
		Model: "claude-sonnet-4-5", PayAsYouGo: ModelPrices{RequestToken: price(0.0002)}, At: later})
	assert.True(t, o.Active())
	assert.Equal(t, t0, o.CreatedAt, "a change keeps the creation time")
	assert.Equal(t, later, o.LastUpdatedAt)
	assert.Equal(t, 0.0002, o.PayAsYouGo.RequestToken.Price)
	o.Apply(ModelPricingOverrideRemoved{OverrideID: id, At: later})
	assert.False(t, o.Active())
	assert.Equal(t, StatusRemoved, o.Status)
}

func TestModelPricingNames(t *testing.T) {
	for in, want := range map[string]string{"OpenAI": "openai", "mistral": "mistral-ai", "azure": "azure-openai",
		"AZURE-OPENAI": "azure-openai", "gemini": "google", "together_ai": "together-ai", "fireworks": "fireworks-ai",
		"vertex": "vertex-ai", "aws-bedrock": "bedrock", " groq ": "groq", "my-self-hosted": "my-self-hosted"} {
		assert.Equal(t, want, NormaliseProvider(in), in)
	}
	a := ModelPricingOverrideID("org", "", "OpenAI", "GPT-4o")
	assert.Equal(t, a, ModelPricingOverrideID("org", "", "openai", "gpt-4o "), "names match case-insensitively")
	assert.NotEqual(t, a, ModelPricingOverrideID("org", "ws", "openai", "gpt-4o"), "a workspace's override is its own")
	assert.NotEqual(t, a, ModelPricingOverrideID("org2", "", "openai", "gpt-4o"))
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, a)
	// Ids are stream names already stored: the form is fixed (sha1 of the parts, as computed
	// independently with Python's hashlib).
	assert.Equal(t, "77a506d1-ba62-5659-ae6d-bf901136c9e5", a)
}
