package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchivePrompt is DELETE on a prompt: it is no longer rendered nor served, and its slug is
// freed.
type ArchivePrompt struct {
	PromptID string
}

type archivePromptHandler struct{ d Deps }

// NewArchivePromptHandler refuses missing dependencies.
func NewArchivePromptHandler(d Deps) (archivePromptHandler, error) {
	return archivePromptHandler{d}, d.check()
}

func (h archivePromptHandler) Handle(ctx context.Context, c ArchivePrompt) (Result, error) {
	p, err := loadPromptFor(ctx, h.d, c.PromptID, "prompts.delete")
	if err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPrefix, c.PromptID), newPrompt,
		func(p *domain.Prompt) ([]domain.Event, error) { return p.Archive(by, h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	if err := release(withoutIdempotency(ctx), h.d, PromptSlugReservation, p.OrganisationID+"/"+p.Slug, p.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.PromptID
	return res, nil
}
