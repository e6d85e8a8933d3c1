package analyticstest

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/analytics"
)

// This file is the reference: every answer computed in plain Go over the generated rows.

// matches is the reference filter.
func matches(r analytics.LogRecord, f analytics.Filter) bool {
	in := func(v string, set []string) bool { return len(set) == 0 || slices.Contains(set, v) }
	outside := func(v int, lo, hi *int) bool { return lo != nil && v < *lo || hi != nil && v > *hi }
	switch {
	case r.OrganisationID != f.OrganisationID,
		!in(r.WorkspaceID, f.WorkspaceIDs), !in(r.APIKeyID, f.APIKeyIDs), !in(r.ConfigID, f.ConfigIDs),
		!in(r.Provider, f.Providers), !in(r.Model, f.Models), !in(r.PromptID, f.PromptIDs),
		len(f.StatusCodes) > 0 && !slices.Contains(f.StatusCodes, r.StatusCode),
		len(f.ServiceModels) > 0 && !slices.Contains(f.ServiceModels, analytics.ServiceModel{AIService: r.AIService, Model: r.Model}),
		!f.From.IsZero() && r.StartedAt.UnixMilli() < f.From.UnixMilli(),
		!f.To.IsZero() && r.StartedAt.UnixMilli() >= f.To.UnixMilli(),
		f.TraceID != "" && r.TraceID != f.TraceID,
		f.SpanID != "" && r.SpanID != f.SpanID,
		f.MinCost != nil && r.Cost < *f.MinCost, f.MaxCost != nil && r.Cost > *f.MaxCost,
		outside(r.TotalTokens, f.MinTokens, f.MaxTokens),
		outside(r.PromptTokens, f.MinPromptTokens, f.MaxPromptTokens),
		outside(r.CompletionTokens, f.MinCompletionTokens, f.MaxCompletionTokens):
		return false
	}
	for k, v := range f.Metadata {
		got, ok := r.Metadata[k]
		if !ok || got != v {
			return false
		}
	}
	return true
}

// filter returns the rows matching f.
func filter(rows []analytics.LogRecord, f analytics.Filter) []analytics.LogRecord {
	var out []analytics.LogRecord
	for _, r := range rows {
		if matches(r, f) {
			out = append(out, r)
		}
	}
	return out
}

// groupKey is r's key in q's grouping, and whether r is in a group at all.
func groupKey(r analytics.LogRecord, q analytics.GroupsQuery) (string, bool) {
	switch q.GroupBy {
	case analytics.GroupAIService:
		return r.AIService, true
	case analytics.GroupModel:
		return r.Model, true
	case analytics.GroupStatusCode:
		return strconv.Itoa(r.StatusCode), true
	case analytics.GroupAPIKey:
		return r.APIKeyID, true
	case analytics.GroupConfig:
		return r.ConfigID, true
	case analytics.GroupWorkspace:
		return r.WorkspaceID, true
	case analytics.GroupProvider:
		return r.Provider, true
	case analytics.GroupPrompt:
		return r.PromptID, true
	case analytics.GroupUser:
		v, ok := r.Metadata[analytics.UserMetadataKey]
		return v, ok
	case analytics.GroupMetadata:
		v, ok := r.Metadata[q.MetadataKey]
		return v, ok
	}
	panic("unknown groupBy " + q.GroupBy)
}

// percentile is the value at 0-based position floor(p·n) of the sorted values, 0 for none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(p*float64(len(sorted))), len(sorted)-1)]
}

func isHit(r analytics.LogRecord) bool {
	return r.CacheStatus == analytics.CacheHit || r.CacheStatus == analytics.CacheSemanticHit
}

