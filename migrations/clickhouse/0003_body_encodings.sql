-- How each stored body is encoded: '' when it is the JSON as sent, 'base64' when its bytes were
-- not valid UTF-8 and the body is a JSON string of their base64 (analytics.LogRecord).
-- Release 18.16 refuses IF NOT EXISTS on ADD COLUMN: a statement that finds its column added
-- by a run cut off before the file was recorded counts as done (migrations.ApplyClickHouse).
ALTER TABLE request_logs ADD COLUMN request_body_encoding String DEFAULT '';
ALTER TABLE request_logs ADD COLUMN response_body_encoding String DEFAULT ''
