package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// Reservation kinds of the invite flow: a user's e-mail (held while they are a member) and a
// pending invite's e-mail (held while it waits), so neither needs a read model to be unique.
const (
	EmailReservation       = "email"
	InviteEmailReservation = "invite_email"
)

// requireAnyScope: the actor's key carries one of scopes.
func requireAnyScope(a domain.Actor, scopes ...string) error {
	for _, s := range scopes {
		if a.HasScope(s) {
			return nil
		}
	}
	return forbidden("this API key lacks the scope %s", strings.Join(scopes, " or "))
}

// workspaceKey reports whether the actor is a workspace API key: it acts within its one
// workspace, whoever holds it, and never on the organisation's users.
func workspaceKey(a domain.Actor) bool {
	return a.Kind == domain.ActorAPIKey && a.KeyType != domain.KeyOrganisationService
}

// orgWide reports whether the actor manages the organisation's users: an owner or admin
// acting through an organisation key (or the system).
func orgWide(a domain.Actor) bool { return a.IsOrgAdmin() && !workspaceKey(a) }

// inviteScopes are the scopes that allow op (create, delete) on invites: the invites scope
// itself, or managing users of the organisation (admins) or of a workspace (managers).
func inviteScopes(a domain.Actor, op string) []string {
	if orgWide(a) {
		return []string{"invites." + op, "organisation_users." + op}
	}
	return []string{"invites." + op, "workspace_users." + op}
}

// managedWorkspace reports whether the actor may invite into ws as a workspace manager (or
// admin) of it; a workspace key reaches its own workspace only.
func managedWorkspace(a domain.Actor, ws string) bool {
	if workspaceKey(a) && ws != a.WorkspaceID {
		return false
	}
	role, ok := a.WorkspaceRole(ws)
	return ok && roleAtLeast(role, domain.RoleManager)
}

// authoriseInviter gates who may invite at all: organisation owners and admins, and
// workspace managers (for their own workspaces, checked by authoriseInviteGrant).
func authoriseInviter(a domain.Actor, op string) error {
	if err := requireAnyScope(a, inviteScopes(a, op)...); err != nil {
		return err
	}
	if orgWide(a) {
		return nil
	}
	if workspaceKey(a) && managedWorkspace(a, a.WorkspaceID) {
		return nil
	}
	for ws := range a.WorkspaceRoles {
		if managedWorkspace(a, ws) {
			return nil
		}
	}
	return forbidden("only organisation owners and admins, and workspace managers, may invite users")
}

// authoriseInviteGrant: a manager cannot add users with higher privileges than their own. A
// non-admin invites organisation members only, into workspaces they manage, with workspace
// roles up to their own.
func authoriseInviteGrant(a domain.Actor, role domain.Role, workspaces []domain.InviteWorkspace) error {
	if orgWide(a) {
		return nil
	}
	if role != domain.RoleMember {
		return &domain.Error{Code: domain.CodeForbidden, Param: "role",
			Message: fmt.Sprintf("a workspace manager can invite organisation members only, not %ss", role)}
	}
	if len(workspaces) == 0 {
		return &domain.Error{Code: domain.CodeForbidden, Param: "workspaces",
			Message: "a workspace manager must invite into a workspace they manage"}
	}
	for i, w := range workspaces {
		if !managedWorkspace(a, w.WorkspaceID) {
			return &domain.Error{Code: domain.CodeForbidden, Param: fmt.Sprintf("workspaces[%d].id", i),
				Message: fmt.Sprintf("you do not manage workspace %s", w.WorkspaceID)}
		}
		if !a.CanGrant(w.WorkspaceID, w.Role) {
			return &domain.Error{Code: domain.CodeForbidden, Param: fmt.Sprintf("workspaces[%d].role", i),
				Message: fmt.Sprintf("you cannot give the %s role: nobody grants more than they hold", w.Role)}
		}
	}
	return nil
}

// keyScopesHeld: the keys an accepted invite creates carry only scopes its inviter holds.
func keyScopesHeld(a domain.Actor, details *domain.InviteKeyDetails) error {
	if details == nil {
		return nil
	}
	if missing := a.ScopesWithin(details.Scopes); len(missing) > 0 {
		return &domain.Error{Code: domain.CodeForbidden, Param: "workspace_api_key_details.scopes",
			Message: "the invitee's keys cannot be given scopes the inviter lacks: " + strings.Join(missing, ", ")}
	}
	return nil
}

func newInvite() *domain.Invite { return &domain.Invite{} }

// loadInviteFor loads an invite of the actor's organisation that the actor may act on with
// op: what it could have created itself.
func loadInviteFor(ctx context.Context, d Deps, id, op string) (*domain.Invite, error) {
	actor := RequestFrom(ctx).Actor
	inv, err := Load(ctx, d, domain.Stream(domain.InvitePrefix, id), newInvite)
	if err != nil {
		return nil, err
	}
	if !inv.Exists() || inv.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "invite %s not found", id)
	}
	if err := authoriseInviter(actor, op); err != nil {
		return nil, err
	}
	if err := authoriseInviteGrant(actor, inv.Role, inv.Workspaces); err != nil {
		return nil, forbidden("this invite grants more than you hold: only an organisation admin may %s it", verbOf(op))
	}
	return inv, nil
}

func verbOf(op string) string {
	if op == "delete" {
		return "cancel"
	}
	return "resend"
}

