package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// WorkspaceList selects the workspaces a list shows.
type WorkspaceList struct {
	Statuses     map[string]bool
	NameContains string
	ExactName    string
}

// Workspaces lists the workspaces of the actor's organisation that l selects and the actor
// sees, newest first.
func (q *Queries) Workspaces(ctx context.Context, actor domain.Actor, l WorkspaceList) ([]domain.Workspace, error) {
	return q.Read.Workspaces(ctx, projections.WorkspaceFilter{OrganisationID: actor.OrganisationID,
		Visible: VisibleWorkspaces(actor), Statuses: l.Statuses, NameContains: l.NameContains, ExactName: l.ExactName})
}

// WorkspaceByRef finds the workspace that ref names, by id or by slug (the reference's clients
// use both), in the organisation. Writes check access in their command; reads use
// VisibleWorkspace.
func (q *Queries) WorkspaceByRef(ctx context.Context, orgID, ref string) (domain.Workspace, error) {
	ws, ok, err := q.Read.Workspace(ctx, orgID, ref)
	if err == nil && !ok {
		ws, ok, err = q.Read.WorkspaceBySlug(ctx, orgID, ref)
	}
	if err != nil {
		return domain.Workspace{}, err
	}
	if !ok {
		return domain.Workspace{}, domain.Errorf(domain.CodeNotFound, "workspace %s not found", ref)
	}
	return ws, nil
}

// VisibleWorkspace is WorkspaceByRef for reads: a workspace the actor cannot see is not found.
func (q *Queries) VisibleWorkspace(ctx context.Context, actor domain.Actor, ref string) (domain.Workspace, error) {
	ws, err := q.WorkspaceByRef(ctx, actor.OrganisationID, ref)
	if err != nil {
		return ws, err
	}
	if !CanSee(actor, ws.ID) {
		return domain.Workspace{}, domain.Errorf(domain.CodeNotFound, "workspace %s not found", ref)
	}
	return ws, nil
}

// WorkspaceMembers lists the members of a workspace who are still members of its
// organisation, in the order they joined.
func (q *Queries) WorkspaceMembers(ctx context.Context, ws domain.Workspace) ([]projections.WorkspaceMember, error) {
	return q.Read.WorkspaceMembers(ctx, ws.OrganisationID, ws.ID)
}

// WorkspaceMember is one member of a workspace; not found when the user is not a member.
func (q *Queries) WorkspaceMember(ctx context.Context, ws domain.Workspace, userID string) (projections.WorkspaceMember, error) {
	members, err := q.WorkspaceMembers(ctx, ws)
	if err != nil {
		return projections.WorkspaceMember{}, err
	}
	for _, m := range members {
		if m.User.ID == userID {
			return m, nil
		}
	}
	return projections.WorkspaceMember{}, domain.Errorf(domain.CodeNotFound, "user %s is not a member of workspace %s", userID, ws.ID)
}

// EffectiveSecurity is the security settings in force in a workspace: the organisation's,
// with the workspace's overrides on top.
func (q *Queries) EffectiveSecurity(ctx context.Context, ws domain.Workspace) (domain.SecuritySettings, error) {
	return q.Read.EffectiveSecurity(ctx, ws.OrganisationID, ws.ID)
}

// WorkspaceSlug is the slug of a workspace of the organisation, "" when there is none.
func (q *Queries) WorkspaceSlug(ctx context.Context, orgID, workspaceID string) (string, error) {
	ws, ok, err := q.Read.Workspace(ctx, orgID, workspaceID)
	if err != nil || !ok {
		return "", err
	}
	return ws.Slug, nil
}

// Organisation is the actor's own organisation.
func (q *Queries) Organisation(ctx context.Context, actor domain.Actor) (domain.Organisation, error) {
	o, ok, err := q.Read.Organisation(ctx, actor.OrganisationID)
	if err != nil {
		return domain.Organisation{}, err
	}
	if !ok {
		return domain.Organisation{}, domain.Errorf(domain.CodeNotFound, "organisation %s not found", actor.OrganisationID)
	}
	return o, nil
}
