package esdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	esdbclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/esdb"
	"github.com/causeway/causeway/eventstore/eventstoretest"
)

// The contract run against a real EventStoreDB. Everything below it runs without one: the
// client is pointed at a closed port, or at esdbFake, an in-memory server that speaks the
// streams gRPC protocol on 127.0.0.1.

func TestESDBContract(t *testing.T) {
	rawURL := os.Getenv("EVENTSTORE_URL")
	if rawURL == "" {
		t.Skip("EVENTSTORE_URL is unset: start EventStoreDB and set it to run this contract run")
	}
	eventstoretest.Run(t, func(t *testing.T) eventstore.Store {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := esdb.Open(ctx, rawURL)
		require.NoError(t, err)
		require.NoError(t, s.Ping(ctx))
		return s
	})
}

// TestESDBContractOnFakeServer holds the adapter to the contract against esdbFake. It proves
// the adapter's own logic (paging, filtering, exclusive starts, error mapping, subscription
// hand-over) on the server behaviour the fake models; TestESDBContract is the real check.
func TestESDBContractOnFakeServer(t *testing.T) {
	srv := startESDBFake(t)
	eventstoretest.Run(t, func(t *testing.T) eventstore.Store {
		return openTestESDB(t, srv.url())
	})
}

const esdbTestPassword = "s3cret-pw"

func TestESDBOpenURL(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		url  string
		ok   bool
	}{
		{"esdb", "esdb://127.0.0.1:1?tls=false", true},
		{"esdb with credentials", "esdb://admin:" + esdbTestPassword + "@127.0.0.1:1?tls=false", true},
		{"esdb+discover", "esdb+discover://127.0.0.1:1?tls=false", true},
		{"kurrentdb", "kurrentdb://127.0.0.1:1?tls=false", true},
		{"kurrentdb+discover", "kurrentdb+discover://127.0.0.1:1?tls=false", true},
		{"kurrent", "kurrent://127.0.0.1:1?tls=false", true},
		{"kurrent+discover", "kurrent+discover://127.0.0.1:1?tls=false", true},
		{"scheme is case-insensitive", "KurrentDB://127.0.0.1:1?tls=false", true},
		{"gossip seeds", "esdb://127.0.0.1:1,127.0.0.1:2?tls=false", true},
		{"no scheme", "127.0.0.1:2113", false},
		{"other scheme", "http://127.0.0.1:2113", false},
		{"bad port", "esdb://admin:" + esdbTestPassword + "@127.0.0.1:port", false},
		{"bad port in a seed", "kurrentdb://admin:" + esdbTestPassword + "@127.0.0.1:1,127.0.0.1:x", false},
		{"control character", "esdb://admin:" + esdbTestPassword + "@127.0.0.1:1\x7f", false},
		{"path", "esdb://admin:" + esdbTestPassword + "@127.0.0.1:1/db", false},
		{"empty user name", "esdb://:" + esdbTestPassword + "@127.0.0.1:1", false},
		{"bad setting", "esdb://admin:" + esdbTestPassword + "@127.0.0.1:1?tls=maybe", false},
		{"no host", "kurrent://", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := esdb.Open(ctx, tc.url)
			if tc.ok {
				require.NoError(t, err)
				require.IsType(t, &esdb.Store{}, s)
				require.NoError(t, s.Close())
				return
			}
			require.ErrorIs(t, err, eventstore.ErrInvalidArgument)
			assert.Nil(t, s, "a failed open returns a nil Store, not a typed nil")
			assert.NotContains(t, err.Error(), esdbTestPassword)
		})
	}
	// That open.Open dispatches every one of these spellings here is TestESDBOpenURL in
	// eventstore/open.
}

// esdbUnreachableURL names a closed local port, with discovery cut to one quick attempt.
const esdbUnreachableURL = "esdb://admin:" + esdbTestPassword + "@127.0.0.1:1?tls=false&maxDiscoverAttempts=1&discoveryInterval=100&gossipTimeout=1"

