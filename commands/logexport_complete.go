package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CompleteLogExport records the file the export worker wrote for a running export: how many
// rows and bytes it holds and its name in the export directory. Only the system actor of the
// export's organisation (the worker) sends it.
type CompleteLogExport struct {
	ExportID string
	Rows     int64
	Bytes    int64
	FileName string
}

type completeLogExportHandler struct{ d Deps }

func NewCompleteLogExportHandler(d Deps) (completeLogExportHandler, error) {
	return completeLogExportHandler{d}, d.check()
}

// Handle answers a conflict when the export has left in_progress otherwise (cancelled or
// failed while the file was written), whose file must then go. An export another run
// completed first, with the same file, is no conflict: nothing is recorded.
func (h completeLogExportHandler) Handle(ctx context.Context, c CompleteLogExport) (Result, error) {
	var status string
	res, err := executeAsExportWorker(ctx, h.d, c.ExportID, func(x *domain.LogExport) ([]domain.Event, error) {
		status = x.Status
		return x.Complete(c.Rows, c.Bytes, c.FileName, h.d.Now())
	})
	if domain.ErrorCode(err) == domain.CodeConflict && status == domain.ExportSuccess {
		return res, nil // another run completed it first, with the same file
	}
	return res, err
}

// executeAsExportWorker decides on export id as the export worker: the system actor of the
// export's organisation.
func executeAsExportWorker(ctx context.Context, d Deps, id string, decide func(*domain.LogExport) ([]domain.Event, error)) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if actor.Kind != domain.ActorSystem {
		return Result{}, forbidden("only the export worker records how an export ended")
	}
	res, err := execute(ctx, d, domain.Stream(domain.LogExportPrefix, id), newLogExport,
		func(x *domain.LogExport) ([]domain.Event, error) {
			if x.OrganisationID != actor.OrganisationID {
				return nil, domain.Errorf(domain.CodeNotFound, "log export %s not found", id)
			}
			return decide(x)
		})
	res.ID = id
	return res, err
}
