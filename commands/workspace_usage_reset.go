package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ResetWorkspaceUsage starts a new usage period of a workspace: on its schedule (the system)
// or when an organisation admin asks.
type ResetWorkspaceUsage struct {
	WorkspaceID string
}

type resetWorkspaceUsageHandler struct{ d Deps }

func NewResetWorkspaceUsageHandler(d Deps) (resetWorkspaceUsageHandler, error) {
	return resetWorkspaceUsageHandler{d}, d.check()
}

func (h resetWorkspaceUsageHandler) Handle(ctx context.Context, c ResetWorkspaceUsage) (Result, error) {
	if err := requireAdminKey(RequestFrom(ctx).Actor, "workspaces.update"); err != nil {
		return Result{}, err
	}
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.ResetUsage(h.d.Now())
	})
}
