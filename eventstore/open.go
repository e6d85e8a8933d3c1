package eventstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Open connects to the event store named by rawURL, choosing the backend by its scheme:
//
//	sqlite://PATH               embedded, a file (created with its directory if missing)
//	postgres://… postgresql://… PostgreSQL; the schema comes from migrations/postgres
//	esdb://… kurrentdb://…      EventStoreDB (also esdb+discover:// and kurrentdb+discover://)
func Open(ctx context.Context, rawURL string) (Store, error) {
	scheme, _, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("%w: event store URL %q has no scheme (sqlite://, postgres://, esdb://)", ErrInvalidArgument, Redact(rawURL))
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		return asStore(OpenSQLite(ctx, rawURL[len(scheme)+len("://"):]))
	case "postgres", "postgresql":
		return asStore(OpenPostgres(ctx, rawURL))
	case "esdb", "esdb+discover", "kurrentdb", "kurrentdb+discover", "kurrent", "kurrent+discover":
		return OpenESDB(ctx, rawURL)
	}
	return nil, fmt.Errorf("%w: event store URL scheme %q is not one of sqlite, postgres, esdb, kurrentdb", ErrInvalidArgument, scheme)
}

// asStore keeps a failed open from returning a nil pointer inside a non-nil Store.
func asStore[S Store](s S, err error) (Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Redact hides the password of a URL so that it can be logged or shown in an error.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	return u.Redacted()
}
