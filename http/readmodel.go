package httpapi

import (
	"context"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
)

// The admin API reads only through these interfaces, one per area. The in-memory read model
// implements them now; the projections issue adds PostgreSQL behind the same ones.

// Authenticator resolves a presented key to its actor without database I/O.
type Authenticator interface {
	Authenticate(presented string, now time.Time) (domain.Actor, error)
}

// PositionWaiter gives read-your-writes: wait until the read side has reached a position.
type PositionWaiter interface {
	Position() eventstore.Position
	WaitFor(ctx context.Context, pos eventstore.Position) error
}

type KeyReader interface {
	APIKey(orgID, id string) (domain.APIKey, bool)
	APIKeys(f projections.KeyFilter) []domain.APIKey
}

type PolicyReader interface {
	RateLimitPolicy(orgID, id string) (domain.RateLimitPolicy, bool)
	RateLimitPolicies(f projections.PolicyFilter) []domain.RateLimitPolicy
	UsageLimitPolicy(orgID, id string) (domain.UsageLimitPolicy, bool)
	UsageLimitPolicies(f projections.PolicyFilter, typ string) []domain.UsageLimitPolicy
	UsageLimitPolicyEntities(orgID, id string, f projections.UsageEntityFilter) ([]domain.UsageLimitEntity, bool)
}

type WorkspaceReader interface {
	Organisation(id string) (domain.Organisation, bool)
	Workspace(orgID, id string) (domain.Workspace, bool)
	WorkspaceBySlug(orgID, slug string) (domain.Workspace, bool)
	Workspaces(f projections.WorkspaceFilter) []domain.Workspace
	WorkspaceMembers(orgID, workspaceID string) []projections.WorkspaceMember
	EffectiveSecurity(orgID, workspaceID string) domain.SecuritySettings
}

type UserReader interface {
	User(orgID, id string) (domain.User, bool)
	Users(f projections.UserFilter) []domain.User
	MemberWorkspaceIDs(orgID, userID string) []string
	Invite(orgID, id string) (domain.Invite, bool)
	Invites(f projections.InviteFilter) []domain.Invite
	Notification(f projections.NotificationFilter, id string) (domain.Notification, bool)
	Notifications(f projections.NotificationFilter) []domain.Notification
}

type AuditReader interface {
	// AuditRecords answers a page of the records f selects (limit 0: all) and their number.
	AuditRecords(ctx context.Context, f projections.AuditFilter, offset, limit int) ([]projections.AuditRecord, int, error)
	AuditRecord(orgID, id string) (projections.AuditRecord, bool)
}

// ReadModel is everything the admin API reads.
type ReadModel interface {
	Authenticator
	PositionWaiter
	KeyReader
	PolicyReader
	WorkspaceReader
	UserReader
	AuditReader
}

var _ ReadModel = (*projections.Model)(nil)

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
