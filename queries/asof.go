package queries

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// asOfStore is the event store as it stood at an instant: a stream read ends with the last
// event recorded at or before it. It lets a past read fold the past exactly as the present is
// folded, and it refuses appends, because the past is read-only.
type asOfStore struct {
	store Events
	at    time.Time
}

var errPastIsReadOnly = errors.New("queries: a store read as of an instant cannot be appended to")

func (s asOfStore) Append(context.Context, string, eventstore.ExpectedRevision, ...eventstore.EventData) (eventstore.AppendResult, error) {
	return eventstore.AppendResult{}, errPastIsReadOnly
}

// ReadStream reads whole streams forwards only: that is how load reads, and a cut by time is
// only meaningful from a stream's first event.
func (s asOfStore) ReadStream(ctx context.Context, stream string, dir eventstore.Direction, from uint64, max int) ([]eventstore.RecordedEvent, error) {
	if dir != eventstore.Forwards || from != 0 || max != 0 {
		return nil, fmt.Errorf("queries: a store read as of an instant reads whole streams forwards, not %s from %d", dir, from)
	}
	recs, err := s.store.ReadStream(ctx, stream, dir, from, max)
	if err != nil {
		return nil, err
	}
	return recs[:recordedBy(recs, s.at)], nil
}

// recordedBy is how many of recs lead up to and include the last one recorded at or before at.
// A clock step backwards can put an earlier-recorded event after a later one; the cut is still
// at the last event the stream had by then.
func recordedBy(recs []eventstore.RecordedEvent, at time.Time) int {
	for i := len(recs) - 1; i >= 0; i-- {
		if !recs[i].RecordedAt.After(at) {
			return i + 1
		}
	}
	return 0
}

// LoadAsOf folds a stream into a fresh aggregate up to and including the last event recorded
// at or before at: the resource as it was then. It returns the position of that event, and
// false when the stream had no events by then.
func LoadAsOf[A domain.Aggregate](ctx context.Context, q *Queries, stream string, newAgg func() A, at time.Time) (A, eventstore.Position, bool, error) {
	agg, last, ok, err := LoadAsOfEvent(ctx, q, stream, newAgg, at)
	return agg, last.Position, ok, err
}

// LoadAsOfEvent is LoadAsOf returning the whole last event folded, whose RecordedAt says
// since when the state has been as returned.
func LoadAsOfEvent[A domain.Aggregate](ctx context.Context, q *Queries, stream string, newAgg func() A, at time.Time) (A, eventstore.RecordedEvent, bool, error) {
	agg := newAgg()
	if err := q.check(); err != nil {
		return agg, eventstore.RecordedEvent{}, false, err
	}
	recs, err := fold(ctx, q.Registry, asOfStore{store: q.Events, at: at}, stream, agg)
	if err != nil || len(recs) == 0 {
		return agg, eventstore.RecordedEvent{}, false, err
	}
	return agg, recs[len(recs)-1], true, nil
}

// fold folds a whole stream into agg and returns its events; a stream that does not exist
// folds nothing.
func fold(ctx context.Context, reg *domain.Registry, store Events, stream string, agg domain.Aggregate) ([]eventstore.RecordedEvent, error) {
	recs, err := store.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
	if errors.Is(err, eventstore.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		ev, err := reg.Decode(rec.Type, rec.Data)
		if err != nil {
			return nil, err
		}
		agg.Apply(ev)
	}
	return recs, nil
}

// Change is one event of a resource's stream with the resource's JSON state before it (null
// before the first event) and after it.
type Change struct {
	Event  eventstore.RecordedEvent
	Before json.RawMessage
	After  json.RawMessage
}

// History folds a stream from its first event and returns one change per event, oldest
// first, and the state after the last. Every event is folded, but only those whose index
// describe accepts get their states encoded: a page of a long stream (a usage policy records
// every request) costs one read, not one encoding per event. A stream with no events gives no
// changes and a nil state.
func (q *Queries) History(ctx context.Context, stream string, describe func(i int) bool) ([]Change, domain.Aggregate, error) {
	if err := q.check(); err != nil {
		return nil, nil, err
	}
	agg, ok := q.Registry.NewAggregate(stream)
	if !ok {
		return nil, nil, fmt.Errorf("queries: no aggregate owns stream %s", stream)
	}
	recs, err := q.Events.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && len(recs) == 0) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	out := make([]Change, len(recs))
	for i, rec := range recs {
		ev, err := q.Registry.Decode(rec.Type, rec.Data)
		if err != nil {
			return nil, nil, err
		}
		out[i].Event = rec
		shown := describe == nil || describe(i)
		if shown {
			if out[i].Before, err = stateJSON(agg, i == 0); err != nil {
				return nil, nil, err
			}
		}
		agg.Apply(ev)
		if shown {
			if out[i].After, err = stateJSON(agg, false); err != nil {
				return nil, nil, err
			}
		}
	}
	return out, agg, nil
}

// stateJSON encodes a resource's state; before its first event there is none (null).
func stateJSON(agg domain.Aggregate, none bool) (json.RawMessage, error) {
	if none {
		return json.RawMessage("null"), nil
	}
	b, err := json.Marshal(agg)
	if err != nil {
		return nil, fmt.Errorf("queries: encode state: %w", err)
	}
	return b, nil
}
