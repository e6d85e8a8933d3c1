package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/causeway/causeway/eventstore"
)

// LagProbe bounds the events Lag reads past the lowest checkpoint: a projection further
// behind is reported LagProbe events behind (at least that many), and its wait is still
// exact, as it is the oldest event's.
const LagProbe = 1000

// Lag is how far one projection is behind the event store.
type Lag struct {
	Projection string
	// Events is how many events the store holds past the projection's checkpoint, up to
	// LagProbe.
	Events int
	// Waiting is how long the oldest of those events has been stored (0 when there are
	// none): how stale the projection is, whether events are frequent or rare. (The time
	// between the last event handled and the newest stored would report the quiet hours
	// before an event arrived as lag.)
	Waiting time.Duration
	// Stopped: the projection failed and the runner stopped it (see Failures).
	Stopped bool
}

// Lag reads each projection's checkpoint and the events stored past the lowest of them
// (one read of at most LagProbe events, none when every projection is caught up), and
// reports how far each is behind at now. It reads the store and the checkpoints: it is for
// a scrape or a health check, never the request path.
func (r *Runner) Lag(ctx context.Context, now time.Time) ([]Lag, error) {
	out := make([]Lag, len(r.Projections))
	cps := make([]eventstore.Position, len(r.Projections))
	stopped := r.Failures()
	for i, p := range r.Projections {
		cp, err := p.Checkpoint(ctx)
		if err != nil {
			return nil, fmt.Errorf("projection %s: checkpoint: %w", p.Name(), err)
		}
		cps[i] = cp
		_, out[i].Stopped = stopped[p.Name()]
		out[i].Projection = p.Name()
	}
	if len(out) == 0 {
		return out, nil
	}
	lowest := cps[0]
	for _, cp := range cps[1:] {
		lowest = min(lowest, cp)
	}
	evs, err := r.Store.ReadAll(ctx, lowest, LagProbe)
	if err != nil {
		return nil, fmt.Errorf("projections: read past checkpoint %d: %w", lowest, err)
	}
	for i := range out {
		for k, ev := range evs {
			if ev.Position > cps[i] {
				out[i].Events = len(evs) - k
				out[i].Waiting = max(now.Sub(ev.RecordedAt), 0)
				break
			}
		}
	}
	return out, nil
}
