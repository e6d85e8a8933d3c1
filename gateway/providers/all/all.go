package all

import (
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/anthropic"
	"github.com/causeway/causeway/gateway/providers/cohere"
	"github.com/causeway/causeway/gateway/providers/gemini"
	"github.com/causeway/causeway/gateway/providers/openaicompat"
)

// Default returns the adapters of every provider, keyed by the provider names a Target
// carries, for providers.NewRegistry. The OpenAI-compatible providers and Cohere share one
// HTTP client for Targets that carry none; the translating adapters (Anthropic, Gemini)
// another.
func Default() map[string]providers.Provider {
	client := providers.NewClient()
	out := map[string]providers.Provider{}
	for _, a := range openaicompat.All(client) {
		out[a.Name()] = a
	}
	out["cohere"] = cohere.New(client)
	translating := providers.NewClient()
	out["anthropic"] = anthropic.New(translating)
	out["google"] = gemini.New(translating)
	return out
}
