package httpapi

import (
	"net/http"
	"slices"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/analytics"
)

// registerAnalytics adds the analytics routes (groups, graphs, summary) and the logs routes
// (one log, the list, the logs groups). They are registered whether or not a request log
// store is configured: without one they answer 404 "analytics is not configured", after the
// key and its scope are checked like on any other route.
func (a *Admin) registerAnalytics(r *mux.Router) {
	get := func(path string, h handler) {
		r.Handle(path, a.route("analytics", h)).Methods(http.MethodGet)
	}
	// The reference's named groupings come before {groupBy}, which would otherwise take them.
	// Their items have the reference's fixed fields; the other groupings answer the columns
	// asked for.
	get("/analytics/groups/users", a.groups(analyticsView, groupRoute{groupBy: analytics.GroupUser, key: "user",
		cols: []string{analytics.ColCost}}))
	get("/analytics/groups/ai-models", a.groups(analyticsView, groupRoute{groupBy: analytics.GroupModel, key: "ai_model"}))
	get("/analytics/groups/metadata/{metadataKey}", a.groups(analyticsView, groupRoute{groupBy: analytics.GroupMetadata,
		key: "metadata_value", cols: []string{analytics.ColCost, analytics.ColAvgTokens, analytics.ColLastSeen}}))
	get("/analytics/groups/{groupBy}", a.groups(analyticsView, groupRoute{}))
	get("/logs/groups/{groupBy}", a.groups(logGroupsView, groupRoute{}))
	for _, kind := range analytics.Graphs {
		get("/analytics/graphs/"+kind, a.graph(kind))
	}
	get("/analytics/summary", a.summary)
	get("/analytics/summary/cache", a.cacheSummary)
	a.registerLogs(r)
}

// graphBucket picks a graph's bucket from its range, so a chart has a few dozen points: hours
// up to two days, days up to ninety, weeks beyond.
func graphBucket(from, to time.Time) time.Duration {
	switch span := to.Sub(from); {
	case span <= 48*time.Hour:
		return time.Hour
	case span <= 90*24*time.Hour:
		return 24 * time.Hour
	default:
		return 7 * 24 * time.Hour
	}
}

// graphAnswer is the reference's analytics-graph.
type graphAnswer struct {
	Object     string           `json:"object"`
	Summary    map[string]any   `json:"summary"`
	DataPoints []map[string]any `json:"data_points"`
}

// graphMoney names the graph values that are money, by kind: the cost graph's, and the cache
// savings (USD, where the reference says cents).
var graphMoney = map[string][]string{
	analytics.GraphCost:         analytics.GraphValues[analytics.GraphCost],
	analytics.GraphCacheHitRate: analytics.GraphCumulative[analytics.GraphCacheHitRate],
}

// graphValue is a graph's value as answered.
func graphValue(kind, name string, v float64) any {
	if slices.Contains(graphMoney[kind], name) {
		return amount(v)
	}
	return v
}

func (a *Admin) graph(kind string) handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		store, actor, err := a.trafficStore(r, analyticsView)
		if err != nil {
			return 0, nil, err
		}
		f, err := a.trafficFilter(r, actor, analyticsView)
		if err != nil {
			return 0, nil, err
		}
		g, err := store.Graph(r.Context(), analytics.GraphQuery{Filter: f, Kind: kind, Bucket: graphBucket(f.From, f.To)})
		if err != nil {
			return 0, nil, err
		}
		ans := graphAnswer{Object: "analytics-graph", Summary: make(map[string]any, len(g.Summary)), DataPoints: make([]map[string]any, 0, len(g.Points))}
		for k, v := range g.Summary {
			ans.Summary[k] = graphValue(kind, k, v)
		}
		for _, p := range g.Points {
			point := make(map[string]any, len(p.Values)+1)
			for k, v := range p.Values {
				point[k] = graphValue(kind, k, v)
			}
			if kind == analytics.GraphErrorStatusCodes {
				point["status_code"] = p.StatusCode
			} else {
				point["timestamp"] = p.Start.UTC()
			}
			ans.DataPoints = append(ans.DataPoints, point)
		}
		return http.StatusOK, ans, nil
	}
}

// summaryAnswer is GET /v1/analytics/summary and /summary/cache: object analytics-summary.
type summaryAnswer struct {
	Object  string `json:"object"`
	Summary any    `json:"summary"`
}

type trafficSummary struct {
	Requests         int64   `json:"requests"`
	Cost             amount  `json:"cost"`
	TotalTokens      int64   `json:"total_tokens"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	AvgLatency       float64 `json:"avg_latency"`
	Errors           int64   `json:"errors"`
	SuccessRate      float64 `json:"success_rate"`
	Users            int64   `json:"users"`
}

// cacheSummary is the reference's, with what the hits saved: cost_saved in USD, as cost is.
type cacheSummary struct {
	Hits           int64   `json:"hits"`
	SimpleHits     int64   `json:"simple_hits"`
	SemanticHits   int64   `json:"semantic_hits"`
	AvgLatency     float64 `json:"avg_latency"`
	TotalRequests  int64   `json:"total_requests"`
	CacheSpeedup   float64 `json:"cache_speedup"`
	CostSaved      amount  `json:"cost_saved"`
	LatencySavedMS float64 `json:"latency_saved_ms"`
}

func (a *Admin) summary(w http.ResponseWriter, r *http.Request) (int, any, error) {
	store, actor, err := a.trafficStore(r, analyticsView)
	if err != nil {
		return 0, nil, err
	}
	f, err := a.trafficFilter(r, actor, analyticsView)
	if err != nil {
		return 0, nil, err
	}
	s, err := store.Summary(r.Context(), f)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, summaryAnswer{Object: "analytics-summary", Summary: trafficSummary{
		Requests: s.Requests, Cost: amount(s.Cost), TotalTokens: s.TotalTokens, PromptTokens: s.PromptTokens,
		CompletionTokens: s.CompletionTokens, AvgLatency: s.AvgLatencyMS, Errors: s.Errors,
		SuccessRate: s.SuccessRate, Users: s.Users}}, nil
}

func (a *Admin) cacheSummary(w http.ResponseWriter, r *http.Request) (int, any, error) {
	store, actor, err := a.trafficStore(r, analyticsView)
	if err != nil {
		return 0, nil, err
	}
	f, err := a.trafficFilter(r, actor, analyticsView)
	if err != nil {
		return 0, nil, err
	}
	s, err := store.CacheSummary(r.Context(), f)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, summaryAnswer{Object: "analytics-summary", Summary: cacheSummary{
		Hits: s.Hits, SimpleHits: s.SimpleHits, SemanticHits: s.SemanticHits, AvgLatency: s.AvgHitLatencyMS,
		TotalRequests: s.TotalRequests, CacheSpeedup: s.Speedup, CostSaved: amount(s.CostSaved),
		LatencySavedMS: s.LatencySavedMS}}, nil
}