func TestESDBUnreachableServer(t *testing.T) {
	s := openTestESDB(t, esdbUnreachableURL)
	evs := eventstoretest.Events("Tried", 1)
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Append", func(ctx context.Context) error {
			_, err := s.Append(ctx, eventstoretest.Stream("down"), eventstore.Any, evs...)
			return err
		}},
		{"ReadStream", func(ctx context.Context) error {
			_, err := s.ReadStream(ctx, "down", eventstore.Forwards, 0, 0)
			return err
		}},
		{"ReadAll", func(ctx context.Context) error {
			_, err := s.ReadAll(ctx, eventstore.Start, 10)
			return err
		}},
		{"Ping", func(ctx context.Context) error { return s.Ping(ctx) }},
		{"Subscribe", func(ctx context.Context) error {
			sub, err := s.Subscribe(ctx, eventstore.Start)
			if err == nil {
				_ = sub.Close()
			}
			return err
		}},
	}
	// Twice round: the first failed discovery leaves the library's client dead for good,
	// and the store must replace it rather than answer "closed" from then on.
	for round := 1; round <= 2; round++ {
		for _, c := range calls {
			t.Run(fmt.Sprintf("%s/%d", c.name, round), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				start := time.Now()
				err := c.call(ctx)
				require.ErrorIs(t, err, eventstore.ErrUnavailable)
				assert.Less(t, time.Since(start), 3*time.Second, "promptly, not at the context deadline")
				esdbAssertNoClientTypes(t, err)
				assert.NotContains(t, err.Error(), esdbTestPassword)
			})
		}
	}

	t.Run("arguments are checked before the server", func(t *testing.T) {
		ctx := context.Background()
		_, err := s.Append(ctx, "", eventstore.Any, evs...)
		require.ErrorIs(t, err, eventstore.ErrInvalidArgument)
		_, err = s.Append(ctx, "x", eventstore.ExpectedRevision{}, evs...)
		require.ErrorIs(t, err, eventstore.ErrInvalidArgument)
		_, err = s.ReadAll(ctx, eventstore.Start, 0)
		require.ErrorIs(t, err, eventstore.ErrInvalidArgument)
		_, err = s.ReadStream(ctx, "", eventstore.Forwards, 0, 0)
		require.ErrorIs(t, err, eventstore.ErrInvalidArgument)
	})

	t.Run("a cancelled context stays the context's error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := s.Append(ctx, "x", eventstore.Any, evs...)
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, s.Ping(ctx), context.Canceled)
		_, err = s.ReadAll(ctx, eventstore.Start, 1)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("closed", func(t *testing.T) {
		require.NoError(t, s.Close())
		require.NoError(t, s.Close(), "Close twice is harmless")
		ctx := context.Background()
		_, err := s.Append(ctx, "x", eventstore.Any, evs...)
		require.ErrorIs(t, err, eventstore.ErrClosed)
		require.ErrorIs(t, s.Ping(ctx), eventstore.ErrClosed)
		_, err = s.Subscribe(ctx, eventstore.Start)
		require.ErrorIs(t, err, eventstore.ErrClosed)
	})
}

func TestESDBExpectedRevisionMapping(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)
	stream := eventstoretest.Stream("expect")
	_, err := s.Append(ctx, stream, eventstore.NoStream, eventstoretest.Events("Seeded", 8)...)
	require.NoError(t, err)

	cases := []struct {
		expected eventstore.ExpectedRevision
		wire     string
	}{
		{eventstore.Any, "any"},
		{eventstore.NoStream, "no_stream"},
		{eventstore.StreamExists, "stream_exists"},
		{eventstore.Exact(0), "revision 0"},
		{eventstore.Exact(7), "revision 7"},
		{eventstore.Exact(1 << 40), "revision 1099511627776"},
	}
	for _, tc := range cases {
		t.Run(tc.expected.String(), func(t *testing.T) {
			srv.takeExpectations()
			_, _ = s.Append(ctx, stream, tc.expected, eventstoretest.Events("Tried", 1)...)
			assert.Equal(t, []string{tc.wire}, srv.takeExpectations())
		})
	}
}

