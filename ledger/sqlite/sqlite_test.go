package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/ledger"
	"github.com/causeway/causeway/ledger/ledgertest"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	require.NoError(t, err)
	return s
}

func TestContract(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledger.Store {
		return open(t, filepath.Join(t.TempDir(), "ledger.db"))
	})
}

// Two stores on one file stand for two processes sharing it.
func TestShared(t *testing.T) {
	ledgertest.RunShared(t, func(t *testing.T) (ledger.Store, ledger.Store) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		return open(t, path), open(t, path)
	})
}

func TestReopenKeepsRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "ledger.db")
	s := open(t, path)
	require.NoError(t, s.Add(ctx, "b1", []ledger.Row{{Budget: "api_key:k", Period: "p", Used: 2.5}}))
	require.NoError(t, s.Close())

	s = open(t, path)
	defer s.Close()
	require.NoError(t, s.Add(ctx, "b1", []ledger.Row{{Budget: "api_key:k", Period: "p", Used: 2.5}}), "the batch is remembered")
	rows, err := s.Load(ctx)
	require.NoError(t, err)
	require.Equal(t, []ledger.Row{{Budget: "api_key:k", Period: "p", Used: 2.5}}, rows)
}

func TestAddPrunesOldBatchIDs(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "ledger.db"))
	defer s.Close()
	row := []ledger.Row{{Budget: "api_key:k", Period: "p", Used: 1}}
	require.NoError(t, s.Add(ctx, "recent", row))
	_, err := s.db.ExecContext(ctx, `INSERT INTO usage_ledger_batches (id, applied_at) VALUES ('old', ?)`,
		time.Now().Add(-keepBatches-time.Minute).UnixNano())
	require.NoError(t, err)

	require.NoError(t, s.Add(ctx, "b2", row))
	require.Equal(t, []string{"b2", "old", "recent"}, batchIDs(t, s), "pruned at most once an hour")
	s.lastPrune = time.Time{}
	require.NoError(t, s.Add(ctx, "b3", row))
	require.Equal(t, []string{"b2", "b3", "recent"}, batchIDs(t, s))
}

func batchIDs(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.Query(`SELECT id FROM usage_ledger_batches ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	return ids
}
