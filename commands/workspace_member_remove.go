package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// RemoveWorkspaceMember takes a user out of a workspace; their workspace keys stop working.
type RemoveWorkspaceMember struct {
	WorkspaceID string
	UserID      string
}

type removeWorkspaceMemberHandler struct{ d Deps }

// NewRemoveWorkspaceMemberHandler refuses missing dependencies. Managers of the workspace remove members
// (withWorkspaceRole).
func NewRemoveWorkspaceMemberHandler(d Deps) (Handler[RemoveWorkspaceMember, Result], error) {
	return withWorkspaceRole(domain.RoleManager, "workspace_users.delete", removeWorkspaceMemberHandler{d}), d.check()
}

func (c RemoveWorkspaceMember) workspace() string { return c.WorkspaceID }

func (h removeWorkspaceMemberHandler) Handle(ctx context.Context, c RemoveWorkspaceMember) (Result, error) {
	actor := RequestFrom(ctx).Actor
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		events, err := w.RemoveMember(c.UserID, h.d.Now())
		if err != nil {
			return nil, err
		}
		if current := w.Members[c.UserID]; !actor.CanGrant(w.ID, current) {
			return nil, domain.Errorf(domain.CodeForbidden, "you cannot remove a workspace %s: they hold more than you", current)
		}
		return events, nil
	})
}
