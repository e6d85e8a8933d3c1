// Package sqlstore is what the SQL event store backends (eventstore/sqlite, eventstore/postgres)
// share: the edge cases of reading a stream, the decision on a repeated append, and the
// subscription design.
//
// It imports the contract and the standard library only: never a database driver (each
// backend brings its own), and never a backend.
package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/causeway/causeway/eventstore"
)

// The subscription: a goroutine pages through ReadAll from the last delivered position into a
// buffered channel, and when it reaches the head it waits for a wake-up (an append in this
// process, a notification from another) or a poll tick. Reading by position is safe because
// each SQL backend commits positions in order (see their packages).

// Wakeup is a broadcast signal: every waiter on the channel returned by wait is released by
// the next Notify.
type Wakeup struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewWakeup returns a signal with no waiters.
func NewWakeup() *Wakeup { return &Wakeup{ch: make(chan struct{})} }

func (w *Wakeup) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

// Notify releases every subscription waiting for new events.
func (w *Wakeup) Notify() {
	w.mu.Lock()
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
}

// ReadAllFunc is a backend's ReadAll, which a subscription pages through.
type ReadAllFunc func(ctx context.Context, from eventstore.Position, max int) ([]eventstore.RecordedEvent, error)

const (
	subscriptionPage   = 512
	subscriptionBuffer = 1024
)

type pollingSubscription struct {
	out    chan eventstore.RecordedEvent
	cancel context.CancelFunc
	done   chan struct{} // closed when the reader goroutine has exited

	mu     sync.Mutex
	closed bool
	parent context.Context
}

// Subscribe starts a polling subscription. readAll errors other than the context's are
// treated as transient (the database restarts, a connection drops): the reader backs off and
// tries again from the same position, so nothing is skipped.
func Subscribe(ctx context.Context, from eventstore.Position, read ReadAllFunc, wake *Wakeup, poll time.Duration) eventstore.Subscription {
	rctx, cancel := context.WithCancel(ctx)
	s := &pollingSubscription{
		out:    make(chan eventstore.RecordedEvent, subscriptionBuffer),
		cancel: cancel,
		done:   make(chan struct{}),
		parent: ctx,
	}
	go s.run(rctx, from, read, wake, poll)
	return s
}

func (s *pollingSubscription) run(ctx context.Context, pos eventstore.Position, read ReadAllFunc, wake *Wakeup, poll time.Duration) {
	defer close(s.done)
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	backoff := 50 * time.Millisecond
	for {
		woken := wake.wait() // taken before reading, so an append during the read is not missed
		evs, err := read(ctx, pos, subscriptionPage)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		for _, ev := range evs {
			select {
			case s.out <- ev:
				pos = ev.Position
			case <-ctx.Done():
				return
			}
		}
		if len(evs) == subscriptionPage {
			continue
		}
		select {
		case <-woken:
		case <-ticker.C:
		case <-ctx.Done():
			return
		}
	}
}

func (s *pollingSubscription) Recv(ctx context.Context) (eventstore.RecordedEvent, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return eventstore.RecordedEvent{}, eventstore.ErrClosed
	}
	select {
	case ev := <-s.out:
		return ev, nil
	case <-ctx.Done():
		return eventstore.RecordedEvent{}, ctx.Err()
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return eventstore.RecordedEvent{}, eventstore.ErrClosed
		}
		if err := s.parent.Err(); err != nil {
			return eventstore.RecordedEvent{}, err
		}
		return eventstore.RecordedEvent{}, eventstore.ErrClosed
	}
}

func (s *pollingSubscription) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	<-s.done
	return nil
}

// DecodeEnvelope turns the stored text columns of an event back into its envelope fields.
func DecodeEnvelope(ev *eventstore.RecordedEvent, id string, metadata []byte) error {
	var err error
	if ev.ID, err = uuid.Parse(id); err != nil {
		return fmt.Errorf("eventstore: stored event id %q: %w", id, err)
	}
	if err := json.Unmarshal(metadata, &ev.Metadata); err != nil {
		return fmt.Errorf("eventstore: stored metadata of event %s: %w", id, err)
	}
	return nil
}

// StoredRevision is what an append found of its event ids already in the store.
type StoredRevision struct {
	ID       uuid.UUID
	Stream   string
	Revision uint64
	Position eventstore.Position
}

// RetryResult decides an append whose event ids are (partly) stored already: if they are
// exactly this append's events, in order, consecutive, in this stream, it is a retry after
// success and answers the original result; anything else is ErrDuplicateEventID.
func RetryResult(stream string, events []eventstore.EventData, found []StoredRevision) (eventstore.AppendResult, error) {
	if len(found) != len(events) {
		return eventstore.AppendResult{}, fmt.Errorf("%w: %d of the %d events are stored already", eventstore.ErrDuplicateEventID, len(found), len(events))
	}
	byID := make(map[uuid.UUID]StoredRevision, len(found))
	for _, f := range found {
		byID[f.ID] = f
	}
	var last StoredRevision
	for i, ev := range events {
		f, ok := byID[ev.ID]
		if !ok || f.Stream != stream || (i > 0 && f.Revision != last.Revision+1) {
			return eventstore.AppendResult{}, fmt.Errorf("%w: event %s is stored elsewhere", eventstore.ErrDuplicateEventID, ev.ID)
		}
		last = f
	}
	return eventstore.AppendResult{NextRevision: last.Revision, Position: last.Position}, nil
}

// EncodeMetadata is the stored text of an event's metadata.
func EncodeMetadata(md eventstore.Metadata) ([]byte, error) {
	b, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", eventstore.ErrInvalidArgument, err)
	}
	return b, nil
}

// ReadStream is ReadStream for the SQL backends, which differ only in their queries: read
// runs the query (backwards or forwards from a revision), exists tells ErrStreamNotFound apart
// from an empty page.
func ReadStream(ctx context.Context, dir eventstore.Direction, from uint64,
	read func(ctx context.Context, backwards bool, from int64) ([]eventstore.RecordedEvent, error),
	exists func(ctx context.Context) error,
) ([]eventstore.RecordedEvent, error) {
	if from > math.MaxInt64 { // no stream reaches this revision (StreamEnd included)
		if dir == eventstore.Forwards {
			return []eventstore.RecordedEvent{}, exists(ctx)
		}
		from = math.MaxInt64
	}
	evs, err := read(ctx, dir == eventstore.Backwards, int64(from))
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		return evs, nil
	}
	if err := exists(ctx); err != nil {
		return nil, err
	}
	// The stream exists but the page was empty: either from is past its end, or the stream
	// was created between the two queries. Reading again tells them apart.
	return read(ctx, dir == eventstore.Backwards, int64(from))
}
