package pricing_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/pricing"
)

// A record's cache reads and writes are billed at their own prices: the sink hands both counts
// to the cost, and what is left of the prompt is billed at the request price.
func TestSinkBillsCacheReadsAndWrites(t *testing.T) {
	ov := overrides{"org//anthropic/claude-custom": {Provider: "anthropic", Model: "claude-custom", PayAsYouGo: domain.ModelPrices{
		RequestToken: &domain.TokenPrice{Price: 0.0003}, ResponseToken: &domain.TokenPrice{Price: 0.0015},
		CacheReadInputToken: &domain.TokenPrice{Price: 0.00003}, CacheWriteInputToken: &domain.TokenPrice{Price: 0.000375}}}}
	next := &recorder{}
	sink := pricing.NewSink(newBook(t, pricing.Config{}, pricing.Options{Overrides: ov}), next)
	base := gateway.LogRecord{OrganisationID: "org", Provider: "@anthropic-prod", AIService: "anthropic",
		PromptTokens: 10_000, CompletionTokens: 1000, CachedTokens: 2000, CacheWriteTokens: 3000, StatusCode: 200}
	cases := []struct {
		name  string
		model string
		write int
		usd   float64
	}{
		// Shipped prices of claude-sonnet-4-5: $3/M in, $0.30/M read, $3.75/M written, $15/M out.
		{"shipped prices", "claude-sonnet-4-5", 3000, 5000*3e-6 + 2000*0.3e-6 + 3000*3.75e-6 + 1000*15e-6},
		{"an override's prices", "claude-custom", 3000, (5000*0.0003 + 2000*0.00003 + 3000*0.000375 + 1000*0.0015) / 100},
		{"no cache writes", "claude-sonnet-4-5", 0, 8000*3e-6 + 2000*0.3e-6 + 1000*15e-6},
	}
	for _, tc := range cases {
		rec := base
		rec.Model, rec.CacheWriteTokens = tc.model, tc.write
		sink.Log(rec)
	}
	require.Len(t, next.recs, len(cases))
	for i, tc := range cases {
		assert.InDelta(t, tc.usd, next.recs[i].Cost, 1e-12, tc.name)
		assert.Equal(t, tc.write, next.recs[i].CacheWriteTokens, "%s: the count is handed on", tc.name)
	}
	assert.Greater(t, next.recs[0].Cost, next.recs[2].Cost, "a write costs more than the input it replaces")
}
