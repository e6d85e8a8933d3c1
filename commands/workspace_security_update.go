package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateWorkspaceSecurity overrides some of the organisation's security settings in one
// workspace; a nil value in Patch inherits the organisation's again.
type UpdateWorkspaceSecurity struct {
	WorkspaceID string
	Patch       domain.SecurityPatch
}

type updateWorkspaceSecurityHandler struct{ d Deps }

func NewUpdateWorkspaceSecurityHandler(d Deps) (updateWorkspaceSecurityHandler, error) {
	return updateWorkspaceSecurityHandler{d}, d.check()
}

func (h updateWorkspaceSecurityHandler) Handle(ctx context.Context, c UpdateWorkspaceSecurity) (Result, error) {
	if err := requireAdminKey(RequestFrom(ctx).Actor, "workspaces.update"); err != nil {
		return Result{}, err
	}
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.UpdateSecurity(c.Patch, h.d.Now())
	})
}
