// Package esdb is the event store backend on EventStoreDB (KurrentDB), through its gRPC
// client.
//
// It implements the contract of package eventstore and translates the client's errors into
// the contract's, so that no client type leaves it. It must not import another backend
// (sqlite, postgres), the shared SQL helpers, or the package that picks a backend
// (eventstore/open); only cmd/ chooses a backend.
package esdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	esdbclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/internal/backend"
)

// Store is the EventStoreDB (KurrentDB) backend. The server does itself what the SQL backends
// build by hand: the concurrency check, idempotency by event id, the global order and live
// subscriptions. This file only translates between the contract and the gRPC client, and
// keeps the client's types and errors from leaking out of the package.
type Store struct {
	// cfg is kept to build a new client when the library's connection loop gives up (after
	// a failed discovery it answers ConnectionClosed to every call, for ever).
	cfg esdbclient.Configuration

	// life ends on Close and takes every in-flight call and subscription with it.
	life context.Context
	end  context.CancelFunc

	mu     sync.Mutex
	client *esdbclient.Client
	closed bool
	// inflight counts calls holding the client: the library panics if it is closed while a
	// call is handing it a message, so Close waits for them first.
	inflight sync.WaitGroup
}

var _ eventstore.Store = (*Store)(nil)

const (
	// esdbPage is how many events one read asks for when the caller wants more (or all).
	esdbPage = 512
	// A dropped subscription is reopened after a pause that doubles up to esdbBackoffMax, so
	// that a server that is down is not hammered, and one that comes back is found quickly.
	esdbBackoffMin = 100 * time.Millisecond
	esdbBackoffMax = 5 * time.Second
	// esdbCloseGrace bounds how long Close waits for in-flight calls to notice it.
	esdbCloseGrace = 5 * time.Second
)

// Open returns a store on the EventStoreDB named by rawURL (esdb://, esdb+discover://,
// or the kurrentdb:// and kurrent:// spellings of both). Nothing is dialled here: the client
// finds the node on first use, so a server that starts after us is not an error; call Ping
// to check one is there.
func Open(ctx context.Context, rawURL string) (eventstore.Store, error) {
	conn, err := esdbConnectionString(rawURL)
	if err != nil {
		return nil, err
	}
	cfg, err := esdbclient.ParseConnectionString(conn)
	if err != nil {
		// url.Parse puts the whole URL, password included, in its error: keep only the reason.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("%w: EventStoreDB URL %q: %v", eventstore.ErrInvalidArgument, esdbRedact(rawURL), err)
	}
	// Every error reaches the caller, who logs it; the client's default would also print each
	// one, unstructured, on the standard logger.
	cfg.Logger = esdbclient.NoopLogging()
	s := &Store{cfg: *cfg}
	if s.client, err = s.newClient(); err != nil {
		return nil, fmt.Errorf("%w: EventStoreDB URL %q: %v", eventstore.ErrInvalidArgument, esdbRedact(rawURL), err)
	}
	s.life, s.end = context.WithCancel(context.Background())
	return s, nil
}

// esdbConnectionString maps the URL schemes we accept onto the two the client knows.
func esdbConnectionString(rawURL string) (string, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "", fmt.Errorf("%w: EventStoreDB URL %q has no scheme", eventstore.ErrInvalidArgument, esdbRedact(rawURL))
	}
	switch strings.ToLower(scheme) {
	case "esdb", "kurrentdb", "kurrent":
		return "esdb://" + rest, nil
	case "esdb+discover", "kurrentdb+discover", "kurrent+discover":
		return "esdb+discover://" + rest, nil
	}
	return "", fmt.Errorf("%w: URL scheme %q is not esdb, esdb+discover, kurrentdb or kurrent", eventstore.ErrInvalidArgument, scheme)
}

// esdbRedact is Redact for URLs that may not parse (a cluster of gossip seeds, a typo): it
// masks the password by hand when url.Parse cannot.
func esdbRedact(rawURL string) string {
	if r := eventstore.Redact(rawURL); r != rawURL {
		return r
	}
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return rawURL
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return rawURL
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return rawURL
	}
	return scheme + "://" + user + ":xxxxx@" + rest[at+1:]
}

