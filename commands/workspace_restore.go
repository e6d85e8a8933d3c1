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

// NewRestoreWorkspaceHandler refuses missing dependencies. Organisation admins
// manage workspaces with an organisation key (requireAdminKey).
func NewRestoreWorkspaceHandler(d Deps) (Handler[RestoreWorkspace, Result], error) {
	return authorised(needs(requireAdminKey, "workspaces.delete"), restoreWorkspaceHandler{d}), d.check()
}

func (h restoreWorkspaceHandler) Handle(ctx context.Context, c RestoreWorkspace) (Result, error) {
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.Restore(h.d.Now())
	})
}
