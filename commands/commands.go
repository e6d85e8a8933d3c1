package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// EventStore is what commands need of the event store.
type EventStore interface {
	Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error)
	ReadStream(ctx context.Context, stream string, dir eventstore.Direction, from uint64, max int) ([]eventstore.RecordedEvent, error)
}

// Deps are what every handler needs.
type Deps struct {
	Store    EventStore
	Registry *domain.Registry
	Now      func() time.Time
}

func (d Deps) check() error {
	switch {
	case d.Store == nil:
		return errors.New("commands: nil event store")
	case d.Registry == nil:
		return errors.New("commands: nil registry")
	case d.Now == nil:
		return errors.New("commands: nil clock")
	}
	return nil
}

// Request is who acts and from where. The HTTP layer puts it in the context; background
// workers use the system actor.
type Request struct {
	Actor          domain.Actor
	RequestID      string
	ClientIP       string
	UserAgent      string
	Method         string
	Path           string
	IdempotencyKey string
	// Fingerprint identifies what the request asks (see Fingerprint); with an idempotency key
	// it is kept with the events, so that a retry can be told from another request.
	Fingerprint string
	// IfMatch, when set, is the stream revision the client last read (an If-Match ETag): the
	// command is refused with 412 when the stream has moved past it, and is not retried.
	IfMatch *uint64
}

type requestKey struct{}

// WithRequest returns ctx carrying r.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request in ctx (zero when none).
func RequestFrom(ctx context.Context) Request {
	r, _ := ctx.Value(requestKey{}).(Request)
	return r
}

// Result is what a command did: the resource it acted on and the global position of its last
// event, which the HTTP layer waits for the read models to reach before it answers.
type Result struct {
	ID       string
	Position eventstore.Position
	// Replayed: the request repeated an earlier one's idempotency key; nothing was written.
	Replayed bool
}

// idempotencyNamespace derives event and resource ids from idempotency keys.
var idempotencyNamespace = uuid.MustParse("6f1d8f43-3b5c-4c1e-9a57-2f0f8b1c7d21")

// NewID returns the id of a resource a command creates. With an idempotency key it is derived
// from the key (and the actor and purpose), so a retried create lands on the same stream and
// is recognised as a retry; without one it is random.
func NewID(ctx context.Context, purpose string) string {
	r := RequestFrom(ctx)
	if r.IdempotencyKey == "" {
		return uuid.NewString()
	}
	return uuid.NewSHA1(idempotencyNamespace, []byte(r.Actor.ID+"\x00"+r.IdempotencyKey+"\x00"+purpose)).String()
}

// eventIDs returns the ids of n events appended to stream: derived from the idempotency key
// when there is one, so a retry appends the same ids and the store writes nothing twice.
func eventIDs(ctx context.Context, stream string, n int) []uuid.UUID {
	r := RequestFrom(ctx)
	ids := make([]uuid.UUID, n)
	for i := range ids {
		if r.IdempotencyKey == "" {
			ids[i] = uuid.New()
			continue
		}
		ids[i] = uuid.NewSHA1(idempotencyNamespace,
			[]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%d", r.Actor.ID, r.IdempotencyKey, stream, i)))
	}
	return ids
}

// metadata is the audit part of every event: who, on whose behalf, from where.
func metadata(ctx context.Context) eventstore.Metadata {
	r := RequestFrom(ctx)
	md := eventstore.Metadata{
		ActorID:        r.Actor.ID,
		ActorKind:      eventstore.ActorKind(r.Actor.Kind),
		OrganisationID: r.Actor.OrganisationID,
		WorkspaceID:    r.Actor.WorkspaceID,
		RequestID:      r.RequestID,
		ClientIP:       r.ClientIP,
		UserAgent:      r.UserAgent,
		CorrelationID:  r.RequestID,
	}
	if r.Method != "" || r.Path != "" {
		md.Extra = map[string]string{"method": r.Method, "path": r.Path}
	}
	if r.IdempotencyKey != "" {
		if md.Extra == nil {
			md.Extra = map[string]string{}
		}
		md.Extra[MetaIdempotencyKey] = r.IdempotencyKey
		if r.Fingerprint != "" {
			md.Extra[MetaIdempotencyFingerprint] = r.Fingerprint
		}
	}
	return md
}

// load folds stream into agg and returns the revision an append must expect, with the
// recorded events (for idempotency checks).
func load(ctx context.Context, d Deps, stream string, agg domain.Aggregate) (eventstore.ExpectedRevision, []eventstore.RecordedEvent, error) {
	recs, err := d.Store.ReadStream(ctx, stream, eventstore.Forwards, 0, 0)
	// Empty without an error: the stream was created between the read and its existence
	// check. Expecting no stream is right: the append will conflict and the command retry.
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && len(recs) == 0) {
		return eventstore.NoStream, nil, nil
	}
	if err != nil {
		return eventstore.ExpectedRevision{}, nil, err
	}
	for _, rec := range recs {
		ev, err := d.Registry.Decode(rec.Type, rec.Data)
		if err != nil {
			return eventstore.ExpectedRevision{}, nil, err
		}
		agg.Apply(ev)
	}
	return eventstore.Exact(recs[len(recs)-1].Revision), recs, nil
}