// ratio is a / b, 0 when b is.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// refGroups answers q over rows: every group, sorted, before paging.
func refGroups(rows []analytics.LogRecord, q analytics.GroupsQuery) []analytics.Group {
	byKey := map[string][]analytics.LogRecord{}
	for _, r := range rows {
		if !matches(r, q.Filter) {
			continue
		}
		if k, ok := groupKey(r, q); ok {
			byKey[k] = append(byKey[k], r)
		}
	}
	var out []analytics.Group
	for k, rs := range byKey {
		n := float64(len(rs))
		var cost, tokens, in, outTok, lat, ok, errs, hits float64
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		lats := make([]float64, len(rs))
		for i, r := range rs {
			cost += r.Cost
			tokens += float64(r.TotalTokens)
			in += float64(r.PromptTokens)
			outTok += float64(r.CompletionTokens)
			lat += r.LatencyMS
			lats[i] = r.LatencyMS
			if r.StatusCode >= 200 && r.StatusCode < 300 {
				ok++
			}
			if r.StatusCode >= 400 {
				errs++
			}
			if isHit(r) {
				hits++
			}
			first = min(first, r.StartedAt.UnixMilli())
			last = max(last, r.StartedAt.UnixMilli())
		}
		sort.Float64s(lats)
		all := map[string]float64{
			analytics.ColCost: cost, analytics.ColTotalTokens: tokens, analytics.ColAvgTokens: tokens / n,
			analytics.ColAvgInputTokens: in / n, analytics.ColAvgOutputTokens: outTok / n,
			analytics.ColAvgLatency: lat / n, analytics.ColP95Latency: percentile(lats, analytics.P95),
			analytics.ColP99Latency: percentile(lats, analytics.P99), analytics.ColSuccessRate: ok / n,
			analytics.ColErrorCount: errs, analytics.ColCacheHitRate: hits / n,
			analytics.ColLastSeen: float64(last), analytics.ColFirstSeen: float64(first),
		}
		g := analytics.Group{Key: k, Requests: int64(len(rs)), Values: map[string]float64{}}
		for _, c := range q.Columns {
			g.Values[c] = all[c]
		}
		out = append(out, g)
	}
	sortBy, desc := q.SortBy, q.SortDesc
	if sortBy == "" {
		sortBy, desc = analytics.ColRequests, true
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := value(out[i], sortBy), value(out[j], sortBy)
		if a != b {
			if desc {
				return a > b
			}
			return a < b
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func value(g analytics.Group, c string) float64 {
	if c == analytics.ColRequests {
		return float64(g.Requests)
	}
	return g.Values[c]
}

// graphValues is kind's figures over rs, under GraphValues' names.
func graphValues(kind string, rs []analytics.LogRecord) map[string]float64 {
	n := float64(len(rs))
	var cost, tokens, lat, errs, simple, semantic, hitLat, simpleSaved, semanticSaved float64
	lats := make([]float64, 0, len(rs))
	users := map[string]bool{}
	for _, r := range rs {
		cost += r.Cost
		tokens += float64(r.TotalTokens)
		lat += r.LatencyMS
		lats = append(lats, r.LatencyMS)
		if r.StatusCode >= 400 {
			errs++
		}
		switch r.CacheStatus {
		case analytics.CacheHit:
			simple++
			simpleSaved += r.CacheSavedCost
		case analytics.CacheSemanticHit:
			semantic++
			semanticSaved += r.CacheSavedCost
		}
		if isHit(r) {
			hitLat += r.LatencyMS
		}
		if u, ok := r.Metadata[analytics.UserMetadataKey]; ok {
			users[u] = true
		}
	}
	sort.Float64s(lats)
	switch kind {
	case analytics.GraphRequests:
		return map[string]float64{"total": n}
	case analytics.GraphCost:
		return map[string]float64{"total": cost, "avg": ratio(cost, n)}
	case analytics.GraphLatency:
		return map[string]float64{"avg": ratio(lat, n), "p50": percentile(lats, 0.5), "p90": percentile(lats, 0.9),
			"p99": percentile(lats, 0.99)}
	case analytics.GraphTokens:
		return map[string]float64{"total": tokens, "avg": ratio(tokens, n)}
	case analytics.GraphUsers:
		return map[string]float64{"total": float64(len(users))}
	case analytics.GraphErrors:
		return map[string]float64{"total": errs}
	case analytics.GraphErrorRate:
		return map[string]float64{"rate": ratio(errs, n)}
	case analytics.GraphCacheHitRate:
		// The savings of these rows alone: refGraph accumulates them over the points.
		return map[string]float64{"simple_hits": simple, "semantic_hits": semantic, "rate": ratio(simple+semantic, n),
			"cumulative_simple_cache_savings": simpleSaved, "cumulative_semantic_cache_savings": semanticSaved}
	case analytics.GraphCacheLatency:
		return map[string]float64{"avg": ratio(hitLat, simple+semantic)}
	}
	panic("unknown graph " + kind)
}

// floorTo rounds ms down to a multiple of b.
func floorTo(ms, b int64) int64 {
	return ms - ((ms%b)+b)%b
}

// refGraph answers q over rows.
func refGraph(rows []analytics.LogRecord, q analytics.GraphQuery) analytics.Graph {
	rs := filter(rows, q.Filter)
	if q.Kind == analytics.GraphErrorStatusCodes {
		counts := map[int]int{}
		total := 0
		for _, r := range rs {
			if r.StatusCode >= 400 {
				counts[r.StatusCode]++
				total++
			}
		}
		g := analytics.Graph{Points: []analytics.Point{},
			Summary: map[string]float64{"total_errors": float64(total), "unique_error_codes": float64(len(counts))}}
		for code, n := range counts {
			g.Points = append(g.Points, analytics.Point{StatusCode: code, Values: map[string]float64{"count": float64(n)}})
		}
		sort.Slice(g.Points, func(i, j int) bool {
			a, b := g.Points[i], g.Points[j]
			if a.Values["count"] != b.Values["count"] {
				return a.Values["count"] > b.Values["count"]
			}
			return a.StatusCode < b.StatusCode
		})
		return g
	}
	b := q.Bucket.Milliseconds()
	first, last := floorTo(q.From.UnixMilli(), b), floorTo(q.To.UnixMilli()-1, b)
	byStart := map[int64][]analytics.LogRecord{}
	for _, r := range rs {
		s := floorTo(r.StartedAt.UnixMilli(), b)
		byStart[s] = append(byStart[s], r)
	}
	g := analytics.Graph{Summary: graphValues(q.Kind, rs)}
	if q.Kind == analytics.GraphCacheHitRate {
		g.Summary["total"] = g.Summary["simple_hits"] + g.Summary["semantic_hits"]
	}
	var simpleSaved, semanticSaved float64
	for s := first; s <= last; s += b {
		p := analytics.Point{Start: time.UnixMilli(s).UTC(), Values: graphValues(q.Kind, byStart[s])}
		if q.Kind == analytics.GraphCacheHitRate {
			simpleSaved += p.Values["cumulative_simple_cache_savings"]
			semanticSaved += p.Values["cumulative_semantic_cache_savings"]
			p.Values["cumulative_simple_cache_savings"] = simpleSaved
			p.Values["cumulative_semantic_cache_savings"] = semanticSaved
		}
		g.Points = append(g.Points, p)
	}
	return g
}

// refSummary answers f's totals over rows.
func refSummary(rows []analytics.LogRecord, f analytics.Filter) analytics.Summary {
	var s analytics.Summary
	var lat, ok float64
	users := map[string]bool{}
	for _, r := range filter(rows, f) {
		s.Requests++
		s.Cost += r.Cost
		s.TotalTokens += int64(r.TotalTokens)
		s.PromptTokens += int64(r.PromptTokens)
		s.CompletionTokens += int64(r.CompletionTokens)
		lat += r.LatencyMS
		if r.StatusCode >= 400 {
			s.Errors++
		}
		if r.StatusCode >= 200 && r.StatusCode < 300 {
			ok++
		}
		if u, has := r.Metadata[analytics.UserMetadataKey]; has {
			users[u] = true
		}
	}
	s.AvgLatencyMS = ratio(lat, float64(s.Requests))
	s.SuccessRate = ratio(ok, float64(s.Requests))
	s.Users = int64(len(users))
	return s
}

// refCacheSummary answers f's cache figures over rows.
func refCacheSummary(rows []analytics.LogRecord, f analytics.Filter) analytics.CacheSummary {
	var c analytics.CacheSummary
	var hitLat, otherLat, others float64
	for _, r := range filter(rows, f) {
		c.TotalRequests++
		switch r.CacheStatus {
		case analytics.CacheHit:
			c.SimpleHits++
		case analytics.CacheSemanticHit:
			c.SemanticHits++
		}
		if isHit(r) {
			c.Hits++
			hitLat += r.LatencyMS
			c.CostSaved += r.CacheSavedCost
			c.LatencySavedMS += r.CacheSavedMS
		} else {
			others++
			otherLat += r.LatencyMS
		}
	}
	c.AvgHitLatencyMS = ratio(hitLat, float64(c.Hits))
	if c.Hits > 0 && others > 0 {
		avgOther := otherLat / others
		c.Speedup = ratio(avgOther-c.AvgHitLatencyMS, avgOther) * 100
	}
	return c
}

// stored is r as a store gives it back: times to the millisecond, in UTC; a body that is not
// valid UTF-8 (stored before bodies had an encoding) as the base64 of its bytes, marked so.
func stored(r analytics.LogRecord) analytics.LogRecord {
	ms := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return time.UnixMilli(t.UnixMilli()).UTC()
	}
	r.StartedAt, r.EndedAt = ms(r.StartedAt), ms(r.EndedAt)
	if len(r.RequestBody) > 0 && !utf8.Valid(r.RequestBody) {
		r.RequestBody, r.RequestBodyEncoding = base64Body(r.RequestBody), "base64"
	}
	if len(r.ResponseBody) > 0 && !utf8.Valid(r.ResponseBody) {
		r.ResponseBody, r.ResponseBodyEncoding = base64Body(r.ResponseBody), "base64"
	}
	return r
}

// byTime orders rows oldest first: started_at, then id.
func byTime(a, b analytics.LogRecord) int {
	if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// refLogs is the rows of f oldest first, as stored.
func refLogs(rows []analytics.LogRecord, f analytics.Filter) []analytics.LogRecord {
	rs := filter(rows, f)
	for i := range rs {
		rs[i] = stored(rs[i])
	}
	slices.SortFunc(rs, byTime)
	return rs
}
