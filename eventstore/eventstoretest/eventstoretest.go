// Package eventstoretest is the contract suite every eventstore backend is held to: one
// Run(t, open) called from each backend's tests. It imports only the eventstore contract,
// testify and the standard library.
//
// The suite makes no assumption that the store starts empty (an EventStoreDB server is
// shared between runs): every test writes to streams of its own and filters the global
// stream down to them.
package eventstoretest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/eventstore"
)

// OpenFunc returns a store for one test; the suite closes it.
type OpenFunc func(t *testing.T) eventstore.Store

// Run runs the whole contract against the backend that open returns.
func Run(t *testing.T, open OpenFunc) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s eventstore.Store)
	}{
		{"ExpectedRevisionMatrix", testExpectedRevisionMatrix},
		{"AppendIsAtomicAndOrdered", testAppendIsAtomicAndOrdered},
		{"InvalidAppendsAreRefused", testInvalidAppends},
		{"IdempotentRetryByEventID", testIdempotentRetry},
		{"EnvelopeRoundTrips", testEnvelopeRoundTrips},
		{"ReadStreamForwardsAndBackwards", testReadStream},
		{"ReadAllFromPositionIsExclusive", testReadAll},
		{"SubscribeDeliversHistoryThenLive", testSubscribeHistoryThenLive},
		{"SubscriptionCloseAndCancel", testSubscriptionCloseAndCancel},
		{"ConcurrentAppendsSameRevision", testConcurrentAppendsSameRevision},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

// Stream returns a stream name no other test uses.
func Stream(prefix string) string { return prefix + "-" + uuid.NewString() }

// Events builds n events of type typ whose data records their index.
func Events(typ string, n int) []eventstore.EventData {
	out := make([]eventstore.EventData, n)
	for i := range out {
		out[i] = eventstore.EventData{
			ID:            uuid.New(),
			Type:          typ,
			SchemaVersion: 1,
			Data:          json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)),
			Metadata:      eventstore.Metadata{ActorID: "tester", ActorKind: eventstore.ActorSystem},
		}
	}
	return out
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testExpectedRevisionMatrix(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	existing := Stream("matrix")
	res, err := s.Append(ctx, existing, eventstore.NoStream, Events("Seeded", 3)...)
	require.NoError(t, err)
	require.Equal(t, uint64(2), res.NextRevision)
	const n = 2 // the existing stream's last revision

	cases := []struct {
		name     string
		missing  bool // append to a stream with no events
		expected eventstore.ExpectedRevision
		ok       bool
	}{
		{"NoStream on a missing stream", true, eventstore.NoStream, true},
		{"NoStream on an existing stream", false, eventstore.NoStream, false},
		{"StreamExists on a missing stream", true, eventstore.StreamExists, false},
		{"StreamExists on an existing stream", false, eventstore.StreamExists, true},
		{"Any on a missing stream", true, eventstore.Any, true},
		{"Any on an existing stream", false, eventstore.Any, true},
		{"Exact N-1", false, eventstore.Exact(n - 1), false},
		{"Exact N+1", false, eventstore.Exact(n + 1), false},
		{"Exact 0 on a missing stream", true, eventstore.Exact(0), false},
		{"Exact N", false, eventstore.Exact(n), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream := Stream("matrix")
			if !tc.missing {
				_, err := s.Append(ctx, stream, eventstore.NoStream, Events("Seeded", n+1)...)
				require.NoError(t, err)
			}
			before := streamLen(t, s, stream)
			res, err := s.Append(ctx, stream, tc.expected, Events("Tried", 1)...)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, uint64(before), res.NextRevision, "revision of the appended event")
				assert.Equal(t, before+1, streamLen(t, s, stream))
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, eventstore.ErrWrongExpectedVersion), "want ErrWrongExpectedVersion, got %v", err)
			assert.Equal(t, before, streamLen(t, s, stream), "a refused append writes nothing")
		})
	}
}

func testAppendIsAtomicAndOrdered(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	stream := Stream("atomic")
	evs := Events("Batch", 10)
	res, err := s.Append(ctx, stream, eventstore.NoStream, evs...)
	require.NoError(t, err)
	assert.Equal(t, uint64(9), res.NextRevision)

	got, err := s.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 10)
	for i, ev := range got {
		assert.Equal(t, evs[i].ID, ev.ID)
		assert.Equal(t, uint64(i), ev.Revision)
		if i > 0 {
			assert.Greater(t, ev.Position, got[i-1].Position, "positions grow within a batch")
		}
	}
	assert.Equal(t, res.Position, got[9].Position, "the result names the last event's position")

	// A batch refused on its condition leaves no trace of any of its events.
	_, err = s.Append(ctx, stream, eventstore.Exact(3), Events("Refused", 5)...)
	require.ErrorIs(t, err, eventstore.ErrWrongExpectedVersion)
	assert.Equal(t, 10, streamLen(t, s, stream))
}

