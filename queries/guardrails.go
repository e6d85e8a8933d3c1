package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// Guardrails: an organisation guardrail is seen by everyone of the organisation (any of its
// workspaces may attach it); a workspace guardrail by those who see its workspace.

// CanSeeGuardrail reports whether the actor may read the guardrail.
func CanSeeGuardrail(actor domain.Actor, g domain.Guardrail) bool {
	return g.WorkspaceID == "" || CanSee(actor, g.WorkspaceID)
}

// GuardrailList selects the guardrails a list shows: of a status in Statuses; a workspace's
// own when WorkspaceID is set (the actor must see it), else the organisation's own when
// Organisation is set, else every guardrail the actor sees.
type GuardrailList struct {
	Statuses     map[string]bool
	WorkspaceID  string
	Organisation bool
}

// Guardrails lists the guardrails of the actor's organisation that l selects and the actor
// sees, newest first.
func (q *Queries) Guardrails(ctx context.Context, actor domain.Actor, l GuardrailList) ([]domain.Guardrail, error) {
	f := projections.GuardrailFilter{OrganisationID: actor.OrganisationID, Statuses: l.Statuses, WorkspaceIDs: VisibleWorkspaces(actor)}
	switch {
	case l.WorkspaceID != "":
		ws, err := WorkspaceScope(actor, l.WorkspaceID)
		if err != nil {
			return nil, err
		}
		f.Scope, f.WorkspaceIDs = "workspace", ws
	case l.Organisation:
		f.Scope = "organisation"
	}
	return q.Read.Guardrails(ctx, f)
}

// VisibleGuardrail is the guardrail ref names (its id, or the slug it holds now), of a status
// in statuses, if the actor sees it; not found otherwise.
func (q *Queries) VisibleGuardrail(ctx context.Context, actor domain.Actor, ref string, statuses map[string]bool) (domain.Guardrail, error) {
	g, ok, err := q.Read.Guardrail(ctx, actor.OrganisationID, ref)
	if err != nil {
		return domain.Guardrail{}, err
	}
	if !ok || !statuses[g.Status] || !CanSeeGuardrail(actor, g) {
		return domain.Guardrail{}, domain.Errorf(domain.CodeNotFound, "guardrail %s not found", ref)
	}
	return g, nil
}
