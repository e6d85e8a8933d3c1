package analytics

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/domain"
)

// validate checks q and fills its defaults, naming the bound that is broken.
func (q *GroupsQuery) validate() error {
	if err := q.Filter.Validate(); err != nil {
		return err
	}
	if !slices.Contains(GroupBys, q.GroupBy) && !slices.Contains(ExtraGroupBys, q.GroupBy) {
		return domain.Invalid("groupBy", "groupBy must be one of %s",
			strings.Join(append(slices.Clone(GroupBys), ExtraGroupBys...), ", "))
	}
	if q.GroupBy == GroupMetadata {
		if err := domain.ValidateName("metadataKey", q.MetadataKey, true); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, c := range q.Columns {
		if !slices.Contains(Columns, c) {
			return domain.Invalid("columns", "column %q is not one of %s", c, strings.Join(Columns, ", "))
		}
		if seen[c] {
			return domain.Invalid("columns", "column %q is asked twice", c)
		}
		seen[c] = true
	}
	if err := validatePage(q.Page, &q.PageSize); err != nil {
		return err
	}
	if q.SortBy == "" {
		q.SortBy, q.SortDesc = ColRequests, true
	}
	if q.SortBy != ColRequests && !seen[q.SortBy] {
		return domain.Invalid("order_by", "order_by must be requests or one of the asked columns")
	}
	return nil
}

// groupKey is the expression of q's group key and, for the metadata groupings, the condition
// that leaves out the rows without the key.
func (d dialect) groupKey(q GroupsQuery) (key string, keyArgs []any, cond string, condArgs []any) {
	var metaKey string
	switch q.GroupBy {
	case GroupUser:
		metaKey = UserMetadataKey
	case GroupMetadata:
		metaKey = q.MetadataKey
	default:
		return d.groupExpr[q.GroupBy], nil, "", nil
	}
	key, keyArgs = d.metaValue(metaKey)
	cond, condArgs = d.metaHas(metaKey)
	return key, keyArgs, cond, condArgs
}

// colExpr is column c's aggregate, as a float.
func (d dialect) colExpr(c string) string {
	switch c {
	case ColRequests:
		return d.float("count(*)")
	case ColCost:
		return d.float("sum(cost)")
	case ColTotalTokens:
		return d.float("sum(total_tokens)")
	case ColAvgTokens:
		return d.float("avg(total_tokens)")
	case ColAvgInputTokens:
		return d.float("avg(prompt_tokens)")
	case ColAvgOutputTokens:
		return d.float("avg(completion_tokens)")
	case ColAvgLatency:
		return d.float("avg(latency_ms)")
	case ColP95Latency:
		return d.float(d.quantile(P95, "latency_ms"))
	case ColP99Latency:
		return d.float(d.quantile(P99, "latency_ms"))
	case ColSuccessRate:
		return d.rate(successCond)
	case ColErrorCount:
		return d.float(d.countIf(errorCond))
	case ColCacheHitRate:
		return d.rate(hitCond)
	case ColLastSeen:
		return d.float("max(" + d.ts + ")")
	case ColFirstSeen:
		return d.float("min(" + d.ts + ")")
	}
	panic("analytics: unknown column " + c)
}

// selectList returns the aggregate columns, requests first, aliased c_<name>.
func (d dialect) selectList(q GroupsQuery) string {
	parts := []string{d.colExpr(ColRequests) + " AS c_" + ColRequests}
	for _, c := range q.Columns {
		parts = append(parts, d.colExpr(c)+" AS c_"+c)
	}
	return strings.Join(parts, ", ")
}

// tail orders and pages: ties broken by key, so that pages never overlap. "LIMIT offset, n"
// is spelled the same in both engines.
func tail(q GroupsQuery) string {
	dir := "ASC"
	if q.SortDesc {
		dir = "DESC"
	}
	return fmt.Sprintf(" ORDER BY c_%s %s, g ASC LIMIT %d, %d", q.SortBy, dir, q.Page*q.PageSize, q.PageSize)
}

// groups answers q in one pass over the rows where the engine counts the groups inline, and
// counts them in a second pass otherwise (or when the page is past the last group).
func (e engine) groups(ctx context.Context, q GroupsQuery) (GroupsResult, error) {
	if err := q.validate(); err != nil {
		return GroupsResult{}, err
	}
	key, keyArgs, cond, condArgs := e.groupKey(q)
	where, args := e.where(q.Filter)
	if cond != "" {
		where += " AND " + cond
		args = append(args, condArgs...)
	}
	args = append(slices.Clone(keyArgs), args...)
	sel := "SELECT " + key + " AS g, " + e.selectList(q)
	if e.inlineTotal {
		sel += ", count(*) OVER () AS total"
	}
	rs, err := e.query(ctx, sel+" FROM "+e.table+" WHERE "+where+" GROUP BY g"+tail(q), args...)
	if err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: %s groups: %w", e.name, err)
	}
	defer rs.Close()
	res := GroupsResult{Total: -1}
	n := 1 + len(q.Columns)
	if e.inlineTotal {
		n++
	}
	for rs.Next() {
		var g string
		vals, err := scanFloats(rs, n, &g)
		if err != nil {
			return GroupsResult{}, fmt.Errorf("analytics: %s groups: %w", e.name, err)
		}
		if e.inlineTotal {
			res.Total = int(vals[n-1])
		}
		res.Groups = append(res.Groups, newGroup(q, g, vals))
	}
	if err := rs.Err(); err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: %s groups: %w", e.name, err)
	}
	if res.Total >= 0 {
		return res, nil
	}
	_ = rs.Close()
	var total int64
	err = e.queryRow(ctx, "groups", "SELECT "+e.distinct(key)+" FROM "+e.table+" WHERE "+where, args,
		func(rs rows) error { return rs.Scan(&total) })
	res.Total = int(total)
	return res, err
}

// newGroup makes a Group of one scanned row: vals[0] is requests, then q.Columns.
func newGroup(q GroupsQuery, key string, vals []float64) Group {
	g := Group{Key: key, Requests: int64(vals[0]), Values: make(map[string]float64, len(q.Columns))}
	for i, c := range q.Columns {
		g.Values[c] = vals[i+1]
	}
	return g
}

// formatFloat spells p as a SQL literal that parses to the same float64.
func formatFloat(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }
