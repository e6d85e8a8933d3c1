package pricing_test

import (
	"testing"

	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/pricing"
)

type discard struct{}

func (discard) Log(gateway.LogRecord) {}

// BenchmarkSinkLog is what pricing adds to a request: one Log call on a warm cache.
func BenchmarkSinkLog(b *testing.B) {
	sink := pricing.NewSink(newBook(b, pricing.Config{}, pricing.Options{Overrides: overrides{}}), discard{})
	rec := gateway.LogRecord{OrganisationID: "org", WorkspaceID: "ws", AIService: "openai", Model: "gpt-4o",
		PromptTokens: 1000, CompletionTokens: 100, CachedTokens: 400}
	for b.Loop() {
		sink.Log(rec)
	}
}
