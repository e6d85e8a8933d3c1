package migrations

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/migrations/migrationstest"
)

// A request_logs table of an earlier release gains the prompt's version and label: its rows
// read 0 and ”, new rows keep theirs, and applying the set again changes nothing.
func TestPromptVersionUpgradeSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "a.db")+"?_txlock=immediate")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, ApplySQLite(ctx, db, upTo(t, SQLiteAnalytics, versionOf(t, SQLiteAnalytics, "prompt_version_label"))))

	cols, vals := sqliteZeroRow(t, db)
	require.NotContains(t, cols, "prompt_version")
	insertSQLiteRow(t, db, "old", cols, vals)

	require.NoError(t, ApplySQLite(ctx, db, SQLiteAnalytics))
	require.NoError(t, ApplySQLite(ctx, db, SQLiteAnalytics))
	insertSQLiteRow(t, db, "new", append(cols, "prompt_version", "prompt_label"), append(vals, 3, "production"))

	got := map[string]promptServed{}
	rs, err := db.QueryContext(ctx, `SELECT id, prompt_version, prompt_label FROM request_logs`)
	require.NoError(t, err)
	defer rs.Close()
	for rs.Next() {
		var id string
		var p promptServed
		require.NoError(t, rs.Scan(&id, &p.version, &p.label))
		got[id] = p
	}
	require.NoError(t, rs.Err())
	assert.Equal(t, map[string]promptServed{"old": {}, "new": {3, "production"}}, got)
}

// promptServed is a row's prompt version and label.
type promptServed struct {
	version int64
	label   string
}

// The same on ClickHouse, where the file runs once because schema_migrations records it (see
// TestCacheWriteTokensUpgradeClickHouse).
func TestPromptVersionUpgradeClickHouse(t *testing.T) {
	ctx := context.Background()
	opts, err := clickhouse.ParseDSN(migrationstest.ClickHouseURL(t))
	require.NoError(t, err)
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, ApplyClickHouse(ctx, conn, upTo(t, ClickHouse, versionOf(t, ClickHouse, "prompt_version_label"))))

	insert := func(query string, args ...any) {
		t.Helper()
		batch, err := conn.PrepareBatch(ctx, query)
		require.NoError(t, err)
		require.NoError(t, batch.Append(args...))
		require.NoError(t, batch.Send())
	}
	insert(`INSERT INTO request_logs (id, organisation_id)`, "old", "org")

	require.NoError(t, ApplyClickHouse(ctx, conn, ClickHouse))
	require.NoError(t, ApplyClickHouse(ctx, conn, ClickHouse), "the ALTERs are not run again")
	insert(`INSERT INTO request_logs (id, organisation_id, prompt_version, prompt_label)`, "new", "org", uint32(3), "production")

	got := map[string]promptServed{}
	rows, err := conn.Query(ctx, `SELECT id, toInt64(prompt_version), prompt_label FROM request_logs FINAL`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id string
		var p promptServed
		require.NoError(t, rows.Scan(&id, &p.version, &p.label))
		got[id] = p
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, map[string]promptServed{"old": {}, "new": {3, "production"}}, got)
}
