package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/migrations"
	"github.com/causeway/causeway/projections"
)

// The tables a PostgreSQL rebuild writes, beside the live rm_documents and rm_audit.
const (
	replayDocuments  = "rm_documents_replay"
	replayAudit      = "rm_audit_replay"
	replayCheckpoint = "replay"
	liveCheckpoint   = "postgres"
)

// Rebuild rebuilds the PostgreSQL read model into fresh tables, up to the live
// checkpoint (so that the two can be compared), and returns the model of the fresh tables.
func Rebuild(ctx context.Context, store eventstore.Store, pool *pgxpool.Pool, reg *domain.Registry) (*Model, projections.ReplayStats, error) {
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		return nil, projections.ReplayStats{}, err
	}
	for _, stmt := range []string{
		`DROP TABLE IF EXISTS ` + replayDocuments + `, ` + replayAudit,
		`CREATE TABLE ` + replayDocuments + ` (LIKE rm_documents INCLUDING ALL)`,
		`CREATE TABLE ` + replayAudit + ` (LIKE rm_audit INCLUDING ALL)`,
		`DELETE FROM rm_checkpoints WHERE name = '` + replayCheckpoint + `'`,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return nil, projections.ReplayStats{}, fmt.Errorf("replay: prepare tables: %w", err)
		}
	}
	var live int64
	if err := pool.QueryRow(ctx, `SELECT coalesce((SELECT position FROM rm_checkpoints WHERE name = $1), 0)`, liveCheckpoint).Scan(&live); err != nil {
		return nil, projections.ReplayStats{}, err
	}
	m, err := newOn(ctx, pool, reg, replayCheckpoint, replayDocuments, replayAudit)
	if err != nil {
		return nil, projections.ReplayStats{}, err
	}
	upTo := eventstore.Position(live)
	if live == 0 {
		upTo = eventstore.Position(1<<63 - 1) // no live model yet: rebuild everything
	}
	stats, err := projections.Rebuild(ctx, store, m, upTo)
	return m, stats, err
}

// Difference is one way the rebuilt tables and the live ones disagree.
type Difference struct {
	Table  string // documents or audit
	Key    string // kind/id, or the audit position
	Detail string // only in the live tables, only in the rebuild, or both with different values
}

// Verify compares the rebuilt tables with the live ones, row by row and column by
// column (JSON compared as JSON), and returns every difference, at most limit of them.
func Verify(ctx context.Context, pool *pgxpool.Pool, limit int) ([]Difference, error) {
	var out []Difference
	queries := []struct{ table, sql string }{
		{"documents", `SELECT coalesce(l.kind, r.kind) || '/' || coalesce(l.id, r.id),
			CASE WHEN l.id IS NULL THEN 'only in the rebuild' WHEN r.id IS NULL THEN 'only in the live table'
			     ELSE 'differs: live ' || left(l.doc::text, 300) || ' / rebuilt ' || left(r.doc::text, 300) END
			FROM rm_documents l FULL JOIN ` + replayDocuments + ` r ON l.kind = r.kind AND l.id = r.id
			WHERE l.id IS NULL OR r.id IS NULL OR l.doc <> r.doc OR l.organisation_id <> r.organisation_id
			   OR l.workspace_id <> r.workspace_id OR l.status <> r.status OR l.position <> r.position
			ORDER BY 1 LIMIT $1`},
		{"audit", `SELECT coalesce(l.position, r.position)::text,
			CASE WHEN l.position IS NULL THEN 'only in the rebuild' WHEN r.position IS NULL THEN 'only in the live table'
			     ELSE 'differs' END
			FROM rm_audit l FULL JOIN ` + replayAudit + ` r ON l.position = r.position
			WHERE l.position IS NULL OR r.position IS NULL
			   OR (l.id, l.recorded_at, l.action, l.resource_type, l.resource_id, l.actor_id, l.actor_type, l.organisation_id,
			       l.workspace_id, l.request_id, l.client_ip, l.user_agent, l.method, l.uri, l.response_status_code)
			   IS DISTINCT FROM
			      (r.id, r.recorded_at, r.action, r.resource_type, r.resource_id, r.actor_id, r.actor_type, r.organisation_id,
			       r.workspace_id, r.request_id, r.client_ip, r.user_agent, r.method, r.uri, r.response_status_code)
			   OR l.details IS DISTINCT FROM r.details OR l.before IS DISTINCT FROM r.before OR l.after IS DISTINCT FROM r.after
			ORDER BY coalesce(l.position, r.position) LIMIT $1`},
	}
	for _, q := range queries {
		rows, err := pool.Query(ctx, q.sql, limit)
		if err != nil {
			return nil, fmt.Errorf("replay: verify %s: %w", q.table, err)
		}
		for rows.Next() {
			d := Difference{Table: q.table}
			if err := rows.Scan(&d.Key, &d.Detail); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Swap puts the rebuilt tables in place of the live ones in one transaction. It takes
// the live tables' exclusive locks first, so reads wait for a moment instead of failing; the
// live checkpoint becomes the rebuild's, and the running projectors go on from there.
func Swap(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var pos int64
		if err := tx.QueryRow(ctx, `SELECT position FROM rm_checkpoints WHERE name = $1`, replayCheckpoint).Scan(&pos); err != nil {
			return fmt.Errorf("replay: nothing rebuilt to swap in (run a rebuild first): %w", err)
		}
		for _, stmt := range []string{
			`LOCK TABLE rm_documents, rm_audit, rm_checkpoints IN ACCESS EXCLUSIVE MODE`,
			`ALTER TABLE rm_documents RENAME TO rm_documents_old`,
			`ALTER TABLE rm_audit RENAME TO rm_audit_old`,
			`ALTER TABLE ` + replayDocuments + ` RENAME TO rm_documents`,
			`ALTER TABLE ` + replayAudit + ` RENAME TO rm_audit`,
			`SELECT rm_create_views()`, // the views followed the old tables; point them at the new
			`DROP TABLE rm_documents_old, rm_audit_old`,
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("replay: swap: %s: %w", stmt, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO rm_checkpoints (name, position) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position`, liveCheckpoint, pos); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM rm_checkpoints WHERE name = $1`, replayCheckpoint)
		return err
	})
}
