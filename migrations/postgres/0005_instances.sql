-- The instances of a deployment on one database (cluster/postgres): each records its id,
-- version, start, last heartbeat and the event position its routing tables have applied, so
-- that an admin can see who runs and how far behind each is, and a write can wait until every
-- live instance has applied it.
CREATE TABLE gateway_instances (
    id           text        PRIMARY KEY,
    version      text        NOT NULL,
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    applied      bigint      NOT NULL DEFAULT 0  -- eventstore.Position of the routing tables
);
