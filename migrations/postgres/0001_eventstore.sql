-- The event store.
--
-- Gaps: a sequence hands out numbers at insert but they become visible at commit, so with
-- concurrent writers a reader could see position 7 before 6 commits and skip 6 for ever.
-- Instead, every append first locks the one row of es_head and takes its positions from it,
-- so appends are serialised from position assignment to commit: a later append cannot get a
-- position until the earlier one has committed (PostgreSQL makes a commit visible before it
-- releases the transaction's locks) or rolled back (which rolls the head back too, so
-- positions stay dense). Readers therefore never observe a gap.
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

-- es_append is a whole append in one round trip. p_expected_kind: 1 any, 2 no stream,
-- 3 stream exists, 4 exact revision p_expected_rev.
--   * If any of the event ids is stored already, it writes nothing and returns those events
--     (kind 'stored', in the order given) for the caller to decide whether this is a retry.
--   * If the stream does not meet the condition it raises SQLSTATE CW001 with the stream's
--     last revision (or nothing) as DETAIL.
--   * Otherwise it appends and returns one row (kind 'appended') with the last event's
--     revision and position, and notifies listeners on causeway_events at commit.
CREATE FUNCTION es_append(
    p_stream text, p_expected_kind smallint, p_expected_rev bigint,
    p_ids uuid[], p_types text[], p_versions integer[], p_data text[], p_meta text[])
RETURNS TABLE (r_kind text, r_id uuid, r_stream text, r_revision bigint, r_position bigint)
LANGUAGE plpgsql
-- PL/pgSQL caches a connection's plans. A generic plan made while es_events was small kept
-- scanning it as it grew (append latency rose linearly with the table, 0.3 ms to 3 ms by
-- 100,000 events); planning each call against the current statistics keeps it flat.
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    v_head    bigint;
    v_current bigint;
    v_n       integer := cardinality(p_ids);
BEGIN
    SELECT h.position INTO v_head FROM es_head h WHERE h.id = 1 FOR UPDATE;

    RETURN QUERY
        SELECT 'stored'::text, e.id, e.stream, e.revision, e.position
        FROM unnest(p_ids) WITH ORDINALITY AS u(id, o)
        JOIN es_events e ON e.id = u.id
        ORDER BY u.o;
    IF FOUND THEN
        RETURN;
    END IF;

    SELECT max(e.revision) INTO v_current FROM es_events e WHERE e.stream = p_stream;
    -- coalesce: with no events v_current is NULL, and NOT (... OR NULL) would let it pass.
    IF NOT coalesce(p_expected_kind = 1
            OR (p_expected_kind = 2 AND v_current IS NULL)
            OR (p_expected_kind = 3 AND v_current IS NOT NULL)
            OR (p_expected_kind = 4 AND v_current = p_expected_rev), false) THEN
        RAISE EXCEPTION 'wrong expected version on stream %', p_stream
            USING ERRCODE = 'CW001', DETAIL = coalesce(v_current::text, '');
    END IF;

    INSERT INTO es_events (position, id, stream, revision, type, schema_version, data, metadata)
    SELECT v_head + u.o, u.id, p_stream, coalesce(v_current, -1) + u.o, u.type, u.sv, u.data::json, u.meta::json
    FROM unnest(p_ids, p_types, p_versions, p_data, p_meta) WITH ORDINALITY AS u(id, type, sv, data, meta, o);
    UPDATE es_head SET position = v_head + v_n WHERE es_head.id = 1;
    PERFORM pg_notify('causeway_events', '');

    RETURN QUERY SELECT 'appended'::text, NULL::uuid, p_stream, coalesce(v_current, -1) + v_n, v_head + v_n;
END
$$;
