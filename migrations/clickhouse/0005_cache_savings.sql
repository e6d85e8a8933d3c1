-- What a cache hit saved (analytics.LogRecord), 0 on every other row: the cost in USD the
-- original answer had, and its latency less the hit's in milliseconds, never below 0.
-- Release 18.16 refuses IF NOT EXISTS on ADD COLUMN: see 0003.
ALTER TABLE request_logs ADD COLUMN cache_saved_cost Float64 DEFAULT 0;
ALTER TABLE request_logs ADD COLUMN cache_saved_latency_ms Float64 DEFAULT 0