func TestESDBErrorMapping(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)
	stream := eventstoretest.Stream("errors")
	_, err := s.Append(ctx, stream, eventstore.NoStream, eventstoretest.Events("Seeded", 3)...)
	require.NoError(t, err)

	t.Run("wrong expected version on an existing stream", func(t *testing.T) {
		_, err := s.Append(ctx, stream, eventstore.Exact(5), eventstoretest.Events("Tried", 1)...)
		require.ErrorIs(t, err, eventstore.ErrWrongExpectedVersion)
		var wrong *eventstore.WrongExpectedVersionError
		require.ErrorAs(t, err, &wrong)
		assert.Equal(t, eventstore.WrongExpectedVersionError{
			Stream: stream, Expected: eventstore.Exact(5), Actual: 2, ActualExists: true,
		}, *wrong)
	})
	t.Run("wrong expected version on a missing stream", func(t *testing.T) {
		missing := eventstoretest.Stream("missing")
		_, err := s.Append(ctx, missing, eventstore.StreamExists, eventstoretest.Events("Tried", 1)...)
		var wrong *eventstore.WrongExpectedVersionError
		require.ErrorAs(t, err, &wrong)
		assert.Equal(t, eventstore.WrongExpectedVersionError{
			Stream: missing, Expected: eventstore.StreamExists, Actual: 0, ActualExists: false,
		}, *wrong)
	})
	t.Run("missing stream", func(t *testing.T) {
		_, err := s.ReadStream(ctx, eventstoretest.Stream("missing"), eventstore.Backwards, eventstore.StreamEnd, 1)
		require.ErrorIs(t, err, eventstore.ErrStreamNotFound)
		esdbAssertNoClientTypes(t, err)
	})

	deleted := metadata.Pairs("exception", "stream-deleted", "stream-name", stream)
	cases := []struct {
		name    string
		fault   esdbFakeFault
		want    error // nil: none of the contract's errors
		message string
	}{
		{"unavailable", esdbFakeFault{err: status.Error(codes.Unavailable, "node is shutting down")}, eventstore.ErrUnavailable, "shutting down"},
		{"deadline", esdbFakeFault{err: status.Error(codes.DeadlineExceeded, "too slow")}, eventstore.ErrUnavailable, "too slow"},
		{"aborted", esdbFakeFault{err: status.Error(codes.Aborted, "timed out on the server")}, eventstore.ErrUnavailable, "timed out"},
		{"not found", esdbFakeFault{err: status.Error(codes.NotFound, "no such stream")}, eventstore.ErrStreamNotFound, stream},
		{"stream deleted", esdbFakeFault{err: status.Error(codes.FailedPrecondition, "deleted"), trailer: deleted}, eventstore.ErrStreamNotFound, stream},
		{"access denied", esdbFakeFault{err: status.Error(codes.PermissionDenied, "ops only")}, nil, "ops only"},
		{"internal", esdbFakeFault{err: status.Error(codes.Internal, "boom")}, nil, "boom"},
	}
	for _, tc := range cases {
		t.Run("append "+tc.name, func(t *testing.T) {
			srv.setFaults(&tc.fault, nil)
			defer srv.setFaults(nil, nil)
			_, err := s.Append(ctx, stream, eventstore.Any, eventstoretest.Events("Tried", 1)...)
			esdbCheckMapped(t, err, tc.want, tc.message)
		})
		t.Run("read "+tc.name, func(t *testing.T) {
			srv.setFaults(nil, &tc.fault)
			defer srv.setFaults(nil, nil)
			_, err := s.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
			esdbCheckMapped(t, err, tc.want, tc.message)
		})
	}

	// The store works again once the faults are gone.
	require.NoError(t, s.Ping(ctx))
	got, err := s.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
	require.NoError(t, err)
	assert.Len(t, got, 3)
}

func esdbCheckMapped(t *testing.T, err, want error, message string) {
	t.Helper()
	require.Error(t, err)
	if want != nil {
		require.ErrorIs(t, err, want)
	} else {
		for _, sentinel := range []error{eventstore.ErrUnavailable, eventstore.ErrStreamNotFound, eventstore.ErrWrongExpectedVersion, eventstore.ErrInvalidArgument} {
			assert.NotErrorIs(t, err, sentinel)
		}
	}
	assert.Contains(t, err.Error(), message)
	esdbAssertNoClientTypes(t, err)
}

func TestESDBMetadataRoundTrip(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)

	md := eventstore.Metadata{
		ActorID: "user-1", ActorKind: eventstore.ActorUser, OrganisationID: "org-1", WorkspaceID: "ws-1",
		RequestID: "req-1", ClientIP: "203.0.113.7", UserAgent: "curl/8", CorrelationID: "corr-1",
		CausationID: "cause-1", Extra: map[string]string{"method": "POST", "status": "201"},
	}
	cases := []struct {
		name    string
		version int
		md      eventstore.Metadata
		data    json.RawMessage
		want    int
	}{
		{"full envelope", 3, md, json.RawMessage(`{"k":"v"}`), 3},
		{"unset schema version is 1", 0, eventstore.Metadata{ActorKind: eventstore.ActorSystem}, json.RawMessage(`[1,2]`), 1},
		{"empty metadata and no data", 1, eventstore.Metadata{}, nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream := eventstoretest.Stream("meta")
			ev := eventstore.EventData{ID: uuid.New(), Type: "Happened", SchemaVersion: tc.version, Data: tc.data, Metadata: tc.md}
			_, err := s.Append(ctx, stream, eventstore.NoStream, ev)
			require.NoError(t, err)

			stored := srv.stored(stream)
			require.Len(t, stored, 1)
			assert.Equal(t, "application/json", stored[0].contentType)
			var onWire map[string]any
			require.NoError(t, json.Unmarshal(stored[0].meta, &onWire), "metadata is JSON")
			assert.EqualValues(t, tc.want, onWire["schema_version"])

			got, err := s.ReadStream(ctx, stream, eventstore.Forwards, 0, 1)
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tc.md, got[0].Metadata)
			assert.Equal(t, tc.want, got[0].SchemaVersion)
			if tc.data == nil {
				assert.JSONEq(t, "null", string(got[0].Data))
			} else {
				assert.JSONEq(t, string(tc.data), string(got[0].Data))
			}
		})
	}

	// Events written by other tools share the server: metadata that is not ours reads as an
	// empty envelope, not as an error.
	t.Run("foreign metadata", func(t *testing.T) {
		stream := eventstoretest.Stream("foreign")
		for _, meta := range [][]byte{nil, []byte("not json"), []byte(`{"schema_version":-4,"actor_id":7}`)} {
			srv.inject(stream, "ForeignEvent", []byte(`{}`), meta)
		}
		got, err := s.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
		require.NoError(t, err)
		require.Len(t, got, 3)
		for _, ev := range got {
			assert.Equal(t, eventstore.Metadata{}, ev.Metadata)
			assert.Equal(t, 1, ev.SchemaVersion)
		}
	})
}

