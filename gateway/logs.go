package gateway

import (
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
)

// LogRecord is one gateway request, successful, refused or failed, as the analytics pipeline
// stores it. Bodies are stored with secrets redacted; credentials never enter a record.
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
	Cost             float64 `json:"cost"` // USD, computed as the record is logged (gateway/pricing.Sink)
	LatencyMS        float64 `json:"latency_ms"`
	TTFTMS           float64 `json:"ttft_ms,omitempty"` // time to first token, streams only
	Stream           bool    `json:"stream"`

	CacheStatus    string            `json:"cache_status"`
	RetryCount     int               `json:"retry_count"`
	FallbackTarget string            `json:"fallback_target,omitempty"` // the target path that served after others failed
	Target         string            `json:"target,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	Error          string            `json:"error,omitempty"`
	RequestBody    json.RawMessage   `json:"request_body,omitempty"`
	ResponseBody   json.RawMessage   `json:"response_body,omitempty"`
	LogFormat      string            `json:"log_format"`

	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
}

// LogSink takes log records without ever holding up the request that made them.
type LogSink interface {
	Log(LogRecord)
}

// LogTopic is the watermill topic request logs are published on.
const LogTopic = "causeway.request_logs"

// WatermillSink hands records to a watermill publisher from a goroutine of its own, through a
// bounded buffer: a request never waits for the pipeline. A record that finds the buffer full
// is counted in Dropped, which health reports; behind the bus, the analytics pipeline spools
// to disk while its store is down.
type WatermillSink struct {
	pub     message.Publisher
	ch      chan LogRecord
	dropped atomic.Int64
	done    chan struct{}
}

// NewWatermillSink starts a sink publishing on pub, buffering up to buffer records.
func NewWatermillSink(pub message.Publisher, buffer int) *WatermillSink {
	s := &WatermillSink{pub: pub, ch: make(chan LogRecord, buffer), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *WatermillSink) Log(rec LogRecord) {
	select {
	case s.ch <- rec:
	default:
		s.dropped.Add(1)
	}
}

func (s *WatermillSink) run() {
	defer close(s.done)
	for rec := range s.ch {
		payload, err := json.Marshal(rec)
		if err != nil {
			s.dropped.Add(1)
			continue
		}
		if err := s.pub.Publish(LogTopic, message.NewMessage(uuid.NewString(), payload)); err != nil {
			s.dropped.Add(1)
		}
	}
}

// Dropped counts the records the sink could not hand on.
func (s *WatermillSink) Dropped() int64 { return s.dropped.Load() }

// Close hands on what is buffered, then stops: a gateway stopped cleanly loses no record.
func (s *WatermillSink) Close() error {
	close(s.ch)
	<-s.done
	return nil
}