func (s *Store) newClient() (*esdbclient.Client, error) {
	cfg := s.cfg // the client keeps a pointer to its configuration
	return esdbclient.NewClient(&cfg)
}

// Append writes events to stream; the server checks expected and recognises a retry by the
// event ids.
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	if err := backend.ValidateAppend(stream, expected, events); err != nil {
		return eventstore.AppendResult{}, err
	}
	proposed := make([]esdbclient.EventData, len(events))
	for i, ev := range events {
		md, err := esdbEncodeMetadata(ev)
		if err != nil {
			return eventstore.AppendResult{}, err
		}
		proposed[i] = esdbclient.EventData{
			EventID:     ev.ID,
			EventType:   ev.Type,
			ContentType: esdbclient.ContentTypeJson,
			Data:        backend.Data(ev),
			Metadata:    md,
		}
	}
	opts := esdbclient.AppendToStreamOptions{ExpectedRevision: esdbExpected(expected)}

	bctx, cancel := s.bind(ctx)
	defer cancel(nil)
	var res *esdbclient.WriteResult
	err := s.call(bctx, stream, func(ctx context.Context, c *esdbclient.Client) error {
		var err error
		res, err = c.AppendToStream(ctx, stream, opts, proposed...)
		return err
	})
	if err != nil {
		var wrong *eventstore.WrongExpectedVersionError
		if errors.As(err, &wrong) {
			wrong.Expected = expected
		}
		return eventstore.AppendResult{}, err
	}
	out := eventstore.AppendResult{NextRevision: res.NextExpectedVersion, Position: eventstore.Position(res.CommitPosition)}
	if out.Position == eventstore.Start {
		// A retry of an append the server has already done can come back with the revision
		// but no position; the contract promises the original result, so look it up.
		last, err := s.ReadStream(ctx, stream, eventstore.Backwards, out.NextRevision, 1)
		if err != nil {
			return eventstore.AppendResult{}, err
		}
		if len(last) == 1 {
			out.Position = last[0].Position
		}
	}
	return out, nil
}

// esdbExpected maps the closed ExpectedRevision onto the client's condition types.
func esdbExpected(e eventstore.ExpectedRevision) esdbclient.ExpectedRevision {
	switch {
	case e.IsNoStream():
		return esdbclient.NoStream{}
	case e.IsStreamExists():
		return esdbclient.StreamExists{}
	}
	if n, ok := e.ExactRevision(); ok {
		return esdbclient.Revision(n)
	}
	return esdbclient.Any{}
}

// esdbMetadata is what an event's user metadata holds: the envelope's Metadata, with the
// schema version beside it because EventStoreDB has no field of its own for one.
type esdbMetadata struct {
	eventstore.Metadata
	SchemaVersion int `json:"schema_version"`
}

func esdbEncodeMetadata(ev eventstore.EventData) ([]byte, error) {
	b, err := json.Marshal(esdbMetadata{Metadata: ev.Metadata, SchemaVersion: backend.SchemaVersion(ev)})
	if err != nil {
		return nil, fmt.Errorf("%w: metadata of event %s: %v", eventstore.ErrInvalidArgument, ev.ID, err)
	}
	return b, nil
}

// esdbDecodeMetadata reads back what esdbEncodeMetadata wrote. The server is shared, so $all
// holds events that Causeway did not write: metadata that is not ours gives an empty
// envelope and schema version 1 rather than an error that would stall every reader.
func esdbDecodeMetadata(b []byte) (eventstore.Metadata, int) {
	var md esdbMetadata
	if len(b) == 0 || json.Unmarshal(b, &md) != nil {
		return eventstore.Metadata{}, 1
	}
	if md.SchemaVersion <= 0 {
		md.SchemaVersion = 1
	}
	return md.Metadata, md.SchemaVersion
}

