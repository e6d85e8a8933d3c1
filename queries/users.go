package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// Users lists the active users of the actor's organisation that f selects (its organisation is
// the actor's), newest first.
func (q *Queries) Users(ctx context.Context, actor domain.Actor, f projections.UserFilter) ([]domain.User, error) {
	f.OrganisationID = actor.OrganisationID
	return q.Read.Users(ctx, f)
}

// User is an active user of the actor's organisation; not found otherwise.
func (q *Queries) User(ctx context.Context, actor domain.Actor, id string) (domain.User, error) {
	u, ok, err := q.Read.User(ctx, actor.OrganisationID, id)
	if err != nil {
		return domain.User{}, err
	}
	if !ok {
		return domain.User{}, domain.Errorf(domain.CodeNotFound, "user %s not found", id)
	}
	return u, nil
}

// MemberWorkspaceIDs lists the workspaces a user is a member of now, sorted.
func (q *Queries) MemberWorkspaceIDs(ctx context.Context, u domain.User) ([]string, error) {
	return q.Read.MemberWorkspaceIDs(ctx, u.OrganisationID, u.ID)
}

// Invites lists the invites of the actor's organisation that f selects and the actor may see
// (CanSeeInvite), newest first.
func (q *Queries) Invites(ctx context.Context, actor domain.Actor, f projections.InviteFilter) ([]domain.Invite, error) {
	f.OrganisationID = actor.OrganisationID
	f.Visible = func(i domain.Invite) bool { return CanSeeInvite(actor, i) }
	return q.Read.Invites(ctx, f)
}

// Invite is one invite the actor may see; not found otherwise.
func (q *Queries) Invite(ctx context.Context, actor domain.Actor, id string) (domain.Invite, error) {
	i, ok, err := q.Read.Invite(ctx, actor.OrganisationID, id)
	if err != nil {
		return domain.Invite{}, err
	}
	if !ok || !CanSeeInvite(actor, i) {
		return domain.Invite{}, domain.Errorf(domain.CodeNotFound, "invite %s not found", id)
	}
	return i, nil
}

// notificationFilter selects the notifications the actor sees: outside the organisation
// admins, only those of a workspace the actor belongs to.
func notificationFilter(a domain.Actor, kind string) projections.NotificationFilter {
	return projections.NotificationFilter{OrganisationID: a.OrganisationID, Kind: kind, WorkspaceIDs: VisibleWorkspaces(a)}
}

// Notifications lists the notifications of kind (empty: every kind) that the actor sees,
// newest first.
func (q *Queries) Notifications(ctx context.Context, actor domain.Actor, kind string) ([]domain.Notification, error) {
	return q.Read.Notifications(ctx, notificationFilter(actor, kind))
}

// Notification is one notification the actor sees; not found otherwise.
func (q *Queries) Notification(ctx context.Context, actor domain.Actor, id string) (domain.Notification, error) {
	n, ok, err := q.Read.Notification(ctx, notificationFilter(actor, ""), id)
	if err != nil {
		return domain.Notification{}, err
	}
	if !ok {
		return domain.Notification{}, domain.Errorf(domain.CodeNotFound, "notification %s not found", id)
	}
	return n, nil
}

// CanSeeNotification is the notification filter's rule for one notification: outside the
// organisation admins, only notifications of a workspace the actor belongs to.
func CanSeeNotification(actor domain.Actor, n domain.Notification) bool {
	v := VisibleWorkspaces(actor)
	return v == nil || (n.WorkspaceID != "" && v[n.WorkspaceID])
}
