// Package sqlite is the embedded request-log store: one SQLite file, through the pure-Go
// modernc.org/sqlite driver, no server and no cgo. It holds the contract of package analytics
// (analytics.Store), which analyticstest checks.
//
// It imports package analytics, the SQL the stores share (analytics/internal/sqlstore), the
// schema (migrations) and its driver; never the other store (analytics/clickhouse), and never
// gateway/, commands/, projections/ or http/.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"modernc.org/sqlite" // pure-Go driver: the embedded mode needs no cgo

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/internal/sqlstore"
	"github.com/causeway/causeway/migrations"
)

// Store is the embedded request log store.
type Store struct {
	db     *sql.DB
	engine sqlstore.Engine
}

var (
	_ analytics.Store       = (*Store)(nil)
	_ analytics.PacedWriter = (*Store)(nil)
	_ analytics.BatchSizer  = (*Store)(nil)
)

// sqliteQuantile is the aggregate the percentiles are: quantileExact's definition, computed
// over the group's values in Go, which is several times faster than numbering the rows with a
// window function and picking the row at the percentile's rank.
const sqliteQuantile = "causeway_quantile_exact"

func init() {
	sqlite.MustRegisterFunction(sqliteQuantile, &sqlite.FunctionImpl{
		NArgs:         2,
		Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &quantileExact{}, nil },
	})
}

// quantileExact is causeway_quantile_exact(p, x): the value at 0-based position floor(p·n) of
// the group's non-NULL x in ascending order, NULL over no values.
type quantileExact struct {
	p  float64
	xs []float64
}

func (q *quantileExact) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	p, ok := asFloat(args[0])
	if !ok || p < 0 || p > 1 {
		return fmt.Errorf("%s: the level must be a number in [0, 1]", sqliteQuantile)
	}
	q.p = p
	if x, ok := asFloat(args[1]); ok {
		q.xs = append(q.xs, x)
	}
	return nil
}

func (q *quantileExact) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", sqliteQuantile)
}

func (q *quantileExact) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if len(q.xs) == 0 {
		return nil, nil
	}
	slices.Sort(q.xs)
	// The product truncated as ClickHouse's quantileExact truncates it.
	return q.xs[min(int(q.p*float64(len(q.xs))), len(q.xs)-1)], nil
}

func (q *quantileExact) Final(*sqlite.FunctionContext) {}

func asFloat(v driver.Value) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	}
	return 0, false
}

// sqliteMetaValue is a metadata key's value, NULL when the row does not have the key.
const sqliteMetaValue = "(SELECT m.value FROM json_each(request_logs.metadata) AS m WHERE m.key = ?)"

var sqliteDialect = sqlstore.Dialect{
	Name:  "sqlite",
	Table: "request_logs",
	TS:    "started_at",
	GroupExpr: map[string]string{
		analytics.GroupAIService:  "ai_service",
		analytics.GroupModel:      "model",
		analytics.GroupStatusCode: "CAST(status_code AS TEXT)",
		analytics.GroupAPIKey:     "api_key_id",
		analytics.GroupConfig:     "config_id",
		analytics.GroupWorkspace:  "workspace_id",
		analytics.GroupProvider:   "provider",
		analytics.GroupPrompt:     "prompt_id",
	},
	Float:   func(x string) string { return "CAST(IFNULL(" + x + ", 0) AS REAL)" },
	Integer: func(x string) string { return "CAST(IFNULL(" + x + ", 0) AS INTEGER)" },
	// A comparison is 1 or 0 in SQLite (the columns are NOT NULL, so never NULL).
	CountIf: func(cond string) string { return "sum(" + cond + ")" },
	AvgIf:   func(x, cond string) string { return "avg(CASE WHEN " + cond + " THEN " + x + " END)" },
	SumIf:   func(x, cond string) string { return "sum(CASE WHEN " + cond + " THEN " + x + " ELSE 0 END)" },
	Quantile: func(p float64, x string) string {
		return sqliteQuantile + "(" + sqlstore.FormatFloat(p) + ", " + x + ")"
	},
	Distinct: func(x string) string { return "count(DISTINCT " + x + ")" },
	MetaValue: func(key string) (string, []any) {
		return sqliteMetaValue, []any{key}
	},
	MetaHas: func(key string) (string, []any) {
		return sqliteMetaValue + " IS NOT NULL", []any{key}
	},
	DistinctMeta: func(key string) (string, []any) {
		return "count(DISTINCT " + sqliteMetaValue + ")", []any{key}
	},
	// started_at is never before the epoch, so integer division floors it.
	Bucket:      func(ms int64) string { return fmt.Sprintf("(started_at / %d * %d)", ms, ms) },
	InlineTotal: true,
	LogColumns: `id, trace_id, span_id, parent_span_id, span_name, organisation_id, workspace_id,
	api_key_id, provider, ai_service, model, config_id, prompt_id, endpoint, method, path, status_code,
	prompt_tokens, completion_tokens, total_tokens, cached_tokens, cache_write_tokens, reasoning_tokens,
	cost, latency_ms, ttft_ms, stream, cache_status, cache_saved_cost, cache_saved_latency_ms, retry_count,
	fallback_target, target, metadata, error, request_body, response_body, request_body_encoding,
	response_body_encoding, provenance, log_format, started_at, ended_at, prompt_version, prompt_label`,
	ScanLog: scanSQLiteLog,
}

