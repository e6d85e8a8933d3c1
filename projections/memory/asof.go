package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
)

// PastReader is what AsOf reads of the event store.
type PastReader interface {
	ReadAll(ctx context.Context, from eventstore.Position, max int) ([]eventstore.RecordedEvent, error)
	ReadStream(ctx context.Context, stream string, dir eventstore.Direction, from uint64, max int) ([]eventstore.RecordedEvent, error)
}

// asOfBatch is how many events AsOf reads at a time.
const asOfBatch = 1000

// AsOf folds the event store as it stood at an instant into a fresh in-memory model, without
// an audit log: every stream up to its last event recorded at or before at, which is how a
// single resource read as of the instant cuts its stream (commands.LoadAsOf), so that a list
// and each of its items agree. It returns the model and when the last event folded into it
// was recorded (zero when none was).
//
// The whole store is read once: an event recorded after at is skipped, and a stream in which
// a later event was recorded by at (a clock stepped back between them) is folded again from
// its own stream afterwards, so no event is held in memory beyond its batch.
func AsOf(ctx context.Context, store PastReader, reg *domain.Registry, at time.Time) (*Model, time.Time, error) {
	m := New(reg, Options{NoAudit: true})
	var last time.Time
	skipped := map[string]bool{}  // streams with an event recorded after at
	refold := map[string]uint64{} // streams to fold again, up to this revision
	for from := eventstore.Start; ; {
		batch, err := store.ReadAll(ctx, from, asOfBatch)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("projections: as of %s: %w", at.UTC().Format(time.RFC3339Nano), err)
		}
		for _, rec := range batch {
			if rec.RecordedAt.After(at) {
				skipped[rec.Stream] = true
				continue
			}
			if rec.RecordedAt.After(last) {
				last = rec.RecordedAt
			}
			if skipped[rec.Stream] {
				refold[rec.Stream] = rec.Revision
				continue
			}
			if err := m.foldPast(rec); err != nil {
				return nil, time.Time{}, err
			}
		}
		if len(batch) < asOfBatch {
			break
		}
		from = batch[len(batch)-1].Position
	}
	for stream, upto := range refold {
		recs, err := store.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("projections: as of %s: %s: %w", at.UTC().Format(time.RFC3339Nano), stream, err)
		}
		prefix, id := projections.SplitStream(stream)
		delete(m.byPrefix[prefix], id)
		for _, rec := range recs {
			if rec.Revision > upto {
				break
			}
			if err := m.foldPast(rec); err != nil {
				return nil, time.Time{}, err
			}
		}
	}
	return m, last, nil
}

// foldPast folds one event into the aggregate of its stream, as Apply does, without the audit
// record and position that a past model has no use for.
func (m *Model) foldPast(rec eventstore.RecordedEvent) error {
	ev, err := m.reg.Decode(rec.Type, rec.Data)
	if err != nil {
		return fmt.Errorf("projections: event %s at position %d (%s): %w", rec.ID, rec.Position, rec.Type, err)
	}
	prefix, id := projections.SplitStream(rec.Stream)
	agg, known := m.byPrefix[prefix][id]
	if !known {
		fresh, ok := m.reg.NewAggregate(rec.Stream)
		if !ok {
			return nil // a stream no aggregate owns (refusals)
		}
		agg = fresh
		if m.byPrefix[prefix] == nil {
			m.byPrefix[prefix] = map[string]domain.Aggregate{}
		}
		m.byPrefix[prefix][id] = agg
	}
	agg.Apply(ev)
	return nil
}