func testInvalidAppends(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	id := uuid.New()
	cases := []struct {
		name     string
		stream   string
		expected eventstore.ExpectedRevision
		events   []eventstore.EventData
	}{
		{"empty stream name", "", eventstore.Any, Events("X", 1)},
		{"unset expected revision", Stream("invalid"), eventstore.ExpectedRevision{}, Events("X", 1)},
		{"no events", Stream("invalid"), eventstore.Any, nil},
		{"nil event id", Stream("invalid"), eventstore.Any, []eventstore.EventData{{Type: "X"}}},
		{"no event type", Stream("invalid"), eventstore.Any, []eventstore.EventData{{ID: uuid.New()}}},
		{"repeated id in one append", Stream("invalid"), eventstore.Any, []eventstore.EventData{{ID: id, Type: "X"}, {ID: id, Type: "X"}}},
		{"data that is not JSON", Stream("invalid"), eventstore.Any, []eventstore.EventData{{ID: uuid.New(), Type: "X", Data: json.RawMessage("{not json")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(ctx, tc.stream, tc.expected, tc.events...)
			require.ErrorIs(t, err, eventstore.ErrInvalidArgument)
		})
	}
}

func testIdempotentRetry(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	stream := Stream("idem")
	evs := Events("Created", 3)
	first, err := s.Append(ctx, stream, eventstore.NoStream, evs...)
	require.NoError(t, err)

	// The client did not see the answer and retries with the same condition and ids.
	again, err := s.Append(ctx, stream, eventstore.NoStream, evs...)
	require.NoError(t, err, "a retry of a successful append succeeds")
	assert.Equal(t, first.NextRevision, again.NextRevision)
	assert.Equal(t, 3, streamLen(t, s, stream), "and writes nothing twice")

	_, err = s.Append(ctx, stream, eventstore.Any, evs...)
	require.NoError(t, err)
	assert.Equal(t, 3, streamLen(t, s, stream))

	// A single-event command retried after success.
	one := Events("Renamed", 1)
	_, err = s.Append(ctx, stream, eventstore.Exact(2), one...)
	require.NoError(t, err)
	_, err = s.Append(ctx, stream, eventstore.Exact(2), one...)
	require.NoError(t, err)
	assert.Equal(t, 4, streamLen(t, s, stream))
}

func testEnvelopeRoundTrips(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	stream := Stream("apikey")
	ev := eventstore.EventData{
		ID:            uuid.New(),
		Type:          "ApiKeyCreated",
		SchemaVersion: 2,
		Data:          json.RawMessage(`{"name":"ci key","scopes":["logs.view"],"n":1.5,"unicode":"café ✓"}`),
		Metadata: eventstore.Metadata{
			ActorID: "user-1", ActorKind: eventstore.ActorUser, OrganisationID: "org-1",
			WorkspaceID: "ws-1", RequestID: "req-1", ClientIP: "203.0.113.7", UserAgent: "curl/8",
			CorrelationID: "corr-1", CausationID: "cause-1", Extra: map[string]string{"method": "POST"},
		},
	}
	before := time.Now().Add(-time.Minute)
	res, err := s.Append(ctx, stream, eventstore.NoStream, ev)
	require.NoError(t, err)

	got, err := s.ReadStream(ctx, stream, eventstore.Forwards, 0, 1)
	require.NoError(t, err)
	require.Len(t, got, 1)
	r := got[0]
	assert.Equal(t, ev.ID, r.ID)
	assert.Equal(t, stream, r.Stream)
	assert.Equal(t, uint64(0), r.Revision)
	assert.Equal(t, res.Position, r.Position)
	assert.Greater(t, r.Position, eventstore.Start)
	assert.Equal(t, ev.Type, r.Type)
	assert.Equal(t, 2, r.SchemaVersion)
	assert.JSONEq(t, string(ev.Data), string(r.Data))
	assert.Equal(t, ev.Metadata, r.Metadata)
	assert.True(t, r.RecordedAt.After(before) && r.RecordedAt.Before(time.Now().Add(time.Minute)),
		"recorded time %v is about now", r.RecordedAt)
}

func testReadStream(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	stream := Stream("read")
	_, err := s.Append(ctx, stream, eventstore.NoStream, Events("E", 10)...)
	require.NoError(t, err)

	revs := func(evs []eventstore.RecordedEvent) []uint64 {
		out := make([]uint64, len(evs))
		for i, e := range evs {
			out[i] = e.Revision
		}
		return out
	}
	cases := []struct {
		name string
		dir  eventstore.Direction
		from uint64
		max  int
		want []uint64
	}{
		{"forwards, all", eventstore.Forwards, 0, 0, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"forwards from 4, limit 3", eventstore.Forwards, 4, 3, []uint64{4, 5, 6}},
		{"forwards, limit past the end", eventstore.Forwards, 8, 100, []uint64{8, 9}},
		{"forwards from past the end", eventstore.Forwards, 10, 5, []uint64{}},
		{"backwards from the end, limit 3", eventstore.Backwards, eventstore.StreamEnd, 3, []uint64{9, 8, 7}},
		{"backwards from 2", eventstore.Backwards, 2, 0, []uint64{2, 1, 0}},
		{"backwards from 5, limit 2", eventstore.Backwards, 5, 2, []uint64{5, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ReadStream(ctx, stream, tc.dir, tc.from, tc.max)
			require.NoError(t, err)
			assert.Equal(t, tc.want, revs(got))
		})
	}

	_, err = s.ReadStream(ctx, Stream("missing"), eventstore.Forwards, 0, 0)
	require.ErrorIs(t, err, eventstore.ErrStreamNotFound)
	_, err = s.ReadStream(ctx, Stream("missing"), eventstore.Backwards, eventstore.StreamEnd, 1)
	require.ErrorIs(t, err, eventstore.ErrStreamNotFound)
}

func testReadAll(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	a, b := Stream("all-a"), Stream("all-b")
	var appended []eventstore.RecordedEvent
	for i := 0; i < 6; i++ {
		stream := a
		if i%2 == 1 {
			stream = b
		}
		ev := Events("Interleaved", 1)
		res, err := s.Append(ctx, stream, eventstore.Any, ev...)
		require.NoError(t, err)
		appended = append(appended, eventstore.RecordedEvent{ID: ev[0].ID, Stream: stream, Position: res.Position})
	}

	// From the first event's position: the first is excluded, the other five follow in order.
	got := readAllOf(t, s, appended[0].Position, map[string]bool{a: true, b: true}, 5)
	require.Len(t, got, 5)
	for i, ev := range got {
		assert.Equal(t, appended[i+1].ID, ev.ID)
		assert.Equal(t, appended[i+1].Position, ev.Position)
		assert.Equal(t, appended[i+1].Stream, ev.Stream)
	}

	// A page is at most max events, every one after from, in strictly growing order.
	page, err := s.ReadAll(ctx, appended[0].Position, 2)
	require.NoError(t, err)
	require.Len(t, page, 2)
	assert.Greater(t, page[0].Position, appended[0].Position)
	assert.Greater(t, page[1].Position, page[0].Position)

	// From the last position there is nothing of ours.
	tail := readAllOf(t, s, appended[5].Position, map[string]bool{a: true, b: true}, 0)
	assert.Empty(t, tail)

	_, err = s.ReadAll(ctx, eventstore.Start, 0)
	require.ErrorIs(t, err, eventstore.ErrInvalidArgument)
}

// readAllOf pages through ReadAll from position from to the head and keeps the events of the
// given streams, checking on the way that positions only grow.
func readAllOf(t *testing.T, s eventstore.Store, from eventstore.Position, streams map[string]bool, want int) []eventstore.RecordedEvent {
	t.Helper()
	ctx := ctxT(t)
	var out []eventstore.RecordedEvent
	last := from
	for {
		page, err := s.ReadAll(ctx, last, 100)
		require.NoError(t, err)
		for _, ev := range page {
			require.Greater(t, ev.Position, last, "ReadAll positions grow and exclude the start")
			last = ev.Position
			if streams[ev.Stream] {
				out = append(out, ev)
			}
		}
		if len(page) < 100 {
			return out
		}
		if want > 0 && len(out) >= want {
			return out
		}
	}
}

func testSubscribeHistoryThenLive(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	marker := Stream("marker")
	m, err := s.Append(ctx, marker, eventstore.NoStream, Events("Marker", 1)...)
	require.NoError(t, err)

	streams := []string{Stream("sub-a"), Stream("sub-b"), Stream("sub-c")}
	ours := map[string]bool{}
	for _, st := range streams {
		ours[st] = true
	}
	var want []uuid.UUID
	appendSome := func(n int) {
		for i := 0; i < n; i++ {
			ev := Events("Sub", 1+i%3)
			_, err := s.Append(ctx, streams[i%len(streams)], eventstore.Any, ev...)
			require.NoError(t, err)
			for _, e := range ev {
				want = append(want, e.ID)
			}
		}
	}
	appendSome(30) // history

	sub, err := s.Subscribe(ctx, m.Position)
	require.NoError(t, err)
	defer sub.Close()

	var (
		got  []uuid.UUID
		last = m.Position
	)
	recvOurs := func(n int) {
		for len(got) < n {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			ev, err := sub.Recv(rctx)
			cancel()
			require.NoError(t, err, "received %d of %d", len(got), n)
			require.Greater(t, ev.Position, last, "subscription delivers in position order, start excluded")
			last = ev.Position
			if ours[ev.Stream] {
				got = append(got, ev.ID)
			}
		}
	}
	recvOurs(len(want))

	// Live: appended from another goroutine while the subscription is waiting.
	const live = 20
	liveIDs := make(chan uuid.UUID, live)
	go func() {
		defer close(liveIDs)
		for i := 0; i < live; i++ {
			ev := Events("Live", 1)
			if _, err := s.Append(ctx, streams[i%3], eventstore.Any, ev...); err != nil {
				t.Errorf("live append: %v", err)
				return
			}
			liveIDs <- ev[0].ID
			time.Sleep(2 * time.Millisecond)
		}
	}()
	recvOurs(len(want) + live)
	for id := range liveIDs {
		want = append(want, id)
	}
	assert.Equal(t, want, got, "every event, in order, none missing or repeated")
}

func testSubscriptionCloseAndCancel(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	m, err := s.Append(ctx, Stream("marker"), eventstore.NoStream, Events("Marker", 1)...)
	require.NoError(t, err)

	sub, err := s.Subscribe(ctx, m.Position)
	require.NoError(t, err)
	rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = recvUntilQuiet(rctx, sub)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "Recv honours its context")
	require.NoError(t, sub.Close())
	_, err = sub.Recv(ctx)
	require.ErrorIs(t, err, eventstore.ErrClosed)

	// Cancelling the subscription's own context ends it too.
	sctx, scancel := context.WithCancel(ctx)
	sub2, err := s.Subscribe(sctx, m.Position)
	require.NoError(t, err)
	scancel()
	deadline := time.After(5 * time.Second)
	for {
		_, err := sub2.Recv(ctx)
		if err != nil {
			assert.True(t, errors.Is(err, context.Canceled) || errors.Is(err, eventstore.ErrClosed), "got %v", err)
			break
		}
		select {
		case <-deadline:
			t.Fatal("subscription did not end after its context was cancelled")
		default:
		}
	}
	_ = sub2.Close()
}