// scanSQLiteLog reads a row of LogColumns.
func scanSQLiteLog(scan func(dest ...any) error) (analytics.LogRecord, error) {
	var r analytics.LogRecord
	var stream int
	var meta, req, resp, reqEnc, respEnc, prov string
	var started, ended int64
	if err := scan(&r.ID, &r.TraceID, &r.SpanID, &r.ParentSpanID, &r.SpanName, &r.OrganisationID,
		&r.WorkspaceID, &r.APIKeyID, &r.Provider, &r.AIService, &r.Model, &r.ConfigID, &r.PromptID,
		&r.Endpoint, &r.Method, &r.Path, &r.StatusCode, &r.PromptTokens, &r.CompletionTokens,
		&r.TotalTokens, &r.CachedTokens, &r.CacheWriteTokens, &r.ReasoningTokens, &r.Cost, &r.LatencyMS, &r.TTFTMS, &stream,
		&r.CacheStatus, &r.CacheSavedCost, &r.CacheSavedMS, &r.RetryCount, &r.FallbackTarget, &r.Target, &meta, &r.Error, &req, &resp, &reqEnc, &respEnc,
		&prov, &r.LogFormat, &started, &ended, &r.PromptVersion, &r.PromptLabel); err != nil {
		return analytics.LogRecord{}, err
	}
	if meta != "" && meta != "{}" {
		if err := json.Unmarshal([]byte(meta), &r.Metadata); err != nil {
			return analytics.LogRecord{}, fmt.Errorf("log %s metadata: %w", r.ID, err)
		}
	}
	r.Stream = stream != 0
	r.RequestBody, r.RequestBodyEncoding = sqlstore.StoredBody(req, reqEnc)
	r.ResponseBody, r.ResponseBodyEncoding = sqlstore.StoredBody(resp, respEnc)
	r.Provenance = sqlstore.StoredProvenance(prov)
	r.StartedAt, r.EndedAt = sqlstore.FromMilli(started), sqlstore.FromMilli(ended)
	return r, nil
}

// Open opens (creating if need be) the SQLite database at path and applies its schema.
//
// The journal is a WAL synced at checkpoints, not at every commit (synchronous NORMAL, the
// usual setting with a WAL): a commit, a few a second on a busy gateway, then holds the core
// it shares with the gateway for no fsync. A crash of the process loses nothing committed; a
// crash of the machine may lose the last commits, and never corrupts the file.
//
// The WAL is checkpointed every 200 pages rather than SQLite's 1,000: a checkpoint copies its
// pages in one call that the gateway's core cannot leave, so smaller ones hold it for about a
// millisecond instead of several (BenchmarkLogPath: the probe's worst lateness went from about
// 17 ms to about 6 ms, for the same CPU per row).
func Open(ctx context.Context, path string) (*Store, error) {
	dsn := "file:" + path + "?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=wal_autocheckpoint(200)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("analytics: sqlite: %w", err)
	}
	if err := migrations.ApplySQLite(ctx, db, migrations.SQLiteAnalytics); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("analytics: sqlite: %w", err)
	}
	s := &Store{db: db}
	s.engine = sqlstore.Engine{Dialect: sqliteDialect, Query: func(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
		return db.QueryContext(ctx, query, args...)
	}}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DefaultBatchSize is the pipeline's batch for SQLite: 1000 rows, which it commits every
