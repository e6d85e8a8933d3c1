// Package backend holds what every event store backend (sqlite, postgres, esdb) checks and
// derives the same way, so that the contract package keeps only the contract.
//
// It imports the contract and the standard library only: never a database driver or client,
// and never a backend.
package backend

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/causeway/causeway/eventstore"
)

// ValidateAppend checks what every backend requires of an append.
func ValidateAppend(stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) error {
	if stream == "" {
		return fmt.Errorf("%w: stream name is empty", eventstore.ErrInvalidArgument)
	}
	if len(stream) > 255 {
		return fmt.Errorf("%w: stream name is longer than 255 characters", eventstore.ErrInvalidArgument)
	}
	if !valid(expected) {
		return fmt.Errorf("%w: expected revision is not set (use Any, NoStream, StreamExists or Exact)", eventstore.ErrInvalidArgument)
	}
	if len(events) == 0 {
		return fmt.Errorf("%w: no events to append", eventstore.ErrInvalidArgument)
	}
	seen := make(map[uuid.UUID]struct{}, len(events))
	for i, ev := range events {
		if ev.ID == uuid.Nil {
			return fmt.Errorf("%w: event %d has no id", eventstore.ErrInvalidArgument, i)
		}
		if _, dup := seen[ev.ID]; dup {
			return fmt.Errorf("%w: event %d repeats id %s", eventstore.ErrInvalidArgument, i, ev.ID)
		}
		seen[ev.ID] = struct{}{}
		if ev.Type == "" {
			return fmt.Errorf("%w: event %d has no type", eventstore.ErrInvalidArgument, i)
		}
		if len(ev.Data) > 0 && !json.Valid(ev.Data) {
			return fmt.Errorf("%w: event %d data is not JSON", eventstore.ErrInvalidArgument, i)
		}
	}
	return nil
}

// valid reports whether e is one of the closed type's values; its zero value is not.
func valid(e eventstore.ExpectedRevision) bool {
	_, exact := e.ExactRevision()
	return e.IsAny() || e.IsNoStream() || e.IsStreamExists() || exact
}

// Satisfied reports whether a stream whose last revision is current (exists=false: no
// events) meets the condition. The SQL backends use it; EventStoreDB checks on the server.
func Satisfied(e eventstore.ExpectedRevision, current uint64, exists bool) bool {
	if n, exact := e.ExactRevision(); exact {
		return exists && current == n
	}
	switch {
	case e.IsAny():
		return true
	case e.IsNoStream():
		return !exists
	case e.IsStreamExists():
		return exists
	}
	return false
}

// Data returns the event's data, with null standing for none.
func Data(ev eventstore.EventData) []byte {
	if len(ev.Data) == 0 {
		return []byte("null")
	}
	return ev.Data
}

// SchemaVersion returns the event's schema version, 1 when unset.
func SchemaVersion(ev eventstore.EventData) int {
	if ev.SchemaVersion <= 0 {
		return 1
	}
	return ev.SchemaVersion
}