// invitedWorkspaces checks that every invited workspace exists in the organisation and is
// active, naming the offending item.
func invitedWorkspaces(ctx context.Context, d Deps, orgID string, workspaces []domain.InviteWorkspace) error {
	for i, w := range workspaces {
		if _, err := activeWorkspace(ctx, d, orgID, w.WorkspaceID); err != nil {
			var e *domain.Error
			if errors.As(err, &e) {
				out := *e
				out.Param = fmt.Sprintf("workspaces[%d].id", i)
				return &out
			}
			return err
		}
	}
	return nil
}

func freshWorkspace() *domain.Workspace { return &domain.Workspace{} }

func newReservation() *domain.Reservation { return &domain.Reservation{} }

// The e-mail reservations go through these, which keep each name within the event store's
// bound on stream names.
func loadEmailHold(ctx context.Context, d Deps, kind, email string) (*domain.Reservation, error) {
	return Load(ctx, d, domain.ReservationStream(kind, email), newReservation)
}

func holdEmail(ctx context.Context, d Deps, kind, email, ownerID string) error {
	return reserve(ctx, d, kind, email, ownerID, "email")
}

func releaseEmail(ctx context.Context, d Deps, kind, email, ownerID string) error {
	return release(ctx, d, kind, email, ownerID)
}

// emailHolder reports whether email belongs to an active user of the organisation (the user
// that holds the e-mail's reservation), and otherwise who holds it stale: a user removed
// without releasing it, whose hold may go.
func emailHolder(ctx context.Context, d Deps, orgID, email string) (member bool, stale string, err error) {
	r, err := loadEmailHold(ctx, d, EmailReservation, email)
	if err != nil || !r.Held {
		return false, "", err
	}
	u, err := Load(ctx, d, domain.Stream(domain.UserPrefix, r.OwnerID), func() *domain.User { return &domain.User{} })
	if err != nil {
		return false, "", err
	}
	if u.Exists() && u.OrganisationID == orgID {
		return true, "", nil
	}
	if u.Exists() {
		return false, "", nil // another organisation's user: reserving will say the e-mail is taken
	}
	return false, r.OwnerID, nil
}

// otherInvite finds who holds the pending-invite reservation of email other than inviteID:
// pending is an invite still waiting; stale one that is no longer pending (accepted,
// cancelled or expired) and whose hold can be released.
func otherInvite(ctx context.Context, d Deps, email, inviteID string) (pending, stale string, err error) {
	r, err := loadEmailHold(ctx, d, InviteEmailReservation, email)
	if err != nil || !r.Held || r.OwnerID == inviteID {
		return "", "", err
	}
	other, err := Load(ctx, d, domain.Stream(domain.InvitePrefix, r.OwnerID), newInvite)
	if err != nil {
		return "", "", err
	}
	if other.Exists() && other.StatusAt(d.Now()) == domain.InviteStatusPending {
		return other.ID, "", nil
	}
	return "", r.OwnerID, nil
}

// holdInviteEmail claims the pending-invite reservation of email for inviteID, releasing a
// stale holder first.
func holdInviteEmail(ctx context.Context, d Deps, email, inviteID, stale string) error {
	if stale != "" {
		// Housekeeping outside the request's idempotency: its derived event ids would make the
		// reservation that follows on the same stream look like a replay.
		req := RequestFrom(ctx)
		req.IdempotencyKey = ""
		if err := releaseEmail(WithRequest(ctx, req), d, InviteEmailReservation, email, stale); err != nil {
			return err
		}
	}
	return holdEmail(ctx, d, InviteEmailReservation, email, inviteID)
}

// streamPosition is the global position of a stream's last event (0 when it has none): the
// position a multi-stream command's answer waits for.
func streamPosition(ctx context.Context, d Deps, stream string) (eventstore.Position, error) {
	recs, err := d.Store.ReadStream(ctx, stream, eventstore.Backwards, eventstore.StreamEnd, 1)
	if errors.Is(err, eventstore.ErrStreamNotFound) || len(recs) == 0 {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return recs[0].Position, nil
}

// notifyInvite records the invite e-mail as a notification: to the invitee, about the invite.
// The token is never in it: a mailer builds the link from a token it is handed directly.
func notifyInvite(ctx context.Context, d Deps, inv domain.Invite, purpose string) (eventstore.Position, error) {
	org, err := Load(ctx, d, domain.Stream(domain.OrganisationPrefix, inv.OrganisationID), func() *domain.Organisation { return &domain.Organisation{} })
	if err != nil {
		return 0, err
	}
	id := NewID(ctx, "notification:"+purpose+":"+inv.ID)
	subject := "You are invited to join " + org.Name
	if org.Name == "" {
		subject = "You are invited to join an organisation"
	}
	if err := notify(ctx, d, domain.NotificationRecorded{NotificationID: id, OrganisationID: inv.OrganisationID,
		Kind: domain.NotifyInvite, Recipients: []string{inv.Email}, Subject: subject, ResourceType: domain.InvitePrefix,
		ResourceID: inv.ID, Data: map[string]string{"invite_id": inv.ID, "role": string(inv.Role),
			"expires_at": inv.ExpiresAt.UTC().Format(time.RFC3339), "invited_by": RequestFrom(ctx).Actor.ID},
		At: d.Now()}); err != nil {
		return 0, err
	}
	return streamPosition(ctx, d, domain.Stream(domain.NotificationPrefix, id))
}
