package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/analyticstest"
	"github.com/causeway/causeway/analytics/sqlite"
)

func open(t *testing.T) analytics.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSQLiteContract(t *testing.T) {
	t.Parallel()
	analyticstest.Run(t, open)
}

// A paced insert (the pipeline's) stores a batch in parts, yielding between them, and still
// stores each row once, a retried part included.
func TestPacedInsertStoresEachRowOnce(t *testing.T) {
	t.Parallel()
	analyticstest.PacedInsert(t, open(t))
}
