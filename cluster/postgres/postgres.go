// Package postgres is the cluster registry in PostgreSQL, through pgx v5, with the schema of
// migrations/postgres (gateway_instances). It imports the cluster contract and the migrations,
// never the gateway, HTTP or commands.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/cluster"
	"github.com/causeway/causeway/migrations"
)

// Registry keeps the instances in the pool's current schema.
type Registry struct{ pool *pgxpool.Pool }

var (
	_ cluster.Registry = (*Registry)(nil)
	_ cluster.Claims   = (*Registry)(nil)
)

// Open applies migrations/postgres and returns the registry; the pool stays the caller's.
func Open(ctx context.Context, pool *pgxpool.Pool) (*Registry, error) {
	if pool == nil {
		return nil, errors.New("cluster/postgres: a pool is required")
	}
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		return nil, fmt.Errorf("cluster/postgres: migrate: %w", err)
	}
	return &Registry{pool: pool}, nil
}

// Beat records inst's heartbeat, with the database's clock, so that instances on machines
// whose clocks differ are judged alike.
func (r *Registry) Beat(ctx context.Context, inst cluster.Instance) (joined bool, err error) {
	err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE gateway_instances SET version = $2, started_at = $3, heartbeat_at = now(), applied = $4
			WHERE id = $1`, inst.ID, inst.Version, inst.StartedAt, int64(inst.Applied))
		if err != nil || tag.RowsAffected() > 0 {
			return err
		}
		joined = true
		_, err = tx.Exec(ctx, `INSERT INTO gateway_instances (id, version, started_at, heartbeat_at, applied)
			VALUES ($1, $2, $3, now(), $4)
			ON CONFLICT (id) DO UPDATE SET version = excluded.version, started_at = excluded.started_at,
				heartbeat_at = now(), applied = excluded.applied`,
			inst.ID, inst.Version, inst.StartedAt, int64(inst.Applied))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("cluster/postgres: beat: %w", err)
	}
	return joined, nil
}

// List answers the instances heard of within alive, by id.
func (r *Registry) List(ctx context.Context, alive time.Duration) ([]cluster.Instance, error) {
	rows, err := r.pool.Query(ctx, `SELECT id, version, started_at, heartbeat_at, applied FROM gateway_instances
		WHERE heartbeat_at >= now() - make_interval(secs => $1) ORDER BY id`, alive.Seconds())
	if err != nil {
		return nil, fmt.Errorf("cluster/postgres: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (cluster.Instance, error) {
		var i cluster.Instance
		var applied int64
		err := row.Scan(&i.ID, &i.Version, &i.StartedAt, &i.Heartbeat, &applied)
		i.Applied = uint64(applied)
		i.StartedAt, i.Heartbeat = i.StartedAt.UTC(), i.Heartbeat.UTC()
		return i, err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster/postgres: list: %w", err)
	}
	return out, nil
}

// Stale answers the ids of the instances not heard of within alive.
func (r *Registry) Stale(ctx context.Context, alive time.Duration) ([]string, error) {
	rows, err := r.pool.Query(ctx, `SELECT id FROM gateway_instances
		WHERE heartbeat_at < now() - make_interval(secs => $1) ORDER BY id`, alive.Seconds())
	if err != nil {
		return nil, fmt.Errorf("cluster/postgres: stale: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("cluster/postgres: stale: %w", err)
	}
	return ids, nil
}

// Forget removes an instance.
func (r *Registry) Forget(ctx context.Context, id string) error {
	if _, err := r.pool.Exec(ctx, `DELETE FROM gateway_instances WHERE id = $1`, id); err != nil {
		return fmt.Errorf("cluster/postgres: forget: %w", err)
	}
	return nil
}

// Claim takes item for holder when it is free or its claim lapsed, or renews holder's own, in
// one statement: two instances claiming at once are ordered by the row, and one wins.
func (r *Registry) Claim(ctx context.Context, item, holder string, ttl time.Duration) (bool, error) {
	var got string
	err := r.pool.QueryRow(ctx, `INSERT INTO work_claims (item, holder, expires_at)
		VALUES ($1, $2, now() + make_interval(secs => $3))
		ON CONFLICT (item) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE work_claims.holder = excluded.holder OR work_claims.expires_at < now()
		RETURNING holder`, item, holder, ttl.Seconds()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // held by another, not lapsed
	}
	if err != nil {
		return false, fmt.Errorf("cluster/postgres: claim: %w", err)
	}
	return got == holder, nil
}

// Release deletes holder's claim on item.
func (r *Registry) Release(ctx context.Context, item, holder string) error {
	if _, err := r.pool.Exec(ctx, `DELETE FROM work_claims WHERE item = $1 AND holder = $2`, item, holder); err != nil {
		return fmt.Errorf("cluster/postgres: release: %w", err)
	}
	return nil
}
