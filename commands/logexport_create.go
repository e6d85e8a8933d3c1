package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CreateLogExport creates a log export job, in draft, for a workspace's request logs.
type CreateLogExport struct {
	WorkspaceID   string
	Filters       domain.LogExportFilters
	RequestedData []string
	Format        string
	Description   string
}

type createLogExportHandler struct{ d Deps }

// NewCreateLogExportHandler refuses missing dependencies. The export is scoped to the actor's
// organisation and to a workspace it reaches as a member at least: a workspace key's own,
// whatever the body says (inWorkspace); the logs.export scope is checked before anything else.
func NewCreateLogExportHandler(d Deps) (Handler[CreateLogExport, Result], error) {
	h := createLogExportHandler{d}
	return authorised(needs(requireScope, logExportScope),
		inWorkspace(d, domain.RoleMember, always[CreateLogExport](logExportScope), h.decide)), d.check()
}

func (c CreateLogExport) workspace() string { return c.WorkspaceID }

func (h createLogExportHandler) decide(ctx context.Context, c CreateLogExport, ws *domain.Workspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if err := checkExportWorkspaceSlug(c.Filters, ws); err != nil {
		return Result{}, err
	}
	createdBy := actor.UserID
	if createdBy == "" {
		createdBy = actor.ID
	}
	id := NewID(ctx, "logexport")
	res, err := execute(ctx, h.d, domain.Stream(domain.LogExportPrefix, id), newLogExport,
		func(x *domain.LogExport) ([]domain.Event, error) {
			return x.Create(domain.CreateLogExport{ExportID: id, OrganisationID: actor.OrganisationID, WorkspaceID: ws.ID,
				Filters: c.Filters, RequestedData: c.RequestedData, Format: c.Format, Description: c.Description,
				CreatedBy: createdBy}, h.d.Now())
		})
	res.ID = id
	return res, err
}

// logExportScope is the one scope of every export action, reads included.
const logExportScope = "logs.export"

func newLogExport() *domain.LogExport { return &domain.LogExport{} }

// checkExportWorkspaceSlug: the reference's workspace_slug filter may only repeat the
// export's own workspace; the workspace is chosen by workspace_id and the actor.
func checkExportWorkspaceSlug(f domain.LogExportFilters, ws *domain.Workspace) error {
	if f.WorkspaceSlug != "" && f.WorkspaceSlug != ws.Slug {
		return domain.Invalid("filters.workspace_slug", "filters.workspace_slug must be the slug of the export's workspace (%s)", ws.Slug)
	}
	return nil
}

// loadLogExportFor loads an export the actor may act on: it must exist in the actor's
// organisation and the actor must reach its workspace.
func loadLogExportFor(ctx context.Context, d Deps, id string) (*domain.LogExport, error) {
	actor := RequestFrom(ctx).Actor
	x, err := Load(ctx, d, domain.Stream(domain.LogExportPrefix, id), newLogExport)
	if err != nil {
		return nil, err
	}
	if !x.Exists() || x.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "log export %s not found", id)
	}
	if err := requireWorkspaceRole(actor, x.WorkspaceID, domain.RoleMember, logExportScope); err != nil {
		return nil, err
	}
	return x, nil
}
