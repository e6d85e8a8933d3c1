package analytics

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// validate checks q and returns the start of its first bucket in Unix milliseconds and the
// number of buckets.
func (q GraphQuery) validate() (first int64, n int, err error) {
	if err := q.Filter.Validate(); err != nil {
		return 0, 0, err
	}
	if q.From.IsZero() {
		return 0, 0, domain.Invalid("time_of_generation_min", "time_of_generation_min is required")
	}
	if q.To.IsZero() {
		return 0, 0, domain.Invalid("time_of_generation_max", "time_of_generation_max is required")
	}
	if !slices.Contains(Graphs, q.Kind) {
		return 0, 0, domain.Invalid("graph", "graph must be one of %s", strings.Join(Graphs, ", "))
	}
	if q.Kind == GraphErrorStatusCodes {
		return 0, 0, nil
	}
	if q.Bucket < time.Minute || q.Bucket%time.Minute != 0 {
		return 0, 0, domain.Invalid("bucket", "bucket must be a whole number of minutes, at least 1")
	}
	b := q.Bucket.Milliseconds()
	// To is exclusive: the last bucket is the one of the last millisecond before it.
	first, last := floorTo(q.From.UnixMilli(), b), floorTo(q.To.UnixMilli()-1, b)
	if buckets := (last-first)/b + 1; buckets > MaxGraphBuckets {
		return 0, 0, domain.Invalid("time_of_generation_min",
			"the time range must span at most %d buckets of %s (got %d)", MaxGraphBuckets, q.Bucket, buckets)
	}
	return first, int((last-first)/b + 1), nil
}

// floorTo rounds ms down to a multiple of b, before the epoch too.
func floorTo(ms, b int64) int64 {
	r := ms % b
	if r < 0 {
		r += b
	}
	return ms - r
}

// graphExprs is the select list of kind's values, in GraphValues order, and its arguments.
func (d dialect) graphExprs(kind string) (string, []any) {
	var exprs []string
	var args []any
	switch kind {
	case GraphRequests:
		exprs = []string{d.float("count(*)")}
	case GraphCost:
		exprs = []string{d.float("sum(cost)"), d.float("avg(cost)")}
	case GraphLatency:
		exprs = []string{d.float("avg(latency_ms)"), d.float(d.quantile(0.5, "latency_ms")),
			d.float(d.quantile(0.9, "latency_ms")), d.float(d.quantile(0.99, "latency_ms"))}
	case GraphTokens:
		exprs = []string{d.float("sum(total_tokens)"), d.float("avg(total_tokens)")}
	case GraphUsers:
		users, a := d.distinctMeta(UserMetadataKey)
		exprs, args = []string{d.float(users)}, a
	case GraphErrors:
		exprs = []string{d.float(d.countIf(errorCond))}
	case GraphErrorRate:
		exprs = []string{d.rate(errorCond)}
	case GraphCacheHitRate:
		exprs = []string{d.float(d.countIf("cache_status = '" + CacheHit + "'")),
			d.float(d.countIf("cache_status = '" + CacheSemanticHit + "'")), d.rate(hitCond)}
	case GraphCacheLatency:
		exprs = []string{d.float(d.avgIf("latency_ms", hitCond))}
	default:
		panic("analytics: unknown graph " + kind)
	}
	return strings.Join(exprs, ", "), args
}

