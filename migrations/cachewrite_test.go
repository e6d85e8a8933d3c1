package migrations

import (
	"context"
	"database/sql"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/migrations/migrationstest"
)

// upTo is s as it was before version v: the same name, so that applying s afterwards finds
// the earlier files recorded.
func upTo(t *testing.T, s Set, v int) Set {
	t.Helper()
	all, err := s.Files()
	require.NoError(t, err)
	fsys := fstest.MapFS{}
	for _, f := range all {
		if f.Version < v {
			fsys[path.Join(s.dir, f.Name)] = &fstest.MapFile{Data: []byte(f.SQL)}
		}
	}
	return Set{Name: s.Name, fsys: fsys, dir: s.dir}
}

// versionOf is the version of s's file whose name contains part.
func versionOf(t *testing.T, s Set, part string) int {
	t.Helper()
	all, err := s.Files()
	require.NoError(t, err)
	for _, f := range all {
		if strings.Contains(f.Name, part) {
			return f.Version
		}
	}
	t.Fatalf("%s has no %s migration", s.Name, part)
	return 0
}

func TestAnalyticsSetsAreWellFormed(t *testing.T) {
	for _, s := range []Set{SQLiteAnalytics, ClickHouse} {
		files, err := s.Files()
		require.NoError(t, err, s.Name)
		require.NotEmpty(t, files, s.Name)
		for i, f := range files {
			assert.Equal(t, i+1, f.Version, "%s: %s: versions run 1, 2, 3… with no gap", s.Name, f.Name)
		}
	}
}

// A request_logs table of an earlier release gains cache_write_tokens: its rows read 0, new
// rows keep theirs, and applying the set again changes nothing.
func TestCacheWriteTokensUpgradeSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "a.db")+"?_txlock=immediate")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, ApplySQLite(ctx, db, upTo(t, SQLiteAnalytics, versionOf(t, SQLiteAnalytics, "cache_write_tokens"))))

	cols, vals := sqliteZeroRow(t, db)
	require.NotContains(t, cols, "cache_write_tokens")
	insertSQLiteRow(t, db, "old", cols, vals)

	require.NoError(t, ApplySQLite(ctx, db, SQLiteAnalytics))
	require.NoError(t, ApplySQLite(ctx, db, SQLiteAnalytics))
	var old int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT cache_write_tokens FROM request_logs WHERE id = 'old'`).Scan(&old))
	assert.Zero(t, old)
	insertSQLiteRow(t, db, "new", append(cols, "cache_write_tokens"), append(vals, 42))
	var got int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT cache_write_tokens FROM request_logs WHERE id = 'new'`).Scan(&got))
	assert.Equal(t, 42, got)
}

// sqliteZeroRow is request_logs' columns as they are, the id first, and a row of them: zero or
// empty.
func sqliteZeroRow(t *testing.T, db *sql.DB) ([]string, []any) {
	t.Helper()
	rs, err := db.QueryContext(context.Background(), `SELECT name, type FROM pragma_table_info('request_logs')`)
	require.NoError(t, err)
	defer rs.Close()
	var cols []string
	var vals []any
	for rs.Next() {
		var name, typ string
		require.NoError(t, rs.Scan(&name, &typ))
		cols = append(cols, name)
		if typ == "TEXT" {
			vals = append(vals, "")
		} else {
			vals = append(vals, 0)
		}
	}
	require.NoError(t, rs.Err())
	require.Equal(t, "id", cols[0])
	return cols, vals
}

// insertSQLiteRow stores vals in cols under id (which replaces vals[0]).
func insertSQLiteRow(t *testing.T, db *sql.DB, id string, cols []string, vals []any) {
	t.Helper()
	vals = append([]any{id}, vals[1:]...)
	_, err := db.ExecContext(context.Background(), "INSERT INTO request_logs ("+strings.Join(cols, ", ")+") VALUES (?"+
		strings.Repeat(", ?", len(cols)-1)+")", vals...)
	require.NoError(t, err)
}

// The same on ClickHouse, whose release 18.16 has no ADD COLUMN IF NOT EXISTS: the file runs
// once because schema_migrations records it, so a second apply must not run it again.
func TestCacheWriteTokensUpgradeClickHouse(t *testing.T) {
	ctx := context.Background()
	opts, err := clickhouse.ParseDSN(migrationstest.ClickHouseURL(t))
	require.NoError(t, err)
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, ApplyClickHouse(ctx, conn, upTo(t, ClickHouse, versionOf(t, ClickHouse, "cache_write_tokens"))))

	insert := func(query string, args ...any) {
		t.Helper()
		batch, err := conn.PrepareBatch(ctx, query)
		require.NoError(t, err)
		require.NoError(t, batch.Append(args...))
		require.NoError(t, batch.Send())
	}
	insert(`INSERT INTO request_logs (id, organisation_id)`, "old", "org")

	require.NoError(t, ApplyClickHouse(ctx, conn, ClickHouse))
	require.NoError(t, ApplyClickHouse(ctx, conn, ClickHouse), "the ALTER is not run again")
	insert(`INSERT INTO request_logs (id, organisation_id, cache_write_tokens)`, "new", "org", uint32(42))

	got := map[string]uint32{}
	rows, err := conn.Query(ctx, `SELECT id, cache_write_tokens FROM request_logs FINAL`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id string
		var n uint32
		require.NoError(t, rows.Scan(&id, &n))
		got[id] = n
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, map[string]uint32{"old": 0, "new": 42}, got)
}

// A run cut off after the ALTER but before the file was recorded: the next start finds the
// column there already and records the file rather than failing for ever.
func TestClickHouseAddColumnInterruptedBeforeRecorded(t *testing.T) {
	ctx := context.Background()
	opts, err := clickhouse.ParseDSN(migrationstest.ClickHouseURL(t))
	require.NoError(t, err)
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, ApplyClickHouse(ctx, conn, upTo(t, ClickHouse, versionOf(t, ClickHouse, "cache_write_tokens"))))
	require.NoError(t, conn.Exec(ctx, "ALTER TABLE request_logs ADD COLUMN cache_write_tokens UInt32 DEFAULT 0"))

	require.NoError(t, ApplyClickHouse(ctx, conn, ClickHouse))
	var recorded uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM schema_migrations WHERE set_name = ? AND version = ?",
		ClickHouse.Name, uint32(versionOf(t, ClickHouse, "cache_write_tokens"))).Scan(&recorded))
	assert.EqualValues(t, 1, recorded)
}
