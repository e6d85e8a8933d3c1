package queries

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
)

// world is an in-memory read model fed events one by one.
type world struct {
	t    *testing.T
	read *memory.Model
	pos  eventstore.Position
}

func newWorld(t *testing.T) *world { return &world{t: t, read: memory.New(domain.NewRegistry())} }

func (w *world) apply(stream string, ev domain.Event) {
	w.t.Helper()
	data, err := json.Marshal(ev)
	require.NoError(w.t, err)
	w.pos++
	require.NoError(w.t, w.read.Apply(eventstore.RecordedEvent{ID: uuid.New(), Stream: stream, Position: w.pos,
		Type: ev.EventType(), Data: data, RecordedAt: time.Now()}))
}

// A member's analytics and logs: the workspace whose membersViewAnalytics is off is left out
// of the analytics, and membersViewAllData off limits the logs to the member's own keys.
func TestTrafficScopeFollowsTheSecuritySettings(t *testing.T) {
	w := newWorld(t)
	now := time.Now()
	w.apply(domain.Stream(domain.OrganisationPrefix, "org"), domain.OrganisationCreated{OrganisationID: "org", Name: "Org", OwnerUserID: "owner", At: now})
	for _, ws := range []string{"ws-a", "ws-b"} {
		w.apply(domain.Stream(domain.WorkspacePrefix, ws), domain.WorkspaceCreated{WorkspaceID: ws, OrganisationID: "org", Name: ws, Slug: ws, At: now})
	}
	off := false
	w.apply(domain.Stream(domain.WorkspacePrefix, "ws-b"), domain.WorkspaceSecurityUpdated{WorkspaceID: "ws-b",
		Security: domain.SecurityOverrides{MembersViewAnalytics: &off, MembersViewAllData: &off}, At: now})
	w.apply(domain.Stream(domain.APIKeyPrefix, "k-own"), domain.APIKeyCreated{KeyID: "k-own", Name: "own", Type: domain.KeyWorkspaceUser,
		OrganisationID: "org", WorkspaceID: "ws-b", UserID: "u-1", Scopes: []string{"logs.view"}, Hash: domain.HashKey("own"), Masked: "x", At: now})
	w.apply(domain.Stream(domain.APIKeyPrefix, "k-other"), domain.APIKeyCreated{KeyID: "k-other", Name: "other", Type: domain.KeyWorkspaceUser,
		OrganisationID: "org", WorkspaceID: "ws-b", UserID: "u-2", Scopes: []string{"logs.view"}, Hash: domain.HashKey("other"), Masked: "y", At: now})
	q := &Queries{Read: w.read}
	ctx := context.Background()
	member := domain.Actor{Kind: domain.ActorUser, ID: "u-1", UserID: "u-1", OrganisationID: "org", OrgRole: domain.RoleMember,
		WorkspaceRoles: map[string]domain.Role{"ws-a": domain.RoleMember, "ws-b": domain.RoleMember}}

	ids, err := q.TrafficWorkspaces(ctx, member, "", true)
	require.NoError(t, err)
	assert.Equal(t, []string{"ws-a"}, ids, "analytics: ws-b hides them from members")
	_, err = q.TrafficWorkspaces(ctx, member, "ws-b", true)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	assert.ErrorContains(t, err, "membersViewAnalytics is off")
	ids, err = q.TrafficWorkspaces(ctx, member, "", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"ws-a", "ws-b"}, ids, "logs: both workspaces")
	_, err = q.TrafficWorkspaces(ctx, member, "ws-c", false)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err), "a workspace out of reach is refused, not named")

	own, only, err := q.OwnKeysOnly(ctx, member, []string{"ws-a"})
	require.NoError(t, err)
	assert.False(t, only, "ws-a lets members see every row")
	assert.Empty(t, own)
	own, only, err = q.OwnKeysOnly(ctx, member, []string{"ws-a", "ws-b"})
	require.NoError(t, err)
	assert.True(t, only, "one workspace with membersViewAllData off limits the whole answer")
	assert.Equal(t, []string{"k-own"}, own)
	_, err = OwnKeys([]string{"k-other"}, own)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))

	admin := domain.Actor{Kind: domain.ActorUser, ID: "owner", OrganisationID: "org", OrgRole: domain.RoleOwner}
	ids, err = q.TrafficWorkspaces(ctx, admin, "", true)
	require.NoError(t, err)
	assert.Nil(t, ids, "admins see every workspace")
	_, err = q.TrafficWorkspaces(ctx, admin, "nope", true)
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))
}

// failing is a read model whose every read fails, as PostgreSQL's do while it is unreachable.
type failing struct{ projections.Queries }

func (failing) View(context.Context, string, string, func(domain.Aggregate)) (bool, error) {
	return false, fmt.Errorf("%w: connection refused", projections.ErrUnavailable)
}

func (failing) Scan(context.Context, string, func(domain.Aggregate)) error {
	return fmt.Errorf("%w: connection refused", projections.ErrUnavailable)
}

func (failing) AuditRecords(context.Context, projections.AuditFilter, int, int) ([]projections.AuditRecord, int, error) {
	return nil, 0, projections.ErrUnavailable
}

func (failing) AuditRecord(context.Context, string, string) (projections.AuditRecord, bool, error) {
	return projections.AuditRecord{}, false, projections.ErrUnavailable
}

// A read model that fails is never "not found": every query passes its error on.
func TestAFailingReadModelIsNotNotFound(t *testing.T) {
	f := failing{}
	f.Queries = projections.Queries{Docs: f}
	q := &Queries{Read: f}
	ctx := context.Background()
	admin := domain.Actor{Kind: domain.ActorUser, ID: "owner", OrganisationID: "org", OrgRole: domain.RoleOwner}
	for name, read := range map[string]func() error{
		"workspace":    func() error { _, err := q.VisibleWorkspace(ctx, admin, "ws"); return err },
		"workspaces":   func() error { _, err := q.Workspaces(ctx, admin, WorkspaceList{}); return err },
		"key":          func() error { _, err := q.APIKey(ctx, admin, "k"); return err },
		"user":         func() error { _, err := q.User(ctx, admin, "u"); return err },
		"invite":       func() error { _, err := q.Invite(ctx, admin, "i"); return err },
		"policy":       func() error { _, err := q.UsageLimitPolicy(ctx, admin, "p"); return err },
		"integration":  func() error { _, err := q.VisibleIntegration(ctx, admin, "i"); return err },
		"provider":     func() error { _, err := q.VisibleProvider(ctx, admin, "p", "ws", "provider"); return err },
		"config":       func() error { _, err := q.VisibleConfig(ctx, admin, "c", map[string]bool{"active": true}); return err },
		"export":       func() error { _, err := q.VisibleLogExport(ctx, admin, "x"); return err },
		"organisation": func() error { _, err := q.Organisation(ctx, admin); return err },
		"audit record": func() error { _, err := q.AuditRecord(ctx, admin, "r", time.Time{}); return err },
		"traffic":      func() error { _, err := q.TrafficWorkspaces(ctx, admin, "ws", false); return err },
	} {
		err := read()
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, projections.ErrUnavailable), "%s: %v", name, err)
		assert.NotEqual(t, domain.CodeNotFound, domain.ErrorCode(err), name)
	}
}
