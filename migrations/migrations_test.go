package migrations

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/causeway/causeway/migrations/migrationstest"
)

func TestFilesAreOrderedByNumber(t *testing.T) {
	s := Set{Name: "t", dir: "m", fsys: fstest.MapFS{
		"m/0010_later.sql":  {Data: []byte("SELECT 10")},
		"m/0002_second.sql": {Data: []byte("SELECT 2")},
		"m/0001_first.sql":  {Data: []byte("SELECT 1")},
		"m/README.md":       {Data: []byte("not a migration")},
	}}
	files, err := s.Files()
	require.NoError(t, err)
	require.Len(t, files, 3)
	assert.Equal(t, []int{1, 2, 10}, []int{files[0].Version, files[1].Version, files[2].Version})
	assert.Equal(t, "SELECT 2", files[1].SQL)
}

func TestFilesRefuseAmbiguousNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"shared number": {"m/0001_a.sql": {}, "m/001_b.sql": {}},
		"no number":     {"m/init.sql": {}},
		"zero":          {"m/0000_zero.sql": {}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Set{Name: "t", dir: "m", fsys: fsys}.Files()
			require.Error(t, err)
		})
	}
}

func TestEmbeddedSetsAreWellFormed(t *testing.T) {
	for _, s := range []Set{Postgres, SQLiteEventStore, SQLiteLedger, SQLiteCache} {
		files, err := s.Files()
		require.NoError(t, err, s.Name)
		require.NotEmpty(t, files, s.Name)
		for i, f := range files {
			assert.Equal(t, i+1, f.Version, "%s: %s: versions run 1, 2, 3… with no gap", s.Name, f.Name)
		}
	}
}

func TestApplySQLiteIsIdempotent(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_txlock=immediate")
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	require.NoError(t, ApplySQLite(ctx, db, SQLiteEventStore))
	require.NoError(t, ApplySQLite(ctx, db, SQLiteEventStore))
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n))
	files, _ := SQLiteEventStore.Files()
	assert.Equal(t, len(files), n)
}

func TestApplyPostgresTwiceAndConcurrently(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, migrationstest.PostgresURL(t))
	require.NoError(t, err)
	defer pool.Close()

	// Four processes starting at once: each file must run exactly once.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = ApplyPostgres(ctx, pool, Postgres) }()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, ApplyPostgres(ctx, pool, Postgres))

	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE set_name = 'postgres'`).Scan(&n))
	files, _ := Postgres.Files()
	assert.Equal(t, len(files), n)
	var head int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT position FROM es_head`).Scan(&head))
	assert.Equal(t, int64(0), head, "the head row was inserted once")
}
