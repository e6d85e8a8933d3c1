// Package clickhouse is the request-log store in server mode: a ClickHouse database over the
// native protocol (github.com/ClickHouse/clickhouse-go). It holds the contract of package
// analytics (analytics.Store), which analyticstest checks.
//
// It imports package analytics, the SQL the stores share (analytics/internal/sqlstore), the
// schema (migrations) and its driver; never the other store (analytics/sqlite), and never
// gateway/, commands/, projections/ or http/.
package clickhouse

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/internal/sqlstore"
	"github.com/causeway/causeway/migrations"
)

// Store is the request log store in server mode.
//
// Exactly once: request_logs is a ReplacingMergeTree sorted by (organisation_id, id), so a
// retried batch's copies of a row collapse when parts merge, and every query reads FINAL, which
// collapses the copies not merged yet. Both exist in release 18.16 and in current releases.
type Store struct {
	conn      driver.Conn
	engine    sqlstore.Engine
	migrating sync.Mutex
	migrated  atomic.Bool // the schema is applied
}

var (
	_ analytics.Store       = (*Store)(nil)
	_ analytics.PacedWriter = (*Store)(nil)
)

// chTS is started_at in Unix milliseconds: DateTime holds seconds, started_ms the rest.
const chTS = "(toUInt64(started_at) * 1000 + started_ms)"

var clickHouseDialect = sqlstore.Dialect{
	Name:  "clickhouse",
	Table: "request_logs FINAL",
	TS:    chTS,
	SecondsBound: func(op string) string {
		return "started_at " + op + " toDateTime(?)"
	},
	GroupExpr: map[string]string{
		analytics.GroupAIService:  "ai_service",
		analytics.GroupModel:      "model",
		analytics.GroupStatusCode: "toString(status_code)",
		analytics.GroupAPIKey:     "api_key_id",
		analytics.GroupConfig:     "config_id",
		analytics.GroupWorkspace:  "workspace_id",
		analytics.GroupProvider:   "provider",
		analytics.GroupPrompt:     "prompt_id",
	},
	Float:   func(x string) string { return "toFloat64(" + x + ")" },
	Integer: func(x string) string { return "toInt64(" + x + ")" },
	CountIf: func(cond string) string { return "countIf(" + cond + ")" },
	AvgIf:   func(x, cond string) string { return "avgIf(" + x + ", " + cond + ")" },
	SumIf:   func(x, cond string) string { return "sumIf(" + x + ", " + cond + ")" },
	// quantileExact, not quantile: the latter samples 8192 values and is approximate.
	Quantile: func(p float64, x string) string { return "quantileExact(" + sqlstore.FormatFloat(p) + ")(" + x + ")" },
	Distinct: func(x string) string { return "toInt64(uniqExact(" + x + "))" },
	// Without the key, indexOf is 0 and the element ''; metaHas tells the two apart.
	MetaValue: func(key string) (string, []any) {
		return "meta_values[indexOf(meta_keys, ?)]", []any{key}
	},
	MetaHas: func(key string) (string, []any) {
		return "has(meta_keys, ?)", []any{key}
	},
	DistinctMeta: func(key string) (string, []any) {
		return "uniqExactIf(meta_values[indexOf(meta_keys, ?)], has(meta_keys, ?))", []any{key, key}
	},
	Bucket: func(ms int64) string { return fmt.Sprintf("toInt64(intDiv(%s, %d) * %d)", chTS, ms, ms) },
	LogColumns: `id, trace_id, span_id, parent_span_id, span_name, organisation_id, workspace_id,
	api_key_id, provider, ai_service, model, config_id, prompt_id, endpoint, method, path,
	toInt64(status_code), toInt64(prompt_tokens), toInt64(completion_tokens), toInt64(total_tokens),
	toInt64(cached_tokens), toInt64(cache_write_tokens), toInt64(reasoning_tokens), cost, latency_ms,
	ttft_ms, toInt64(stream), cache_status, cache_saved_cost, cache_saved_latency_ms, toInt64(retry_count),
	fallback_target, target, meta_keys,
	meta_values, error, request_body, response_body, request_body_encoding, response_body_encoding,
	provenance, log_format, toInt64(` + chTS + `),
	toInt64(toUInt64(ended_at) * 1000 + ended_ms), toInt64(prompt_version), prompt_label`,
	ScanLog: scanClickHouseLog,
}