// recvUntilQuiet drains events appended by other tests until Recv blocks past ctx.
func recvUntilQuiet(ctx context.Context, sub eventstore.Subscription) (int, error) {
	n := 0
	for {
		if _, err := sub.Recv(ctx); err != nil {
			return n, err
		}
		n++
	}
}

func testConcurrentAppendsSameRevision(t *testing.T, s eventstore.Store) {
	ctx := ctxT(t)
	stream := Stream("race")
	_, err := s.Append(ctx, stream, eventstore.NoStream, Events("Created", 1)...)
	require.NoError(t, err)

	const writers = 100
	var (
		wg           sync.WaitGroup
		mu           sync.Mutex
		ok, conflict int
		other        []error
		start        = make(chan struct{})
	)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := s.Append(ctx, stream, eventstore.Exact(0), Events("Updated", 1)...)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, eventstore.ErrWrongExpectedVersion):
				conflict++
			default:
				other = append(other, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Empty(t, other, "no errors but the conflict")
	assert.Equal(t, 1, ok, "exactly one writer wins")
	assert.Equal(t, writers-1, conflict, "every other writer gets the conflict error")
	assert.Equal(t, 2, streamLen(t, s, stream), "the stream grows by one")
}

func streamLen(t *testing.T, s eventstore.Store, stream string) int {
	t.Helper()
	evs, err := s.ReadStream(ctxT(t), stream, eventstore.Forwards, 0, 0)
	if errors.Is(err, eventstore.ErrStreamNotFound) {
		return 0
	}
	require.NoError(t, err)
	return len(evs)
}
