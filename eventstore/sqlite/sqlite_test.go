package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/eventstoretest"
	"github.com/causeway/causeway/eventstore/sqlite"
)

func openSQLite(t *testing.T) eventstore.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	return s
}

func TestSQLiteContract(t *testing.T) {
	eventstoretest.Run(t, openSQLite)
}

func TestSQLiteBackendSpecific(t *testing.T) {
	eventstoretest.RunSQL(t, openSQLite)
}

func TestSQLiteReopenKeepsEventsAndSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "events.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	res, err := s.Append(ctx, "a-1", eventstore.NoStream, eventstoretest.Events("E", 3)...)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	evs, err := s.ReadAll(ctx, eventstore.Start, 10)
	require.NoError(t, err)
	require.Len(t, evs, 3)
	require.Equal(t, res.Position, evs[2].Position)
	next, err := s.Append(ctx, "a-1", eventstore.Exact(2), eventstoretest.Events("E", 1)...)
	require.NoError(t, err)
	require.Greater(t, next.Position, res.Position)
}

// Two stores on one file stand for two processes: the second sees the first's appends
// through its poll, without any in-process wake-up.
func TestSQLiteSubscriptionSeesAnotherProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "events.db")
	writer, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer writer.Close()
	reader, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer reader.Close()
	eventstoretest.RequireCrossStoreDelivery(t, writer, reader)
}
