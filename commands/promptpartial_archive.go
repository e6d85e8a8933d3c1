package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchivePromptPartial is DELETE on a partial: templates that include it are refused when
// rendered, and its slug is freed.
type ArchivePromptPartial struct {
	PartialID string
}

type archivePromptPartialHandler struct{ d Deps }

// NewArchivePromptPartialHandler refuses missing dependencies.
func NewArchivePromptPartialHandler(d Deps) (archivePromptPartialHandler, error) {
	return archivePromptPartialHandler{d}, d.check()
}

func (h archivePromptPartialHandler) Handle(ctx context.Context, c ArchivePromptPartial) (Result, error) {
	p, err := loadPartialFor(ctx, h.d, c.PartialID, "prompts.delete")
	if err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPartialPrefix, c.PartialID), newPromptPartial,
		func(p *domain.PromptPartial) ([]domain.Event, error) { return p.Archive(by, h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	if err := release(withoutIdempotency(ctx), h.d, PromptPartialSlugReservation, p.OrganisationID+"/"+p.Slug, p.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.PartialID
	return res, nil
}
