package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchivePromptLabel is DELETE on a label: prompt@label no longer names a version, and its
// name is free.
type ArchivePromptLabel struct {
	LabelID string
}

type archivePromptLabelHandler struct{ d Deps }

// NewArchivePromptLabelHandler refuses missing dependencies.
func NewArchivePromptLabelHandler(d Deps) (archivePromptLabelHandler, error) {
	return archivePromptLabelHandler{d}, d.check()
}

func (h archivePromptLabelHandler) Handle(ctx context.Context, c ArchivePromptLabel) (Result, error) {
	l, err := loadLabelFor(ctx, h.d, c.LabelID, "prompts.delete")
	if err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptLabelPrefix, c.LabelID), newPromptLabel,
		func(l *domain.PromptLabel) ([]domain.Event, error) { return l.Archive(by, h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	if err := release(withoutIdempotency(ctx), h.d, PromptLabelNameReservation, l.OrganisationID+"/"+l.Name, l.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.LabelID
	return res, nil
}
