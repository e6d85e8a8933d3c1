-- The embedded answer cache (cache/memory) keeps its entries in memory and writes them behind
-- to this table, so that a restart keeps the cache: it is read once at start, never on a
-- lookup. seq is the process's put order, continued after a restart, so that the entries load
-- back in the order they were put (the least recently put evicted first).
CREATE TABLE answer_cache (
    key          TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL,
    namespace    TEXT    NOT NULL,
    partition    TEXT    NOT NULL,
    body         BLOB    NOT NULL,
    meta         BLOB,
    vector       BLOB,             -- little-endian float32s; NULL for an exact-only entry
    created_at   INTEGER NOT NULL, -- Unix microseconds
    expires_at   INTEGER NOT NULL, -- Unix microseconds
    seq          INTEGER NOT NULL
);
CREATE INDEX answer_cache_expires_at ON answer_cache (expires_at);
