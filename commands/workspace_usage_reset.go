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

// NewResetWorkspaceUsageHandler refuses missing dependencies. Organisation admins
// manage workspaces with an organisation key (requireAdminKey).
func NewResetWorkspaceUsageHandler(d Deps) (Handler[ResetWorkspaceUsage, Result], error) {
	return authorised(needs(requireAdminKey, "workspaces.update"), resetWorkspaceUsageHandler{d}), d.check()
}

func (h resetWorkspaceUsageHandler) Handle(ctx context.Context, c ResetWorkspaceUsage) (Result, error) {
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.ResetUsage(h.d.Now())
	})
}
