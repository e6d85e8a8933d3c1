package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchivePromptCollection is DELETE on a collection: refused for a workspace's default
// collection and for one that holds live prompts, partials or collections; its slug is freed.
type ArchivePromptCollection struct {
	CollectionID string
}

type archivePromptCollectionHandler struct {
	d        Deps
	contents CollectionContentsIndex
}

// NewArchivePromptCollectionHandler refuses missing dependencies.
func NewArchivePromptCollectionHandler(d Deps, contents CollectionContentsIndex) (archivePromptCollectionHandler, error) {
	return archivePromptCollectionHandler{d, contents}, collectionIndexDeps(d, contents)
}

func (h archivePromptCollectionHandler) Handle(ctx context.Context, c ArchivePromptCollection) (Result, error) {
	pc, err := loadCollectionFor(ctx, h.d, c.CollectionID, "prompts.delete")
	if err != nil {
		return Result{}, err
	}
	held, err := h.contents.PromptCollectionContents(ctx, pc.OrganisationID, pc.ID)
	if err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptCollectionPrefix, c.CollectionID), newPromptCollection,
		func(pc *domain.PromptCollection) ([]domain.Event, error) { return pc.Archive(held, by, h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	if err := release(withoutIdempotency(ctx), h.d, PromptCollectionSlugReservation, pc.WorkspaceID+"/"+pc.Slug, pc.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.CollectionID
	return res, nil
}
