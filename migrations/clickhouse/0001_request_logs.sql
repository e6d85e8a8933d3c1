-- Request log rows (issue 6). Exactly-once: the spool may insert a batch again when the outcome
-- of an insert is unknown, so the table is a ReplacingMergeTree whose sorting key ends with the
-- row id: copies of a row collapse into one at merge time, and every query reads with FINAL so
-- that copies not merged yet are collapsed at read time too. A row's copies share started_at,
-- hence its partition, the scope within which ReplacingMergeTree deduplicates.
-- Only types of release 18.16 and later: DateTime with the milliseconds beside it, metadata as
-- parallel key and value arrays.
CREATE TABLE IF NOT EXISTS request_logs (
    id                String,
    trace_id          String,
    span_id           String,
    parent_span_id    String,
    span_name         String,
    organisation_id   String,
    workspace_id      String,
    api_key_id        String,
    provider          String,
    ai_service        String,
    model             String,
    config_id         String,
    prompt_id         String,
    endpoint          String,
    method            String,
    path              String,
    status_code       UInt16,
    prompt_tokens     UInt32,
    completion_tokens UInt32,
    total_tokens      UInt32,
    cached_tokens     UInt32,
    reasoning_tokens  UInt32,
    cost              Float64,
    latency_ms        Float64,
    ttft_ms           Float64,
    stream            UInt8,
    cache_status      String,
    retry_count       UInt16,
    fallback_target   String,
    target            String,
    meta_keys         Array(String),
    meta_values       Array(String),
    error             String,
    request_body      String,
    response_body     String,
    log_format        String,
    started_at        DateTime,
    started_ms        UInt16,
    ended_at          DateTime,
    ended_ms          UInt16
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(started_at)
ORDER BY (organisation_id, id)
