package analytics

import (
	"encoding/json"
	"time"
)

// LogRecord is one gateway request, successful, refused or failed, as the pipeline stores it.
// Bodies are stored with secrets redacted; credentials never enter a record.
type LogRecord struct {
	ID           string `json:"id"`
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id,omitempty"`
	ParentSpanID string `json:"parent_span_id,omitempty"`
	SpanName     string `json:"span_name,omitempty"`

	OrganisationID string `json:"organisation_id"`
	WorkspaceID    string `json:"workspace_id,omitempty"`
	APIKeyID       string `json:"api_key_id,omitempty"`
	Provider       string `json:"provider,omitempty"`   // the managed provider (@slug) or integration used
	AIService      string `json:"ai_service,omitempty"` // the adapter: openai, anthropic, ...
	Model          string `json:"model,omitempty"`
	ConfigID       string `json:"config_id,omitempty"`
	PromptID       string `json:"prompt_id,omitempty"`
	// PromptVersion and PromptLabel are the version of the prompt that served (0: no prompt)
	// and the name of the label that chose it ("": none did).
	PromptVersion int    `json:"prompt_version,omitempty"`
	PromptLabel   string `json:"prompt_label,omitempty"`

	Endpoint         string  `json:"endpoint"` // chatComplete, complete, embed, rerank, proxy
	Method           string  `json:"method"`
	Path             string  `json:"path"`
	StatusCode       int     `json:"status_code"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	CachedTokens     int     `json:"cached_tokens"`      // input read from the provider's prompt cache
	CacheWriteTokens int     `json:"cache_write_tokens"` // input written to it, billed above the input price
	ReasoningTokens  int     `json:"reasoning_tokens"`
	Cost             float64 `json:"cost"` // USD, computed as the gateway settles the request (gateway/pricing.Book)
	LatencyMS        float64 `json:"latency_ms"`
	TTFTMS           float64 `json:"ttft_ms,omitempty"` // time to first token, streams only
	// UpstreamMS is the time spent in provider calls (every attempt, until the answer or
	// the stream's end), so LatencyMS less it is the gateway's own overhead. It feeds the
	// metrics and is not stored.
	UpstreamMS float64 `json:"-"`
	Stream     bool    `json:"stream"`

	CacheStatus string `json:"cache_status"`
	// CacheSavedCost and CacheSavedMS are what a cache hit saved, 0 on every other row: the
	// cost in USD the original answer had, which the hit did not spend (its own Cost is 0),
	// and the original answer's latency less the hit's, never below 0.
	CacheSavedCost float64 `json:"cache_saved_cost,omitempty"`
	CacheSavedMS   float64 `json:"cache_saved_latency_ms,omitempty"`

	RetryCount     int               `json:"retry_count"`
	FallbackTarget string            `json:"fallback_target,omitempty"` // the target path that served after others failed
	Target         string            `json:"target,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	Error          string            `json:"error,omitempty"`
	RequestBody    json.RawMessage   `json:"request_body,omitempty"`
	ResponseBody   json.RawMessage   `json:"response_body,omitempty"`
	LogFormat      string            `json:"log_format"`
	// RequestBodyEncoding and ResponseBodyEncoding are "" when the body is the JSON as sent,
	// and "base64" when its bytes were not valid UTF-8 and the body field is a JSON string of
	// their base64.
	RequestBodyEncoding  string `json:"request_body_encoding,omitempty"`
	ResponseBodyEncoding string `json:"response_body_encoding,omitempty"`
	// Provenance names what decided the request: the policy or budget that refused it, the
	// budgets it was charged to, the config version that routed it.
	Provenance *Provenance `json:"provenance,omitempty"`

	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`

	journal uint64 // the journal segment holding the row until it is stored; 0: none
}

// LogSink takes log records without ever holding up the request that made them. The Pipeline
// is one: it takes each record as a Go value into a bounded buffer, with no encoding and no
// message bus on the way, and counts the records a full buffer refuses.
type LogSink interface {
	Log(LogRecord)
}
