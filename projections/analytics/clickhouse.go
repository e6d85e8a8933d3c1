package analytics

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/migrations"
)

// ClickHouse is the request log store in server mode.
//
// Exactly once: request_logs is a ReplacingMergeTree sorted by (organisation_id, id), so a
// retried batch's copies of a row collapse when parts merge, and every query reads FINAL, which
// collapses the copies not merged yet. Both exist in release 18.16 and in current releases.
type ClickHouse struct {
	conn driver.Conn
}

var clickHouseDialect = dialect{
	table: "request_logs FINAL",
	groupExpr: map[string]string{
		GroupAIService:  "ai_service",
		GroupModel:      "model",
		GroupStatusCode: "toString(status_code)",
		GroupAPIKey:     "api_key_id",
		GroupConfig:     "config_id",
		GroupWorkspace:  "workspace_id",
		GroupProvider:   "provider",
		GroupPrompt:     "prompt_id",
	},
	colExpr: map[string]string{
		ColRequests:        "toFloat64(count())",
		ColCost:            "toFloat64(sum(cost))",
		ColTotalTokens:     "toFloat64(sum(total_tokens))",
		ColAvgTokens:       "toFloat64(avg(total_tokens))",
		ColAvgInputTokens:  "toFloat64(avg(prompt_tokens))",
		ColAvgOutputTokens: "toFloat64(avg(completion_tokens))",
		ColAvgLatency:      "toFloat64(avg(latency_ms))",
		// quantileExact, not quantile: the latter samples 8192 values and is approximate.
		ColP95Latency:   "toFloat64(quantileExact(0.95)(latency_ms))",
		ColP99Latency:   "toFloat64(quantileExact(0.99)(latency_ms))",
		ColSuccessRate:  "toFloat64(countIf(status_code >= 200 AND status_code < 300) / count())",
		ColErrorCount:   "toFloat64(countIf(status_code >= 400))",
		ColCacheHitRate: "toFloat64(countIf(cache_status = 'HIT') / count())",
		ColLastSeen:     "toFloat64(max(toUInt64(started_at) * 1000 + started_ms))",
		ColFirstSeen:    "toFloat64(min(toUInt64(started_at) * 1000 + started_ms))",
	},
	tsExpr: "(toUInt64(started_at) * 1000 + started_ms)",
	metaCond: func(key, value string) (string, []any) {
		return "(has(meta_keys, ?) AND meta_values[indexOf(meta_keys, ?)] = ?)", []any{key, key, value}
	},
}

// OpenClickHouse connects to the ClickHouse database of rawURL over the native protocol and
// applies its schema.
func OpenClickHouse(ctx context.Context, rawURL string) (*ClickHouse, error) {
	opts, err := clickhouse.ParseDSN(rawURL)
	if err != nil {
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	if err := migrations.ApplyClickHouse(ctx, conn, migrations.ClickHouse); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	return &ClickHouse{conn: conn}, nil
}

// Close closes the connection.
func (c *ClickHouse) Close() error { return c.conn.Close() }

const clickHouseInsert = `INSERT INTO request_logs (id, trace_id, span_id, parent_span_id, span_name,
	organisation_id, workspace_id, api_key_id, provider, ai_service, model, config_id, prompt_id,
	endpoint, method, path, status_code, prompt_tokens, completion_tokens, total_tokens,
	cached_tokens, reasoning_tokens, cost, latency_ms, ttft_ms, stream, cache_status, retry_count,
	fallback_target, target, meta_keys, meta_values, error, request_body, response_body, log_format,
	started_at, started_ms, ended_at, ended_ms)`

// Insert sends rows as one block. Inserting a row again is harmless: see ClickHouse.
func (c *ClickHouse) Insert(ctx context.Context, rows []gateway.LogRecord) error {
	if len(rows) == 0 {
		return nil
	}
	batch, err := c.conn.PrepareBatch(ctx, clickHouseInsert)
	if err != nil {
		return fmt.Errorf("analytics: clickhouse insert: %w", err)
	}
	defer func() { _ = batch.Abort() }()
	for _, r := range rows {
		keys := make([]string, 0, len(r.Metadata))
		for k := range r.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		values := make([]string, len(keys))
		for i, k := range keys {
			values[i] = r.Metadata[k]
		}
		var stream uint8
		if r.Stream {
			stream = 1
		}
		startSec, startMS := splitTime(r.StartedAt)
		endSec, endMS := splitTime(r.EndedAt)
		if err := batch.Append(r.ID, r.TraceID, r.SpanID, r.ParentSpanID, r.SpanName,
			r.OrganisationID, r.WorkspaceID, r.APIKeyID, r.Provider, r.AIService, r.Model, r.ConfigID, r.PromptID,
			r.Endpoint, r.Method, r.Path, uint16(r.StatusCode), uint32(r.PromptTokens), uint32(r.CompletionTokens),
			uint32(r.TotalTokens), uint32(r.CachedTokens), uint32(r.ReasoningTokens), r.Cost, r.LatencyMS, r.TTFTMS,
			stream, r.CacheStatus, uint16(r.RetryCount), r.FallbackTarget, r.Target, keys, values, r.Error,
			string(r.RequestBody), string(r.ResponseBody), r.LogFormat, startSec, startMS, endSec, endMS); err != nil {
			return fmt.Errorf("analytics: clickhouse insert %s: %w", r.ID, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("analytics: clickhouse insert: %w", err)
	}
	return nil
}

// splitTime returns t to the second, for a DateTime column, and its milliseconds.
func splitTime(t time.Time) (time.Time, uint16) {
	if t.IsZero() {
		return time.Unix(0, 0).UTC(), 0
	}
	ms := t.UnixMilli()
	return time.Unix(ms/1000, 0).UTC(), uint16(ms % 1000)
}

// Groups answers q.
func (c *ClickHouse) Groups(ctx context.Context, q GroupsQuery) (GroupsResult, error) {
	if err := q.validate(); err != nil {
		return GroupsResult{}, err
	}
	d := clickHouseDialect
	g := d.groupExpr[q.GroupBy]
	where, args := d.where(q)
	var total uint64
	if err := c.conn.QueryRow(ctx, "SELECT uniqExact("+g+") FROM "+d.table+" WHERE "+where, args...).
		Scan(&total); err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: clickhouse groups: %w", err)
	}
	res := GroupsResult{Total: int(total)}
	query := "SELECT " + g + " AS g, " + d.selectList(q) + " FROM " + d.table + " WHERE " + where + " GROUP BY g" + tail(q)
	rows, err := c.conn.Query(ctx, query, args...)
	if err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: clickhouse groups: %w", err)
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
			return GroupsResult{}, fmt.Errorf("analytics: clickhouse groups: %w", err)
		}
		res.Groups = append(res.Groups, newGroup(q, key, vals))
	}
	if err := rows.Err(); err != nil {
		return GroupsResult{}, fmt.Errorf("analytics: clickhouse groups: %w", err)
	}
	return res, nil
}
