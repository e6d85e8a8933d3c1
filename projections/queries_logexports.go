package projections

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// LogExportFilter selects exports in a list.
type LogExportFilter struct {
	OrganisationID string
	WorkspaceIDs   map[string]bool // nil: every workspace
}

// LogExports lists the exports that f selects, newest first.
func (q Queries) LogExports(ctx context.Context, f LogExportFilter) ([]domain.LogExport, error) {
	return all(ctx, q.Docs, domain.LogExportPrefix, func(x *domain.LogExport) bool {
		return x.OrganisationID == f.OrganisationID && x.Exists() && (f.WorkspaceIDs == nil || f.WorkspaceIDs[x.WorkspaceID])
	}, newestFirst(func(x *domain.LogExport) (time.Time, string) { return x.CreatedAt, x.ID }))
}

// LogExport returns one export of the organisation.
func (q Queries) LogExport(ctx context.Context, orgID, id string) (domain.LogExport, bool, error) {
	x, ok, err := get[domain.LogExport](ctx, q.Docs, domain.LogExportPrefix, id)
	return x, ok && x.OrganisationID == orgID && x.Exists(), err
}

// LogExportsInProgress lists the exports of every organisation that have been started and
// not finished, oldest start first: the export worker's queue.
func (q Queries) LogExportsInProgress(ctx context.Context) ([]domain.LogExport, error) {
	return all(ctx, q.Docs, domain.LogExportPrefix, func(x *domain.LogExport) bool {
		return x.Status == domain.ExportInProgress && x.StartedAt != nil
	}, func(a, b *domain.LogExport) bool {
		if !a.StartedAt.Equal(*b.StartedAt) {
			return a.StartedAt.Before(*b.StartedAt)
		}
		return a.ID < b.ID
	})
}
