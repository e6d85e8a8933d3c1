package pricing_test

import (
	"testing"

	"github.com/causeway/causeway/gateway/pricing"
	"github.com/causeway/causeway/gateway/providers"
)

// BenchmarkUsageCost is what pricing adds to a request: one cost on a warm cache (the gateway
// prices a request's worst case before it runs and its usage after).
func BenchmarkUsageCost(b *testing.B) {
	book := newBook(b, pricing.Config{}, pricing.Options{Overrides: overrides{}})
	u := providers.Usage{PromptTokens: 1000, CompletionTokens: 100, CachedTokens: 400}
	for b.Loop() {
		book.UsageCost("org", "ws", "openai", "gpt-4o", u)
	}
}