// scanClickHouseLog reads a row of LogColumns.
func scanClickHouseLog(scan func(dest ...any) error) (analytics.LogRecord, error) {
	var r analytics.LogRecord
	var status, prompt, completion, total, cached, cacheWrite, reasoning, stream, retry, started, ended, promptVersion int64
	var keys, values []string
	var req, resp, reqEnc, respEnc, prov string
	if err := scan(&r.ID, &r.TraceID, &r.SpanID, &r.ParentSpanID, &r.SpanName, &r.OrganisationID,
		&r.WorkspaceID, &r.APIKeyID, &r.Provider, &r.AIService, &r.Model, &r.ConfigID, &r.PromptID,
		&r.Endpoint, &r.Method, &r.Path, &status, &prompt, &completion, &total, &cached, &cacheWrite, &reasoning,
		&r.Cost, &r.LatencyMS, &r.TTFTMS, &stream, &r.CacheStatus, &r.CacheSavedCost, &r.CacheSavedMS, &retry,
		&r.FallbackTarget, &r.Target,
		&keys, &values, &r.Error, &req, &resp, &reqEnc, &respEnc, &prov, &r.LogFormat, &started, &ended,
		&promptVersion, &r.PromptLabel); err != nil {
		return analytics.LogRecord{}, err
	}
	if len(keys) != len(values) {
		return analytics.LogRecord{}, fmt.Errorf("log %s: %d metadata keys but %d values", r.ID, len(keys), len(values))
	}
	if len(keys) > 0 {
		r.Metadata = make(map[string]string, len(keys))
		for i, k := range keys {
			r.Metadata[k] = values[i]
		}
	}
	r.StatusCode, r.PromptTokens, r.CompletionTokens = int(status), int(prompt), int(completion)
	r.TotalTokens, r.CachedTokens, r.CacheWriteTokens, r.ReasoningTokens = int(total), int(cached), int(cacheWrite), int(reasoning)
	r.Stream, r.RetryCount, r.PromptVersion = stream != 0, int(retry), int(promptVersion)
	r.RequestBody, r.RequestBodyEncoding = sqlstore.StoredBody(req, reqEnc)
	r.ResponseBody, r.ResponseBodyEncoding = sqlstore.StoredBody(resp, respEnc)
	r.Provenance = sqlstore.StoredProvenance(prov)
	r.StartedAt, r.EndedAt = sqlstore.FromMilli(started), sqlstore.FromMilli(ended)
	return r, nil
}

