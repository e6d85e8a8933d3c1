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

func NewChangeWorkspaceMemberRoleHandler(d Deps) (changeWorkspaceMemberRoleHandler, error) {
	return changeWorkspaceMemberRoleHandler{d}, d.check()
}

func (h changeWorkspaceMemberRoleHandler) Handle(ctx context.Context, c ChangeWorkspaceMemberRole) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if err := requireWorkspaceRole(actor, c.WorkspaceID, domain.RoleManager, "workspace_users.update"); err != nil {
		return Result{}, err
	}
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
