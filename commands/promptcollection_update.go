package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdatePromptCollection renames a collection.
type UpdatePromptCollection struct {
	CollectionID string
	Name         string
}

type updatePromptCollectionHandler struct{ d Deps }

// NewUpdatePromptCollectionHandler refuses missing dependencies.
func NewUpdatePromptCollectionHandler(d Deps) (updatePromptCollectionHandler, error) {
	return updatePromptCollectionHandler{d}, d.check()
}

func (h updatePromptCollectionHandler) Handle(ctx context.Context, c UpdatePromptCollection) (Result, error) {
	if _, err := loadCollectionFor(ctx, h.d, c.CollectionID, "prompts.update"); err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptCollectionPrefix, c.CollectionID), newPromptCollection,
		func(pc *domain.PromptCollection) ([]domain.Event, error) { return pc.Rename(c.Name, by, h.d.Now()) })
	res.ID = c.CollectionID
	return res, err
}
