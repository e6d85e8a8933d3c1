package eventstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"
)

// What the SQL backends (sqlite.go, postgres.go) share: the edge cases of reading a stream,
// the decision on a repeated append, and the subscription design.
//
// The subscription: a goroutine pages through ReadAll from the
// last delivered position into a buffered channel, and when it reaches the head it waits for
// a wake-up (an append in this process, a notification from another) or a poll tick. Reading
// by position is safe because each SQL backend commits positions in order (see their files).

// wakeup is a broadcast signal: every waiter on the channel returned by wait is released by
// the next notify.
type wakeup struct {
	mu sync.Mutex
	ch chan struct{}
}

func newWakeup() *wakeup { return &wakeup{ch: make(chan struct{})} }

func (w *wakeup) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

func (w *wakeup) notify() {
	w.mu.Lock()
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
}

type readAllFunc func(ctx context.Context, from Position, max int) ([]RecordedEvent, error)

const (
	subscriptionPage   = 512
	subscriptionBuffer = 1024
)

type pollingSubscription struct {
	out    chan RecordedEvent
	cancel context.CancelFunc
	done   chan struct{} // closed when the reader goroutine has exited

	mu     sync.Mutex
	closed bool
	parent context.Context
}

// subscribe starts a polling subscription. readAll errors other than the context's are
// treated as transient (the database restarts, a connection drops): the reader backs off and
// tries again from the same position, so nothing is skipped.
func subscribe(ctx context.Context, from Position, read readAllFunc, wake *wakeup, poll time.Duration) *pollingSubscription {
	rctx, cancel := context.WithCancel(ctx)
	s := &pollingSubscription{
		out:    make(chan RecordedEvent, subscriptionBuffer),
		cancel: cancel,
		done:   make(chan struct{}),
		parent: ctx,
	}
	go s.run(rctx, from, read, wake, poll)
	return s
}

func (s *pollingSubscription) run(ctx context.Context, pos Position, read readAllFunc, wake *wakeup, poll time.Duration) {
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

func (s *pollingSubscription) Recv(ctx context.Context) (RecordedEvent, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return RecordedEvent{}, ErrClosed
	}
	select {
	case ev := <-s.out:
		return ev, nil
	case <-ctx.Done():
		return RecordedEvent{}, ctx.Err()
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return RecordedEvent{}, ErrClosed
		}
		if err := s.parent.Err(); err != nil {
			return RecordedEvent{}, err
		}
		return RecordedEvent{}, ErrClosed
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

// decodeEnvelope turns the stored text columns of an event back into its envelope fields.
func decodeEnvelope(ev *RecordedEvent, id string, metadata []byte) error {
	var err error
	if ev.ID, err = uuid.Parse(id); err != nil {
		return fmt.Errorf("eventstore: stored event id %q: %w", id, err)
	}
	if err := json.Unmarshal(metadata, &ev.Metadata); err != nil {
		return fmt.Errorf("eventstore: stored metadata of event %s: %w", id, err)
	}
	return nil
}

// storedRevision is what an append found of its event ids already in the store.
type storedRevision struct {
	id       uuid.UUID
	stream   string
	revision uint64
	position Position
}

// retryResult decides an append whose event ids are (partly) stored already: if they are
// exactly this append's events, in order, consecutive, in this stream, it is a retry after
// success and answers the original result; anything else is ErrDuplicateEventID.
func retryResult(stream string, events []EventData, found []storedRevision) (AppendResult, error) {
	if len(found) != len(events) {
		return AppendResult{}, fmt.Errorf("%w: %d of the %d events are stored already", ErrDuplicateEventID, len(found), len(events))
	}
	byID := make(map[uuid.UUID]storedRevision, len(found))
	for _, f := range found {
		byID[f.id] = f
	}
	var last storedRevision
	for i, ev := range events {
		f, ok := byID[ev.ID]
		if !ok || f.stream != stream || (i > 0 && f.revision != last.revision+1) {
			return AppendResult{}, fmt.Errorf("%w: event %s is stored elsewhere", ErrDuplicateEventID, ev.ID)
		}
		last = f
	}
	return AppendResult{NextRevision: last.revision, Position: last.position}, nil
}

func encodeMetadata(md Metadata) ([]byte, error) {
	b, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrInvalidArgument, err)
	}
	return b, nil
}

// sqlReadStream is ReadStream for the SQL backends, which differ only in their queries: read
// runs the query (backwards or forwards from a revision), exists tells ErrStreamNotFound apart
// from an empty page.
func sqlReadStream(ctx context.Context, dir Direction, from uint64,
	read func(ctx context.Context, backwards bool, from int64) ([]RecordedEvent, error),
	exists func(ctx context.Context) error,
) ([]RecordedEvent, error) {
	if from > math.MaxInt64 { // no stream reaches this revision (StreamEnd included)
		if dir == Forwards {
			return []RecordedEvent{}, exists(ctx)
		}
		from = math.MaxInt64
	}
	evs, err := read(ctx, dir == Backwards, int64(from))
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
	return read(ctx, dir == Backwards, int64(from))
}
