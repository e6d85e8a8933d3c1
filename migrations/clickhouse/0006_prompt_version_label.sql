-- The version of the prompt that served a prompt completion (0 on every other row) and the
-- name of the label that chose it ('' when none did), beside prompt_id (analytics.LogRecord).
-- Release 18.16 refuses IF NOT EXISTS on ADD COLUMN: see 0003.
ALTER TABLE request_logs ADD COLUMN prompt_version UInt32 DEFAULT 0;
ALTER TABLE request_logs ADD COLUMN prompt_label String DEFAULT ''
