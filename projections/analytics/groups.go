package analytics

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/causeway/causeway/domain"
)

// dialect is what differs between the engines in a groups query.
type dialect struct {
	table     string            // what FROM reads
	groupExpr map[string]string // groupBy → expression of the group's key, as text
	colExpr   map[string]string // column → aggregate expression, as a float
	tsExpr    string            // started_at in Unix milliseconds
	// metaCond is one metadata pair's condition and its arguments.
	metaCond func(key, value string) (string, []any)
}

// validate checks q and fills its defaults, naming the bound that is broken.
func (q *GroupsQuery) validate() error {
	if q.OrganisationID == "" {
		return domain.Invalid("organisation_id", "organisation_id is required")
	}
	if !slices.Contains(GroupBys, q.GroupBy) {
		return domain.Invalid("groupBy", "groupBy must be one of %s", strings.Join(GroupBys, ", "))
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
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return domain.Invalid("time_of_generation_min", "the start of the time range must be before its end")
	}
	if q.MinCost != nil && *q.MinCost < 0 {
		return domain.Invalid("cost_min", "cost_min must be at least 0")
	}
	if q.MinCost != nil && q.MaxCost != nil && *q.MinCost > *q.MaxCost {
		return domain.Invalid("cost_min", "cost_min must be at most cost_max")
	}
	if q.MinTokens != nil && *q.MinTokens < 0 {
		return domain.Invalid("total_units_min", "total_units_min must be at least 0")
	}
	if q.MinTokens != nil && q.MaxTokens != nil && *q.MinTokens > *q.MaxTokens {
		return domain.Invalid("total_units_min", "total_units_min must be at most total_units_max")
	}
	if q.Page < 0 {
		return domain.Invalid("current_page", "current_page must be at least 0")
	}
	if q.PageSize == 0 {
		q.PageSize = DefaultPageSize
	}
	if q.PageSize < 1 || q.PageSize > MaxPageSize {
		return domain.Invalid("page_size", "page_size must be between 1 and %d", MaxPageSize)
	}
	if q.SortBy == "" {
		q.SortBy, q.SortDesc = ColRequests, true
	}
	if q.SortBy != ColRequests && !seen[q.SortBy] {
		return domain.Invalid("order_by", "order_by must be requests or one of the asked columns")
	}
	return nil
}

// where builds the filter of q.
func (d dialect) where(q GroupsQuery) (string, []any) {
	conds := []string{"organisation_id = ?"}
	args := []any{q.OrganisationID}
	in := func(col string, vals []string) {
		if len(vals) == 0 {
			return
		}
		conds = append(conds, col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	in("workspace_id", q.WorkspaceIDs)
	in("api_key_id", q.APIKeyIDs)
	in("config_id", q.ConfigIDs)
	in("provider", q.Providers)
	in("model", q.Models)
	if len(q.StatusCodes) > 0 {
		codes := make([]string, len(q.StatusCodes))
		for i, c := range q.StatusCodes {
			codes[i] = strconv.Itoa(c)
		}
		conds = append(conds, "status_code IN ("+strings.Join(codes, ", ")+")")
	}
	if !q.From.IsZero() {
		conds = append(conds, d.tsExpr+" >= ?")
		args = append(args, q.From.UnixMilli())
	}
	if !q.To.IsZero() {
		conds = append(conds, d.tsExpr+" < ?")
		args = append(args, q.To.UnixMilli())
	}
	if q.TraceID != "" {
		conds = append(conds, "trace_id = ?")
		args = append(args, q.TraceID)
	}
	if q.MinCost != nil {
		conds = append(conds, "cost >= ?")
		args = append(args, *q.MinCost)
	}
	if q.MaxCost != nil {
		conds = append(conds, "cost <= ?")
		args = append(args, *q.MaxCost)
	}
	if q.MinTokens != nil {
		conds = append(conds, "total_tokens >= ?")
		args = append(args, *q.MinTokens)
	}
	if q.MaxTokens != nil {
		conds = append(conds, "total_tokens <= ?")
		args = append(args, *q.MaxTokens)
	}
	keys := make([]string, 0, len(q.Metadata))
	for k := range q.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c, a := d.metaCond(k, q.Metadata[k])
		conds = append(conds, c)
		args = append(args, a...)
	}
	return strings.Join(conds, " AND "), args
}

// selectList returns the aggregate columns, requests first, aliased c_<name>.
func (d dialect) selectList(q GroupsQuery) string {
	parts := []string{d.colExpr[ColRequests] + " AS c_" + ColRequests}
	for _, c := range q.Columns {
		parts = append(parts, d.colExpr[c]+" AS c_"+c)
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

// newGroup makes a Group of one scanned row: vals[0] is requests, then q.Columns.
func newGroup(q GroupsQuery, key string, vals []float64) Group {
	g := Group{Key: key, Requests: int64(vals[0]), Values: make(map[string]float64, len(q.Columns))}
	for i, c := range q.Columns {
		g.Values[c] = vals[i+1]
	}
	return g
}
