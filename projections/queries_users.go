package projections

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// UserFilter selects the active users of an organisation; empty fields select everyone.
type UserFilter struct {
	OrganisationID string
	Email          string // exact, case-insensitive
	Role           domain.Role
}

// Users lists the active users that f selects, newest first.
func (q Queries) Users(ctx context.Context, f UserFilter) ([]domain.User, error) {
	return all(ctx, q.Docs, domain.UserPrefix, func(u *domain.User) bool {
		return u.OrganisationID == f.OrganisationID && u.Exists() &&
			(f.Email == "" || strings.EqualFold(u.Email, strings.TrimSpace(f.Email))) && (f.Role == "" || u.Role == f.Role)
	}, newestFirst(func(u *domain.User) (time.Time, string) { return u.CreatedAt, u.ID }))
}

// MemberWorkspaceIDs lists the workspaces of the organisation that userID is a member of,
// sorted; archived workspaces keep their members and are listed too.
func (q Queries) MemberWorkspaceIDs(ctx context.Context, orgID, userID string) ([]string, error) {
	out := []string{}
	err := q.Docs.Scan(ctx, domain.WorkspacePrefix, func(agg domain.Aggregate) {
		if w, ok := agg.(*domain.Workspace); ok && w.OrganisationID == orgID {
			if _, member := w.Members[userID]; member {
				out = append(out, w.ID)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// InviteFilter selects invites. Statuses are as a reader at Now sees them (a pending invite
// past its expiry is expired); nil Statuses select every status.
type InviteFilter struct {
	OrganisationID string
	Email          string // exact, case-insensitive
	Role           domain.Role
	Statuses       map[string]bool
	Now            time.Time
	Visible        func(domain.Invite) bool
}

// Invites lists the invites that f selects, newest first.
func (q Queries) Invites(ctx context.Context, f InviteFilter) ([]domain.Invite, error) {
	return all(ctx, q.Docs, domain.InvitePrefix, func(i *domain.Invite) bool {
		return i.OrganisationID == f.OrganisationID &&
			(f.Email == "" || strings.EqualFold(i.Email, strings.TrimSpace(f.Email))) && (f.Role == "" || i.Role == f.Role) &&
			(f.Statuses == nil || f.Statuses[i.StatusAt(f.Now)]) && (f.Visible == nil || f.Visible(*i))
	}, newestFirst(func(i *domain.Invite) (time.Time, string) { return i.CreatedAt, i.ID }))
}

// Invite returns one invite of the organisation.
func (q Queries) Invite(ctx context.Context, orgID, id string) (domain.Invite, bool, error) {
	i, ok, err := get[domain.Invite](ctx, q.Docs, domain.InvitePrefix, id)
	return i, ok && i.OrganisationID == orgID, err
}

// NotificationFilter selects recorded notifications.
type NotificationFilter struct {
	OrganisationID string
	Kind           string          // empty: every kind
	WorkspaceIDs   map[string]bool // nil: every notification; else only those of these workspaces
}

func (f NotificationFilter) keep(n *domain.Notification) bool {
	return n.OrganisationID == f.OrganisationID && (f.Kind == "" || n.Kind == f.Kind) &&
		(f.WorkspaceIDs == nil || (n.WorkspaceID != "" && f.WorkspaceIDs[n.WorkspaceID]))
}

// Notifications lists the notifications that f selects, newest first.
func (q Queries) Notifications(ctx context.Context, f NotificationFilter) ([]domain.Notification, error) {
	return all(ctx, q.Docs, domain.NotificationPrefix, f.keep,
		newestFirst(func(n *domain.Notification) (time.Time, string) { return n.CreatedAt, n.ID }))
}

// Notification returns one notification that f selects.
func (q Queries) Notification(ctx context.Context, f NotificationFilter, id string) (domain.Notification, bool, error) {
	n, ok, err := get[domain.Notification](ctx, q.Docs, domain.NotificationPrefix, id)
	return n, ok && f.keep(&n), err
}
