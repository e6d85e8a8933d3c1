package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// FailLogExport records why a running export stopped without a file: a reason fit for the
// export's readers, never the internal error behind it. Only the system actor of the export's
// organisation (the export worker) sends it.
type FailLogExport struct {
	ExportID string
	Reason   string
}

type failLogExportHandler struct{ d Deps }

func NewFailLogExportHandler(d Deps) (failLogExportHandler, error) {
	return failLogExportHandler{d}, d.check()
}

// Handle answers a conflict when the export has left in_progress meanwhile.
func (h failLogExportHandler) Handle(ctx context.Context, c FailLogExport) (Result, error) {
	return executeAsExportWorker(ctx, h.d, c.ExportID, func(x *domain.LogExport) ([]domain.Event, error) {
		return x.Fail(c.Reason, h.d.Now())
	})
}
