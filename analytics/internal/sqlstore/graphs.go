package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/analytics"
)

// graphExprs is the select list of kind's values, in analytics.GraphValues order, and its arguments.
func (d Dialect) graphExprs(kind string) (string, []any) {
	var exprs []string
	var args []any
	switch kind {
	case analytics.GraphRequests:
		exprs = []string{d.Float("count(*)")}
	case analytics.GraphCost:
		exprs = []string{d.Float("sum(cost)"), d.Float("avg(cost)")}
	case analytics.GraphLatency:
		exprs = []string{d.Float("avg(latency_ms)"), d.Float(d.Quantile(0.5, "latency_ms")),
			d.Float(d.Quantile(0.9, "latency_ms")), d.Float(d.Quantile(0.99, "latency_ms"))}
	case analytics.GraphTokens:
		exprs = []string{d.Float("sum(total_tokens)"), d.Float("avg(total_tokens)")}
	case analytics.GraphUsers:
		users, a := d.DistinctMeta(analytics.UserMetadataKey)
		exprs, args = []string{d.Float(users)}, a
	case analytics.GraphErrors:
		exprs = []string{d.Float(d.CountIf(errorCond))}
	case analytics.GraphErrorRate:
		exprs = []string{d.rate(errorCond)}
	case analytics.GraphCacheHitRate:
		// The savings per bucket: Graph accumulates them over the buckets.
		exprs = []string{d.Float(d.CountIf(simpleCond)), d.Float(d.CountIf(semanticCond)), d.rate(hitCond),
			d.Float(d.SumIf("cache_saved_cost", simpleCond)), d.Float(d.SumIf("cache_saved_cost", semanticCond))}
	case analytics.GraphCacheLatency:
		exprs = []string{d.Float(d.AvgIf("latency_ms", hitCond))}
	default:
		panic("analytics: unknown graph " + kind)
	}
	return strings.Join(exprs, ", "), args
}