// esdbRecorded converts a recorded event. Positions are commit positions: on a server
// without explicit transactions every event has its own, equal to its prepare position.
// Servers before version 22 give stream reads no position (all ones): that becomes Start, so
// that a reader resuming from it reads again rather than skips everything.
func esdbRecorded(r *esdbclient.RecordedEvent) eventstore.RecordedEvent {
	md, version := esdbDecodeMetadata(r.UserMetadata)
	pos := eventstore.Position(r.Position.Commit)
	if r.Position.Commit == ^uint64(0) {
		pos = eventstore.Start
	}
	return eventstore.RecordedEvent{
		ID:            r.EventID,
		Stream:        r.StreamID,
		Revision:      r.EventNumber,
		Position:      pos,
		Type:          r.EventType,
		SchemaVersion: version,
		Data:          json.RawMessage(r.Data),
		Metadata:      md,
		RecordedAt:    r.CreatedDate,
	}
}

// esdbSystemEvent reports the server's own events ($stats, $metadata, links...), which the
// contract's global order does not include.
func esdbSystemEvent(r *esdbclient.RecordedEvent) bool {
	return strings.HasPrefix(r.EventType, "$") || strings.HasPrefix(r.StreamID, "$")
}

// esdbPosition is the client position of a contract position: both halves equal, which is
// what the server gives every event it did not write in an explicit transaction.
func esdbPosition(p eventstore.Position) esdbclient.Position {
	return esdbclient.Position{Commit: uint64(p), Prepare: uint64(p)}
}

// esdbAllFrom is where a read or subscription of $all starts; the server includes the event
// at a position, so callers drop it.
func esdbAllFrom(p esdbclient.Position) esdbclient.AllPosition {
	if p == (esdbclient.Position{}) {
		return esdbclient.Start{}
	}
	return p
}

// esdbAfter orders client positions: commit first, then prepare.
func esdbAfter(a, b esdbclient.Position) bool {
	return a.Commit > b.Commit || (a.Commit == b.Commit && a.Prepare > b.Prepare)
}

// esdbStreamFrom is where a stream read starts: from is inclusive, StreamEnd is the last.
func esdbStreamFrom(dir eventstore.Direction, from uint64) esdbclient.StreamPosition {
	switch {
	case from == eventstore.StreamEnd:
		return esdbclient.End{}
	case from == 0 && dir == eventstore.Forwards:
		return esdbclient.Start{}
	}
	return esdbclient.Revision(from)
}

// ReadStream reads a stream in pages of esdbPage, so that "all" (max <= 0) is not one
// unbounded server read.
func (s *Store) ReadStream(ctx context.Context, stream string, dir eventstore.Direction, from uint64, max int) ([]eventstore.RecordedEvent, error) {
	if stream == "" {
		return nil, fmt.Errorf("%w: stream name is empty", eventstore.ErrInvalidArgument)
	}
	esdbDir := esdbclient.Forwards
	switch dir {
	case eventstore.Forwards:
	case eventstore.Backwards:
		esdbDir = esdbclient.Backwards
	default:
		return nil, fmt.Errorf("%w: direction %d", eventstore.ErrInvalidArgument, dir)
	}
	ctx, cancel := s.bind(ctx)
	defer cancel(nil)

	out := []eventstore.RecordedEvent{}
	next := from
	for {
		want := esdbPage
		if max > 0 {
			want = min(max-len(out), esdbPage)
		}
		opts := esdbclient.ReadStreamOptions{Direction: esdbDir, From: esdbStreamFrom(dir, next), ResolveLinkTos: false}
		page, err := s.readPage(ctx, stream, func(ctx context.Context, c *esdbclient.Client) (*esdbclient.ReadStream, error) {
			return c.ReadStream(ctx, stream, opts, uint64(want))
		})
		if err != nil {
			return nil, err
		}
		for _, r := range page {
			out = append(out, esdbRecorded(r))
		}
		if len(page) < want || (max > 0 && len(out) >= max) {
			return out, nil
		}
		last := page[len(page)-1].EventNumber
		if dir == eventstore.Backwards {
			if last == 0 {
				return out, nil
			}
			next = last - 1
		} else {
			next = last + 1
		}
	}
}

