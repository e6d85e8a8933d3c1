-- How each stored body is encoded: '' when it is the JSON as sent, 'base64' when its bytes were
-- not valid UTF-8 and the body is a JSON string of their base64 (analytics.LogRecord).
ALTER TABLE request_logs ADD COLUMN request_body_encoding TEXT NOT NULL DEFAULT '';
ALTER TABLE request_logs ADD COLUMN response_body_encoding TEXT NOT NULL DEFAULT '';
