-- Read models of the control plane, built by projections from the events (projections/).
--
-- Every resource is kept as the JSON of its aggregate, folded by the domain's own Apply, so the
-- PostgreSQL and in-memory read models are built by the same logic and answer the same. The
-- columns beside the document are what reads filter on. The views below give each resource
-- a relational face for operators and reports.
CREATE TABLE rm_documents (
    kind            text        NOT NULL,  -- the stream prefix: workspace, apikey, ...
    id              text        NOT NULL,
    organisation_id text        NOT NULL DEFAULT '',
    workspace_id    text        NOT NULL DEFAULT '',
    status          text        NOT NULL DEFAULT '',
    position        bigint      NOT NULL,  -- of the last event folded in
    doc             jsonb       NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE INDEX rm_documents_org ON rm_documents (kind, organisation_id);

-- One row per event: the audit log, with the resource's state before and after.
CREATE TABLE rm_audit (
    position             bigint      PRIMARY KEY,
    id                   text        NOT NULL,
    recorded_at          timestamptz NOT NULL,
    action               text        NOT NULL,
    resource_type        text        NOT NULL,
    resource_id          text        NOT NULL,
    actor_id             text        NOT NULL,
    actor_type           text        NOT NULL,
    organisation_id      text        NOT NULL,
    workspace_id         text        NOT NULL,
    request_id           text        NOT NULL,
    client_ip            text        NOT NULL,
    user_agent           text        NOT NULL,
    method               text        NOT NULL,
    uri                  text        NOT NULL,
    response_status_code integer     NOT NULL,
    details              jsonb,
    before               jsonb,
    after                jsonb
);
CREATE INDEX rm_audit_org_time ON rm_audit (organisation_id, recorded_at);
CREATE INDEX rm_audit_id ON rm_audit (id);

-- A projection's checkpoint: the position of the last event whose rows are written. It is
-- advanced in the same transaction as the rows, by compare-and-set, so two runners of one
-- projection cannot both advance it.
CREATE TABLE rm_checkpoints (
    name     text   PRIMARY KEY,
    position bigint NOT NULL
);

-- rm_create_views (re)defines the relational views over rm_documents; replay --swap calls it
-- again after renaming tables, since a view follows the table it was made on.
CREATE FUNCTION rm_create_views() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    CREATE OR REPLACE VIEW rm_workspaces AS
        SELECT id, organisation_id, status, doc->>'name' AS name, doc->>'slug' AS slug,
               (doc->>'created_at')::timestamptz AS created_at, doc FROM rm_documents WHERE kind = 'workspace';
    CREATE OR REPLACE VIEW rm_users AS
        SELECT id, organisation_id, status, doc->>'email' AS email, doc->>'role' AS role, doc
        FROM rm_documents WHERE kind = 'user';
    CREATE OR REPLACE VIEW rm_invites AS
        SELECT id, organisation_id, status, doc->>'email' AS email, doc FROM rm_documents WHERE kind = 'invite';
    CREATE OR REPLACE VIEW rm_api_keys AS
        SELECT id, organisation_id, workspace_id, status, doc->>'name' AS name, doc->>'type' AS type,
               doc->>'key' AS masked_key, doc FROM rm_documents WHERE kind = 'apikey';
    CREATE OR REPLACE VIEW rm_rate_limit_policies AS
        SELECT id, organisation_id, workspace_id, status, doc->>'type' AS type, doc->>'unit' AS unit,
               (doc->>'value')::numeric AS value, doc FROM rm_documents WHERE kind = 'ratelimitpolicy';
    CREATE OR REPLACE VIEW rm_usage_limit_policies AS
        SELECT id, organisation_id, workspace_id, status, doc->>'type' AS type,
               (doc->>'credit_limit')::numeric AS credit_limit, doc FROM rm_documents WHERE kind = 'usagelimitpolicy';
    CREATE OR REPLACE VIEW rm_security_settings AS
        SELECT 'organisation' AS scope, id AS organisation_id, '' AS workspace_id, doc->'security_settings' AS settings
        FROM rm_documents WHERE kind = 'organisation'
        UNION ALL
        SELECT 'workspace', organisation_id, id, doc->'security_settings'
        FROM rm_documents WHERE kind = 'workspace' AND doc ? 'security_settings';
END
$$;
SELECT rm_create_views();