// sqliteRowsPerTransaction (256) rows.
func (s *Store) DefaultBatchSize() int { return 1000 }

// sqliteColumns are the columns an insert writes, in sqliteValues' order.
const sqliteColumns = `id, trace_id, span_id, parent_span_id, span_name,
	organisation_id, workspace_id, api_key_id, provider, ai_service, model, config_id, prompt_id,
	endpoint, method, path, status_code, prompt_tokens, completion_tokens, total_tokens,
	cached_tokens, cache_write_tokens, reasoning_tokens, cost, latency_ms, ttft_ms, stream, cache_status,
	cache_saved_cost, cache_saved_latency_ms, retry_count, fallback_target, target, metadata, error,
	request_body, response_body,
	request_body_encoding, response_body_encoding, provenance, log_format, started_at, ended_at,
	prompt_version, prompt_label`

// sqliteColumnCount is the number of sqliteColumns.
const sqliteColumnCount = 45

// sqliteRowsPerStatement is how many rows one INSERT carries. Executing a statement has a cost
// of its own (the driver's, the virtual machine's start); sixteen rows spread it, and keep
// each statement short enough to yield between (a fraction of a millisecond).
const sqliteRowsPerStatement = 16

// sqliteRowsPerTransaction bounds the transactions of an insert. A commit writes all the pages
// its transaction changed to the WAL, one system call each, and sometimes checkpoints it: the
// processor is the commit's until it is done, so a commit must stay short (256 rows: about a
// millisecond), and commits few enough that their fixed cost stays small.
const sqliteRowsPerTransaction = 256

// sqliteInsert is the INSERT of n rows. A row whose id is stored already is skipped, so a
// retried batch stores each row once.
func sqliteInsert(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", sqliteColumnCount), ", ") + ")"
	return "INSERT OR IGNORE INTO request_logs (" + sqliteColumns + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// sqliteValues appends r's values in sqliteColumns' order, as the driver takes them.
func sqliteValues(vals []driver.NamedValue, r *analytics.LogRecord) ([]driver.NamedValue, error) {
	meta := "{}"
	if len(r.Metadata) > 0 {
		raw, err := json.Marshal(r.Metadata)
		if err != nil {
			return nil, err
		}
		meta = string(raw)
	}
	var stream int64
	if r.Stream {
		stream = 1
	}
	for _, v := range [sqliteColumnCount]driver.Value{r.ID, r.TraceID, r.SpanID, r.ParentSpanID, r.SpanName,
		r.OrganisationID, r.WorkspaceID, r.APIKeyID, r.Provider, r.AIService, r.Model, r.ConfigID, r.PromptID,
		r.Endpoint, r.Method, r.Path, int64(r.StatusCode), int64(r.PromptTokens), int64(r.CompletionTokens),
		int64(r.TotalTokens), int64(r.CachedTokens), int64(r.CacheWriteTokens), int64(r.ReasoningTokens),
		r.Cost, r.LatencyMS, r.TTFTMS, stream, r.CacheStatus, r.CacheSavedCost, r.CacheSavedMS,
		int64(r.RetryCount), r.FallbackTarget, r.Target,
		meta, r.Error, string(r.RequestBody), string(r.ResponseBody), r.RequestBodyEncoding, r.ResponseBodyEncoding,
		sqlstore.ProvenanceJSON(r.Provenance), r.LogFormat, sqlstore.UnixMilli(r.StartedAt), sqlstore.UnixMilli(r.EndedAt),
		int64(r.PromptVersion), r.PromptLabel} {
		vals = append(vals, driver.NamedValue{Ordinal: len(vals) + 1, Value: v})
	}
	return vals, nil
}

// Insert stores rows, in transactions of at most sqliteRowsPerTransaction rows; a row whose id
// is stored already is skipped, so a retried batch stores each row once.
func (s *Store) Insert(ctx context.Context, rows []analytics.LogRecord) error {
	return s.InsertPaced(ctx, rows, nil)
}

