// Package postgres is the usage ledger's store on PostgreSQL, through pgx v5, with the schema
// of migrations/postgres (usage_ledger, usage_ledger_batches, usage_leases). It is the only part
// of the ledger that knows PostgreSQL. Several gateway processes may add to one database at
// once; opened with OpenShared, it also keeps their leases (ledger.Leases, leases.go).
//
// It imports the ledger contract and the migrations, never the gateway, HTTP or commands.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/ledger"
	"github.com/causeway/causeway/migrations"
)

// Store keeps the ledger's rows in PostgreSQL, in the pool's current schema.
//
// Each Add is one transaction: it records the batch id (a concurrent Add of the same id waits
// on the unique key, then finds it and adds nothing), then adds the deltas with one upsert,
// merged per row and taken in (budget, period) order, so that processes adding to the same rows
// lock them in one order and do not deadlock. A deadlock or serialisation failure all the same
// is retried a few times.
type Store struct {
	pool *pgxpool.Pool
	// instance is the id this process holds leases under (OpenShared); "": no leases, and Add
	// only adds usage.
	instance string
	demands  chan ledger.Demand
	stop     context.CancelFunc
	done     chan struct{}

	mu        sync.Mutex
	lastPrune time.Time // guarded by mu
}

var _ ledger.Store = (*Store)(nil)

const (
	// keepBatches is how long an applied batch id is remembered: far longer than any retry.
	keepBatches = 24 * time.Hour
	// pruneEvery is how often an Add also forgets the batch ids older than keepBatches.
	pruneEvery = time.Hour
	// keepWindows is how long a rate-limit window's row is kept after its last change: longer
	// than the longest window (a week).
	keepWindows = 8 * 24 * time.Hour
	// attempts bounds the tries of one Add that meets a deadlock or serialisation failure.
	attempts = 4
)

// Open applies migrations/postgres to the pool's current schema (under the migrations'
// advisory lock) and returns the store. The pool stays the caller's: Close does not close it.
func Open(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if pool == nil {
		return nil, errors.New("ledger/postgres: a pool is required")
	}
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		return nil, fail(ctx, "migrate", err)
	}
	return &Store{pool: pool}, nil
}

// Load returns every row.
func (s *Store) Load(ctx context.Context) ([]ledger.Row, error) {
	rows, err := s.pool.Query(ctx, `SELECT budget, period, used FROM usage_ledger ORDER BY budget, period`)
	if err != nil {
		return nil, fail(ctx, "load", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Row, error) {
		var row ledger.Row
		err := r.Scan(&row.Budget, &row.Period, &row.Used)
		return row, err
	})
	if err != nil {
		return nil, fail(ctx, "load", err)
	}
	return out, nil
}

// Add adds the deltas in one transaction that also records batchID; a recorded batchID adds
// nothing.
func (s *Store) Add(ctx context.Context, batchID string, deltas []ledger.Row) error {
	if batchID == "" {
		return errors.New("ledger/postgres: add: a batch needs an id")
	}
	if len(deltas) == 0 {
		return nil
	}
	budgets := make([]string, len(deltas))
	periods := make([]string, len(deltas))
	used := make([]float64, len(deltas))
	for i, d := range deltas {
		budgets[i], periods[i], used[i] = d.Budget, d.Period, d.Used
	}
	s.mu.Lock()
	prune := time.Since(s.lastPrune) >= pruneEvery
	if prune {
		s.lastPrune = time.Now() // claimed now, so that concurrent Adds do not all prune
	}
	s.mu.Unlock()

	var err error
	for range attempts {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO usage_ledger_batches (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, batchID)
			if err != nil || tag.RowsAffected() == 0 {
				return err // applied before: nothing to add
			}
			if _, err := tx.Exec(ctx, `INSERT INTO usage_ledger AS l (budget, period, used, updated_at)
				SELECT budget, period, sum(used), now()
				FROM unnest($1::text[], $2::text[], $3::float8[]) AS d (budget, period, used)
				GROUP BY budget, period
				ORDER BY budget, period
				ON CONFLICT (budget, period) DO UPDATE SET used = l.used + excluded.used, updated_at = excluded.updated_at`,
				budgets, periods, used); err != nil {
				return err
			}
			if s.instance != "" {
				// What was spent moves from the instance's leases to the usage just added.
				if err := release(ctx, tx, s.instance, budgets, periods, used); err != nil {
					return err
				}
			}
			if prune {
				_, err = tx.Exec(ctx, `DELETE FROM usage_ledger_batches WHERE applied_at < now() - make_interval(secs => $1)`,
					keepBatches.Seconds())
				if err == nil {
					// Rate-limit windows (ledger.KindRateLimit) are a week long at most: a row
					// unchanged for longer, with no lease on it, is of a window that has ended.
					_, err = tx.Exec(ctx, `DELETE FROM usage_ledger WHERE budget LIKE 'rate_limit:%' AND leased = 0
						AND updated_at < now() - make_interval(secs => $1)`, keepWindows.Seconds())
				}
			}
			return err
		})
		if !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fail(ctx, "add batch "+batchID, err)
	}
	return nil
}

// Close stops listening for demands; the pool belongs to Open's caller.
func (s *Store) Close() error {
	if s.stop != nil {
		s.stop()
		<-s.done
		s.stop = nil
	}
	return nil
}

// retryable reports a deadlock or serialisation failure: the transaction was rolled back and
// may simply run again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// fail describes err without handing pgx's error types out; a cancelled or expired ctx stays
// recognisable.
func fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("ledger/postgres: %s: %w", op, ctxErr)
	}
	return fmt.Errorf("ledger/postgres: %s: %v", op, err)
}
