package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/google/uuid"

	"github.com/causeway/causeway/eventstore"
)

// Projection is a named, idempotent handler of the event stream. Its name is its checkpoint
// key.
type Projection interface {
	Name() string
	// Checkpoint is the position of the last event whose effects are stored.
	Checkpoint(ctx context.Context) (eventstore.Position, error)
	// ApplyBatch folds events (in position order, all after from) and advances the
	// checkpoint from from to the last one's position, atomically, by compare-and-set:
	// ErrCheckpointMoved if another runner advanced it first.
	ApplyBatch(ctx context.Context, from eventstore.Position, batch []eventstore.RecordedEvent) error
}

// ErrCheckpointMoved: another runner advanced the projection since this batch was read; the
// batch was rolled back and the runner resumes from the new checkpoint.
var ErrCheckpointMoved = errors.New("projections: checkpoint moved: another runner advanced this projection")

// Failer is a projection that is told when the runner stops it, so that a write waiting for it
// hears of the failure (the in-memory model).
type Failer interface {
	Fail(err error)
}

// Runner feeds projections from one subscription to the global stream. Events go, in batches,
// through a watermill router to one handler per projection; each handler skips what its
// projection's checkpoint already covers, so projections at different checkpoints share the
// subscription and a replayed batch is harmless.
//
// A handler that keeps failing on a batch stops its projection (the others go on): it is
// never skipped, health names the projection and the event, and a restart resumes there.
type Runner struct {
	Store       eventstore.Store
	Projections []Projection
	Log         *slog.Logger
	// MaxBatch bounds a batch; Retries bounds the attempts at one before the projection stops.
	MaxBatch int
	Retries  int

	mu      sync.Mutex
	stopped map[string]error
}

const eventsTopic = "causeway.events"

// Failures lists the projections that stopped, with why.
func (r *Runner) Failures() map[string]error {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]error, len(r.stopped))
	for k, v := range r.stopped {
		out[k] = v
	}
	return out
}

// Healthy reports nil, or the first stopped projection's failure.
func (r *Runner) Healthy(context.Context) error {
	for name, err := range r.Failures() {
		return fmt.Errorf("projection %s stopped: %w", name, err)
	}
	return nil
}

// Run subscribes from the lowest checkpoint and routes events until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	if r.MaxBatch <= 0 {
		r.MaxBatch = 500
	}
	if r.Retries <= 0 {
		r.Retries = 5
	}
	log := r.Log
	if log == nil {
		log = slog.Default()
	}
	logger := watermill.NewSlogLogger(log.With("component", "projections"))
	pubsub := gochannel.NewGoChannel(gochannel.Config{BlockPublishUntilSubscriberAck: true}, watermill.NopLogger{})
	defer pubsub.Close()
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, logger)
	if err != nil {
		return err
	}
	start := eventstore.Position(0)
	for i, p := range r.Projections {
		cp, err := p.Checkpoint(ctx)
		if err != nil {
			return fmt.Errorf("projection %s: checkpoint: %w", p.Name(), err)
		}
		if i == 0 || cp < start {
			start = cp
		}
		router.AddConsumerHandler(p.Name(), eventsTopic, pubsub, r.handler(ctx, p, log))
	}
	routerDone := make(chan error, 1)
	go func() { routerDone <- router.Run(ctx) }()
	select {
	case <-router.Running():
	case err := <-routerDone:
		return err
	}
	defer router.Close()

	sub, err := r.Store.Subscribe(ctx, start)
	if err != nil {
		return err
	}
	defer sub.Close()
	for {
		batch, err := nextBatch(ctx, sub, r.MaxBatch)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		payload, err := json.Marshal(batch)
		if err != nil {
			return err
		}
		if err := pubsub.Publish(eventsTopic, message.NewMessage(uuid.NewString(), payload)); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// nextBatch waits for one event, then takes whatever else is already waiting, up to max.
func nextBatch(ctx context.Context, sub eventstore.Subscription, max int) ([]eventstore.RecordedEvent, error) {
	first, err := sub.Recv(ctx)
	if err != nil {
		return nil, err
	}
	batch := []eventstore.RecordedEvent{first}
	now, cancel := context.WithCancel(ctx)
	cancel() // Recv on a done context returns at once when nothing is waiting
	for len(batch) < max {
		ev, err := sub.Recv(now)
		if err != nil {
			break
		}
		batch = append(batch, ev)
	}
	return batch, nil
}

// handler applies a batch to one projection: only what its checkpoint does not cover, retried
// with back-off, resuming from a moved checkpoint when another runner got there first.
func (r *Runner) handler(ctx context.Context, p Projection, log *slog.Logger) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		r.mu.Lock()
		_, stopped := r.stopped[p.Name()]
		r.mu.Unlock()
		if stopped {
			return nil
		}
		var batch []eventstore.RecordedEvent
		if err := json.Unmarshal(msg.Payload, &batch); err != nil {
			r.stop(p, log, err)
			return nil
		}
		backoff := 50 * time.Millisecond
		for attempt := 1; ; attempt++ {
			cp, err := p.Checkpoint(ctx)
			if err == nil {
				todo := after(batch, cp)
				if len(todo) == 0 {
					return nil
				}
				if err = p.ApplyBatch(ctx, cp, todo); err == nil {
					return nil
				}
				if errors.Is(err, ErrCheckpointMoved) {
					attempt-- // not a failure: read the new checkpoint and go on from there
					continue
				}
				err = fmt.Errorf("at event %s (position %d, %s): %w", todo[0].ID, todo[0].Position, todo[0].Type, err)
			}
			if ctx.Err() != nil {
				return nil
			}
			if attempt >= r.Retries {
				r.stop(p, log, err)
				return nil
			}
			log.Warn("projection failed, retrying", "projection", p.Name(), "attempt", attempt, "error", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 2*time.Second)
		}
	}
}

func (r *Runner) stop(p Projection, log *slog.Logger, err error) {
	log.Error("projection stopped", "projection", p.Name(), "error", err)
	r.mu.Lock()
	if r.stopped == nil {
		r.stopped = map[string]error{}
	}
	r.stopped[p.Name()] = err
	r.mu.Unlock()
	if f, ok := p.(Failer); ok {
		f.Fail(fmt.Errorf("projection %s stopped: %w", p.Name(), err))
	}
}

// after returns the events of batch past cp.
func after(batch []eventstore.RecordedEvent, cp eventstore.Position) []eventstore.RecordedEvent {
	for i, ev := range batch {
		if ev.Position > cp {
			return batch[i:]
		}
	}
	return nil
}
