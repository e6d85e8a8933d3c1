package eventstoretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/eventstore"
)

// RunSQL holds the SQL backends to what they promise beyond the contract: they start empty,
// their positions are dense from 1, a conflict names the stream's actual revision, and a
// half-repeated append is refused rather than half-written.
func RunSQL(t *testing.T, open OpenFunc) {
	t.Run("FreshStoreIsEmptyAndPositionsAreDense", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		ctx := ctxT(t)
		evs, err := s.ReadAll(ctx, eventstore.Start, 10)
		require.NoError(t, err)
		require.Empty(t, evs)
		for i := 0; i < 5; i++ {
			_, err := s.Append(ctx, Stream("dense"), eventstore.NoStream, Events("E", 2)...)
			require.NoError(t, err)
		}
		evs, err = s.ReadAll(ctx, eventstore.Start, 100)
		require.NoError(t, err)
		require.Len(t, evs, 10)
		for i, ev := range evs {
			assert.Equal(t, eventstore.Position(i+1), ev.Position)
		}
	})
	t.Run("ConflictNamesTheActualRevision", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		ctx := ctxT(t)
		stream := Stream("conflict")
		_, err := s.Append(ctx, stream, eventstore.NoStream, Events("E", 4)...)
		require.NoError(t, err)
		_, err = s.Append(ctx, stream, eventstore.Exact(1), Events("E", 1)...)
		var wev *eventstore.WrongExpectedVersionError
		require.True(t, errors.As(err, &wev), "got %v", err)
		assert.Equal(t, stream, wev.Stream)
		assert.True(t, wev.ActualExists)
		assert.Equal(t, uint64(3), wev.Actual)
		assert.Contains(t, err.Error(), "expected revision 1, stream is at revision 3")

		_, err = s.Append(ctx, Stream("conflict"), eventstore.StreamExists, Events("E", 1)...)
		require.True(t, errors.As(err, &wev))
		assert.False(t, wev.ActualExists)
	})
	t.Run("PartialRepeatIsRefusedWhole", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		ctx := ctxT(t)
		stream := Stream("partial")
		evs := Events("E", 2)
		_, err := s.Append(ctx, stream, eventstore.NoStream, evs...)
		require.NoError(t, err)

		mixed := append([]eventstore.EventData{evs[1]}, Events("New", 1)...)
		_, err = s.Append(ctx, stream, eventstore.Any, mixed...)
		require.ErrorIs(t, err, eventstore.ErrDuplicateEventID)
		_, err = s.Append(ctx, Stream("other"), eventstore.Any, evs...)
		require.ErrorIs(t, err, eventstore.ErrDuplicateEventID, "the same ids in another stream")
		reordered := []eventstore.EventData{evs[1], evs[0]}
		_, err = s.Append(ctx, stream, eventstore.Any, reordered...)
		require.ErrorIs(t, err, eventstore.ErrDuplicateEventID, "the same ids in another order")

		all, err := s.ReadAll(ctx, eventstore.Start, 100)
		require.NoError(t, err)
		assert.Len(t, all, 2, "nothing of the refused appends was written")
	})
	t.Run("CancelledContextIsReturnedAsItIs", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := s.Append(ctx, Stream("cancel"), eventstore.Any, Events("E", 1)...)
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.ReadAll(ctx, eventstore.Start, 1)
		require.ErrorIs(t, err, context.Canceled)
	})
}

// RequireCrossStoreDelivery subscribes through reader and appends through writer, two stores
// on the same database standing for two processes, and requires every event to arrive within
// a second of its append.
func RequireCrossStoreDelivery(t *testing.T, writer, reader eventstore.Store) {
	ctx := ctxT(t)
	m, err := writer.Append(ctx, Stream("marker"), eventstore.NoStream, Events("Marker", 1)...)
	require.NoError(t, err)
	sub, err := reader.Subscribe(ctx, m.Position)
	require.NoError(t, err)
	defer sub.Close()
	for i := 0; i < 20; i++ {
		ev := Events("Cross", 1)
		_, err := writer.Append(ctx, Stream("cross"), eventstore.NoStream, ev...)
		require.NoError(t, err)
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		got, err := sub.Recv(rctx)
		cancel()
		require.NoError(t, err, "event %d did not reach the other store within a second", i)
		require.Equal(t, ev[0].ID, got.ID)
	}
}
