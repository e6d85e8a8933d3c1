package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/ledger"
	"github.com/causeway/causeway/ledger/ledgertest"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// newPool connects to url; the pool is closed when the test ends, after the stores on it.
func newPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

func open(t testing.TB, pool *pgxpool.Pool) *Store {
	t.Helper()
	s, err := Open(context.Background(), pool)
	require.NoError(t, err)
	return s
}

// Each test gets a fresh schema (migrationstest.PostgresURL), so the suite is repeatable.
func TestContract(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledger.Store {
		return open(t, newPool(t, migrationstest.PostgresURL(t)))
	})
}

// Two pools on one schema stand for two gateway processes.
func TestShared(t *testing.T) {
	ledgertest.RunShared(t, func(t *testing.T) (ledger.Store, ledger.Store) {
		url := migrationstest.PostgresURL(t)
		return open(t, newPool(t, url)), open(t, newPool(t, url))
	})
}

func TestOpenTwiceOnOnePool(t *testing.T) {
	pool := newPool(t, migrationstest.PostgresURL(t))
	open(t, pool)
	s := open(t, pool)
	require.NoError(t, s.Add(context.Background(), "b1", []ledger.Row{{Budget: "api_key:k", Period: "p", Used: 1}}))
}

func TestAddPrunesOldBatchIDs(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, migrationstest.PostgresURL(t))
	s := open(t, pool)
	row := []ledger.Row{{Budget: "api_key:k", Period: "p", Used: 1}}
	require.NoError(t, s.Add(ctx, "recent", row))
	_, err := pool.Exec(ctx, `INSERT INTO usage_ledger_batches (id, applied_at) VALUES ('old', now() - interval '25 hours')`)
	require.NoError(t, err)

	require.NoError(t, s.Add(ctx, "b2", row))
	require.Equal(t, []string{"b2", "old", "recent"}, batchIDs(t, pool), "pruned at most once an hour")
	s.mu.Lock()
	s.lastPrune = s.lastPrune.AddDate(0, 0, -1)
	s.mu.Unlock()
	require.NoError(t, s.Add(ctx, "b3", row))
	require.Equal(t, []string{"b2", "b3", "recent"}, batchIDs(t, pool))
}

// The hourly prune also drops the rows of rate-limit windows that ended (unchanged for over a
// week and leased by no one); budgets' rows stay, whatever their age.
func TestAddPrunesEndedRateLimitWindows(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, migrationstest.PostgresURL(t))
	s := open(t, pool)
	_, err := pool.Exec(ctx, `INSERT INTO usage_ledger (budget, period, used, leased, updated_at) VALUES
		('rate_limit:key%3Ak:rpm.requests', '2026-11-01T10:00:00Z', 30, 0, now() - interval '9 days'),
		('rate_limit:key%3Ak:rpw.requests', '2026-11-16T00:00:00Z', 5, 2, now() - interval '9 days'),
		('rate_limit:key%3Ak:rpd.requests', '2026-11-23T00:00:00Z', 7, 0, now() - interval '1 day'),
		('api_key:k', '2026-01', 12, 0, now() - interval '300 days')`)
	require.NoError(t, err)
	s.mu.Lock()
	s.lastPrune = time.Time{}
	s.mu.Unlock()
	require.NoError(t, s.Add(ctx, "b1", []ledger.Row{{Budget: "api_key:k2", Period: "p", Used: 1}}))
	rows, err := s.Load(ctx)
	require.NoError(t, err)
	var kept []string
	for _, r := range rows {
		kept = append(kept, r.Budget+"@"+r.Period)
	}
	require.ElementsMatch(t, []string{"api_key:k@2026-01", "api_key:k2@p", "rate_limit:key%3Ak:rpd.requests@2026-11-23T00:00:00Z",
		"rate_limit:key%3Ak:rpw.requests@2026-11-16T00:00:00Z"}, kept, "the ended window with no lease is gone; a leased one stays")
}

func batchIDs(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id FROM usage_ledger_batches ORDER BY id`)
	require.NoError(t, err)
	var ids []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	return ids
}
