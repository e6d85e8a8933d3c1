package analytics_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway"
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

// A paced insert (the pipeline's) stores a batch in parts, yielding between them, and still
// stores each row once, a retried part included.
func TestPacedInsertStoresEachRowOnce(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) analytics.Store{
		"sqlite": func(t *testing.T) analytics.Store {
			s, err := analytics.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
			require.NoError(t, err)
			return s
		},
		"clickhouse": func(t *testing.T) analytics.Store {
			s, err := analytics.OpenClickHouse(context.Background(), migrationstest.ClickHouseURL(t))
			require.NoError(t, err)
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := open(t)
			t.Cleanup(func() { _ = store.Close() })
			const org = "org-paced"
			rows := analyticstest.Rows()[:1300]
			for i := range rows {
				rows[i].OrganisationID = org
			}
			ctx := context.Background()
			yields := 0
			paced := store.(analytics.PacedWriter)
			require.NoError(t, paced.InsertPaced(ctx, rows, func() { yields++ }))
			require.NoError(t, paced.InsertPaced(ctx, rows[500:900], func() {}), "a retried part")
			assert.Greater(t, yields, 10, "the insert yields as it goes")

			seen := map[string]int{}
			require.NoError(t, store.ScanLogs(ctx, analytics.Filter{OrganisationID: org}, func(r gateway.LogRecord) error {
				seen[r.ID]++
				return nil
			}))
			require.Len(t, seen, len(rows))
			for _, r := range rows {
				require.Equal(t, 1, seen[r.ID], r.ID)
			}
			for _, i := range []int{0, 511, 512, 1299} {
				got, ok, err := store.Log(ctx, org, rows[i].ID)
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, rows[i].Model, got.Model)
				assert.Equal(t, rows[i].TotalTokens, got.TotalTokens)
				assert.Equal(t, rows[i].RequestBodyEncoding, got.RequestBodyEncoding)
			}
		})
	}
}
