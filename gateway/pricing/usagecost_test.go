package pricing_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/pricing"
	"github.com/causeway/causeway/gateway/providers"
)

// Cache reads and writes are billed at their own prices, and what is left of the prompt at the
// request price.
func TestUsageCostBillsCacheReadsAndWrites(t *testing.T) {
	ov := overrides{"org//anthropic/claude-custom": {Provider: "anthropic", Model: "claude-custom", PayAsYouGo: domain.ModelPrices{
		RequestToken: &domain.TokenPrice{Price: 0.0003}, ResponseToken: &domain.TokenPrice{Price: 0.0015},
		CacheReadInputToken: &domain.TokenPrice{Price: 0.00003}, CacheWriteInputToken: &domain.TokenPrice{Price: 0.000375}}}}
	book := newBook(t, pricing.Config{}, pricing.Options{Overrides: ov})
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
	costs := make([]float64, len(cases))
	for i, tc := range cases {
		costs[i] = book.UsageCost("org", "", "anthropic", tc.model, providers.Usage{PromptTokens: 10_000, CompletionTokens: 1000,
			CachedTokens: 2000, CacheWriteTokens: tc.write})
		assert.InDelta(t, tc.usd, costs[i], 1e-12, tc.name)
	}
	assert.Greater(t, costs[0], costs[2], "a write costs more than the input it replaces")
}
