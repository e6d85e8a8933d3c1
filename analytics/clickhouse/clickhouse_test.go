package clickhouse_test

import (
	"context"
	"testing"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/analyticstest"
	"github.com/causeway/causeway/analytics/clickhouse"
	"github.com/causeway/causeway/migrations/migrationstest"
)

func TestClickHouseContract(t *testing.T) {
	t.Parallel()
	analyticstest.Run(t, func(t *testing.T) analytics.Store {
		url := migrationstest.ClickHouseURL(t)
		s, err := clickhouse.Open(context.Background(), url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		// Opening twice proves the migrations idempotent.
		again, err := clickhouse.Open(context.Background(), url)
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
	opts, err := ch.ParseDSN(url)
	require.NoError(t, err)
	opts.Protocol = ch.Native
	conn, err := ch.Open(opts)
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

// A paced insert (the pipeline's) stores a batch in parts, yielding between them, and still
// stores each row once, a retried part included.
func TestPacedInsertStoresEachRowOnce(t *testing.T) {
	t.Parallel()
	s, err := clickhouse.Open(context.Background(), migrationstest.ClickHouseURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	analyticstest.PacedInsert(t, s)
}
