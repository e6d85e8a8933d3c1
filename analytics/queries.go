package analytics

import (
	"math"
	"time"

	"github.com/causeway/causeway/domain"
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
	// ServiceModels keeps the rows whose (ai_service, model) is one of these pairs: the
	// reference's ai_org_model "openai__gpt-4o" spelling.
	ServiceModels []ServiceModel
	PromptIDs     []string
	StatusCodes   []int
	Metadata      map[string]string // every pair must match
	TraceID       string
	SpanID        string

	// Ranges, each bound inclusive and ignored when nil.
	MinCost, MaxCost                         *float64
	MinTokens, MaxTokens                     *int // total tokens
	MinPromptTokens, MaxPromptTokens         *int
	MinCompletionTokens, MaxCompletionTokens *int
}

// Validate checks f, naming the query parameter of the reference that breaks a bound: every
// query validates its filter with it, and the HTTP layer may call it before it stores a filter
// for later (an export job).
func (f Filter) Validate() error {
	if f.OrganisationID == "" {
		return domain.Invalid("organisation_id", "organisation_id is required")
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return domain.Invalid("time_of_generation_min", "time_of_generation_min must be before time_of_generation_max")
	}
	if err := validateRange("cost", f.MinCost, f.MaxCost); err != nil {
		return err
	}
	for _, r := range []struct {
		param    string
		min, max *int
	}{
		{"total_units", f.MinTokens, f.MaxTokens},
		{"prompt_token", f.MinPromptTokens, f.MaxPromptTokens},
		{"completion_token", f.MinCompletionTokens, f.MaxCompletionTokens},
	} {
		if err := validateRange(r.param, r.min, r.max); err != nil {
			return err
		}
	}
	for _, sm := range f.ServiceModels {
		if sm.AIService == "" || sm.Model == "" {
			return domain.Invalid("ai_org_model", "ai_org_model pairs need both an ai_org and a model")
		}
		if len(sm.AIService) > 255 || len(sm.Model) > 255 {
			return domain.Invalid("ai_org_model", "ai_org_model names must be at most 255 characters")
		}
	}
	return nil
}

// ServiceModel is an AI service (the adapter: openai, anthropic, ...) and one of its models.
type ServiceModel struct {
	AIService string
	Model     string
}

// validateRange checks an inclusive range whose query parameters are param_min and param_max.
func validateRange[T int | float64](param string, lo, hi *T) error {
	for _, b := range []struct {
		v    *T
		name string
	}{{lo, "_min"}, {hi, "_max"}} {
		if b.v != nil && (math.IsNaN(float64(*b.v)) || math.IsInf(float64(*b.v), 0)) {
			return domain.Invalid(param+b.name, "%s%s must be a finite number", param, b.name)
		}
	}
	if lo != nil && *lo < 0 {
		return domain.Invalid(param+"_min", "%s_min must be at least 0", param)
	}
	if hi != nil && *hi < 0 {
		return domain.Invalid(param+"_max", "%s_max must be at least 0", param)
	}
	if lo != nil && hi != nil && *lo > *hi {
		return domain.Invalid(param+"_min", "%s_min must be at most %s_max", param, param)
	}
	return nil
}

// The cache statuses the gateway logs. A hit is either of the first two; CacheRefresh is a
// forced refresh, a miss whose answer replaced the cached one.
const (
	CacheHit         = "HIT"
	CacheSemanticHit = "SEMANTIC HIT"
	CacheMiss        = "MISS"
	CacheRefresh     = "REFRESH"
	CacheDisabled    = "DISABLED"
)

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

// MaxGraphBuckets bounds the buckets of one graph.
const MaxGraphBuckets = 1000

// GraphQuery asks for one graph: the rows of Filter in time buckets of Bucket, which must be
// a whole number of minutes (the HTTP layer picks it from the range when the client does not).
// From and To are required. Buckets start at multiples of Bucket since the Unix epoch (UTC):
// the first holds From, the last the last instant before To. errors/status-codes ignores
// Bucket.
type GraphQuery struct {
	Filter
	Kind   string
	Bucket time.Duration
}

// Graph is a graph's answer. Summary holds the figures over the whole range; each Point the
// same figures over its bucket, under the reference's names for the kind (GraphValues), or
// over its bucket and the earlier ones for the values GraphCumulative names. Buckets with no
// rows are present, with zero values (a cumulative value keeps the one before), so a chart has
// no gaps. cache/hit-rate's Summary also holds total, the hits of both kinds, as the
// reference's does. errors/status-codes has no time buckets: its Points carry StatusCode and
// count, most frequent first, and its Summary total_errors and unique_error_codes.
type Graph struct {
	Summary map[string]float64
	Points  []Point
}

// GraphValues names the values of each kind's Points and Summary. Latencies are in
// milliseconds (percentiles exact, as in groups), rates shares in [0, 1]; users counts distinct
// UserMetadataKey values, errors statuses of 400 and above, cache/latency the cache hits.
// cache/hit-rate's savings add up the CacheSavedCost of the simple and of the semantic hits,
// in USD as every cost here (the reference says cents).
var GraphValues = map[string][]string{
	GraphRequests:         {"total"},
	GraphCost:             {"total", "avg"},
	GraphLatency:          {"avg", "p50", "p90", "p99"},
	GraphTokens:           {"total", "avg"},
	GraphUsers:            {"total"},
	GraphErrors:           {"total"},
	GraphErrorRate:        {"rate"},
	GraphErrorStatusCodes: {"count"},
	GraphCacheHitRate: {"simple_hits", "semantic_hits", "rate", "cumulative_simple_cache_savings",
		"cumulative_semantic_cache_savings"},
	GraphCacheLatency: {"avg"},
}

// GraphCumulative names the values of GraphValues that accumulate over a graph's Points: each
// point holds the figure over its bucket and every earlier bucket of the range (not of all
// time), so that the last point's is the Summary's.
var GraphCumulative = map[string][]string{
	GraphCacheHitRate: {"cumulative_simple_cache_savings", "cumulative_semantic_cache_savings"},
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
	Errors           int64   // status 400 and above
	SuccessRate      float64 // share of 2xx statuses, in [0, 1]
	Users            int64   // distinct UserMetadataKey values
}

// CacheSummary is GET /v1/analytics/summary/cache. Hits are CacheHit (SimpleHits) and
// CacheSemanticHit (SemanticHits); a CacheRefresh is not one.
type CacheSummary struct {
	Hits            int64
	SimpleHits      int64
	SemanticHits    int64
	TotalRequests   int64
	AvgHitLatencyMS float64
	// Speedup is how much faster a hit is than the other requests, as the reference's
	// cache_speedup: in percent of the others' average latency; 0 when either side has no rows.
	Speedup float64
	// CostSaved adds up the hits' CacheSavedCost (USD), LatencySavedMS their CacheSavedMS.
	CostSaved      float64
	LatencySavedMS float64
}

// LogsQuery asks for one page of log rows, newest first (started_at, then id, descending).
type LogsQuery struct {
	Filter
	Page     int // 0-based
	PageSize int // 0 means DefaultPageSize; at most MaxPageSize
}

// LogsPage is one page of rows and the number of rows across all pages. Rows hold every
// column the store keeps, bodies included.
type LogsPage struct {
	Total int
	Rows  []LogRecord
}
