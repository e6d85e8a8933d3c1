package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// RestoreWorkspace brings an archived workspace back; whoever may delete a workspace may
// undo it.
type RestoreWorkspace struct {
	WorkspaceID string
}

type restoreWorkspaceHandler struct{ d Deps }

func NewRestoreWorkspaceHandler(d Deps) (restoreWorkspaceHandler, error) {
	return restoreWorkspaceHandler{d}, d.check()
}

func (h restoreWorkspaceHandler) Handle(ctx context.Context, c RestoreWorkspace) (Result, error) {
	if err := requireAdminKey(RequestFrom(ctx).Actor, "workspaces.delete"); err != nil {
		return Result{}, err
	}
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.Restore(h.d.Now())
	})
}