// Open connects to the ClickHouse database of rawURL over the native protocol and
// applies its schema; it fails when the server does not answer.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	c, err := Connect(rawURL)
	if err != nil {
		return nil, err
	}
	if err := c.ready(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Connect is Open for a server that may be down: it dials on first use and
// applies the schema then, so that a gateway starts during an outage (its logs wait in the
// spool). Only a malformed URL fails at once.
func Connect(rawURL string) (*Store, error) {
	opts, err := ch.ParseDSN(rawURL)
	if err != nil {
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	opts.Protocol = ch.Native
	conn, err := ch.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	c := &Store{conn: conn}
	c.engine = sqlstore.Engine{Dialect: clickHouseDialect, Query: func(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
		if err := c.ready(ctx); err != nil {
			return nil, err
		}
		return conn.Query(ctx, query, args...)
	}}
	return c, nil
}

// ready applies the schema once the server answers; until then every call fails fast with
// the reason.
func (c *Store) ready(ctx context.Context) error {
	if c.migrated.Load() {
		return nil
	}
	c.migrating.Lock()
	defer c.migrating.Unlock()
	if c.migrated.Load() {
		return nil
	}
	if err := c.conn.Ping(ctx); err != nil {
		return fmt.Errorf("analytics: clickhouse: %w", err)
	}
	if err := migrations.ApplyClickHouse(ctx, c.conn, migrations.ClickHouse); err != nil {
		return fmt.Errorf("analytics: clickhouse: %w", err)
	}
	c.migrated.Store(true)
	return nil
}

// Close closes the connection.
func (c *Store) Close() error { return c.conn.Close() }

// Ping reports whether the server answers, for health.
func (c *Store) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }

const clickHouseInsert = `INSERT INTO request_logs (id, trace_id, span_id, parent_span_id, span_name,
	organisation_id, workspace_id, api_key_id, provider, ai_service, model, config_id, prompt_id,
	endpoint, method, path, status_code, prompt_tokens, completion_tokens, total_tokens,
	cached_tokens, cache_write_tokens, reasoning_tokens, cost, latency_ms, ttft_ms, stream, cache_status,
	cache_saved_cost, cache_saved_latency_ms, retry_count, fallback_target, target, meta_keys, meta_values,
	error, request_body, response_body,
	request_body_encoding, response_body_encoding, provenance, log_format, started_at, started_ms, ended_at, ended_ms,
	prompt_version, prompt_label)`

// clickHouseRowsPerYield is how many rows InsertPaced appends to the block between yields.
const clickHouseRowsPerYield = 32

// clickHouseRowsPerBlock is how many rows InsertPaced sends at a time: it sends the block it has
// built (encoding it on the processor, in one go) then yields, and the server gathers the
// blocks of one INSERT into one part (they are squashed up to min_insert_block_size_rows).
const clickHouseRowsPerBlock = 512

// Insert sends rows as one block. Inserting a row again is harmless: see Store.
func (c *Store) Insert(ctx context.Context, rows []analytics.LogRecord) error {
	return c.InsertPaced(ctx, rows, nil)
}

// InsertPaced is Insert, calling yield (when not nil) every clickHouseRowsPerYield rows while
// it builds the block, and sending the block every clickHouseRowsPerBlock rows: one INSERT
// still, whose rows the server stores together.
func (c *Store) InsertPaced(ctx context.Context, rows []analytics.LogRecord, yield func()) error {
	if len(rows) == 0 {
		return nil
	}
	if err := c.ready(ctx); err != nil {
		return err
	}
	batch, err := c.conn.PrepareBatch(ctx, clickHouseInsert)
	if err != nil {
		return fmt.Errorf("analytics: clickhouse insert: %w", err)
	}
	defer func() { _ = batch.Abort() }()
	var keys, values []string
	for i := range rows {
		r := &rows[i]
		keys, values = keys[:0], values[:0]
		for k := range r.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			values = append(values, r.Metadata[k])
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
			uint32(r.TotalTokens), uint32(r.CachedTokens), uint32(r.CacheWriteTokens), uint32(r.ReasoningTokens),
			r.Cost, r.LatencyMS, r.TTFTMS, stream, r.CacheStatus, r.CacheSavedCost, r.CacheSavedMS,
			uint16(r.RetryCount), r.FallbackTarget, r.Target,
			keys, values, r.Error, string(r.RequestBody), string(r.ResponseBody),
			r.RequestBodyEncoding, r.ResponseBodyEncoding, sqlstore.ProvenanceJSON(r.Provenance), r.LogFormat, startSec, startMS, endSec, endMS,
			uint32(r.PromptVersion), r.PromptLabel); err != nil {
			return fmt.Errorf("analytics: clickhouse insert %s: %w", r.ID, err)
		}
		if yield == nil {
			continue
		}
		if i%clickHouseRowsPerBlock == clickHouseRowsPerBlock-1 && i < len(rows)-1 {
			if err := batch.Flush(); err != nil {
				return fmt.Errorf("analytics: clickhouse insert: %w", err)
			}
			yield()
		} else if i%clickHouseRowsPerYield == clickHouseRowsPerYield-1 {
			yield()
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
func (c *Store) Groups(ctx context.Context, q analytics.GroupsQuery) (analytics.GroupsResult, error) {
	return c.engine.Groups(ctx, q)
}

// Graph answers q.
func (c *Store) Graph(ctx context.Context, q analytics.GraphQuery) (analytics.Graph, error) {
	return c.engine.Graph(ctx, q)
}

// Summary answers f's totals.
func (c *Store) Summary(ctx context.Context, f analytics.Filter) (analytics.Summary, error) {
	return c.engine.Summary(ctx, f)
}

// CacheSummary answers f's cache figures.
func (c *Store) CacheSummary(ctx context.Context, f analytics.Filter) (analytics.CacheSummary, error) {
	return c.engine.CacheSummary(ctx, f)
}

// Log returns the row id of organisation orgID.
func (c *Store) Log(ctx context.Context, orgID, id string) (analytics.LogRecord, bool, error) {
	return c.engine.Log(ctx, orgID, id)
}

// Logs answers one page of q, newest first.
func (c *Store) Logs(ctx context.Context, q analytics.LogsQuery) (analytics.LogsPage, error) {
	return c.engine.Logs(ctx, q)
}

// ScanLogs calls fn with each row of f, oldest first.
func (c *Store) ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error {
	return c.engine.ScanLogs(ctx, f, fn)
}
