package projections

import (
	"context"
	"time"

	"github.com/causeway/causeway/eventstore"
)

// Replay rebuilds read models from the events: into memory, or into fresh PostgreSQL tables
// beside the live ones (postgres.Rebuild), which it can then compare with the live tables or
// swap in.

// ReplayStats says what a rebuild did.
type ReplayStats struct {
	Events   int
	Position eventstore.Position
	Elapsed  time.Duration
}

// EventsPerSecond is the rebuild's speed.
func (s ReplayStats) EventsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Events) / s.Elapsed.Seconds()
}

// replayBatch is how many events a rebuild folds per transaction.
const replayBatch = 1000

// Rebuild folds the events after m's checkpoint, up to position upTo (0: the head), into m.
func Rebuild(ctx context.Context, store eventstore.Store, m Projection, upTo eventstore.Position) (ReplayStats, error) {
	start := time.Now()
	from, err := m.Checkpoint(ctx)
	if err != nil {
		return ReplayStats{}, err
	}
	stats := ReplayStats{Position: from}
	for {
		batch, err := store.ReadAll(ctx, stats.Position, replayBatch)
		if err != nil {
			return stats, err
		}
		if upTo > 0 {
			batch = Before(batch, upTo)
		}
		if len(batch) == 0 {
			stats.Elapsed = time.Since(start)
			return stats, nil
		}
		if err := m.ApplyBatch(ctx, stats.Position, batch); err != nil {
			return stats, err
		}
		stats.Events += len(batch)
		stats.Position = batch[len(batch)-1].Position
	}
}

// Before returns the events of batch at or before upTo.
func Before(batch []eventstore.RecordedEvent, upTo eventstore.Position) []eventstore.RecordedEvent {
	for i, ev := range batch {
		if ev.Position > upTo {
			return batch[:i]
		}
	}
	return batch
}
