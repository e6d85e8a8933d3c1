package sqlstore

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analytics"
)

// Rows is what both engines' query results have in common.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Dialect is what differs between the engines in the queries they share. Aggregates are
// lower-case, spelled the same in both.
type Dialect struct {
	Name  string // in error messages
	Table string // what FROM reads
	TS    string // started_at in Unix milliseconds
	// SecondsBound, when set, is a condition on started_at's whole seconds (op, then the bound
	// in Unix seconds as an argument) that a time filter adds to the one on TS: TS is an
	// expression the engine cannot skip partitions by, the column is one it can.
	SecondsBound func(op string) string
	GroupExpr    map[string]string // groupBy of analytics.GroupBys → expression of the group's key, as text
	// Float is x as a Float64 (REAL): SQLite's NULL over no rows becomes 0; ClickHouse's NaN
	// is made 0 when scanned (finite).
	Float func(x string) string
	// Integer is x as an Int64 (INTEGER), 0 over no rows.
	Integer func(x string) string
	CountIf func(cond string) string
	// AvgIf averages x over the rows matching cond: NULL or NaN when there are none.
	AvgIf func(x, cond string) string
	// SumIf adds x over the rows matching cond: 0, or NULL over no rows at all.
	SumIf func(x, cond string) string
	// Quantile is exact: the value at 0-based position floor(p·n) of x in ascending order.
	Quantile func(p float64, x string) string
	// Distinct counts the distinct values of x, as an Int64.
	Distinct func(x string) string
	// MetaValue is the value of a metadata key (bound as an argument), MetaHas whether the row
	// has the key; DistinctMeta counts the distinct values of a key among the rows holding it.
	MetaValue    func(key string) (string, []any)
	MetaHas      func(key string) (string, []any)
	DistinctMeta func(key string) (string, []any)
	// Bucket is the start of TS's bucket of ms milliseconds, as an Int64.
	Bucket func(ms int64) string
	// InlineTotal says whether a window function can count the groups in the groups query
	// itself, which saves a second pass over the rows.
	InlineTotal bool
	LogColumns  string // the columns a log row is read from, in ScanLog's order
	ScanLog     func(scan func(dest ...any) error) (analytics.LogRecord, error)
}

// Engine runs the queries both stores share, in one dialect.
type Engine struct {
	Dialect
	Query func(ctx context.Context, query string, args ...any) (Rows, error)
}

// The conditions the queries share; the cache statuses are constants, inlined.
const (
	hitCond      = "cache_status IN ('" + analytics.CacheHit + "', '" + analytics.CacheSemanticHit + "')"
	simpleCond   = "cache_status = '" + analytics.CacheHit + "'"
	semanticCond = "cache_status = '" + analytics.CacheSemanticHit + "'"
	errorCond    = "status_code >= 400"
	successCond  = "status_code >= 200 AND status_code < 300"
)

// rate is the share of the rows matching cond, 0 over no rows.
func (d Dialect) rate(cond string) string {
	return d.Float(d.CountIf(cond) + " * 1.0 / count(*)")
}

// where builds the condition of f. f must be valid.
func (d Dialect) where(f analytics.Filter) (string, []any) {
	conds := []string{"organisation_id = ?"}
	args := []any{f.OrganisationID}
	in := func(col string, vals []string) {
		if len(vals) == 0 {
			return
		}
		conds = append(conds, col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	in("workspace_id", f.WorkspaceIDs)
	in("api_key_id", f.APIKeyIDs)
	in("config_id", f.ConfigIDs)
	in("provider", f.Providers)
	in("model", f.Models)
	in("prompt_id", f.PromptIDs)
	if len(f.ServiceModels) > 0 {
		pairs := make([]string, len(f.ServiceModels))
		for i, sm := range f.ServiceModels {
			pairs[i] = "(ai_service = ? AND model = ?)"
			args = append(args, sm.AIService, sm.Model)
		}
		conds = append(conds, "("+strings.Join(pairs, " OR ")+")")
	}
	if len(f.StatusCodes) > 0 {
		codes := make([]string, len(f.StatusCodes))
		for i, c := range f.StatusCodes {
			codes[i] = strconv.Itoa(c)
		}
		conds = append(conds, "status_code IN ("+strings.Join(codes, ", ")+")")
	}
	cond := func(c string, v any) {
		conds = append(conds, c)
		args = append(args, v)
	}
	if !f.From.IsZero() {
		cond(d.TS+" >= ?", f.From.UnixMilli())
		if d.SecondsBound != nil && f.From.Unix() > 0 && f.From.Unix() <= math.MaxUint32 {
			cond(d.SecondsBound(">="), f.From.Unix())
		}
	}
	if !f.To.IsZero() {
		cond(d.TS+" < ?", f.To.UnixMilli())
		if d.SecondsBound != nil && f.To.Unix() >= 0 && f.To.Unix() <= math.MaxUint32 {
			cond(d.SecondsBound("<="), f.To.Unix())
		}
	}
	if f.TraceID != "" {
		cond("trace_id = ?", f.TraceID)
	}
	if f.SpanID != "" {
		cond("span_id = ?", f.SpanID)
	}
	for _, r := range []struct {
		col    string
		lo, hi *int
	}{
		{"total_tokens", f.MinTokens, f.MaxTokens},
		{"prompt_tokens", f.MinPromptTokens, f.MaxPromptTokens},
		{"completion_tokens", f.MinCompletionTokens, f.MaxCompletionTokens},
	} {
		if r.lo != nil {
			cond(r.col+" >= ?", *r.lo)
		}
		if r.hi != nil {
			cond(r.col+" <= ?", *r.hi)
		}
	}
	if f.MinCost != nil {
		cond("cost >= ?", *f.MinCost)
	}
	if f.MaxCost != nil {
		cond("cost <= ?", *f.MaxCost)
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		has, hasArgs := d.MetaHas(k)
		val, valArgs := d.MetaValue(k)
		conds = append(conds, has, val+" = ?")
		args = append(append(append(args, hasArgs...), valArgs...), f.Metadata[k])
	}
	return strings.Join(conds, " AND "), args
}

// scanFloats reads the next row of rs into n finite floats, after the leading destinations.
func scanFloats(rs Rows, n int, lead ...any) ([]float64, error) {
	vals := make([]float64, n)
	dest := lead
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	if err := rs.Scan(dest...); err != nil {
		return nil, err
	}
	for i, v := range vals {
		vals[i] = finite(v)
	}
	return vals, nil
}

// finite maps ClickHouse's NaN of an aggregate over no rows (and any infinity) to 0.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// queryRow runs a query that answers one row and scans it.
func (e Engine) queryRow(ctx context.Context, what, query string, args []any, dest func(Rows) error) error {
	rs, err := e.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
		}
		return fmt.Errorf("analytics: %s %s: no row", e.Name, what)
	}
	if err := dest(rs); err != nil {
		return fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	return nil
}

// UnixMilli is t in Unix milliseconds, 0 for the zero time.
func UnixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMilli is UnixMilli's inverse, in UTC.
func FromMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
