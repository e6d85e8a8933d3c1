package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CancelLogExport stops a draft or running export. A running one's worker notices at its
// next pass, stops between rows and removes its partial file.
type CancelLogExport struct {
	ExportID string
}

type cancelLogExportHandler struct{ d Deps }

func NewCancelLogExportHandler(d Deps) (cancelLogExportHandler, error) {
	return cancelLogExportHandler{d}, d.check()
}

func (h cancelLogExportHandler) Handle(ctx context.Context, c CancelLogExport) (Result, error) {
	if _, err := loadLogExportFor(ctx, h.d, c.ExportID); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.LogExportPrefix, c.ExportID), newLogExport,
		func(x *domain.LogExport) ([]domain.Event, error) { return x.Cancel(h.d.Now()) })
	res.ID = c.ExportID
	return res, err
}
