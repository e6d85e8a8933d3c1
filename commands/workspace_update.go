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

// NewUpdateWorkspaceHandler refuses missing dependencies. Organisation admins
// manage workspaces with an organisation key (requireAdminKey).
func NewUpdateWorkspaceHandler(d Deps) (Handler[UpdateWorkspace, Result], error) {
	return authorised(needs(requireAdminKey, "workspaces.update"), updateWorkspaceHandler{d}), d.check()
}

func (h updateWorkspaceHandler) Handle(ctx context.Context, c UpdateWorkspace) (Result, error) {
	// The guardrails its defaults attach must be live guardrails of the organisation or of the
	// workspace; a workspace of another organisation is not found by the decision.
	if err := checkGuardrailRefs(ctx, h.d, RequestFrom(ctx).Actor.OrganisationID, c.WorkspaceID,
		domain.DefaultGuardrailRefs(c.Defaults), "", ""); err != nil {
		return Result{}, err
	}
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.Update(c.UpdateWorkspace, h.d.Now())
	})
}
