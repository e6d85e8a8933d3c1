package postgres

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/cache/cachetest"
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

func open(t testing.TB, pool *pgxpool.Pool, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), pool, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Each test gets a fresh schema (migrationstest.PostgresURL), so the suite is repeatable.
func TestContract(t *testing.T) {
	cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
		return open(t, newPool(t, migrationstest.PostgresURL(t)), Config{MaxBytes: cfg.MaxBytes})
	})
}

// Two pools on one schema stand for two gateway instances.
func TestShared(t *testing.T) {
	cachetest.RunShared(t, func(t *testing.T, cfg cachetest.Config) (cache.Store, cache.Store) {
		url := migrationstest.PostgresURL(t)
		return open(t, newPool(t, url), Config{MaxBytes: cfg.MaxBytes}), open(t, newPool(t, url), Config{MaxBytes: cfg.MaxBytes})
	})
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	err := Config{MaxBytes: -1, PruneInterval: -time.Second}.Validate()
	require.ErrorContains(t, err, "MaxBytes")
	require.ErrorContains(t, err, "PruneInterval")
	require.NoError(t, Config{}.Validate())
	_, err = Open(context.Background(), nil, Config{})
	require.Error(t, err)
}

// Prune deletes what expired by the now it is given, then the oldest puts beyond the bound,
// in two statements whatever the number of rows.
func TestPruneDeletesTheExpiredThenTheOldest(t *testing.T) {
	ctx := context.Background()
	now := cachetest.Now()
	entry := func(i int, ttl time.Duration) cache.Entry {
		e := cachetest.NewEntry("ws", "", fmt.Sprintf("k%02d", i), now, ttl)
		e.Body = bytes.Repeat([]byte("x"), 1000)
		return e
	}
	size := entry(0, 0).Size()
	s := open(t, newPool(t, migrationstest.PostgresURL(t)), Config{MaxBytes: 5 * size})
	for i := range 10 {
		ttl := time.Hour
		if i%3 == 0 {
			ttl = time.Minute // k00, k03, k06, k09
		}
		require.NoError(t, s.Put(ctx, entry(i, ttl)))
	}
	n, err := s.Prune(ctx, now.Add(2*time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 4+1, n, "four expired, then the oldest of the six left")
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{Entries: 5, Bytes: 5 * size}, st)
	for i := range 10 {
		_, ok, err := s.Get(ctx, "ws", entry(i, 0).Key, now)
		require.NoError(t, err)
		require.Equal(t, i%3 != 0 && i > 1, ok, i)
	}
	n, err = s.Prune(ctx, now)
	require.NoError(t, err)
	require.Zero(t, n, "nothing more to do")
}

// The background prune keeps the bound without anyone calling Prune.
func TestPrunesInTheBackground(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := open(t, newPool(t, migrationstest.PostgresURL(t)), Config{MaxBytes: 10 << 10, PruneInterval: 20 * time.Millisecond})
	for i := range 30 {
		e := cachetest.NewEntry("ws", "", fmt.Sprintf("k%02d", i), now, time.Hour)
		e.Body = bytes.Repeat([]byte("x"), 1000)
		require.NoError(t, s.Put(ctx, e))
	}
	require.Eventually(t, func() bool {
		st, err := s.Stats(ctx)
		return err == nil && st.Bytes <= 10<<10
	}, 10*time.Second, 20*time.Millisecond)
}

// While one store prunes, another's Prune leaves the work to it rather than wait or delete
// twice.
func TestOnePruneAtATime(t *testing.T) {
	ctx := context.Background()
	url := migrationstest.PostgresURL(t)
	pool := newPool(t, url)
	a := open(t, pool, Config{})
	b := open(t, newPool(t, url), Config{})
	require.NoError(t, a.Put(ctx, cachetest.NewEntry("ws", "", "k", time.Now(), time.Minute)))

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	var held bool
	require.NoError(t, tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext('causeway.answer_cache.prune.' || current_schema()))`).Scan(&held))
	require.True(t, held)
	n, err := b.Prune(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Zero(t, n, "another store is pruning")
	require.NoError(t, tx.Rollback(ctx))
	n, err = b.Prune(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}

func BenchmarkGet(b *testing.B) {
	cachetest.BenchmarkGet(b, open(b, newPool(b, migrationstest.PostgresURL(b)), Config{}))
}
