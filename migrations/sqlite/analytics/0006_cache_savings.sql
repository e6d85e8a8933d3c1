-- What a cache hit saved (analytics.LogRecord), 0 on every other row: the cost in USD the
-- original answer had, and its latency less the hit's in milliseconds, never below 0.
ALTER TABLE request_logs ADD COLUMN cache_saved_cost REAL NOT NULL DEFAULT 0;
ALTER TABLE request_logs ADD COLUMN cache_saved_latency_ms REAL NOT NULL DEFAULT 0;
-- The cache summary and the hit-rate graph sum them: the covering index of 0002 holds them too,
-- so that those queries still read no table page (and no body).
DROP INDEX IF EXISTS request_logs_org_started_cover;
CREATE INDEX IF NOT EXISTS request_logs_org_started_cover ON request_logs (
    organisation_id, started_at, id, workspace_id, api_key_id, config_id, provider, ai_service,
    model, prompt_id, status_code, prompt_tokens, completion_tokens, total_tokens, cost, latency_ms,
    cache_status, trace_id, span_id, metadata, cache_saved_cost, cache_saved_latency_ms
);
