package analytics

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
)

// rows is what both engines' query results have in common.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// dialect is what differs between the engines in the queries they share. Aggregates are
// lower-case, spelled the same in both.
type dialect struct {
	name  string // in error messages
	table string // what FROM reads
	ts    string // started_at in Unix milliseconds
	// secondsBound, when set, is a condition on started_at's whole seconds (op, then the bound
	// in Unix seconds as an argument) that a time filter adds to the one on ts: ts is an
	// expression the engine cannot skip partitions by, the column is one it can.
	secondsBound func(op string) string
	groupExpr    map[string]string // groupBy of GroupBys → expression of the group's key, as text
	// float is x as a Float64 (REAL): SQLite's NULL over no rows becomes 0; ClickHouse's NaN
	// is made 0 when scanned (finite).
	float func(x string) string
	// integer is x as an Int64 (INTEGER), 0 over no rows.
	integer func(x string) string
	countIf func(cond string) string
	// avgIf averages x over the rows matching cond: NULL or NaN when there are none.
	avgIf func(x, cond string) string
	// quantile is exact: the value at 0-based position floor(p·n) of x in ascending order.
	quantile func(p float64, x string) string
	// distinct counts the distinct values of x, as an Int64.
	distinct func(x string) string
	// metaValue is the value of a metadata key (bound as an argument), metaHas whether the row
	// has the key; distinctMeta counts the distinct values of a key among the rows holding it.
	metaValue    func(key string) (string, []any)
	metaHas      func(key string) (string, []any)
	distinctMeta func(key string) (string, []any)
	// bucket is the start of ts's bucket of ms milliseconds, as an Int64.
	bucket func(ms int64) string
	// inlineTotal says whether a window function can count the groups in the groups query
	// itself, which saves a second pass over the rows.
	inlineTotal bool
	logColumns  string // the columns a log row is read from, in scanLog's order
	scanLog     func(scan func(dest ...any) error) (gateway.LogRecord, error)
}

// engine runs the queries both stores share, in one dialect.
type engine struct {
	dialect
	query func(ctx context.Context, query string, args ...any) (rows, error)
}

// The conditions the queries share; the cache statuses are constants, inlined.
const (
	hitCond     = "cache_status IN ('" + CacheHit + "', '" + CacheSemanticHit + "')"
	errorCond   = "status_code >= 400"
	successCond = "status_code >= 200 AND status_code < 300"
)

// rate is the share of the rows matching cond, 0 over no rows.
func (d dialect) rate(cond string) string {
	return d.float(d.countIf(cond) + " * 1.0 / count(*)")
}

// where builds the condition of f. f must be valid.
func (d dialect) where(f Filter) (string, []any) {
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
		cond(d.ts+" >= ?", f.From.UnixMilli())
		if d.secondsBound != nil && f.From.Unix() > 0 && f.From.Unix() <= math.MaxUint32 {
			cond(d.secondsBound(">="), f.From.Unix())
		}
	}
	if !f.To.IsZero() {
		cond(d.ts+" < ?", f.To.UnixMilli())
		if d.secondsBound != nil && f.To.Unix() >= 0 && f.To.Unix() <= math.MaxUint32 {
			cond(d.secondsBound("<="), f.To.Unix())
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
		has, hasArgs := d.metaHas(k)
		val, valArgs := d.metaValue(k)
		conds = append(conds, has, val+" = ?")
		args = append(append(append(args, hasArgs...), valArgs...), f.Metadata[k])
	}
	return strings.Join(conds, " AND "), args
}

// scanFloats reads the next row of rs into n finite floats, after the leading destinations.
func scanFloats(rs rows, n int, lead ...any) ([]float64, error) {
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
func (e engine) queryRow(ctx context.Context, what, query string, args []any, dest func(rows) error) error {
	rs, err := e.query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
		}
		return fmt.Errorf("analytics: %s %s: no row", e.name, what)
	}
	if err := dest(rs); err != nil {
		return fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	return nil
}

// validatePage checks a page and fills the default page size.
func validatePage(page int, pageSize *int) error {
	if page < 0 {
		return domain.Invalid("current_page", "current_page must be at least 0")
	}
	if *pageSize == 0 {
		*pageSize = DefaultPageSize
	}
	if *pageSize < 1 || *pageSize > MaxPageSize {
		return domain.Invalid("page_size", "page_size must be between 1 and %d", MaxPageSize)
	}
	return nil
}

// unixMilli is t in Unix milliseconds, 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMilli is unixMilli's inverse, in UTC.
func fromMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
