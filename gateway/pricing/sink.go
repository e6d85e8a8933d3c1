package pricing

import (
	"strings"

	"github.com/causeway/causeway/gateway"
)

// Sink fills in each request log record's cost before handing it on: this is where the cost
// of each request is computed, when it is logged. The cost is USD, the unit of the analytics
// cost column. A record that already carries a cost keeps it.
type Sink struct {
	book *Book
	next gateway.LogSink
}

var _ gateway.LogSink = (*Sink)(nil)

// NewSink wraps next.
func NewSink(book *Book, next gateway.LogSink) *Sink { return &Sink{book: book, next: next} }

// Log prices the record by its adapter (ai_service; the provider field when it names an
// adapter rather than a managed provider's @slug), model and token counts, and hands it on.
// It never waits for the network (see Book.Cost).
func (s *Sink) Log(rec gateway.LogRecord) {
	provider := rec.AIService
	if provider == "" && !strings.HasPrefix(rec.Provider, "@") {
		provider = rec.Provider
	}
	if rec.Cost == 0 && provider != "" && rec.Model != "" {
		rec.Cost = s.book.CostIn(rec.OrganisationID, rec.WorkspaceID, provider, rec.Model, Usage{
			PromptTokens: rec.PromptTokens, CompletionTokens: rec.CompletionTokens,
			CacheReadTokens: rec.CachedTokens, CacheWriteTokens: rec.CacheWriteTokens, ReasoningTokens: rec.ReasoningTokens,
		})
	}
	s.next.Log(rec)
}
