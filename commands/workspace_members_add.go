package commands

import (
	"context"
	"fmt"

	"github.com/causeway/causeway/domain"
)

// AddWorkspaceMembers adds organisation members to a workspace with a role each (or changes
// the role of those already in it).
type AddWorkspaceMembers struct {
	WorkspaceID string
	Users       []domain.MemberRole
}

type addWorkspaceMembersHandler struct{ d Deps }

// NewAddWorkspaceMembersHandler refuses missing dependencies. Managers of the workspace add members
// (withWorkspaceRole).
func NewAddWorkspaceMembersHandler(d Deps) (Handler[AddWorkspaceMembers, Result], error) {
	return withWorkspaceRole(domain.RoleManager, "workspace_users.create", addWorkspaceMembersHandler{d}), d.check()
}

func (c AddWorkspaceMembers) workspace() string { return c.WorkspaceID }

func (h addWorkspaceMembersHandler) Handle(ctx context.Context, c AddWorkspaceMembers) (Result, error) {
	actor := RequestFrom(ctx).Actor
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		events, err := w.AddMembers("users", c.Users, h.d.Now())
		if err != nil {
			return nil, err
		}
		for i, u := range c.Users {
			role, _ := domain.ParseWorkspaceRole(u.Role)
			if err := mayGrant(actor, w, u.UserID, role, fmt.Sprintf("users[%d].role", i)); err != nil {
				return nil, err
			}
			if err := requireOrgUser(ctx, h.d, actor.OrganisationID, u.UserID, fmt.Sprintf("users[%d].id", i)); err != nil {
				return nil, err
			}
		}
		return events, nil
	})
}

// mayGrant: nobody grants a role above their own, nor changes the role of a member above
// them (a manager cannot add, demote or remove an admin).
func mayGrant(actor domain.Actor, w *domain.Workspace, userID string, role domain.Role, param string) error {
	if !actor.CanGrant(w.ID, role) {
		return &domain.Error{Code: domain.CodeForbidden, Param: param,
			Message: fmt.Sprintf("you cannot give the %s role: nobody grants more than they hold", role)}
	}
	if current, member := w.Members[userID]; member && !actor.CanGrant(w.ID, current) {
		return &domain.Error{Code: domain.CodeForbidden, Param: param,
			Message: fmt.Sprintf("you cannot change a workspace %s's role: they hold more than you", current)}
	}
	return nil
}

// requireOrgUser requires userID to be an active member of the organisation.
func requireOrgUser(ctx context.Context, d Deps, orgID, userID, param string) error {
	u, err := Load(ctx, d, domain.Stream(domain.UserPrefix, userID), func() *domain.User { return &domain.User{} })
	if err != nil {
		return err
	}
	if !u.Exists() || u.OrganisationID != orgID {
		return &domain.Error{Code: domain.CodeNotFound, Param: param, Message: "user " + userID + " is not a member of the organisation"}
	}
	return nil
}