// ReadAll reads $all after from, leaving out the server's own events. The server counts
// those (and the event at from) towards a read's limit, so it reads on until it has max of
// ours or reaches the end of the log.
func (s *Store) ReadAll(ctx context.Context, from eventstore.Position, max int) ([]eventstore.RecordedEvent, error) {
	if max <= 0 {
		return nil, fmt.Errorf("%w: ReadAll needs max > 0, got %d", eventstore.ErrInvalidArgument, max)
	}
	ctx, cancel := s.bind(ctx)
	defer cancel(nil)

	out := make([]eventstore.RecordedEvent, 0, min(max, esdbPage))
	cursor := esdbPosition(from)
	for len(out) < max {
		want := min(max-len(out)+1, esdbPage) // +1: the server includes the event at the cursor
		opts := esdbclient.ReadAllOptions{Direction: esdbclient.Forwards, From: esdbAllFrom(cursor), ResolveLinkTos: false}
		page, err := s.readPage(ctx, "", func(ctx context.Context, c *esdbclient.Client) (*esdbclient.ReadStream, error) {
			return c.ReadAll(ctx, opts, uint64(want))
		})
		if err != nil {
			return nil, err
		}
		moved := false
		for _, r := range page {
			if !esdbAfter(r.Position, cursor) {
				continue
			}
			cursor, moved = r.Position, true
			if esdbSystemEvent(r) {
				continue
			}
			out = append(out, esdbRecorded(r))
			if len(out) == max {
				break
			}
		}
		if len(page) < want || !moved {
			break // the end of the log
		}
	}
	return out, nil
}

// readPage runs one server read to its end and returns its events.
func (s *Store) readPage(ctx context.Context, stream string, read func(context.Context, *esdbclient.Client) (*esdbclient.ReadStream, error)) ([]*esdbclient.RecordedEvent, error) {
	var page []*esdbclient.RecordedEvent
	err := s.call(ctx, stream, func(ctx context.Context, c *esdbclient.Client) error {
		page = page[:0]
		rs, err := read(ctx, c)
		if err != nil {
			return err
		}
		defer rs.Close()
		for {
			ev, err := rs.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if r := ev.OriginalEvent(); r != nil {
				page = append(page, r)
			}
		}
	})
	if err != nil {
		return nil, err // page may still be written by an abandoned call
	}
	return page, nil
}

// Ping reads the last event of $all: the cheapest call that needs the server to answer.
func (s *Store) Ping(ctx context.Context) error {
	bctx, cancel := s.bind(ctx)
	defer cancel(nil)
	_, err := s.readPage(bctx, "", func(ctx context.Context, c *esdbclient.Client) (*esdbclient.ReadStream, error) {
		return c.ReadAll(ctx, esdbclient.ReadAllOptions{Direction: esdbclient.Backwards, From: esdbclient.End{}}, 1)
	})
	if err == nil || ctx.Err() != nil || errors.Is(err, eventstore.ErrUnavailable) || errors.Is(err, eventstore.ErrClosed) {
		return err
	}
	return fmt.Errorf("%w: %v", eventstore.ErrUnavailable, err)
}

// Close ends every call and subscription, then closes the client.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	client := s.client
	s.mu.Unlock()
	s.end()

	drained := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(drained)
	}()
	timer := time.NewTimer(esdbCloseGrace)
	defer timer.Stop()
	select {
	case <-drained:
		return client.Close()
	case <-timer.C:
		// A call is stuck inside the library (a discovery does not watch contexts): close
		// the client once it returns rather than under its feet.
		go func() {
			<-drained
			_ = client.Close()
		}()
		return nil
	}
}

// bind derives a context that also ends, with cause ErrClosed, when the store is closed.
// The returned function must be called to release it.
func (s *Store) bind(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.life, func() { cancel(eventstore.ErrClosed) })
	return ctx, func(cause error) {
		stop()
		cancel(cause)
	}
}

// acquire returns the current client and counts the caller in flight until release.
func (s *Store) acquire() (c *esdbclient.Client, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, eventstore.ErrClosed
	}
	s.inflight.Add(1)
	return s.client, s.inflight.Done, nil
}

