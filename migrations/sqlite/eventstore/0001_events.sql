-- The embedded event store. SQLite allows one writer at a time, so positions (the rowid)
-- are committed in order and a reader never sees a gap that is filled later.
CREATE TABLE es_events (
    position       INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT    NOT NULL UNIQUE,
    stream         TEXT    NOT NULL,
    revision       INTEGER NOT NULL,
    type           TEXT    NOT NULL,
    schema_version INTEGER NOT NULL,
    data           BLOB    NOT NULL,
    metadata       BLOB    NOT NULL,
    recorded_at    INTEGER NOT NULL, -- Unix nanoseconds
    UNIQUE (stream, revision)
);