// InsertPaced is Insert, calling yield (when not nil) after each statement
// (sqliteRowsPerStatement rows) and each commit. A batch retried after one of its transactions
// failed still stores each row once.
func (s *Store) InsertPaced(ctx context.Context, rows []analytics.LogRecord, yield func()) error {
	if len(rows) == 0 {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("analytics: sqlite insert: %w", err)
	}
	defer conn.Close()
	// The driver's own connection: database/sql would convert and check each of a statement's
	// 688 values again, and allocate them anew, on every execution.
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(sqliteDriverConn)
		if !ok {
			return fmt.Errorf("the driver's connection is a %T", dc)
		}
		for len(rows) > 0 {
			n := min(len(rows), sqliteRowsPerTransaction)
			if err := sqliteInsertTx(ctx, c, rows[:n], yield); err != nil {
				return err
			}
			rows = rows[n:]
			if yield != nil {
				yield()
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("analytics: sqlite insert: %w", err)
	}
	return nil
}

// sqliteDriverConn is what InsertPaced needs of the driver's connection.
type sqliteDriverConn interface {
	driver.ConnBeginTx
	driver.ConnPrepareContext
}

// sqliteInsertTx stores rows in one transaction on c, calling yield (when not nil) after each
// statement.
func sqliteInsertTx(ctx context.Context, c sqliteDriverConn, rows []analytics.LogRecord, yield func()) (err error) {
	tx, err := c.BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var many, one driver.StmtExecContext
	prepare := func(n int) (driver.StmtExecContext, error) {
		st, err := c.PrepareContext(ctx, sqliteInsert(n))
		if err != nil {
			return nil, err
		}
		exec, ok := st.(driver.StmtExecContext)
		if !ok {
			_ = st.Close()
			return nil, fmt.Errorf("the driver's statement is a %T", st)
		}
		return exec, nil
	}
	closeStmt := func(st driver.StmtExecContext) {
		if st != nil {
			_ = st.(driver.Stmt).Close()
		}
	}
	defer func() { closeStmt(many); closeStmt(one) }()
	vals := make([]driver.NamedValue, 0, sqliteColumnCount*sqliteRowsPerStatement)
	for len(rows) > 0 {
		n := min(len(rows), sqliteRowsPerStatement)
		if n < sqliteRowsPerStatement {
			n = 1
		}
		stmt := &many
		if n == 1 {
			stmt = &one
		}
		if *stmt == nil {
			if *stmt, err = prepare(n); err != nil {
				return err
			}
		}
		vals = vals[:0]
		for i := range n {
			if vals, err = sqliteValues(vals, &rows[i]); err != nil {
				return fmt.Errorf("row %s: %w", rows[i].ID, err)
			}
		}
		if _, err = (*stmt).ExecContext(ctx, vals); err != nil {
			return fmt.Errorf("row %s: %w", rows[0].ID, err)
		}
		clear(vals) // the bodies are the batch's; let them go with it
		rows = rows[n:]
		if yield != nil {
			yield()
		}
	}
	return tx.Commit()
}

// Groups answers q.
func (s *Store) Groups(ctx context.Context, q analytics.GroupsQuery) (analytics.GroupsResult, error) {
	return s.engine.Groups(ctx, q)
}

// Graph answers q.
func (s *Store) Graph(ctx context.Context, q analytics.GraphQuery) (analytics.Graph, error) {
	return s.engine.Graph(ctx, q)
}

// Summary answers f's totals.
func (s *Store) Summary(ctx context.Context, f analytics.Filter) (analytics.Summary, error) {
	return s.engine.Summary(ctx, f)
}

// CacheSummary answers f's cache figures.
func (s *Store) CacheSummary(ctx context.Context, f analytics.Filter) (analytics.CacheSummary, error) {
	return s.engine.CacheSummary(ctx, f)
}

// Log returns the row id of organisation orgID.
func (s *Store) Log(ctx context.Context, orgID, id string) (analytics.LogRecord, bool, error) {
	return s.engine.Log(ctx, orgID, id)
}

// Logs answers one page of q, newest first.
func (s *Store) Logs(ctx context.Context, q analytics.LogsQuery) (analytics.LogsPage, error) {
	return s.engine.Logs(ctx, q)
}

// ScanLogs calls fn with each row of f, oldest first.
func (s *Store) ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error {
	return s.engine.ScanLogs(ctx, f, fn)
}
