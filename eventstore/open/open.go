// Package open picks an event store backend from a URL. It is the one place that knows every
// backend, so only cmd/ imports it: the contract (eventstore), the backends and the code that
// uses a store must not, or they would pull in every database driver.
package open

import (
	"context"
	"fmt"
	"strings"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/esdb"
	"github.com/causeway/causeway/eventstore/postgres"
	"github.com/causeway/causeway/eventstore/sqlite"
)

// Open connects to the event store named by rawURL, choosing the backend by its scheme:
//
//	sqlite://PATH               embedded, a file (created with its directory if missing)
//	postgres://… postgresql://… PostgreSQL; the schema comes from migrations/postgres
//	esdb://… kurrentdb://…      EventStoreDB (also esdb+discover:// and kurrentdb+discover://)
func Open(ctx context.Context, rawURL string) (eventstore.Store, error) {
	scheme, _, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("%w: event store URL %q has no scheme (sqlite://, postgres://, esdb://)", eventstore.ErrInvalidArgument, eventstore.Redact(rawURL))
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		return asStore(sqlite.Open(ctx, rawURL[len(scheme)+len("://"):]))
	case "postgres", "postgresql":
		return asStore(postgres.Open(ctx, rawURL))
	case "esdb", "esdb+discover", "kurrentdb", "kurrentdb+discover", "kurrent", "kurrent+discover":
		return esdb.Open(ctx, rawURL)
	}
	return nil, fmt.Errorf("%w: event store URL scheme %q is not one of sqlite, postgres, esdb, kurrentdb", eventstore.ErrInvalidArgument, scheme)
}

// asStore keeps a failed open from returning a nil pointer inside a non-nil Store.
func asStore[S eventstore.Store](s S, err error) (eventstore.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
