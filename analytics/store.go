package analytics

import "context"

// Store is a request log store that answers the analytics queries. Every query sees only the
// rows of its filter's organisation, and counts a row inserted twice once. Bad input is a
// domain.Invalid error naming the query parameter.
type Store interface {
	Writer
	// Groups aggregates the rows matching q's filters by q.GroupBy.
	Groups(ctx context.Context, q GroupsQuery) (GroupsResult, error)
	// Graph buckets the rows matching q's filters by time.
	Graph(ctx context.Context, q GraphQuery) (Graph, error)
	// Summary totals the rows matching f.
	Summary(ctx context.Context, f Filter) (Summary, error)
	// CacheSummary totals the cache figures of the rows matching f.
	CacheSummary(ctx context.Context, f Filter) (CacheSummary, error)
	// Log returns the row id of organisation orgID, and whether there is one.
	Log(ctx context.Context, orgID, id string) (LogRecord, bool, error)
	// Logs returns one page of the rows matching q's filters, newest first.
	Logs(ctx context.Context, q LogsQuery) (LogsPage, error)
	// ScanLogs calls fn with every row matching f, oldest first (started_at, then id), reading
	// a page of rows at a time; it stops at fn's first error and returns it.
	ScanLogs(ctx context.Context, f Filter, fn func(LogRecord) error) error
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

// The reference's groupings beyond the specification's (its ai-models grouping is GroupModel).
// Both leave out the rows without the metadata key they group by.
const (
	GroupUser     = "user"     // by the UserMetadataKey metadata value
	GroupMetadata = "metadata" // by the value of GroupsQuery.MetadataKey
)

// ExtraGroupBys lists the reference's groupings that GroupBys does not hold.
var ExtraGroupBys = []string{GroupUser, GroupMetadata}

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

// Columns lists every optional column, in the specification's order. success_rate is the share
// of 2xx statuses, error_count counts statuses of 400 and above, cache_hit_rate the share of
// CacheHit and CacheSemanticHit.
var Columns = []string{ColCost, ColTotalTokens, ColAvgTokens, ColAvgInputTokens, ColAvgOutputTokens,
	ColAvgLatency, ColP95Latency, ColP99Latency, ColSuccessRate, ColErrorCount, ColCacheHitRate,
	ColLastSeen, ColFirstSeen}

// Percentiles are exact, on both engines: the value at 0-based position floor(p·n) of the
// group's latencies in ascending order, which is ClickHouse's quantileExact; SQLite computes
// the same position with an aggregate function of its own (causeway_quantile_exact).
const (
	P95 = 0.95
	P99 = 0.99
)

// Page size bounds.
const (
	DefaultPageSize = 20
	MaxPageSize     = 1000
)

// GroupsQuery is one groups request over the rows of Filter.
type GroupsQuery struct {
	Filter
	GroupBy     string // one of GroupBys or ExtraGroupBys
	MetadataKey string // GroupMetadata's key: required with it, at most 255 characters
	Columns     []string

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
