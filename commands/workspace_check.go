package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// activeWorkspace loads a workspace and requires it to exist, belong to the actor's
// organisation and not be archived.
func activeWorkspace(ctx context.Context, d Deps, orgID, workspaceID string) (*domain.Workspace, error) {
	ws, err := Load(ctx, d, domain.Stream(domain.WorkspacePrefix, workspaceID), func() *domain.Workspace { return &domain.Workspace{} })
	if err != nil {
		return nil, err
	}
	if !ws.Exists() || ws.OrganisationID != orgID {
		return nil, &domain.Error{Code: domain.CodeNotFound, Param: "workspace_id", Message: "workspace " + workspaceID + " not found"}
	}
	if !ws.Active() {
		return nil, &domain.Error{Code: domain.CodeConflict, Param: "workspace_id", Message: "workspace " + workspaceID + " is archived"}
	}
	return ws, nil
}
