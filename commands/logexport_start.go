package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// StartLogExport moves a draft export to in_progress; the export worker then writes its file.
type StartLogExport struct {
	ExportID string
}

type startLogExportHandler struct{ d Deps }

func NewStartLogExportHandler(d Deps) (startLogExportHandler, error) {
	return startLogExportHandler{d}, d.check()
}

func (h startLogExportHandler) Handle(ctx context.Context, c StartLogExport) (Result, error) {
	if _, err := loadLogExportFor(ctx, h.d, c.ExportID); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.LogExportPrefix, c.ExportID), newLogExport,
		func(x *domain.LogExport) ([]domain.Event, error) { return x.Start(h.d.Now()) })
	res.ID = c.ExportID
	return res, err
}
