// Package queries is the read side's application layer, beside commands/ (the write side's).
// The admin API (http/) calls it and renders what it answers; it answers from the read models
// (projections.Reader: projections/memory or projections/postgres) and, for the past, from the
// event store.
//
// It owns read authorisation: which workspaces an actor sees (VisibleWorkspaces, CanSee), who
// may read keys, invites, integrations, users and organisation settings, what the security
// settings hide (the view-analytics settings, and the view-all-data settings that limit logs to
// one's own API keys), and the scope of request-log reads (TrafficWorkspaces, OwnKeysOnly),
// which http/ applies to the analytics wing's queries without this package knowing them. It
// owns the reads of resources as they were at an instant and their histories (asof.go,
// history.go). Every query takes a context.Context and returns an error; a read model that
// fails answers an error wrapping projections.ErrUnavailable, never "not found".
//
// It imports domain/, the eventstore contract and projections (the read interfaces and the
// in-memory model that folds the past); never gateway/, analytics/, http/, commands/ or a
// database driver (checked by scripts/boundaries.sh).
package queries