// replace swaps a client whose connection loop has given up for a new one, unless another
// call has done so already. The dead client is not closed: its loop has exited, and closing
// it could panic a goroutine still trying to reach that loop.
func (s *Store) replace(dead *esdbclient.Client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.client == dead {
		fresh, err := s.newClient()
		if err != nil {
			return false // cannot happen: the configuration was validated when opening
		}
		s.client = fresh
	}
	return true
}

// call runs op with the current client and translates its error. ctx must come from bind.
//
// op runs on its own goroutine because the library does not watch ctx everywhere: node
// discovery, and a reconnect message to a connection loop busy discovering, block without
// it. When ctx ends first, call returns and op finishes alone; callers must then not read
// what op writes.
//
// A ConnectionClosed answer is retried once on a new client: the library gives it before
// sending anything, so the retry cannot write twice.
func (s *Store) call(ctx context.Context, stream string, op func(context.Context, *esdbclient.Client) error) error {
	for attempt := 0; ; attempt++ {
		c, release, err := s.acquire()
		if err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() {
			defer release()
			done <- op(ctx, c)
		}()
		select {
		case err = <-done:
		case <-ctx.Done():
			return esdbContextError(ctx)
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return esdbContextError(ctx)
		}
		if attempt == 0 && esdbCode(err) == esdbclient.ErrorCodeConnectionClosed && s.replace(c) {
			continue
		}
		return esdbError(err, stream)
	}
}

// esdbContextError is why a bound context ended: ErrClosed if the store closed, else the
// caller's own ctx.Err().
func esdbContextError(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), eventstore.ErrClosed) {
		return eventstore.ErrClosed
	}
	return ctx.Err()
}

func esdbCode(err error) esdbclient.ErrorCode {
	var e *esdbclient.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return esdbclient.ErrorCodeUnknown
}

// esdbError translates a client error into the contract's. Only the text of the client's
// error survives, so callers never depend on its types.
func esdbError(err error, stream string) error {
	switch esdbCode(err) {
	case esdbclient.ErrorCodeWrongExpectedVersion:
		wrong := &eventstore.WrongExpectedVersionError{Stream: stream}
		wrong.Actual, wrong.ActualExists = esdbActualRevision(err)
		return wrong
	case esdbclient.ErrorCodeResourceNotFound, esdbclient.ErrorCodeStreamDeleted:
		return fmt.Errorf("%w: %q", eventstore.ErrStreamNotFound, stream)
	case esdbclient.ErrorUnavailable, esdbclient.ErrorCodeDeadlineExceeded, esdbclient.ErrorCodeConnectionClosed,
		esdbclient.ErrorCodeNotLeader, esdbclient.ErrorAborted:
		return fmt.Errorf("%w: eventstoredb: %s", eventstore.ErrUnavailable, err)
	}
	// Errors the client leaves unclassified may still be the transport's.
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.Canceled:
		// Canceled with our context alive: the library closed the connection under the call.
		return fmt.Errorf("%w: eventstoredb: %s", eventstore.ErrUnavailable, err)
	}
	return fmt.Errorf("eventstore: eventstoredb: %s", err)
}

// esdbActualRevision recovers the stream's revision from a wrong-expected-version error.
// The client has it only in the text ("expecting 'X' but got 'N'" or "'no_stream'"); when the
// text is not that, the revision is left unknown (zero, not existing).
func esdbActualRevision(err error) (uint64, bool) {
	msg := err.Error()
	i := strings.LastIndex(msg, "but got '")
	if i < 0 {
		return 0, false
	}
	got, _, ok := strings.Cut(msg[i+len("but got '"):], "'")
	if !ok {
		return 0, false
	}
	n, perr := strconv.ParseUint(got, 10, 64)
	if perr != nil {
		return 0, false
	}
	return n, true
}

// Subscribe follows $all after from, reopening the server subscription whenever it drops.
// The first one is opened here, so that an unreachable server is reported at once.
func (s *Store) Subscribe(ctx context.Context, from eventstore.Position) (eventstore.Subscription, error) {
	sctx, cancel := s.bind(ctx)
	sub := &esdbSubscription{
		store:  s,
		cancel: cancel,
		last:   esdbPosition(from),
		events: make(chan eventstore.RecordedEvent),
		closed: make(chan struct{}),
		ended:  make(chan struct{}),
	}
	first, err := sub.open(sctx)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	go sub.run(sctx, first)
	return sub, nil
}

