package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/analytics"
)

// groupKey is the expression of q's group key and, for the metadata groupings, the condition
// that leaves out the rows without the key.
func (d Dialect) groupKey(q analytics.GroupsQuery) (key string, keyArgs []any, cond string, condArgs []any) {
	var metaKey string
	switch q.GroupBy {
	case analytics.GroupUser:
		metaKey = analytics.UserMetadataKey
	case analytics.GroupMetadata:
		metaKey = q.MetadataKey
	default:
		return d.GroupExpr[q.GroupBy], nil, "", nil
	}
	key, keyArgs = d.MetaValue(metaKey)
	cond, condArgs = d.MetaHas(metaKey)
	return key, keyArgs, cond, condArgs
}

// colExpr is column c's aggregate, as a float.
func (d Dialect) colExpr(c string) string {
	switch c {
	case analytics.ColRequests:
		return d.Float("count(*)")
	case analytics.ColCost:
		return d.Float("sum(cost)")
	case analytics.ColTotalTokens:
		return d.Float("sum(total_tokens)")
	case analytics.ColAvgTokens:
		return d.Float("avg(total_tokens)")
	case analytics.ColAvgInputTokens:
		return d.Float("avg(prompt_tokens)")
	case analytics.ColAvgOutputTokens:
		return d.Float("avg(completion_tokens)")
	case analytics.ColAvgLatency:
		return d.Float("avg(latency_ms)")
	case analytics.ColP95Latency:
		return d.Float(d.Quantile(analytics.P95, "latency_ms"))
	case analytics.ColP99Latency:
		return d.Float(d.Quantile(analytics.P99, "latency_ms"))
	case analytics.ColSuccessRate:
		return d.rate(successCond)
	case analytics.ColErrorCount:
		return d.Float(d.CountIf(errorCond))
	case analytics.ColCacheHitRate:
		return d.rate(hitCond)
	case analytics.ColLastSeen:
		return d.Float("max(" + d.TS + ")")
	case analytics.ColFirstSeen:
		return d.Float("min(" + d.TS + ")")
	}
	panic("analytics: unknown column " + c)
}

// selectList returns the aggregate columns, requests first, aliased c_<name>.
func (d Dialect) selectList(q analytics.GroupsQuery) string {
	parts := []string{d.colExpr(analytics.ColRequests) + " AS c_" + analytics.ColRequests}
	for _, c := range q.Columns {
		parts = append(parts, d.colExpr(c)+" AS c_"+c)
	}
	return strings.Join(parts, ", ")
}

// tail orders and pages: ties broken by key, so that pages never overlap. "LIMIT offset, n"
// is spelled the same in both engines.
func tail(q analytics.GroupsQuery) string {
	dir := "ASC"
	if q.SortDesc {
		dir = "DESC"
	}
	return fmt.Sprintf(" ORDER BY c_%s %s, g ASC LIMIT %d, %d", q.SortBy, dir, q.Page*q.PageSize, q.PageSize)
}

// Groups answers q in one pass over the rows where the engine counts the groups inline, and
// counts them in a second pass otherwise (or when the page is past the last group).
func (e Engine) Groups(ctx context.Context, q analytics.GroupsQuery) (analytics.GroupsResult, error) {
	if err := q.Validate(); err != nil {
		return analytics.GroupsResult{}, err
	}
	key, keyArgs, cond, condArgs := e.groupKey(q)
	where, args := e.where(q.Filter)
	if cond != "" {
		where += " AND " + cond
		args = append(args, condArgs...)
	}
	args = append(slices.Clone(keyArgs), args...)
	sel := "SELECT " + key + " AS g, " + e.selectList(q)
	if e.InlineTotal {
		sel += ", count(*) OVER () AS total"
	}
	rs, err := e.Query(ctx, sel+" FROM "+e.Table+" WHERE "+where+" GROUP BY g"+tail(q), args...)
	if err != nil {
		return analytics.GroupsResult{}, fmt.Errorf("analytics: %s groups: %w", e.Name, err)
	}
	defer rs.Close()
	res := analytics.GroupsResult{Total: -1}
	n := 1 + len(q.Columns)
	if e.InlineTotal {
		n++
	}
	for rs.Next() {
		var g string
		vals, err := scanFloats(rs, n, &g)
		if err != nil {
			return analytics.GroupsResult{}, fmt.Errorf("analytics: %s groups: %w", e.Name, err)
		}
		if e.InlineTotal {
			res.Total = int(vals[n-1])
		}
		res.Groups = append(res.Groups, newGroup(q, g, vals))
	}
	if err := rs.Err(); err != nil {
		return analytics.GroupsResult{}, fmt.Errorf("analytics: %s groups: %w", e.Name, err)
	}
	if res.Total >= 0 {
		return res, nil
	}
	_ = rs.Close()
	var total int64
	err = e.queryRow(ctx, "groups", "SELECT "+e.Distinct(key)+" FROM "+e.Table+" WHERE "+where, args,
		func(rs Rows) error { return rs.Scan(&total) })
	res.Total = int(total)
	return res, err
}

// newGroup makes an analytics.Group of one scanned row: vals[0] is requests, then q.Columns.
func newGroup(q analytics.GroupsQuery, key string, vals []float64) analytics.Group {
	g := analytics.Group{Key: key, Requests: int64(vals[0]), Values: make(map[string]float64, len(q.Columns))}
	for i, c := range q.Columns {
		g.Values[c] = vals[i+1]
	}
	return g
}

// FormatFloat spells p as a SQL literal that parses to the same float64.
func FormatFloat(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }
