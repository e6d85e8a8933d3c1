// Package eventstore is Causeway's append-only log of events: the source of truth for the
// control plane and, read back, its audit log.
//
// This package is the contract only (Store, its types, ExpectedRevision and its errors), and it
// imports no database driver or client (make lint checks it). The backends are packages of
// their own, named after what they adapt: eventstore/sqlite (the embedded default, pure Go),
// eventstore/postgres (pgx) and eventstore/esdb (EventStoreDB / KurrentDB). Each translates its
// client's errors into the errors below, and nothing outside a backend imports its client
// library. eventstore/open picks a backend from a URL; only cmd/ imports it.
//
// Revisions are per stream and start at 0. Positions are global, start at 1 and only grow;
// Start (0) means "before the first event". Every read or subscription "from" a position is
// exclusive of it.
package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Position is an event's place in the global order of all streams.
type Position uint64

// Start is the position before the first event: reading from it reads everything.
const Start Position = 0

// StreamEnd, as the revision to read a stream from, means "from its last event" (backwards).
const StreamEnd uint64 = ^uint64(0)

// Direction of a stream read.
type Direction int

const (
	Forwards Direction = iota
	Backwards
)

func (d Direction) String() string {
	if d == Backwards {
		return "backwards"
	}
	return "forwards"
}

// ActorKind says what kind of principal caused an event.
type ActorKind string

const (
	ActorUser   ActorKind = "user"
	ActorAPIKey ActorKind = "api_key"
	ActorSystem ActorKind = "system"
)

// Metadata travels with every event. It is what makes the event stream an audit log: who did
// it, on whose behalf, from where, and what caused it.
type Metadata struct {
	ActorID        string    `json:"actor_id,omitempty"`
	ActorKind      ActorKind `json:"actor_kind,omitempty"`
	OrganisationID string    `json:"organisation_id,omitempty"`
	WorkspaceID    string    `json:"workspace_id,omitempty"`
	RequestID      string    `json:"request_id,omitempty"`
	ClientIP       string    `json:"client_ip,omitempty"`
	UserAgent      string    `json:"user_agent,omitempty"`
	CorrelationID  string    `json:"correlation_id,omitempty"`
	CausationID    string    `json:"causation_id,omitempty"`
	// Extra holds request details that have no field of their own (method, path, status).
	Extra map[string]string `json:"extra,omitempty"`
}

// EventData is an event to append. ID must be unique across the store: appending an event
// whose id is already stored is how a retried command is recognised and not written twice.
type EventData struct {
	ID            uuid.UUID
	Type          string
	SchemaVersion int
	Data          json.RawMessage
	Metadata      Metadata
}

// RecordedEvent is an event as stored: the envelope of the architecture.
type RecordedEvent struct {
	ID            uuid.UUID
	Stream        string
	Revision      uint64
	Position      Position
	Type          string
	SchemaVersion int
	Data          json.RawMessage
	Metadata      Metadata
	RecordedAt    time.Time
}

// AppendResult describes the last event of a successful append.
type AppendResult struct {
	NextRevision uint64   // revision of the last event now in the stream
	Position     Position // global position of that event
}

// ExpectedRevision is the optimistic-concurrency condition of an append. It is a closed type:
// the only values are Any, NoStream, StreamExists and Exact(n); the zero value is invalid.
type ExpectedRevision struct {
	kind     expectKind
	revision uint64
}

type expectKind uint8

const (
	expectInvalid expectKind = iota
	expectAny
	expectNoStream
	expectStreamExists
	expectExact
)

var (
	// Any appends whatever the stream's state.
	Any = ExpectedRevision{kind: expectAny}
	// NoStream appends only if the stream has no events (used for reservations).
	NoStream = ExpectedRevision{kind: expectNoStream}
	// StreamExists appends only if the stream has at least one event.
	StreamExists = ExpectedRevision{kind: expectStreamExists}
)

// Exact appends only if the stream's last event has revision n.
func Exact(n uint64) ExpectedRevision { return ExpectedRevision{kind: expectExact, revision: n} }

