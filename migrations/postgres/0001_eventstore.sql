-- The event store. Appends are serialised by the row lock on es_head (one row), so global
-- positions are handed out and committed in order: a reader can never see position N+1 before
-- position N is committed, and a rolled-back append leaves no gap because it rolls the head
-- back too. That is the whole gap-hiding design; see eventstore/postgres.go.
CREATE TABLE es_head (
    id       smallint PRIMARY KEY CHECK (id = 1),
    position bigint   NOT NULL
);
INSERT INTO es_head (id, position) VALUES (1, 0);

CREATE TABLE es_events (
    position       bigint      PRIMARY KEY,
    id             uuid        NOT NULL UNIQUE,
    stream         text        NOT NULL,
    revision       bigint      NOT NULL,
    type           text        NOT NULL,
    schema_version integer     NOT NULL,
    data           json        NOT NULL,
    metadata       json        NOT NULL,
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (stream, revision)
);