// Graph answers q: one pass for the buckets that have rows, one for the summary; the buckets
// without rows are filled in with zeros.
func (e Engine) Graph(ctx context.Context, q analytics.GraphQuery) (analytics.Graph, error) {
	first, n, err := q.Validate()
	if err != nil {
		return analytics.Graph{}, err
	}
	where, whereArgs := e.where(q.Filter)
	if q.Kind == analytics.GraphErrorStatusCodes {
		return e.statusCodes(ctx, where, whereArgs)
	}
	names := analytics.GraphValues[q.Kind]
	exprs, exprArgs := e.graphExprs(q.Kind)
	args := append(slices.Clone(exprArgs), whereArgs...)
	what := "graph " + q.Kind

	g := analytics.Graph{Summary: map[string]float64{}}
	if err := e.queryRow(ctx, what, "SELECT "+exprs+" FROM "+e.Table+" WHERE "+where, args, func(rs Rows) error {
		vals, err := scanFloats(rs, len(names))
		if err != nil {
			return err
		}
		for i, name := range names {
			g.Summary[name] = vals[i]
		}
		if q.Kind == analytics.GraphCacheHitRate {
			g.Summary["total"] = g.Summary["simple_hits"] + g.Summary["semantic_hits"]
		}
		return nil
	}); err != nil {
		return analytics.Graph{}, err
	}

	b := q.Bucket.Milliseconds()
	rs, err := e.Query(ctx, "SELECT "+e.Bucket(b)+" AS bucket_start, "+exprs+" FROM "+e.Table+" WHERE "+where+
		" GROUP BY bucket_start", args...)
	if err != nil {
		return analytics.Graph{}, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	defer rs.Close()
	byStart := map[int64][]float64{}
	for rs.Next() {
		var start int64
		vals, err := scanFloats(rs, len(names), &start)
		if err != nil {
			return analytics.Graph{}, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
		}
		byStart[start] = vals
	}
	if err := rs.Err(); err != nil {
		return analytics.Graph{}, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	g.Points = make([]analytics.Point, n)
	for i := range g.Points {
		start := first + int64(i)*b
		vals := byStart[start]
		p := analytics.Point{Start: time.UnixMilli(start).UTC(), Values: make(map[string]float64, len(names))}
		for j, name := range names {
			var v float64
			if vals != nil {
				v = vals[j]
			}
			p.Values[name] = v
		}
		g.Points[i] = p
	}
	for _, name := range analytics.GraphCumulative[q.Kind] {
		var run float64
		for _, p := range g.Points {
			run += p.Values[name]
			p.Values[name] = run
		}
	}
	return g, nil
}

// statusCodes answers errors/status-codes: one point per error status, the most frequent first.
func (e Engine) statusCodes(ctx context.Context, where string, args []any) (analytics.Graph, error) {
	what := "graph " + analytics.GraphErrorStatusCodes
	rs, err := e.Query(ctx, "SELECT "+e.Integer("status_code")+" AS code, "+e.Integer("count(*)")+" AS n FROM "+
		e.Table+" WHERE "+where+" AND "+errorCond+" GROUP BY status_code ORDER BY n DESC, code ASC", args...)
	if err != nil {
		return analytics.Graph{}, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	defer rs.Close()
	g := analytics.Graph{Points: []analytics.Point{}}
	var total int64
	for rs.Next() {
		var code, n int64
		if err := rs.Scan(&code, &n); err != nil {
			return analytics.Graph{}, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
		}
		total += n
		g.Points = append(g.Points, analytics.Point{StatusCode: int(code), Values: map[string]float64{"count": float64(n)}})
	}
	if err := rs.Err(); err != nil {
		return analytics.Graph{}, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	g.Summary = map[string]float64{"total_errors": float64(total), "unique_error_codes": float64(len(g.Points))}
	return g, nil
}

// Summary answers f's totals in one pass.
func (e Engine) Summary(ctx context.Context, f analytics.Filter) (analytics.Summary, error) {
	if err := f.Validate(); err != nil {
		return analytics.Summary{}, err
	}
	where, whereArgs := e.where(f)
	users, userArgs := e.DistinctMeta(analytics.UserMetadataKey)
	query := "SELECT " + strings.Join([]string{
		e.Integer("count(*)"), e.Float("sum(cost)"), e.Integer("sum(total_tokens)"),
		e.Integer("sum(prompt_tokens)"), e.Integer("sum(completion_tokens)"), e.Float("avg(latency_ms)"),
		e.Integer(e.CountIf(errorCond)), e.rate(successCond), e.Integer(users),
	}, ", ") + " FROM " + e.Table + " WHERE " + where
	var s analytics.Summary
	err := e.queryRow(ctx, "summary", query, append(userArgs, whereArgs...), func(rs Rows) error {
		if err := rs.Scan(&s.Requests, &s.Cost, &s.TotalTokens, &s.PromptTokens, &s.CompletionTokens,
			&s.AvgLatencyMS, &s.Errors, &s.SuccessRate, &s.Users); err != nil {
			return err
		}
		s.Cost, s.AvgLatencyMS, s.SuccessRate = finite(s.Cost), finite(s.AvgLatencyMS), finite(s.SuccessRate)
		return nil
	})
	if err != nil {
		return analytics.Summary{}, err
	}
	return s, nil
}

// CacheSummary answers f's cache figures in one pass.
func (e Engine) CacheSummary(ctx context.Context, f analytics.Filter) (analytics.CacheSummary, error) {
	if err := f.Validate(); err != nil {
		return analytics.CacheSummary{}, err
	}
	where, args := e.where(f)
	query := "SELECT " + strings.Join([]string{
		e.Integer(e.CountIf(simpleCond)), e.Integer(e.CountIf(semanticCond)), e.Integer("count(*)"),
		e.Float(e.AvgIf("latency_ms", hitCond)), e.Float(e.AvgIf("latency_ms", "NOT ("+hitCond+")")),
		e.Float(e.SumIf("cache_saved_cost", hitCond)), e.Float(e.SumIf("cache_saved_latency_ms", hitCond)),
	}, ", ") + " FROM " + e.Table + " WHERE " + where
	var c analytics.CacheSummary
	var others float64
	err := e.queryRow(ctx, "cache summary", query, args, func(rs Rows) error {
		if err := rs.Scan(&c.SimpleHits, &c.SemanticHits, &c.TotalRequests, &c.AvgHitLatencyMS, &others,
			&c.CostSaved, &c.LatencySavedMS); err != nil {
			return err
		}
		c.Hits = c.SimpleHits + c.SemanticHits
		c.AvgHitLatencyMS, others = finite(c.AvgHitLatencyMS), finite(others)
		c.CostSaved, c.LatencySavedMS = finite(c.CostSaved), finite(c.LatencySavedMS)
		return nil
	})
	if err != nil {
		return analytics.CacheSummary{}, err
	}
	if c.Hits > 0 && c.Hits < c.TotalRequests && others > 0 {
		c.Speedup = (others - c.AvgHitLatencyMS) / others * 100
	}
	return c, nil
}