// graph answers q: one pass for the buckets that have rows, one for the summary; the buckets
// without rows are filled in with zeros.
func (e engine) graph(ctx context.Context, q GraphQuery) (Graph, error) {
	first, n, err := q.validate()
	if err != nil {
		return Graph{}, err
	}
	where, whereArgs := e.where(q.Filter)
	if q.Kind == GraphErrorStatusCodes {
		return e.statusCodes(ctx, where, whereArgs)
	}
	names := GraphValues[q.Kind]
	exprs, exprArgs := e.graphExprs(q.Kind)
	args := append(slices.Clone(exprArgs), whereArgs...)
	what := "graph " + q.Kind

	g := Graph{Summary: map[string]float64{}}
	if err := e.queryRow(ctx, what, "SELECT "+exprs+" FROM "+e.table+" WHERE "+where, args, func(rs rows) error {
		vals, err := scanFloats(rs, len(names))
		if err != nil {
			return err
		}
		for i, name := range names {
			g.Summary[name] = vals[i]
		}
		return nil
	}); err != nil {
		return Graph{}, err
	}

	b := q.Bucket.Milliseconds()
	rs, err := e.query(ctx, "SELECT "+e.bucket(b)+" AS bucket_start, "+exprs+" FROM "+e.table+" WHERE "+where+
		" GROUP BY bucket_start", args...)
	if err != nil {
		return Graph{}, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	defer rs.Close()
	byStart := map[int64][]float64{}
	for rs.Next() {
		var start int64
		vals, err := scanFloats(rs, len(names), &start)
		if err != nil {
			return Graph{}, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
		}
		byStart[start] = vals
	}
	if err := rs.Err(); err != nil {
		return Graph{}, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	g.Points = make([]Point, n)
	for i := range g.Points {
		start := first + int64(i)*b
		vals := byStart[start]
		p := Point{Start: time.UnixMilli(start).UTC(), Values: make(map[string]float64, len(names))}
		for j, name := range names {
			var v float64
			if vals != nil {
				v = vals[j]
			}
			p.Values[name] = v
		}
		g.Points[i] = p
	}
	return g, nil
}

// statusCodes answers errors/status-codes: one point per error status, the most frequent first.
func (e engine) statusCodes(ctx context.Context, where string, args []any) (Graph, error) {
	what := "graph " + GraphErrorStatusCodes
	rs, err := e.query(ctx, "SELECT "+e.integer("status_code")+" AS code, "+e.integer("count(*)")+" AS n FROM "+
		e.table+" WHERE "+where+" AND "+errorCond+" GROUP BY status_code ORDER BY n DESC, code ASC", args...)
	if err != nil {
		return Graph{}, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	defer rs.Close()
	g := Graph{Points: []Point{}}
	var total int64
	for rs.Next() {
		var code, n int64
		if err := rs.Scan(&code, &n); err != nil {
			return Graph{}, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
		}
		total += n
		g.Points = append(g.Points, Point{StatusCode: int(code), Values: map[string]float64{"count": float64(n)}})
	}
	if err := rs.Err(); err != nil {
		return Graph{}, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	g.Summary = map[string]float64{"total_errors": float64(total), "unique_error_codes": float64(len(g.Points))}
	return g, nil
}

// summary answers f's totals in one pass.
func (e engine) summary(ctx context.Context, f Filter) (Summary, error) {
	if err := f.Validate(); err != nil {
		return Summary{}, err
	}
	where, whereArgs := e.where(f)
	users, userArgs := e.distinctMeta(UserMetadataKey)
	query := "SELECT " + strings.Join([]string{
		e.integer("count(*)"), e.float("sum(cost)"), e.integer("sum(total_tokens)"),
		e.integer("sum(prompt_tokens)"), e.integer("sum(completion_tokens)"), e.float("avg(latency_ms)"),
		e.integer(e.countIf(errorCond)), e.rate(successCond), e.integer(users),
	}, ", ") + " FROM " + e.table + " WHERE " + where
	var s Summary
	err := e.queryRow(ctx, "summary", query, append(userArgs, whereArgs...), func(rs rows) error {
		if err := rs.Scan(&s.Requests, &s.Cost, &s.TotalTokens, &s.PromptTokens, &s.CompletionTokens,
			&s.AvgLatencyMS, &s.Errors, &s.SuccessRate, &s.Users); err != nil {
			return err
		}
		s.Cost, s.AvgLatencyMS, s.SuccessRate = finite(s.Cost), finite(s.AvgLatencyMS), finite(s.SuccessRate)
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	return s, nil
}

// cacheSummary answers f's cache figures in one pass.
func (e engine) cacheSummary(ctx context.Context, f Filter) (CacheSummary, error) {
	if err := f.Validate(); err != nil {
		return CacheSummary{}, err
	}
	where, args := e.where(f)
	query := "SELECT " + strings.Join([]string{
		e.integer(e.countIf(hitCond)), e.integer("count(*)"),
		e.float(e.avgIf("latency_ms", hitCond)), e.float(e.avgIf("latency_ms", "NOT ("+hitCond+")")),
	}, ", ") + " FROM " + e.table + " WHERE " + where
	var c CacheSummary
	var others float64
	err := e.queryRow(ctx, "cache summary", query, args, func(rs rows) error {
		if err := rs.Scan(&c.Hits, &c.TotalRequests, &c.AvgHitLatencyMS, &others); err != nil {
			return err
		}
		c.AvgHitLatencyMS, others = finite(c.AvgHitLatencyMS), finite(others)
		return nil
	})
	if err != nil {
		return CacheSummary{}, err
	}
	if c.Hits > 0 && c.Hits < c.TotalRequests && others > 0 {
		c.Speedup = (others - c.AvgHitLatencyMS) / others * 100
	}
	return c, nil
}