func TestESDBReadAllSkipsSystemEventsAndStartsAfterFrom(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)

	a := srv.inject(eventstoretest.Stream("user"), "A", []byte(`{}`), nil)
	// More system events than one page of the adapter's reads, both kinds: a $ type in a user
	// stream, and a user type in a $ stream.
	for i := 0; i < 700; i++ {
		if i%2 == 0 {
			srv.inject("$stats-127.0.0.1:2113", "StatsCollected", []byte(`{}`), nil)
		} else {
			srv.inject("user-stream", "$metadata", []byte(`{}`), nil)
		}
	}
	b := srv.inject(eventstoretest.Stream("user"), "B", []byte(`{}`), nil)
	srv.inject("$$user-stream", "$metadata", []byte(`{}`), nil)
	c := srv.inject(eventstoretest.Stream("user"), "C", []byte(`{}`), nil)

	ids := func(evs []eventstore.RecordedEvent) []uuid.UUID {
		out := make([]uuid.UUID, len(evs))
		for i, ev := range evs {
			out[i] = ev.ID
		}
		return out
	}
	got, err := s.ReadAll(ctx, eventstore.Position(a.position), 2)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{b.id, c.id}, ids(got), "after A, skipping system events, up to max")
	assert.Equal(t, eventstore.Position(b.position), got[0].Position)

	got, err = s.ReadAll(ctx, eventstore.Position(a.position), 1)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{b.id}, ids(got))

	got, err = s.ReadAll(ctx, eventstore.Position(c.position), 10)
	require.NoError(t, err)
	assert.Empty(t, got, "nothing after the last event")

	got, err = s.ReadAll(ctx, eventstore.Start, 1000)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.id, b.id, c.id}, ids(got), "from Start: the user events only, seeded system events too are left out")
}

func TestESDBReadStreamPaging(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)
	stream := eventstoretest.Stream("long")
	const n = 1300 // more than two of the adapter's pages
	_, err := s.Append(ctx, stream, eventstore.NoStream, eventstoretest.Events("E", n)...)
	require.NoError(t, err)

	revs := func(from, to int) []uint64 { // inclusive, either direction
		var out []uint64
		for i := from; ; {
			out = append(out, uint64(i))
			if i == to {
				return out
			}
			if from < to {
				i++
			} else {
				i--
			}
		}
	}
	cases := []struct {
		name string
		dir  eventstore.Direction
		from uint64
		max  int
		want []uint64
	}{
		{"forwards, all", eventstore.Forwards, 0, 0, revs(0, n-1)},
		{"forwards from 1000, all", eventstore.Forwards, 1000, 0, revs(1000, n-1)},
		{"forwards from 100, 700", eventstore.Forwards, 100, 700, revs(100, 799)},
		{"backwards from the end, all", eventstore.Backwards, eventstore.StreamEnd, 0, revs(n-1, 0)},
		{"backwards from 600, 550", eventstore.Backwards, 600, 550, revs(600, 51)},
		{"backwards from 0", eventstore.Backwards, 0, 0, []uint64{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ReadStream(ctx, stream, tc.dir, tc.from, tc.max)
			require.NoError(t, err)
			out := make([]uint64, len(got))
			for i, ev := range got {
				out[i] = ev.Revision
			}
			assert.Equal(t, tc.want, out)
		})
	}
}

func TestESDBIdempotentRetryKeepsPosition(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)
	stream := eventstoretest.Stream("retry")
	evs := eventstoretest.Events("Created", 3)
	first, err := s.Append(ctx, stream, eventstore.NoStream, evs...)
	require.NoError(t, err)
	require.NotEqual(t, eventstore.Start, first.Position)

	// Like the server, the fake answers a retry with the revision but no position.
	again, err := s.Append(ctx, stream, eventstore.NoStream, evs...)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Len(t, srv.stored(stream), 3)
}

