package analytics

import (
	"time"

	"github.com/causeway/causeway/gateway"
)

// Filter is what every analytics and logs query filters rows by. OrganisationID is required;
// every other field is ignored when empty. Time is started_at in [From, To).
type Filter struct {
	OrganisationID string
	WorkspaceIDs   []string
	From, To       time.Time
	APIKeyIDs      []string
	ConfigIDs      []string
	Providers      []string
	Models         []string
	PromptIDs      []string
	StatusCodes    []int
	Metadata       map[string]string // every pair must match
	TraceID        string
	SpanID         string
	MinCost        *float64 // inclusive
	MaxCost        *float64 // inclusive
	MinTokens      *int     // total tokens, inclusive
	MaxTokens      *int     // total tokens, inclusive
	MinPromptTokens, MaxPromptTokens         *int // inclusive
	MinCompletionTokens, MaxCompletionTokens *int // inclusive
}

// UserMetadataKey is the metadata key that names the end user of a request, as the reference's
// `_user`: the users graph and the users group count and group by it.
const UserMetadataKey = "_user"

// The graphs of GET /v1/analytics/graphs/{kind}.
const (
	GraphRequests         = "requests"
	GraphCost             = "cost"
	GraphLatency          = "latency"
	GraphTokens           = "tokens"
	GraphUsers            = "users"
	GraphErrors           = "errors"
	GraphErrorRate        = "errors/rate"
	GraphErrorStatusCodes = "errors/status-codes"
	GraphCacheHitRate     = "cache/hit-rate"
	GraphCacheLatency     = "cache/latency"
)

// Graphs lists every graph kind.
var Graphs = []string{GraphRequests, GraphCost, GraphLatency, GraphTokens, GraphUsers, GraphErrors,
	GraphErrorRate, GraphErrorStatusCodes, GraphCacheHitRate, GraphCacheLatency}

// GraphQuery asks for one graph: the rows of Filter in time buckets of Bucket, which must be
// a whole number of minutes (the HTTP layer picks it from the range when the client does not).
type GraphQuery struct {
	Filter
	Kind   string
	Bucket time.Duration
}

// Graph is a graph's answer. Summary holds the figures over the whole range; each Point the
// same figures over its bucket, under the reference's names for the kind (total, avg, p50,
// p90, p99, rate, ...). Buckets with no rows are present, with zero values, so a chart has no
// gaps. errors/status-codes has no time buckets: its Points carry StatusCode and count.
type Graph struct {
	Summary map[string]float64
	Points  []Point
}

// Point is one bucket of a graph, or one status code of errors/status-codes.
type Point struct {
	Start      time.Time // bucket start; zero for errors/status-codes
	StatusCode int       // errors/status-codes only
	Values     map[string]float64
}

// Summary is GET /v1/analytics/summary: the totals of the rows of a filter.
type Summary struct {
	Requests         int64
	Cost             float64
	TotalTokens      int64
	PromptTokens     int64
	CompletionTokens int64
	AvgLatencyMS     float64
	Errors           int64
	SuccessRate      float64 // share in [0, 1]
	Users            int64   // distinct UserMetadataKey values
}

// CacheSummary is GET /v1/analytics/summary/cache.
type CacheSummary struct {
	Hits            int64
	TotalRequests   int64
	AvgHitLatencyMS float64
	// Speedup is how much faster a hit is than a miss, in percent of the misses' average
	// latency; 0 when either side has no rows.
	Speedup float64
}

// LogsQuery asks for one page of log rows, newest first.
type LogsQuery struct {
	Filter
	Page     int // 0-based
	PageSize int // 0 means DefaultPageSize; at most MaxPageSize
}

// LogsPage is one page of rows and the number of rows across all pages. Rows hold every
// column the store keeps, bodies included.
type LogsPage struct {
	Total int
	Rows  []gateway.LogRecord
}
