package commands

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
)

// UpdateLogExport replaces a draft export's filters, and its fields, format or description
// when given. WorkspaceID may repeat the export's workspace, never move it.
type UpdateLogExport struct {
	ExportID      string
	WorkspaceID   string
	Filters       *domain.LogExportFilters
	RequestedData []string
	Format        *string
	Description   *string
}

type updateLogExportHandler struct{ d Deps }

func NewUpdateLogExportHandler(d Deps) (updateLogExportHandler, error) {
	return updateLogExportHandler{d}, d.check()
}

func (h updateLogExportHandler) Handle(ctx context.Context, c UpdateLogExport) (Result, error) {
	x, err := loadLogExportFor(ctx, h.d, c.ExportID)
	if err != nil {
		return Result{}, err
	}
	if ws := strings.TrimSpace(c.WorkspaceID); ws != "" && ws != x.WorkspaceID {
		return Result{}, domain.Invalid("workspace_id", "workspace_id cannot be changed: the export belongs to workspace %s", x.WorkspaceID)
	}
	if c.Filters != nil && c.Filters.WorkspaceSlug != "" {
		ws, err := Load(ctx, h.d, domain.Stream(domain.WorkspacePrefix, x.WorkspaceID), func() *domain.Workspace { return &domain.Workspace{} })
		if err != nil {
			return Result{}, err
		}
		if err := checkExportWorkspaceSlug(*c.Filters, ws); err != nil {
			return Result{}, err
		}
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.LogExportPrefix, c.ExportID), newLogExport,
		func(x *domain.LogExport) ([]domain.Event, error) {
			return x.Update(domain.UpdateLogExport{Filters: c.Filters, RequestedData: c.RequestedData, Format: c.Format,
				Description: c.Description}, h.d.Now())
		})
	res.ID = c.ExportID
	return res, err
}
