package analytics

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
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
	engine
	migrating sync.Mutex
	migrated  atomic.Bool // the schema is applied
}

// chTS is started_at in Unix milliseconds: DateTime holds seconds, started_ms the rest.
const chTS = "(toUInt64(started_at) * 1000 + started_ms)"

var clickHouseDialect = dialect{
	name:  "clickhouse",
	table: "request_logs FINAL",
	ts:    chTS,
	secondsBound: func(op string) string {
		return "started_at " + op + " toDateTime(?)"
	},
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
	float:   func(x string) string { return "toFloat64(" + x + ")" },
	integer: func(x string) string { return "toInt64(" + x + ")" },
	countIf: func(cond string) string { return "countIf(" + cond + ")" },
	avgIf:   func(x, cond string) string { return "avgIf(" + x + ", " + cond + ")" },
	// quantileExact, not quantile: the latter samples 8192 values and is approximate.
	quantile: func(p float64, x string) string { return "quantileExact(" + formatFloat(p) + ")(" + x + ")" },
	distinct: func(x string) string { return "toInt64(uniqExact(" + x + "))" },
	// Without the key, indexOf is 0 and the element ''; metaHas tells the two apart.
	metaValue: func(key string) (string, []any) {
		return "meta_values[indexOf(meta_keys, ?)]", []any{key}
	},
	metaHas: func(key string) (string, []any) {
		return "has(meta_keys, ?)", []any{key}
	},
	distinctMeta: func(key string) (string, []any) {
		return "uniqExactIf(meta_values[indexOf(meta_keys, ?)], has(meta_keys, ?))", []any{key, key}
	},
	bucket: func(ms int64) string { return fmt.Sprintf("toInt64(intDiv(%s, %d) * %d)", chTS, ms, ms) },
	logColumns: `id, trace_id, span_id, parent_span_id, span_name, organisation_id, workspace_id,
	api_key_id, provider, ai_service, model, config_id, prompt_id, endpoint, method, path,
	toInt64(status_code), toInt64(prompt_tokens), toInt64(completion_tokens), toInt64(total_tokens),
	toInt64(cached_tokens), toInt64(cache_write_tokens), toInt64(reasoning_tokens), cost, latency_ms,
	ttft_ms, toInt64(stream), cache_status, toInt64(retry_count), fallback_target, target, meta_keys,
	meta_values, error, request_body, response_body, request_body_encoding, response_body_encoding,
	provenance, log_format, toInt64(` + chTS + `),
	toInt64(toUInt64(ended_at) * 1000 + ended_ms)`,
	scanLog: scanClickHouseLog,
}

// scanClickHouseLog reads a row of logColumns.
func scanClickHouseLog(scan func(dest ...any) error) (gateway.LogRecord, error) {
	var r gateway.LogRecord
	var status, prompt, completion, total, cached, cacheWrite, reasoning, stream, retry, started, ended int64
	var keys, values []string
	var req, resp, reqEnc, respEnc, prov string
	if err := scan(&r.ID, &r.TraceID, &r.SpanID, &r.ParentSpanID, &r.SpanName, &r.OrganisationID,
		&r.WorkspaceID, &r.APIKeyID, &r.Provider, &r.AIService, &r.Model, &r.ConfigID, &r.PromptID,
		&r.Endpoint, &r.Method, &r.Path, &status, &prompt, &completion, &total, &cached, &cacheWrite, &reasoning,
		&r.Cost, &r.LatencyMS, &r.TTFTMS, &stream, &r.CacheStatus, &retry, &r.FallbackTarget, &r.Target,
		&keys, &values, &r.Error, &req, &resp, &reqEnc, &respEnc, &prov, &r.LogFormat, &started, &ended); err != nil {
		return gateway.LogRecord{}, err
	}
	if len(keys) != len(values) {
		return gateway.LogRecord{}, fmt.Errorf("log %s: %d metadata keys but %d values", r.ID, len(keys), len(values))
	}
	if len(keys) > 0 {
		r.Metadata = make(map[string]string, len(keys))
		for i, k := range keys {
			r.Metadata[k] = values[i]
		}
	}
	r.StatusCode, r.PromptTokens, r.CompletionTokens = int(status), int(prompt), int(completion)
	r.TotalTokens, r.CachedTokens, r.CacheWriteTokens, r.ReasoningTokens = int(total), int(cached), int(cacheWrite), int(reasoning)
	r.Stream, r.RetryCount = stream != 0, int(retry)
	r.RequestBody, r.RequestBodyEncoding = storedBody(req, reqEnc)
	r.ResponseBody, r.ResponseBodyEncoding = storedBody(resp, respEnc)
	r.Provenance = storedProvenance(prov)
	r.StartedAt, r.EndedAt = fromMilli(started), fromMilli(ended)
	return r, nil
}

