package analytics_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/migrations/migrationstest"
	"github.com/causeway/causeway/projections/analytics"
	"github.com/causeway/causeway/projections/analytics/analyticstest"
)

func TestSQLiteContract(t *testing.T) {
	t.Parallel()
	analyticstest.Run(t, func(t *testing.T) analytics.Store {
		s, err := analytics.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestClickHouseContract(t *testing.T) {
	t.Parallel()
	analyticstest.Run(t, func(t *testing.T) analytics.Store {
		url := migrationstest.ClickHouseURL(t)
		s, err := analytics.OpenClickHouse(context.Background(), url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		// Opening twice proves the migrations idempotent.
		again, err := analytics.OpenClickHouse(context.Background(), url)
		require.NoError(t, err)
		require.NoError(t, again.Close())
		keepDuplicates(t, url)
		return s
	})
}

// keepDuplicates stops the background merges that would collapse the copies of the rows the
// suite inserts twice, so that only FINAL stands between them and a double count, and checks
// once the suite is done that the copies were there all along.
func keepDuplicates(t *testing.T, url string) {
	opts, err := clickhouse.ParseDSN(url)
	require.NoError(t, err)
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, conn.Exec(ctx, "SYSTEM STOP MERGES request_logs"))
	t.Cleanup(func() {
		defer conn.Close()
		var stored, distinct uint64
		require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM request_logs").Scan(&stored))
		require.NoError(t, conn.QueryRow(ctx, "SELECT uniqExact(id) FROM request_logs").Scan(&distinct))
		assert.Greater(t, stored, distinct, "the twice-inserted rows were merged before the suite read them")
	})
}
