-- The version of the prompt that served a prompt completion (0 on every other row) and the
-- name of the label that chose it ('' when none did), beside prompt_id (analytics.LogRecord).
ALTER TABLE request_logs ADD COLUMN prompt_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE request_logs ADD COLUMN prompt_label TEXT NOT NULL DEFAULT '';
