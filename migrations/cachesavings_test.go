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

// A request_logs table of an earlier release gains the cache savings: its rows read 0, new
// rows keep theirs, and applying the set again changes nothing.
func TestCacheSavingsUpgradeSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "a.db")+"?_txlock=immediate")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, ApplySQLite(ctx, db, upTo(t, SQLiteAnalytics, versionOf(t, SQLiteAnalytics, "cache_savings"))))

	cols, vals := sqliteZeroRow(t, db)
	require.NotContains(t, cols, "cache_saved_cost")
	insertSQLiteRow(t, db, "old", cols, vals)

	require.NoError(t, ApplySQLite(ctx, db, SQLiteAnalytics))
	require.NoError(t, ApplySQLite(ctx, db, SQLiteAnalytics))
	insertSQLiteRow(t, db, "new", append(cols, "cache_saved_cost", "cache_saved_latency_ms"), append(vals, 0.125, 640.5))

	got := map[string][2]float64{}
	rs, err := db.QueryContext(ctx, `SELECT id, cache_saved_cost, cache_saved_latency_ms FROM request_logs`)
	require.NoError(t, err)
	defer rs.Close()
	for rs.Next() {
		var id string
		var cost, ms float64
		require.NoError(t, rs.Scan(&id, &cost, &ms))
		got[id] = [2]float64{cost, ms}
	}
	require.NoError(t, rs.Err())
	assert.Equal(t, map[string][2]float64{"old": {0, 0}, "new": {0.125, 640.5}}, got)
}

// The same on ClickHouse, where the file runs once because schema_migrations records it (see
// TestCacheWriteTokensUpgradeClickHouse).
func TestCacheSavingsUpgradeClickHouse(t *testing.T) {
	ctx := context.Background()
	opts, err := clickhouse.ParseDSN(migrationstest.ClickHouseURL(t))
	require.NoError(t, err)
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, ApplyClickHouse(ctx, conn, upTo(t, ClickHouse, versionOf(t, ClickHouse, "cache_savings"))))

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
	insert(`INSERT INTO request_logs (id, organisation_id, cache_saved_cost, cache_saved_latency_ms)`, "new", "org", 0.125, 640.5)

	got := map[string][2]float64{}
	rows, err := conn.Query(ctx, `SELECT id, cache_saved_cost, cache_saved_latency_ms FROM request_logs FINAL`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id string
		var cost, ms float64
		require.NoError(t, rows.Scan(&id, &cost, &ms))
		got[id] = [2]float64{cost, ms}
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, map[string][2]float64{"old": {0, 0}, "new": {0.125, 640.5}}, got)
}
