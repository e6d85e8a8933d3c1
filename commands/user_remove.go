package commands

import (
	"context"
	"errors"

	"github.com/causeway/causeway/domain"
)

// RemoveUser takes a user out of the organisation: out of every workspace, their e-mail free
// to be invited again, their workspace-user keys refused from then on.
type RemoveUser struct{ UserID string }

// MembershipIndex says which workspaces a user belongs to. Memberships live in the
// workspaces' streams, so only a read model can list them by user; each removal is still
// decided on the workspace's own stream.
type MembershipIndex interface {
	MemberWorkspaceIDs(ctx context.Context, orgID, userID string) ([]string, error)
}

type removeUserHandler struct {
	d           Deps
	memberships MembershipIndex
}

// NewRemoveUserHandler refuses missing dependencies. Users are managed by the organisation's
// owners and admins (requireUserManager).
func NewRemoveUserHandler(d Deps, memberships MembershipIndex) (Handler[RemoveUser, Result], error) {
	if memberships == nil {
		return removeUserHandler{}, errors.New("commands: nil membership index")
	}
	return authorised(needs(requireUserManager, "organisation_users.delete"), removeUserHandler{d, memberships}), d.check()
}

func (h removeUserHandler) Handle(ctx context.Context, c RemoveUser) (Result, error) {
	actor := RequestFrom(ctx).Actor
	u, err := loadUserOf(ctx, h.d, actor.OrganisationID, c.UserID)
	if err != nil {
		return Result{}, err
	}
	owner, err := organisationOwner(ctx, h.d, actor.OrganisationID)
	if err != nil {
		return Result{}, err
	}
	now := h.d.Now()
	// The removal itself comes first: it is what makes the user's keys stop working.
	res, err := execute(ctx, h.d, domain.Stream(domain.UserPrefix, u.ID), newUser,
		func(u *domain.User) ([]domain.Event, error) {
			return u.Remove(domain.RemoveUser{ActorRole: actor.OrgRole, OrganisationOwner: owner == u.ID}, now)
		})
	if err != nil {
		return Result{}, err
	}
	res.ID = u.ID
	memberOf, err := h.memberships.MemberWorkspaceIDs(ctx, actor.OrganisationID, u.ID)
	if err != nil {
		return res, err
	}
	for _, ws := range memberOf {
		left, err := execute(ctx, h.d, domain.Stream(domain.WorkspacePrefix, ws), freshWorkspace,
			func(w *domain.Workspace) ([]domain.Event, error) {
				if w.OrganisationID != actor.OrganisationID {
					return nil, nil
				}
				return u.LeaveWorkspace(w, now), nil
			})
		if err != nil {
			return Result{}, err
		}
		res.Position = max(res.Position, left.Position)
	}
	return res, releaseEmail(ctx, h.d, EmailReservation, u.Email, u.ID)
}
