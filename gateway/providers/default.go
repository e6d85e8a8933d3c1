package providers

// Default returns the adapters of the OpenAI-compatible providers and Cohere, keyed by the
// provider names a Target carries, sharing one HTTP client for Targets that carry none. The
// translating adapters (Anthropic, Gemini) come from More; the gateway merges both maps into
// one NewRegistry.
func Default() map[string]Provider {
	client := NewClient()
	out := make(map[string]Provider, len(dialects)+1)
	for name, d := range dialects {
		out[name] = &OpenAICompatible{name: name, d: d, client: client}
	}
	out["cohere"] = NewCohere(client)
	return out
}