// esdbSubscription hands events from a goroutine that owns the server subscription. The
// channel is unbuffered, so last is always the last event Recv returned: reopening from it
// (and dropping anything at or before it) neither repeats nor skips an event.
type esdbSubscription struct {
	store  *Store
	cancel context.CancelCauseFunc

	last   esdbclient.Position // owned by run
	events chan eventstore.RecordedEvent

	closeOnce sync.Once
	closed    chan struct{}

	ended chan struct{} // closed when run returns, after err is set
	err   error
}

var _ eventstore.Subscription = (*esdbSubscription)(nil)

func (sub *esdbSubscription) open(ctx context.Context) (*esdbclient.Subscription, error) {
	opts := esdbclient.SubscribeToAllOptions{
		From:   esdbAllFrom(sub.last),
		Filter: esdbclient.ExcludeSystemEventsFilter(),
	}
	var out *esdbclient.Subscription
	err := sub.store.call(ctx, "", func(_ context.Context, c *esdbclient.Client) error {
		// ctx, not the call's: the subscription outlives the call.
		var err error
		out, err = c.SubscribeToAll(ctx, opts)
		return err
	})
	if err != nil {
		return nil, err // out may still be written by an abandoned call
	}
	return out, nil
}

// run delivers from cur, and from each reopened subscription after a drop, until ctx ends.
func (sub *esdbSubscription) run(ctx context.Context, cur *esdbclient.Subscription) {
	defer close(sub.ended)
	defer sub.cancel(nil)
	backoff := esdbBackoffMin
	for {
		if sub.pump(ctx, cur) {
			backoff = esdbBackoffMin
		}
		_ = cur.Close()
		for {
			if ctx.Err() != nil {
				sub.err = esdbContextError(ctx)
				return
			}
			timer := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				timer.Stop()
				continue
			case <-timer.C:
			}
			backoff = min(2*backoff, esdbBackoffMax)
			next, err := sub.open(ctx)
			if err == nil {
				cur = next
				break
			}
			if errors.Is(err, eventstore.ErrClosed) {
				sub.err = eventstore.ErrClosed
				return
			}
		}
	}
}

// pump hands cur's events to Recv until it drops or ctx ends, and reports whether it
// delivered any. Checkpoints and caught-up notices carry no event and are passed over.
func (sub *esdbSubscription) pump(ctx context.Context, cur *esdbclient.Subscription) (delivered bool) {
	for {
		msg := cur.Recv()
		if msg.SubscriptionDropped != nil {
			return delivered
		}
		if msg.EventAppeared == nil {
			continue
		}
		r := msg.EventAppeared.OriginalEvent()
		if r == nil || !esdbAfter(r.Position, sub.last) {
			continue // the event at from, or one a reopened subscription repeats
		}
		if esdbSystemEvent(r) {
			sub.last = r.Position
			continue
		}
		select {
		case sub.events <- esdbRecorded(r):
			sub.last = r.Position
			delivered = true
		case <-ctx.Done():
			return delivered
		}
	}
}

// Recv returns the next event. Its ctx ending leaves the subscription as it is.
func (sub *esdbSubscription) Recv(ctx context.Context) (eventstore.RecordedEvent, error) {
	select {
	case <-sub.closed:
		return eventstore.RecordedEvent{}, eventstore.ErrClosed
	default:
	}
	select {
	case ev := <-sub.events:
		return ev, nil
	case <-sub.closed:
		return eventstore.RecordedEvent{}, eventstore.ErrClosed
	case <-sub.ended:
		return eventstore.RecordedEvent{}, sub.err
	case <-ctx.Done():
		return eventstore.RecordedEvent{}, ctx.Err()
	}
}

// Close stops the subscription; Recv then returns ErrClosed.
func (sub *esdbSubscription) Close() error {
	sub.closeOnce.Do(func() {
		close(sub.closed)
		sub.cancel(eventstore.ErrClosed)
	})
	return nil
}