func TestESDBSubscriptionResubscribes(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)

	marker, err := s.Append(ctx, eventstoretest.Stream("marker"), eventstore.NoStream, eventstoretest.Events("Marker", 1)...)
	require.NoError(t, err)
	stream := eventstoretest.Stream("sub")
	var want []uuid.UUID
	skipped := map[eventstore.Position]bool{} // system events the adapter, not the server, leaves out
	appendSome := func(n int) {
		for i := 0; i < n; i++ {
			evs := eventstoretest.Events("Sub", 1+i%3)
			_, err := s.Append(ctx, stream, eventstore.Any, evs...)
			require.NoError(t, err)
			for _, ev := range evs {
				want = append(want, ev.ID)
			}
			switch i % 4 { // system events between ours
			case 0:
				srv.inject("$stats", "$statsCollected", []byte(`{}`), nil)
			case 1:
				ev := srv.inject("$projections-x", "ProjectionUpdated", []byte(`{}`), nil)
				skipped[eventstore.Position(ev.position)] = true
			}
		}
	}
	appendSome(15)

	// Every server subscription drops after 4 events, and the first two reopenings are
	// refused: the adapter must reopen from the last event it handed over, every time.
	srv.setSubscriptionFaults(4, 0)
	sub, err := s.Subscribe(ctx, eventstore.Position(marker.Position))
	require.NoError(t, err)
	defer sub.Close()
	srv.setSubscriptionFaults(4, 2)

	var (
		got       []uuid.UUID
		delivered = map[eventstore.Position]bool{eventstore.Position(marker.Position): true}
		last      = marker.Position
	)
	recv := func(n int) {
		for len(got) < n {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			ev, err := sub.Recv(rctx)
			cancel()
			require.NoError(t, err, "received %d of %d", len(got), n)
			require.Greater(t, ev.Position, last, "in order, none repeated, the start excluded")
			last = ev.Position
			delivered[ev.Position] = true
			got = append(got, ev.ID)
		}
	}
	recv(len(want))

	// Live events, with a drop while the subscription is idle.
	srv.dropSubscriptions()
	appendSome(10)
	recv(len(want))
	assert.Equal(t, want, got, "every event, in order, none missing or repeated")

	starts := srv.subscriptionStarts()
	require.Greater(t, len(starts), 5, "the subscription was reopened")
	assert.Equal(t, uint64(marker.Position), starts[0], "the first opening starts at from")
	for _, p := range starts[1:] {
		assert.True(t, delivered[eventstore.Position(p)] || skipped[eventstore.Position(p)],
			"reopened at %d, which is the last event handed over (or passed over)", p)
	}
}

func TestESDBSubscriptionSurvivesServerRestart(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)

	stream := eventstoretest.Stream("restart")
	before := eventstoretest.Events("Before", 3)
	_, err := s.Append(ctx, stream, eventstore.NoStream, before...)
	require.NoError(t, err)
	sub, err := s.Subscribe(ctx, eventstore.Start)
	require.NoError(t, err)
	defer sub.Close()

	recvOurs := func(n int) []uuid.UUID {
		var out []uuid.UUID
		for len(out) < n {
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			ev, err := sub.Recv(rctx)
			cancel()
			require.NoError(t, err)
			if ev.Stream == stream {
				out = append(out, ev.ID)
			}
		}
		return out
	}
	assert.Equal(t, esdbEventIDs(before), recvOurs(3))

	srv.stop()
	time.Sleep(700 * time.Millisecond) // the subscription drops and fails to reopen a few times
	srv.start(t)

	after := eventstoretest.Events("After", 2)
	require.Eventually(t, func() bool {
		_, err := s.Append(ctx, stream, eventstore.Exact(2), after...)
		return err == nil // a retry after an unseen success is recognised by the event ids
	}, 15*time.Second, 100*time.Millisecond, "appends work again once the server is back")
	assert.Equal(t, esdbEventIDs(after), recvOurs(2))
	require.NoError(t, s.Ping(ctx))
}

