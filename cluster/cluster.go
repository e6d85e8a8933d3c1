// Package cluster is what the instances of one deployment know of each other: each records
// its id, version, start time, last heartbeat and the event position its routing tables have
// applied (the applied-version watermark), so that "has this write reached every gateway?"
// has an answer. It is the contract (the types, the Registry a backend implements, the
// heartbeat and the wait); cluster/postgres is the backend.
//
// It imports only the standard library: never a driver, the gateway, HTTP, commands or
// projections.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Instance is one instance as the registry last heard of it.
type Instance struct {
	ID        string    `json:"id"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"last_heartbeat_at"`
	Applied   uint64    `json:"applied_position"` // the event position its routing tables have applied
	// LagEvents is how many events it is behind the most advanced live instance; Lag answers
	// it, List does not.
	LagEvents uint64 `json:"lag_events"`
}

// Registry keeps the instances of a deployment.
type Registry interface {
	// Beat records inst's heartbeat now, with its applied position. It answers whether inst
	// was not listed before (its first beat, or it had been forgotten as stale).
	Beat(ctx context.Context, inst Instance) (joined bool, err error)
	// List answers the instances whose last heartbeat is within alive of now, by id.
	List(ctx context.Context, alive time.Duration) ([]Instance, error)
	// Stale answers the ids of the instances whose last heartbeat is older than alive.
	Stale(ctx context.Context, alive time.Duration) ([]string, error)
	// Forget removes an instance (one stopped cleanly, or one stale whose leases were
	// reclaimed).
	Forget(ctx context.Context, id string) error
}

// Claims hands each item of background work (a log export's run, a delivery) to one instance at
// a time. A claim lasts its ttl unless its holder claims it again (a renewal), so the items of an
// instance that died are taken over by another once its claims lapse; a holder that finishes
// releases its claim.
type Claims interface {
	// Claim answers whether holder holds item now: it took it (free, or lapsed), or already
	// held it and renewed it for ttl.
	Claim(ctx context.Context, item, holder string, ttl time.Duration) (bool, error)
	// Release gives item up, if holder holds it.
	Release(ctx context.Context, item, holder string) error
}

// Defaults of the heartbeat and the wait.
const (
	// BeatEvery is how often an instance beats when its position does not move.
	BeatEvery = time.Second
	// Alive is how long an instance stays listed after its last heartbeat.
	Alive = 5 * time.Second
	// watchEvery is how often the heartbeat looks for a new applied position, which it records
	// at once; and how often a wait looks at the registry.
	watchEvery = 10 * time.Millisecond
)

// Lag sets each instance's LagEvents against the most advanced of them.
func Lag(insts []Instance) []Instance {
	var head uint64
	for _, i := range insts {
		head = max(head, i.Applied)
	}
	for k := range insts {
		insts[k].LagEvents = head - insts[k].Applied
	}
	return insts
}

// Member is what Heartbeat needs of its instance.
type Member struct {
	Self    Instance
	Applied func() uint64 // the routing tables' position now
	// Reclaim gives back the leases of a stopped instance; Lost is told that this instance was
	// itself forgotten as stale (its heartbeat stopped for too long), so its leases were
	// reclaimed by another and it must hold none.
	Reclaim func(ctx context.Context, id string) error
	Lost    func()
	Log     *slog.Logger
}

// Heartbeat records m.Self in reg until ctx ends: at once when Applied moves, and every
// BeatEvery otherwise. Each beat also hands the instances gone stale (3×Alive) to Reclaim,
// then forgets them; a stale instance is reclaimed by whichever live one sees it first, and
// reclaiming twice is harmless. On return it forgets m.Self.
func Heartbeat(ctx context.Context, reg Registry, m Member) {
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	self, log := m.Self, m.Log
	if log == nil {
		log = slog.Default()
	}
	var last time.Time
	var failing, beaten bool
	for {
		pos := m.Applied()
		if pos != self.Applied || time.Since(last) >= BeatEvery {
			self.Applied = pos
			bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			joined, err := reg.Beat(bctx, self)
			if err == nil && joined && beaten && m.Lost != nil {
				log.Warn("cluster: this instance had been forgotten as stopped, and its leases given back; it holds none now",
					"instance", self.ID)
				m.Lost()
			}
			beaten = beaten || err == nil
			if err == nil && time.Since(last) >= BeatEvery {
				reapStale(bctx, reg, self.ID, m.Reclaim, log)
			}
			cancel()
			switch {
			case err != nil && !failing && ctx.Err() == nil:
				failing = true
				log.Warn("cluster: heartbeat failed; retried", "instance", self.ID, "err", err)
			case err == nil && failing:
				failing = false
				log.Info("cluster: heartbeat recorded again", "instance", self.ID)
			}
			if err == nil {
				last = time.Now()
			}
		}
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = reg.Forget(fctx, self.ID)
			cancel()
			return
		case <-tick.C:
		}
	}
}

func reapStale(ctx context.Context, reg Registry, self string, reclaim func(context.Context, string) error, log *slog.Logger) {
	stale, err := reg.Stale(ctx, Alive*3)
	if err != nil {
		return
	}
	for _, id := range stale {
		if id == self {
			continue
		}
		if reclaim != nil {
			if err := reclaim(ctx, id); err != nil {
				log.Warn("cluster: could not reclaim a stopped instance's leases", "instance", id, "err", err)
				continue
			}
		}
		if err := reg.Forget(ctx, id); err == nil {
			log.Info("cluster: forgot a stopped instance, and gave back its leases", "instance", id)
		}
	}
}

// BehindError is a wait that ended before every live instance applied the position.
type BehindError struct {
	Position uint64
	Behind   []Instance
}

func (e *BehindError) Error() string {
	ids := make([]string, len(e.Behind))
	for i, b := range e.Behind {
		ids[i] = fmt.Sprintf("%s (at %d)", b.ID, b.Applied)
	}
	return fmt.Sprintf("not every instance has applied position %d in time; still behind: %s", e.Position, strings.Join(ids, ", "))
}

// WaitApplied waits until every live instance has applied pos, or ctx ends: then it answers a
// *BehindError naming the instances still behind.
func WaitApplied(ctx context.Context, reg Registry, pos uint64) error {
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	var behind []Instance
	for {
		insts, err := reg.List(ctx, Alive)
		if err == nil {
			behind = slices.DeleteFunc(insts, func(i Instance) bool { return i.Applied >= pos })
			if len(behind) == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil && behind == nil {
				return fmt.Errorf("cluster: the instances could not be read: %w", err)
			}
			return &BehindError{Position: pos, Behind: behind}
		case <-tick.C:
		}
	}
}
