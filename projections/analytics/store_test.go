package analytics_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/migrations/migrationstest"
	"github.com/causeway/causeway/projections/analytics"
	"github.com/causeway/causeway/projections/analytics/analyticstest"
)

func TestSQLiteContract(t *testing.T) {
	analyticstest.Run(t, func(t *testing.T) analytics.Store {
		s, err := analytics.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestClickHouseContract(t *testing.T) {
	analyticstest.Run(t, func(t *testing.T) analytics.Store {
		url := migrationstest.ClickHouseURL(t)
		s, err := analytics.OpenClickHouse(context.Background(), url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		// Opening twice proves the migrations idempotent.
		again, err := analytics.OpenClickHouse(context.Background(), url)
		require.NoError(t, err)
		require.NoError(t, again.Close())
		return s
	})
}