// OpenClickHouse connects to the ClickHouse database of rawURL over the native protocol and
// applies its schema; it fails when the server does not answer.
func OpenClickHouse(ctx context.Context, rawURL string) (*ClickHouse, error) {
	c, err := ConnectClickHouse(rawURL)
	if err != nil {
		return nil, err
	}
	if err := c.ready(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// ConnectClickHouse is OpenClickHouse for a server that may be down: it dials on first use and
// applies the schema then, so that a gateway starts during an outage (its logs wait in the
// spool). Only a malformed URL fails at once.
func ConnectClickHouse(rawURL string) (*ClickHouse, error) {
	opts, err := clickhouse.ParseDSN(rawURL)
	if err != nil {
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("analytics: clickhouse: %w", err)
	}
	c := &ClickHouse{conn: conn}
	c.engine = engine{dialect: clickHouseDialect, query: func(ctx context.Context, query string, args ...any) (rows, error) {
		if err := c.ready(ctx); err != nil {
			return nil, err
		}
		return conn.Query(ctx, query, args...)
	}}
	return c, nil
}

// ready applies the schema once the server answers; until then every call fails fast with
// the reason.
func (c *ClickHouse) ready(ctx context.Context) error {
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
func (c *ClickHouse) Close() error { return c.conn.Close() }

const clickHouseInsert = `INSERT INTO request_logs (id, trace_id, span_id, parent_span_id, span_name,
	organisation_id, workspace_id, api_key_id, provider, ai_service, model, config_id, prompt_id,
	endpoint, method, path, status_code, prompt_tokens, completion_tokens, total_tokens,
	cached_tokens, cache_write_tokens, reasoning_tokens, cost, latency_ms, ttft_ms, stream, cache_status,
	retry_count, fallback_target, target, meta_keys, meta_values, error, request_body, response_body,
	request_body_encoding, response_body_encoding, provenance, log_format, started_at, started_ms, ended_at, ended_ms)`

// clickHouseRowsPerYield is how many rows InsertPaced appends to the block between yields.
const clickHouseRowsPerYield = 32

// clickHouseRowsPerBlock is how many rows InsertPaced sends at a time: it sends the block it has
// built (encoding it on the processor, in one go) then yields, and the server gathers the
// blocks of one INSERT into one part (they are squashed up to min_insert_block_size_rows).
const clickHouseRowsPerBlock = 512

// Insert sends rows as one block. Inserting a row again is harmless: see ClickHouse.
func (c *ClickHouse) Insert(ctx context.Context, rows []gateway.LogRecord) error {
	return c.InsertPaced(ctx, rows, nil)
}

// InsertPaced is Insert, calling yield (when not nil) every clickHouseRowsPerYield rows while
// it builds the block, and sending the block every clickHouseRowsPerBlock rows: one INSERT
// still, whose rows the server stores together.
func (c *ClickHouse) InsertPaced(ctx context.Context, rows []gateway.LogRecord, yield func()) error {
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
			r.Cost, r.LatencyMS, r.TTFTMS, stream, r.CacheStatus, uint16(r.RetryCount), r.FallbackTarget, r.Target,
			keys, values, r.Error, string(r.RequestBody), string(r.ResponseBody),
			r.RequestBodyEncoding, r.ResponseBodyEncoding, provenanceJSON(r.Provenance), r.LogFormat, startSec, startMS, endSec, endMS); err != nil {
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
func (c *ClickHouse) Groups(ctx context.Context, q GroupsQuery) (GroupsResult, error) {
	return c.groups(ctx, q)
}

// Graph answers q.
func (c *ClickHouse) Graph(ctx context.Context, q GraphQuery) (Graph, error) { return c.graph(ctx, q) }

// Summary answers f's totals.
func (c *ClickHouse) Summary(ctx context.Context, f Filter) (Summary, error) {
	return c.summary(ctx, f)
}

// CacheSummary answers f's cache figures.
func (c *ClickHouse) CacheSummary(ctx context.Context, f Filter) (CacheSummary, error) {
	return c.cacheSummary(ctx, f)
}

// Log returns the row id of organisation orgID.
func (c *ClickHouse) Log(ctx context.Context, orgID, id string) (gateway.LogRecord, bool, error) {
	return c.log(ctx, orgID, id)
}

// Logs answers one page of q, newest first.
func (c *ClickHouse) Logs(ctx context.Context, q LogsQuery) (LogsPage, error) { return c.logs(ctx, q) }

// ScanLogs calls fn with each row of f, oldest first.
func (c *ClickHouse) ScanLogs(ctx context.Context, f Filter, fn func(gateway.LogRecord) error) error {
	return c.scanLogs(ctx, f, fn)
}
