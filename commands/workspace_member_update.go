package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ChangeWorkspaceMemberRole gives a member of a workspace another role.
type ChangeWorkspaceMemberRole struct {
	WorkspaceID string
	UserID      string
	Role        string
}

type changeWorkspaceMemberRoleHandler struct{ d Deps }

// NewChangeWorkspaceMemberRoleHandler refuses missing dependencies. Managers of the workspace change members' roles
// (withWorkspaceRole).
func NewChangeWorkspaceMemberRoleHandler(d Deps) (Handler[ChangeWorkspaceMemberRole, Result], error) {
	return withWorkspaceRole(domain.RoleManager, "workspace_users.update", changeWorkspaceMemberRoleHandler{d}), d.check()
}

func (c ChangeWorkspaceMemberRole) workspace() string { return c.WorkspaceID }

func (h changeWorkspaceMemberRoleHandler) Handle(ctx context.Context, c ChangeWorkspaceMemberRole) (Result, error) {
	actor := RequestFrom(ctx).Actor
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		events, err := w.ChangeMemberRole(c.UserID, c.Role, h.d.Now())
		if err != nil {
			return nil, err
		}
		role, _ := domain.ParseWorkspaceRole(c.Role)
		if err := mayGrant(actor, w, c.UserID, role, "role"); err != nil {
			return nil, err
		}
		return events, nil
	})
}