func TestESDBCloseEndsSubscriptionsAndCalls(t *testing.T) {
	srv := startESDBFake(t)
	s := openTestESDB(t, srv.url())
	ctx := esdbTestContext(t)

	sub, err := s.Subscribe(ctx, eventstore.Start)
	require.NoError(t, err)
	errs := make(chan error, 1)
	go func() {
		for {
			if _, err := sub.Recv(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, s.Close())
	select {
	case err := <-errs:
		require.ErrorIs(t, err, eventstore.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Recv did not end when the store closed")
	}
	_, err = s.Append(ctx, "x", eventstore.Any, eventstoretest.Events("Tried", 1)...)
	require.ErrorIs(t, err, eventstore.ErrClosed)
	require.NoError(t, sub.Close())
	_, err = sub.Recv(ctx)
	require.ErrorIs(t, err, eventstore.ErrClosed)
}

func esdbEventIDs(evs []eventstore.EventData) []uuid.UUID {
	out := make([]uuid.UUID, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func openTestESDB(t *testing.T, rawURL string) eventstore.Store {
	t.Helper()
	s, err := esdb.Open(context.Background(), rawURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func esdbTestContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// esdbAssertNoClientTypes checks that an error does not let callers reach the client's types.
func esdbAssertNoClientTypes(t *testing.T, err error) {
	t.Helper()
	var clientErr *esdbclient.Error
	assert.False(t, errors.As(err, &clientErr), "the client's error type leaks: %v", err)
	_, isStatus := status.FromError(err)
	assert.False(t, isStatus, "a gRPC status leaks: %v", err)
}

// esdbFake is an in-memory stand-in for EventStoreDB's streams service. It models what the
// adapter relies on: the expected-revision check, idempotency by event id (a retry is
// answered with the revision and no position), commit = prepare positions, reads of $all and
// subscriptions that include the event at their start position, server-side event-type
// filters, and missing streams answered with a StreamNotFound message. Faults and drops
// are injected by the tests.
type esdbFake struct {
	api.UnimplementedStreamsServer

	mu      sync.Mutex
	log     []*esdbFakeEvent
	streams map[string][]*esdbFakeEvent
	next    uint64        // the next position
	wake    chan struct{} // closed and replaced on every write, for live subscriptions
	drop    chan struct{} // closed and replaced by dropSubscriptions

	appendFault, readFault *esdbFakeFault
	dropAfter              int // a subscription fails after sending this many events (0: never)
	refuseSubs             int // the next refuseSubs subscriptions are refused
	expectations           []string
	starts                 []uint64 // where each $all subscription started (0: Start)

	addr string
	srv  *grpc.Server
}

type esdbFakeEvent struct {
	id          uuid.UUID
	stream      string
	revision    uint64
	position    uint64
	typ         string
	contentType string
	created     time.Time
	data, meta  []byte
}

type esdbFakeFault struct {
	err     error
	trailer metadata.MD
}

func startESDBFake(t *testing.T) *esdbFake {
	f := &esdbFake{
		streams: map[string][]*esdbFakeEvent{},
		next:    1024,
		wake:    make(chan struct{}),
		drop:    make(chan struct{}),
		addr:    "127.0.0.1:0",
	}
	// A real log starts with the server's own events.
	f.inject("$stats-127.0.0.1:2113", "$statsCollected", []byte(`{}`), nil)
	f.inject("$scavenges", "$scavengeStarted", []byte(`{}`), nil)
	f.start(t)
	t.Cleanup(f.stop)
	return f
}

func (f *esdbFake) url() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "esdb://" + f.addr + "?tls=false&maxDiscoverAttempts=1&discoveryInterval=10&gossipTimeout=1"
}

// start serves on the fake's address (a fresh port the first time, the same one after stop).
func (f *esdbFake) start(t *testing.T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lis, err := net.Listen("tcp", f.addr)
	require.NoError(t, err)
	f.addr = lis.Addr().String()
	f.srv = grpc.NewServer()
	api.RegisterStreamsServer(f.srv, f)
	go func(srv *grpc.Server) { _ = srv.Serve(lis) }(f.srv)
}

func (f *esdbFake) stop() {
	f.mu.Lock()
	srv := f.srv
	f.mu.Unlock()
	srv.Stop()
}

func (f *esdbFake) setFaults(appendFault, readFault *esdbFakeFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appendFault, f.readFault = appendFault, readFault
}

func (f *esdbFake) setSubscriptionFaults(dropAfter, refuse int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropAfter, f.refuseSubs = dropAfter, refuse
}

func (f *esdbFake) dropSubscriptions() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.drop)
	f.drop = make(chan struct{})
}

func (f *esdbFake) takeExpectations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.expectations
	f.expectations = nil
	return out
}

func (f *esdbFake) subscriptionStarts() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]uint64(nil), f.starts...)
}

func (f *esdbFake) stored(stream string) []*esdbFakeEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*esdbFakeEvent(nil), f.streams[stream]...)
}

// inject writes an event as another writer (or the server itself) would.
func (f *esdbFake) inject(stream, typ string, data, meta []byte) *esdbFakeEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.write(stream, uuid.New(), typ, "application/json", data, meta)
}

// write appends one event; f.mu is held.
func (f *esdbFake) write(stream string, id uuid.UUID, typ, contentType string, data, meta []byte) *esdbFakeEvent {
	ev := &esdbFakeEvent{
		id: id, stream: stream, revision: uint64(len(f.streams[stream])), position: f.next,
		typ: typ, contentType: contentType, created: time.Now(), data: data, meta: meta,
	}
	f.next += 100 + uint64(len(data)+len(meta)) // positions are byte offsets in the log
	f.log = append(f.log, ev)
	f.streams[stream] = append(f.streams[stream], ev)
	close(f.wake)
	f.wake = make(chan struct{})
	return ev
}

