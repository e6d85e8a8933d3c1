package analytics

import (
	"context"
	"time"
)

// Store is a request log store that answers the analytics queries.
type Store interface {
	Writer
	// Groups aggregates the rows matching q's filters by q.GroupBy.
	Groups(ctx context.Context, q GroupsQuery) (GroupsResult, error)
	Close() error
}

// The groupings of GET /v1/analytics/groups/:groupBy.
const (
	GroupAIService  = "ai_service"
	GroupModel      = "model"
	GroupStatusCode = "status_code"
	GroupAPIKey     = "api_key"
	GroupConfig     = "config"
	GroupWorkspace  = "workspace"
	GroupProvider   = "provider"
	GroupPrompt     = "prompt"
)

// GroupBys lists every grouping, in the specification's order.
var GroupBys = []string{GroupAIService, GroupModel, GroupStatusCode, GroupAPIKey, GroupConfig,
	GroupWorkspace, GroupProvider, GroupPrompt}

// The columns a groups query may ask for; requests is always returned.
const (
	ColRequests        = "requests"
	ColCost            = "cost"
	ColTotalTokens     = "total_tokens"
	ColAvgTokens       = "avg_tokens"
	ColAvgInputTokens  = "avg_input_tokens"
	ColAvgOutputTokens = "avg_output_tokens"
	ColAvgLatency      = "avg_latency"
	ColP95Latency      = "p95_latency"
	ColP99Latency      = "p99_latency"
	ColSuccessRate     = "success_rate"
	ColErrorCount      = "error_count"
	ColCacheHitRate    = "cache_hit_rate"
	ColLastSeen        = "last_seen"
	ColFirstSeen       = "first_seen"
)

// Columns lists every optional column, in the specification's order.
var Columns = []string{ColCost, ColTotalTokens, ColAvgTokens, ColAvgInputTokens, ColAvgOutputTokens,
	ColAvgLatency, ColP95Latency, ColP99Latency, ColSuccessRate, ColErrorCount, ColCacheHitRate,
	ColLastSeen, ColFirstSeen}

// Percentiles are exact, on both engines: the value at 0-based position floor(p·n) of the
// group's latencies in ascending order, which is ClickHouse's quantileExact; SQLite computes
// the same position with a window function.
const (
	P95 = 0.95
	P99 = 0.99
)

// Page size bounds.
const (
	DefaultPageSize = 20
	MaxPageSize     = 1000
)

// GroupsQuery is one groups request. OrganisationID is required; every other filter is
// ignored when empty.
type GroupsQuery struct {
	GroupBy string
	Columns []string

	OrganisationID string
	WorkspaceIDs   []string
	From, To       time.Time // started_at in [From, To); zero means unbounded
	APIKeyIDs      []string
	ConfigIDs      []string
	Providers      []string
	Models         []string
	StatusCodes    []int
	Metadata       map[string]string // every pair must match
	TraceID        string
	MinCost        *float64 // inclusive
	MaxCost        *float64 // inclusive
	MinTokens      *int     // total tokens, inclusive
	MaxTokens      *int     // total tokens, inclusive

	Page     int // 0-based
	PageSize int // 0 means DefaultPageSize
	SortBy   string
	SortDesc bool // with an empty SortBy, the default is requests descending
}

// Group is one row of a groups answer. Values holds the asked columns: latencies in
// milliseconds, rates as shares in [0, 1], last_seen and first_seen as Unix milliseconds.
type Group struct {
	Key      string
	Requests int64
	Values   map[string]float64
}

// GroupsResult is one page of groups and the number of groups across all pages.
type GroupsResult struct {
	Total  int
	Groups []Group
}
