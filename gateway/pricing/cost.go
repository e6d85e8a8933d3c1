package pricing

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
)

// Usage is what a request consumed, counted as OpenAI counts it (and as the gateway's log
// records carry it): PromptTokens holds every input token, those read from or written to a
// cache included; CompletionTokens holds every output token, reasoning included.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int
}

// reasoningUnits name a separate price for reasoning tokens in additional_units; the first is
// the reference's (Google's thinking tokens).
var reasoningUnits = []string{"thinking_token", "reasoning_token"}

// Cost is what u costs at these prices, in USD. Input read from or written to a cache is
// billed at its own price when the model has one, else at the request price; reasoning is
// billed as output unless additional_units prices thinking_token or reasoning_token.
func (p ModelPricing) Cost(u Usage) float64 {
	pp := p.PayAsYouGo
	req := priceOf(pp.RequestToken, 0)
	read, write := priceOf(pp.CacheReadInputToken, req), priceOf(pp.CacheWriteInputToken, req)
	resp := priceOf(pp.ResponseToken, 0)
	prompt, completion := max(u.PromptTokens, 0), max(u.CompletionTokens, 0)
	cacheRead, cacheWrite := max(u.CacheReadTokens, 0), max(u.CacheWriteTokens, 0)
	uncached := max(prompt-cacheRead-cacheWrite, 0)
	cents := float64(uncached)*req + float64(cacheRead)*read + float64(cacheWrite)*write
	reasoning := min(max(u.ReasoningTokens, 0), completion)
	reasoningPrice, separate := resp, false
	for _, unit := range reasoningUnits {
		if tp, ok := pp.AdditionalUnits[unit]; ok {
			reasoningPrice, separate = tp.Price, true
			break
		}
	}
	if !separate {
		reasoning = 0
	}
	cents += float64(completion-reasoning)*resp + float64(reasoning)*reasoningPrice
	return cents / 100
}

func priceOf(tp *domain.TokenPrice, otherwise float64) float64 {
	if tp == nil {
		return otherwise
	}
	return tp.Price
}

// Cost is what u cost on provider's model for an organisation, in USD: 0 for a model no source
// knows. It never waits for the network: on a cold cache it answers from the local sources
// and asks the proxy in the background (at most once per CacheTTL per model), whose answer
// serves the requests after it. A cold lookup may read the local pricing files.
func (b *Book) Cost(orgID, provider, model string, u Usage) float64 {
	return b.CostIn(orgID, "", provider, model, u)
}

// CostIn is Cost in a workspace, whose own override, if any, comes first.
func (b *Book) CostIn(orgID, workspaceID, provider, model string, u Usage) float64 {
	q, ok := b.override(orgID, workspaceID, provider, model)
	if !ok {
		q, ok = b.base(context.Background(), provider, model, false)
	}
	if !ok {
		return 0
	}
	return q.Pricing.Cost(u)
}

// UsageCost is CostIn for a provider call's usage, as the gateway counts it (its PriceBook).
func (b *Book) UsageCost(orgID, workspaceID, provider, model string, u providers.Usage) float64 {
	return b.CostIn(orgID, workspaceID, provider, model, Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		CacheReadTokens: u.CachedTokens, CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens})
}
