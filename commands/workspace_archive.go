package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchiveWorkspace is DELETE on a workspace: it is archived, keeps its slug and can be
// restored.
type ArchiveWorkspace struct {
	WorkspaceID string
}

type archiveWorkspaceHandler struct{ d Deps }

func NewArchiveWorkspaceHandler(d Deps) (archiveWorkspaceHandler, error) {
	return archiveWorkspaceHandler{d}, d.check()
}

func (h archiveWorkspaceHandler) Handle(ctx context.Context, c ArchiveWorkspace) (Result, error) {
	if err := requireAdminKey(RequestFrom(ctx).Actor, "workspaces.delete"); err != nil {
		return Result{}, err
	}
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.Archive(h.d.Now())
	})
}
