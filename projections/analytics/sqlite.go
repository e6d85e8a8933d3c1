package analytics

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	_ "modernc.org/sqlite" // pure-Go driver: the embedded mode needs no cgo

	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/migrations"
)

// SQLite is the embedded request log store.
type SQLite struct {
	db *sql.DB
}

var sqliteDialect = dialect{
	table: "request_logs",
	groupExpr: map[string]string{
		GroupAIService:  "ai_service",
		GroupModel:      "model",
		GroupStatusCode: "CAST(status_code AS TEXT)",
		GroupAPIKey:     "api_key_id",
		GroupConfig:     "config_id",
		GroupWorkspace:  "workspace_id",
		GroupProvider:   "provider",
		GroupPrompt:     "prompt_id",
	},
	colExpr: map[string]string{
		ColRequests:        "CAST(COUNT(*) AS REAL)",
		ColCost:            "CAST(SUM(cost) AS REAL)",
		ColTotalTokens:     "CAST(SUM(total_tokens) AS REAL)",
		ColAvgTokens:       "AVG(total_tokens)",
		ColAvgInputTokens:  "AVG(prompt_tokens)",
		ColAvgOutputTokens: "AVG(completion_tokens)",
		ColAvgLatency:      "AVG(latency_ms)",
		// rn is 1-based, so position floor(p·n) is rank floor(p·n)+1; CAST truncates the
		// same IEEE product ClickHouse's quantileExact truncates.
		ColP95Latency:   "MAX(CASE WHEN rn = CAST(0.95 * cnt AS INTEGER) + 1 THEN latency_ms END)",
		ColP99Latency:   "MAX(CASE WHEN rn = CAST(0.99 * cnt AS INTEGER) + 1 THEN latency_ms END)",
		ColSuccessRate:  "AVG(CASE WHEN status_code >= 200 AND status_code < 300 THEN 1.0 ELSE 0.0 END)",
		ColErrorCount:   "CAST(SUM(CASE WHEN status_code >= 400 THEN 1 ELSE 0 END) AS REAL)",
		ColCacheHitRate: "AVG(CASE WHEN cache_status = 'HIT' THEN 1.0 ELSE 0.0 END)",
		ColLastSeen:     "CAST(MAX(started_at) AS REAL)",
		ColFirstSeen:    "CAST(MIN(started_at) AS REAL)",
	},
	tsExpr: "started_at",
	metaCond: func(key, value string) (string, []any) {
		return "EXISTS (SELECT 1 FROM json_each(request_logs.metadata) AS m WHERE m.key = ? AND m.value = ?)",
			[]any{key, value}
	},
}

// OpenSQLite opens (creating if need be) the SQLite database at path and applies its schema.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	dsn := "file:" + path + "?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("analytics: sqlite: %w", err)
	}
	if err := migrations.ApplySQLite(ctx, db, migrations.SQLiteAnalytics); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("analytics: sqlite: %w", err)
	}
	return &SQLite{db: db}, nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

const sqliteInsert = `INSERT OR IGNORE INTO request_logs (id, trace_id, span_id, parent_span_id, span_name,
	organisation_id, workspace_id, api_key_id, provider, ai_service, model, config_id, prompt_id,
	endpoint, method, path, status_code, prompt_tokens, completion_tokens, total_tokens,
	cached_tokens, reasoning_tokens, cost, latency_ms, ttft_ms, stream, cache_status, retry_count,
	fallback_target, target, metadata, error, request_body, response_body, log_format,
	started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// Insert stores rows in one transaction; a row whose id is stored already is skipped, so a
// retried batch stores each row once.
func (s *SQLite) Insert(ctx context.Context, rows []gateway.LogRecord) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("analytics: sqlite insert: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, sqliteInsert)
	if err != nil {
		return fmt.Errorf("analytics: sqlite insert: %w", err)
	}
	defer stmt.Close()
	for _, r := range rows {
		meta := []byte("{}")
		if len(r.Metadata) > 0 {
			if meta, err = json.Marshal(r.Metadata); err != nil {
				return fmt.Errorf("analytics: sqlite insert: %w", err)
			}
		}
		stream := 0
		if r.Stream {
			stream = 1
		}
		if _, err := stmt.ExecContext(ctx, r.ID, r.TraceID, r.SpanID, r.ParentSpanID, r.SpanName,
			r.OrganisationID, r.WorkspaceID, r.APIKeyID, r.Provider, r.AIService, r.Model, r.ConfigID, r.PromptID,
			r.Endpoint, r.Method, r.Path, r.StatusCode, r.PromptTokens, r.CompletionTokens, r.TotalTokens,
			r.CachedTokens, r.ReasoningTokens, r.Cost, r.LatencyMS, r.TTFTMS, stream, r.CacheStatus, r.RetryCount,
			r.FallbackTarget, r.Target, string(meta), r.Error, string(r.RequestBody), string(r.ResponseBody), r.LogFormat,
			unixMilli(r.StartedAt), unixMilli(r.EndedAt)); err != nil {
			return fmt.Errorf("analytics: sqlite insert %s: %w", r.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("analytics: sqlite insert: %w", err)
	}
	return nil
}

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Groups answers q. Percentiles need each row's rank in its group, so the rows are read
// through a window that numbers them by latency.
func (s *SQLite) Groups(ctx context.Context, q GroupsQuery) (GroupsResult, error) {
	if err := q.validate(); err != nil {
		return GroupsResult{}, err
	}
	d := sqliteDialect
	g := d.groupExpr[q.GroupBy]
	where, args := d.where(q)
	var res GroupsResult
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(DISTINCT "+g+") FROM request_logs WHERE "+where, args...).
		Scan(&res.Total); err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: sqlite groups: %w", err)
	}
	inner := "SELECT *, " + g + " AS g"
	if containsAny(q.Columns, ColP95Latency, ColP99Latency) {
		inner += ", ROW_NUMBER() OVER (PARTITION BY " + g + " ORDER BY latency_ms) AS rn, COUNT(*) OVER (PARTITION BY " + g + ") AS cnt"
	}
	query := "SELECT g, " + d.selectList(q) + " FROM (" + inner + " FROM request_logs WHERE " + where + ") GROUP BY g" + tail(q)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: sqlite groups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		vals := make([]float64, 1+len(q.Columns))
		dest := []any{&key}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return GroupsResult{}, fmt.Errorf("analytics: sqlite groups: %w", err)
		}
		res.Groups = append(res.Groups, newGroup(q, key, vals))
	}
	if err := rows.Err(); err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: sqlite groups: %w", err)
	}
	return res, nil
}

// containsAny reports whether any of want is in have.
func containsAny(have []string, want ...string) bool {
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}
