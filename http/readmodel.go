package httpapi

import (
	"context"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
	"github.com/causeway/causeway/queries"
)

// The admin API reads the control plane's state through ReadModel: the in-memory model in
// embedded mode, PostgreSQL in server mode (projections/memory, projections/postgres). Every
// read takes the request's context and returns an error; a read model that fails answers 503
// (read_model_unavailable), never 404.

// Authenticator resolves a presented key to its actor without database I/O.
type Authenticator interface {
	Authenticate(presented string, now time.Time) (domain.Actor, error)
}

// PositionWaiter gives read-your-writes: wait until the read side has reached a position.
type PositionWaiter interface {
	WaitFor(ctx context.Context, pos eventstore.Position) error
}

// ReadModel is everything the admin API reads.
type ReadModel interface {
	Authenticator
	PositionWaiter
	projections.Reader
}

var _ ReadModel = (*memory.Model)(nil)

// reads is the read side's application layer over the admin API's read model and event
// store: read authorisation, and reads of the past (package queries).
func (a *Admin) reads() *queries.Queries {
	return &queries.Queries{Read: a.Read, Events: a.Deps.Store, Registry: a.Deps.Registry}
}

// AnalyticsStore is the request log store behind the analytics, logs and export routes:
// analytics/sqlite in embedded mode, analytics/clickhouse in server mode.
type AnalyticsStore interface {
	Groups(ctx context.Context, q analytics.GroupsQuery) (analytics.GroupsResult, error)
	Graph(ctx context.Context, q analytics.GraphQuery) (analytics.Graph, error)
	Summary(ctx context.Context, f analytics.Filter) (analytics.Summary, error)
	CacheSummary(ctx context.Context, f analytics.Filter) (analytics.CacheSummary, error)
	// Log returns one row of the organisation; false when there is none.
	Log(ctx context.Context, orgID, id string) (analytics.LogRecord, bool, error)
	Logs(ctx context.Context, q analytics.LogsQuery) (analytics.LogsPage, error)
	// ScanLogs calls fn for every row of f, oldest first, stopping at fn's first error.
	ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error
}
