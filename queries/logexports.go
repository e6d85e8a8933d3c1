package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// LogExports lists the exports of the actor's organisation, of workspaceID when set (which
// the actor must see) or of every workspace it sees, newest first.
func (q *Queries) LogExports(ctx context.Context, actor domain.Actor, workspaceID string) ([]domain.LogExport, error) {
	ws, err := WorkspaceScope(actor, workspaceID)
	if err != nil {
		return nil, err
	}
	return q.Read.LogExports(ctx, projections.LogExportFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: ws})
}

// VisibleLogExport is an export of the actor's organisation whose workspace it sees; not found
// otherwise.
func (q *Queries) VisibleLogExport(ctx context.Context, actor domain.Actor, id string) (domain.LogExport, error) {
	x, err := q.LogExport(ctx, actor.OrganisationID, id)
	if err != nil {
		return x, err
	}
	if !CanSee(actor, x.WorkspaceID) {
		return domain.LogExport{}, domain.Errorf(domain.CodeNotFound, "log export %s not found", id)
	}
	return x, nil
}

// LogExport is an export of the organisation (a download, authorised by its token); not found
// when there is none.
func (q *Queries) LogExport(ctx context.Context, orgID, id string) (domain.LogExport, error) {
	x, ok, err := q.Read.LogExport(ctx, orgID, id)
	if err != nil {
		return domain.LogExport{}, err
	}
	if !ok {
		return domain.LogExport{}, domain.Errorf(domain.CodeNotFound, "log export %s not found", id)
	}
	return x, nil
}
