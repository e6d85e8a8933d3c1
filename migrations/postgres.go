package migrations

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ApplyPostgres brings the database's current schema (search_path) up to date with s. Two
// processes starting together are serialised by an advisory lock, so each file runs once.
func ApplyPostgres(ctx context.Context, pool *pgxpool.Pool, s Set) error {
	all, err := s.Files()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	defer conn.Release()

	// Session-level lock, keyed by schema so that tests in separate schemas do not wait.
	const lock = `SELECT pg_advisory_lock(hashtext('causeway.migrations.' || current_schema()))`
	if _, err := conn.Exec(ctx, lock); err != nil {
		return fmt.Errorf("migrations %s: lock: %w", s.Name, err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx),
			`SELECT pg_advisory_unlock(hashtext('causeway.migrations.' || current_schema()))`)
	}()

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		set_name   text        NOT NULL,
		version    integer     NOT NULL,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (set_name, version))`); err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations WHERE set_name = $1`, s.Name)
	if err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	for _, v := range versions {
		applied[int(v)] = true
	}

	for _, f := range pending(all, applied) {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, f.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (set_name, version, name) VALUES ($1, $2, $3)`,
				s.Name, f.Version, f.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrations %s: %s: %w", s.Name, f.Name, err)
		}
	}
	return nil
}