// IsAny, IsNoStream, IsStreamExists and ExactRevision let a backend map the condition.
func (e ExpectedRevision) IsAny() bool          { return e.kind == expectAny }
func (e ExpectedRevision) IsNoStream() bool     { return e.kind == expectNoStream }
func (e ExpectedRevision) IsStreamExists() bool { return e.kind == expectStreamExists }

// ExactRevision returns n and true for Exact(n).
func (e ExpectedRevision) ExactRevision() (uint64, bool) {
	return e.revision, e.kind == expectExact
}

func (e ExpectedRevision) String() string {
	switch e.kind {
	case expectAny:
		return "any"
	case expectNoStream:
		return "no stream"
	case expectStreamExists:
		return "stream exists"
	case expectExact:
		return fmt.Sprintf("revision %d", e.revision)
	}
	return "invalid"
}

// Errors of the contract. Backends return these (or errors that match them with errors.Is),
// never their client library's own.
var (
	ErrWrongExpectedVersion = errors.New("eventstore: wrong expected version")
	ErrStreamNotFound       = errors.New("eventstore: stream not found")
	ErrInvalidArgument      = errors.New("eventstore: invalid argument")
	// ErrDuplicateEventID: some but not all of an append's event ids are already stored, or
	// they are stored in another stream, so the append is neither new nor a clean retry.
	ErrDuplicateEventID = errors.New("eventstore: event id already stored")
	// ErrUnavailable: the backend cannot be reached; the caller may retry later.
	ErrUnavailable = errors.New("eventstore: backend unavailable")
	// ErrClosed: the store or subscription was closed.
	ErrClosed = errors.New("eventstore: closed")
)

// WrongExpectedVersionError carries the details of a failed concurrency check.
type WrongExpectedVersionError struct {
	Stream   string
	Expected ExpectedRevision
	// Actual is the stream's last revision; ActualExists is false when the stream is empty.
	Actual       uint64
	ActualExists bool
}

func (e *WrongExpectedVersionError) Error() string {
	actual := "no stream"
	if e.ActualExists {
		actual = fmt.Sprintf("revision %d", e.Actual)
	}
	return fmt.Sprintf("eventstore: wrong expected version on %q: expected %s, stream is at %s",
		e.Stream, e.Expected, actual)
}

func (e *WrongExpectedVersionError) Is(target error) bool { return target == ErrWrongExpectedVersion }

// Store is the whole contract, held to by every backend (see eventstoretest.Run). Code that
// uses a store should declare the smaller interface it needs.
type Store interface {
	// Append writes events to the end of stream if expected holds, atomically: all or none.
	// Appending events whose ids are already the stream's events at the expected place (a
	// retry after success) writes nothing and returns the original result.
	Append(ctx context.Context, stream string, expected ExpectedRevision, events ...EventData) (AppendResult, error)
	// ReadStream reads up to max events (max <= 0: all) of one stream starting at revision
	// from (inclusive; StreamEnd with Backwards starts at the last). A stream with no events
	// is ErrStreamNotFound.
	ReadStream(ctx context.Context, stream string, dir Direction, from uint64, max int) ([]RecordedEvent, error)
	// ReadAll reads up to max events (max must be > 0) of all streams after position from.
	ReadAll(ctx context.Context, from Position, max int) ([]RecordedEvent, error)
	// Subscribe delivers every event after position from, in position order: the history,
	// then live events as they are appended, until ctx ends or the subscription is closed.
	Subscribe(ctx context.Context, from Position) (Subscription, error)
	// Ping reports whether the backend answers.
	Ping(ctx context.Context) error
	Close() error
}

// Subscription is a stream of recorded events in position order. Delivery is at least once
// across restarts (resume from the last handled position), exactly once within a subscription.
type Subscription interface {
	// Recv blocks until the next event, ctx ends, or the subscription fails or is closed.
	Recv(ctx context.Context) (RecordedEvent, error)
	Close() error
}
