-- The analytics queries read an organisation's rows in a time range and aggregate a handful of
-- columns. An index holding those columns answers them without a seek into the table for every
-- row, and without reading the bodies the rows carry; ordered by (started_at, id) within the
-- organisation, it also serves the logs list and the keyset pages of ScanLogs. It starts with
-- the columns of request_logs_org_started, which it replaces.
CREATE INDEX IF NOT EXISTS request_logs_org_started_cover ON request_logs (
    organisation_id, started_at, id, workspace_id, api_key_id, config_id, provider, ai_service,
    model, prompt_id, status_code, prompt_tokens, completion_tokens, total_tokens, cost, latency_ms,
    cache_status, trace_id, span_id, metadata
);
DROP INDEX IF EXISTS request_logs_org_started;
