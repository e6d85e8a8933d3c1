-- Input tokens written to a provider's prompt cache (Anthropic's cache_creation_input_tokens),
-- billed above the input price; part of prompt_tokens, as cached_tokens (the reads) are.
-- Release 18.16 refuses IF NOT EXISTS on ADD COLUMN, so this statement cannot be rerun: it is
-- the file's only one, and schema_migrations records the file once it succeeded.
ALTER TABLE request_logs ADD COLUMN cache_write_tokens UInt32 DEFAULT 0
