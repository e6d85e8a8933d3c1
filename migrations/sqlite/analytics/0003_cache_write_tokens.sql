-- Input tokens written to a provider's prompt cache (Anthropic's cache_creation_input_tokens),
-- billed above the input price; part of prompt_tokens, as cached_tokens (the reads) are.
ALTER TABLE request_logs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