// Load folds a stream into a fresh aggregate (reads that need the write side's view).
func Load[A domain.Aggregate](ctx context.Context, d Deps, stream string, newAgg func() A) (A, error) {
	agg := newAgg()
	_, _, err := load(ctx, d, stream, agg)
	return agg, err
}

// conflictWindow bounds how long a command is re-decided after other writers changed its
// stream between load and append: a plain write retries its conflicts until then (with a
// short, growing, jittered pause), so ordinary contention never fails it; only a write that
// asked for optimistic concurrency (If-Match) is refused when the stream has moved.
const (
	conflictWindow   = 30 * time.Second
	conflictPause    = time.Millisecond
	conflictPauseMax = 50 * time.Millisecond
)

// execute is every command's core: load the stream, decide, append with the exact revision
// read, and on a conflict start again from a fresh load. A request that repeats an earlier
// one's idempotency key finds its own events in the stream and writes nothing: it replays
// their result when it asks the same, and is refused when it asks something else.
func execute[A domain.Aggregate](ctx context.Context, d Deps, stream string, newAgg func() A, decide func(A) ([]domain.Event, error)) (Result, error) {
	firstID := eventIDs(ctx, stream, 1)[0]
	req := RequestFrom(ctx)
	idempotent := req.IdempotencyKey != ""
	deadline := time.Now().Add(conflictWindow)
	pause := conflictPause
	for {
		agg := newAgg()
		expected, recs, err := load(ctx, d, stream, agg)
		if err != nil {
			return Result{}, err
		}
		if idempotent {
			for _, rec := range recs {
				if rec.ID == firstID {
					if err := sameRequest(req, rec.Metadata); err != nil {
						return Result{}, err
					}
					return Result{Position: lastOfRequest(recs, rec), Replayed: true}, nil
				}
			}
		}
		if req.IfMatch != nil && len(recs) > 0 && recs[len(recs)-1].Revision != *req.IfMatch {
			return Result{}, domain.Errorf(domain.CodePrecondition,
				"the resource is at revision %d, not the revision %d that If-Match names: read it again",
				recs[len(recs)-1].Revision, *req.IfMatch)
		}
		events, err := decide(agg)
		if err != nil {
			return Result{}, err
		}
		if len(events) == 0 {
			return Result{}, nil
		}
		if req.IfMatch != nil {
			expected = eventstore.Exact(*req.IfMatch)
		}
		res, err := appendEvents(ctx, d, stream, expected, events)
		if errors.Is(err, eventstore.ErrWrongExpectedVersion) {
			if req.IfMatch != nil {
				return Result{}, domain.Errorf(domain.CodePrecondition,
					"the resource moved past the revision %d that If-Match names: read it again", *req.IfMatch)
			}
			if time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(pause/2 + rand.N(pause))
				pause = min(2*pause, conflictPauseMax)
				continue
			}
		}
		if err != nil {
			return Result{}, err
		}
		return Result{Position: res.Position}, nil
	}
}

// lastOfRequest returns the position of the last event that the request which wrote first
// appended (they share its metadata's request id).
func lastOfRequest(recs []eventstore.RecordedEvent, first eventstore.RecordedEvent) eventstore.Position {
	pos := first.Position
	for _, rec := range recs {
		if rec.Position > pos && rec.Metadata.RequestID == first.Metadata.RequestID && rec.Metadata.RequestID != "" {
			pos = rec.Position
		}
	}
	return pos
}

// appendEvents encodes events with the request's metadata and appends them.
func appendEvents(ctx context.Context, d Deps, stream string, expected eventstore.ExpectedRevision, events []domain.Event) (eventstore.AppendResult, error) {
	ids := eventIDs(ctx, stream, len(events))
	md := metadata(ctx)
	data := make([]eventstore.EventData, len(events))
	for i, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			return eventstore.AppendResult{}, fmt.Errorf("commands: encode %s: %w", ev.EventType(), err)
		}
		data[i] = eventstore.EventData{ID: ids[i], Type: ev.EventType(), SchemaVersion: 1, Data: b, Metadata: md}
	}
	return d.Store.Append(ctx, stream, expected, data...)
}

// reserve claims a unique name (a workspace slug, a user's e-mail) for ownerID; a name held
// by another owner is a conflict naming the field param.
func reserve(ctx context.Context, d Deps, kind, name, ownerID, param string) error {
	_, err := execute(ctx, d, domain.ReservationStream(kind, name), func() *domain.Reservation { return &domain.Reservation{} },
		func(r *domain.Reservation) ([]domain.Event, error) {
			return r.Reserve(kind, name, ownerID, param, d.Now())
		})
	return err
}

// release frees a name that ownerID holds.
func release(ctx context.Context, d Deps, kind, name, ownerID string) error {
	_, err := execute(ctx, d, domain.ReservationStream(kind, name), func() *domain.Reservation { return &domain.Reservation{} },
		func(r *domain.Reservation) ([]domain.Event, error) { return r.Release(ownerID, d.Now()) })
	return err
}
