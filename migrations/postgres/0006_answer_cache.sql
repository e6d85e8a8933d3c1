-- The shared answer cache (cache/postgres): every gateway instance on the database reads and
-- writes the same entries. An entry is found by its key (and answered only to its workspace,
-- while it lives); a purge deletes a workspace's namespace; the prune deletes what expired,
-- then the least recently put entries while the sizes add up to more than the bound.
--
-- seq is taken from answer_cache_seq at every put, a replacement included, so that Changes
-- (the entries with a vector, in seq order) lists a replaced entry again at its new place.
CREATE SEQUENCE answer_cache_seq;

CREATE TABLE answer_cache (
    key          text        PRIMARY KEY,   -- the gateway's hex digest of the request
    workspace_id text        NOT NULL,
    namespace    text        NOT NULL,      -- '' is the default namespace
    partition    text        NOT NULL,      -- the semantic search scope, opaque to the store
    body         bytea       NOT NULL,
    meta         bytea,
    vector       bytea,                     -- little-endian float32s; NULL for an exact-only entry
    size         bigint      NOT NULL,      -- cache.Entry.Size, what the entry counts against the bound
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    seq          bigint      NOT NULL DEFAULT nextval('answer_cache_seq')
);
CREATE INDEX answer_cache_workspace_namespace ON answer_cache (workspace_id, namespace);
CREATE INDEX answer_cache_expires_at ON answer_cache (expires_at);
-- The prune walks every entry by seq; Changes only those with a vector.
CREATE UNIQUE INDEX answer_cache_seq_key ON answer_cache (seq);
CREATE INDEX answer_cache_vector_seq ON answer_cache (seq) WHERE vector IS NOT NULL;
