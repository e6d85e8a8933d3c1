package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CreatePromptCollection creates a collection in a workspace (a workspace key's own; an
// organisation key names one), under ParentID when set (a collection of the same workspace).
// A nil or empty Slug is derived from the name; slugs are unique in the workspace.
type CreatePromptCollection struct {
	WorkspaceID string
	Name        string
	Slug        *string
	ParentID    string
}

func (c CreatePromptCollection) workspace() string { return c.WorkspaceID }

type createPromptCollectionHandler struct{ d Deps }

// NewCreatePromptCollectionHandler refuses missing dependencies.
func NewCreatePromptCollectionHandler(d Deps) (Handler[CreatePromptCollection, Result], error) {
	h := createPromptCollectionHandler{d}
	return inWorkspace(d, domain.RoleMember, always[CreatePromptCollection]("prompts.create"), h.decide), d.check()
}

func (h createPromptCollectionHandler) decide(ctx context.Context, c CreatePromptCollection, ws *domain.Workspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if err := promptWriter(ctx, h.d, ws.ID, "prompts.create"); err != nil {
		return Result{}, err
	}
	now := h.d.Now()
	id := NewID(ctx, "prompt-collection")
	spec := domain.CreatePromptCollection{CollectionID: id, OrganisationID: actor.OrganisationID, WorkspaceID: ws.ID,
		Name: c.Name, By: actorName(actor)}
	if c.ParentID != "" {
		parent, err := collectionIn(ctx, h.d, actor.OrganisationID, c.ParentID, "parent_collection_id")
		if err != nil {
			return Result{}, err
		}
		spec.Parent = parent
	}
	candidates := slugCandidates(c.Slug, c.Name, "collection", id, true)
	spec.Slug = candidates[0]
	// Decide once before reserving, so that a refused collection never holds a slug.
	if _, err := (&domain.PromptCollection{}).Create(spec, now); err != nil {
		return Result{}, err
	}
	slug, err := reserveFirst(ctx, h.d, PromptCollectionSlugReservation, ws.ID, id, "slug", candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptCollectionPrefix, id), newPromptCollection,
		func(pc *domain.PromptCollection) ([]domain.Event, error) { return pc.Create(spec, now) })
	if err != nil {
		releaseAll(ctx, h.d, PromptCollectionSlugReservation, map[string]string{ws.ID + "/" + slug: id})
		return Result{}, err
	}
	res.ID = id
	return res, nil
}
