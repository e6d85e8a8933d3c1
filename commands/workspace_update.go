package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateWorkspace changes a workspace; see domain.UpdateWorkspace for what nil means.
type UpdateWorkspace struct {
	WorkspaceID string
	domain.UpdateWorkspace
}

type updateWorkspaceHandler struct{ d Deps }

func NewUpdateWorkspaceHandler(d Deps) (updateWorkspaceHandler, error) {
	return updateWorkspaceHandler{d}, d.check()
}

func (h updateWorkspaceHandler) Handle(ctx context.Context, c UpdateWorkspace) (Result, error) {
	if err := requireAdminKey(RequestFrom(ctx).Actor, "workspaces.update"); err != nil {
		return Result{}, err
	}
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.Update(c.UpdateWorkspace, h.d.Now())
	})
}
