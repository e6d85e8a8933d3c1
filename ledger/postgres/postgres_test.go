package postgres

import (
	"context"
	"testing"

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
