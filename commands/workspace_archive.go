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

// NewArchiveWorkspaceHandler refuses missing dependencies. Organisation admins
// manage workspaces with an organisation key (requireAdminKey).
func NewArchiveWorkspaceHandler(d Deps) (Handler[ArchiveWorkspace, Result], error) {
	return authorised(needs(requireAdminKey, "workspaces.delete"), archiveWorkspaceHandler{d}), d.check()
}

func (h archiveWorkspaceHandler) Handle(ctx context.Context, c ArchiveWorkspace) (Result, error) {
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.Archive(h.d.Now())
	})
}
