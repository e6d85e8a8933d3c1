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

// NewUpdateWorkspaceSecurityHandler refuses missing dependencies. Organisation admins
// manage workspaces with an organisation key (requireAdminKey).
func NewUpdateWorkspaceSecurityHandler(d Deps) (Handler[UpdateWorkspaceSecurity, Result], error) {
	return authorised(needs(requireAdminKey, "workspaces.update"), updateWorkspaceSecurityHandler{d}), d.check()
}

func (h updateWorkspaceSecurityHandler) Handle(ctx context.Context, c UpdateWorkspaceSecurity) (Result, error) {
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.UpdateSecurity(c.Patch, h.d.Now())
	})
}