func (f *esdbFake) Append(srv api.Streams_AppendServer) error {
	req, err := srv.Recv()
	if err != nil {
		return err
	}
	opts := req.GetOptions()
	if opts == nil {
		return status.Error(codes.InvalidArgument, "fake: options come first")
	}
	stream := string(opts.GetStreamIdentifier().GetStreamName())
	var proposed []*api.AppendReq_ProposedMessage
	for {
		req, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		proposed = append(proposed, req.GetProposedMessage())
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	var expected string
	switch e := opts.GetExpectedStreamRevision().(type) {
	case *api.AppendReq_Options_Any:
		expected = "any"
	case *api.AppendReq_Options_NoStream:
		expected = "no_stream"
	case *api.AppendReq_Options_StreamExists:
		expected = "stream_exists"
	case *api.AppendReq_Options_Revision:
		expected = fmt.Sprintf("revision %d", e.Revision)
	}
	f.expectations = append(f.expectations, expected)
	if fault := f.appendFault; fault != nil {
		if fault.trailer != nil {
			srv.SetTrailer(fault.trailer)
		}
		return fault.err
	}

	ids := make([]uuid.UUID, len(proposed))
	for i, p := range proposed {
		s := p.GetId().GetStructured()
		if ids[i], err = esdbclient.ParseUUIDFromInt64(s.GetMostSignificantBits(), s.GetLeastSignificantBits()); err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
	}
	existing := f.streams[stream]
	if last, ok := esdbFakeRetry(existing, ids); ok {
		return srv.SendAndClose(&api.AppendResp{Result: &api.AppendResp_Success_{Success: &api.AppendResp_Success{
			CurrentRevisionOption: &api.AppendResp_Success_CurrentRevision{CurrentRevision: last},
			PositionOption:        &api.AppendResp_Success_NoPosition{NoPosition: &shared.Empty{}},
		}}})
	}

	exists, current := len(existing) > 0, uint64(len(existing))-1
	ok := false
	switch e := opts.GetExpectedStreamRevision().(type) {
	case *api.AppendReq_Options_Any:
		ok = true
	case *api.AppendReq_Options_NoStream:
		ok = !exists
	case *api.AppendReq_Options_StreamExists:
		ok = exists
	case *api.AppendReq_Options_Revision:
		ok = exists && current == e.Revision
	}
	if !ok {
		wrong := &api.AppendResp_WrongExpectedVersion{
			ExpectedRevisionOption: &api.AppendResp_WrongExpectedVersion_ExpectedAny{ExpectedAny: &shared.Empty{}},
		}
		if exists {
			wrong.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentRevision{CurrentRevision: current}
		} else {
			wrong.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentNoStream{CurrentNoStream: &shared.Empty{}}
		}
		return srv.SendAndClose(&api.AppendResp{Result: &api.AppendResp_WrongExpectedVersion_{WrongExpectedVersion: wrong}})
	}

	var last *esdbFakeEvent
	for i, p := range proposed {
		md := p.GetMetadata()
		last = f.write(stream, ids[i], md["type"], md["content-type"], p.GetData(), p.GetCustomMetadata())
	}
	return srv.SendAndClose(&api.AppendResp{Result: &api.AppendResp_Success_{Success: &api.AppendResp_Success{
		CurrentRevisionOption: &api.AppendResp_Success_CurrentRevision{CurrentRevision: last.revision},
		PositionOption: &api.AppendResp_Success_Position{Position: &api.AppendResp_Position{
			CommitPosition: last.position, PreparePosition: last.position,
		}},
	}}})
}

// esdbFakeRetry reports whether ids are already the consecutive events of a stream, and the
// revision of the last of them.
func esdbFakeRetry(existing []*esdbFakeEvent, ids []uuid.UUID) (uint64, bool) {
	for i, ev := range existing {
		if ev.id != ids[0] {
			continue
		}
		if i+len(ids) > len(existing) {
			return 0, false
		}
		for j, id := range ids {
			if existing[i+j].id != id {
				return 0, false
			}
		}
		return existing[i+len(ids)-1].revision, true
	}
	return 0, false
}

func (f *esdbFake) Read(req *api.ReadReq, srv api.Streams_ReadServer) error {
	o := req.GetOptions()
	f.mu.Lock()
	fault := f.readFault
	f.mu.Unlock()
	if fault != nil {
		if fault.trailer != nil {
			srv.SetTrailer(fault.trailer)
		}
		return fault.err
	}
	if all := o.GetAll(); all != nil {
		if o.GetSubscription() != nil {
			return f.subscribe(o, all, srv)
		}
		return f.readAll(o, all, srv)
	}
	return f.readStream(o, o.GetStream(), srv)
}

func (f *esdbFake) readStream(o *api.ReadReq_Options, so *api.ReadReq_Options_StreamOptions, srv api.Streams_ReadServer) error {
	name := so.GetStreamIdentifier().GetStreamName()
	evs := f.stored(string(name))
	if len(evs) == 0 {
		return srv.Send(&api.ReadResp{Content: &api.ReadResp_StreamNotFound_{StreamNotFound: &api.ReadResp_StreamNotFound{
			StreamIdentifier: &shared.StreamIdentifier{StreamName: name},
		}}})
	}
	backwards := o.GetReadDirection() == api.ReadReq_Options_Backwards
	var i int
	switch r := so.GetRevisionOption().(type) {
	case *api.ReadReq_Options_StreamOptions_Start:
		i = 0
	case *api.ReadReq_Options_StreamOptions_End:
		i = len(evs)
		if backwards {
			i = len(evs) - 1
		}
	case *api.ReadReq_Options_StreamOptions_Revision:
		i = int(min(r.Revision, uint64(len(evs))))
		if backwards && i == len(evs) {
			i = len(evs) - 1
		}
	}
	return esdbFakeSend(srv, evs, i, backwards, o.GetCount())
}

func (f *esdbFake) readAll(o *api.ReadReq_Options, ao *api.ReadReq_Options_AllOptions, srv api.Streams_ReadServer) error {
	f.mu.Lock()
	log := append([]*esdbFakeEvent(nil), f.log...)
	f.mu.Unlock()
	backwards := o.GetReadDirection() == api.ReadReq_Options_Backwards
	i := esdbFakeAllStart(log, ao, backwards)
	return esdbFakeSend(srv, log, i, backwards, o.GetCount())
}

// esdbFakeAllStart is the index a read of $all starts at: the event at a position is included.
func esdbFakeAllStart(log []*esdbFakeEvent, ao *api.ReadReq_Options_AllOptions, backwards bool) int {
	switch p := ao.GetAllOption().(type) {
	case *api.ReadReq_Options_AllOptions_End:
		if backwards {
			return len(log) - 1
		}
		return len(log)
	case *api.ReadReq_Options_AllOptions_Position:
		for i, ev := range log {
			if ev.position >= p.Position.GetCommitPosition() {
				if backwards {
					return i - 1
				}
				return i
			}
		}
		return len(log)
	}
	return 0
}

func esdbFakeSend(srv api.Streams_ReadServer, evs []*esdbFakeEvent, i int, backwards bool, count uint64) error {
	for n := uint64(0); n < count && i >= 0 && i < len(evs); n++ {
		if err := srv.Send(esdbFakeReadEvent(evs[i])); err != nil {
			return err
		}
		if backwards {
			i--
		} else {
			i++
		}
	}
	return nil
}

func (f *esdbFake) subscribe(o *api.ReadReq_Options, ao *api.ReadReq_Options_AllOptions, srv api.Streams_ReadServer) error {
	f.mu.Lock()
	f.starts = append(f.starts, ao.GetPosition().GetCommitPosition())
	refuse := f.refuseSubs > 0
	if refuse {
		f.refuseSubs--
	}
	dropAfter := f.dropAfter
	f.mu.Unlock()
	if refuse {
		return status.Error(codes.Unavailable, "fake: not accepting subscriptions yet")
	}
	var filter *regexp.Regexp
	if expr := o.GetFilter().GetEventType(); expr != nil {
		var err error
		if filter, err = regexp.Compile(expr.GetRegex()); err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
	}
	if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_Confirmation{
		Confirmation: &api.ReadResp_SubscriptionConfirmation{SubscriptionId: uuid.NewString()},
	}}); err != nil {
		return err
	}

	f.mu.Lock()
	i := esdbFakeAllStart(f.log, ao, false)
	f.mu.Unlock()
	sent, caughtUp := 0, false
	for {
		f.mu.Lock()
		pending := append([]*esdbFakeEvent(nil), f.log[i:]...)
		wake, drop := f.wake, f.drop
		f.mu.Unlock()
		for _, ev := range pending {
			i++
			if filter != nil && !filter.MatchString(ev.typ) {
				continue
			}
			if err := srv.Send(esdbFakeReadEvent(ev)); err != nil {
				return err
			}
			sent++
			if sent%3 == 0 {
				if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_Checkpoint_{Checkpoint: &api.ReadResp_Checkpoint{
					CommitPosition: ev.position, PreparePosition: ev.position,
				}}}); err != nil {
					return err
				}
			}
			if dropAfter > 0 && sent >= dropAfter {
				return status.Error(codes.Unavailable, "fake: subscription dropped")
			}
		}
		if !caughtUp {
			caughtUp = true
			if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_CaughtUp_{CaughtUp: &api.ReadResp_CaughtUp{}}}); err != nil {
				return err
			}
		}
		select {
		case <-wake:
		case <-drop:
			return status.Error(codes.Unavailable, "fake: subscription dropped")
		case <-srv.Context().Done():
			return srv.Context().Err()
		}
	}
}

func esdbFakeReadEvent(ev *esdbFakeEvent) *api.ReadResp {
	most, least := esdbclient.UUIDAsInt64(ev.id)
	return &api.ReadResp{Content: &api.ReadResp_Event{Event: &api.ReadResp_ReadEvent{
		Event: &api.ReadResp_ReadEvent_RecordedEvent{
			Id: &shared.UUID{Value: &shared.UUID_Structured_{Structured: &shared.UUID_Structured{
				MostSignificantBits: most, LeastSignificantBits: least,
			}}},
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(ev.stream)},
			StreamRevision:   ev.revision,
			PreparePosition:  ev.position,
			CommitPosition:   ev.position,
			Metadata: map[string]string{
				"type":         ev.typ,
				"content-type": ev.contentType,
				"created":      strconv.FormatInt(ev.created.UnixNano()/100, 10), // .NET ticks since the epoch
			},
			CustomMetadata: ev.meta,
			Data:           ev.data,
		},
		Position: &api.ReadResp_ReadEvent_CommitPosition{CommitPosition: ev.position},
	}}}
}
