package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CreatePrompt creates a prompt with its first version, filed in the collection CollectionID,
// whose workspace it belongs to; an empty CollectionID files it in the default collection of
// WorkspaceID (a workspace key's own), made then if need be. Fields are the version fields
// (string, parameters and virtual_key required); the template must be one the gateway can
// render (package templates). A nil or empty Slug is derived from the name with a suffix;
// slugs are unique in the organisation.
type CreatePrompt struct {
	CollectionID string
	WorkspaceID  string
	Name         string
	Slug         *string
	Fields       domain.PromptVersionFields
}

type createPromptHandler struct{ d Deps }

// NewCreatePromptHandler refuses missing dependencies.
func NewCreatePromptHandler(d Deps) (createPromptHandler, error) {
	return createPromptHandler{d}, d.check()
}

func (h createPromptHandler) Handle(ctx context.Context, c CreatePrompt) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if err := requireScope(actor, "prompts.create"); err != nil {
		return Result{}, err
	}
	wsID, collectionID := "", c.CollectionID
	if collectionID != "" {
		col, err := collectionIn(ctx, h.d, actor.OrganisationID, collectionID, "collection_id")
		if err != nil {
			return Result{}, err
		}
		wsID = col.WorkspaceID
	} else {
		var err error
		if wsID, err = targetWorkspace(actor, c.WorkspaceID); err != nil {
			return Result{}, err
		}
	}
	if err := promptWriter(ctx, h.d, wsID, "prompts.create"); err != nil {
		return Result{}, err
	}
	if _, err := activeWorkspace(ctx, h.d, actor.OrganisationID, wsID); err != nil {
		return Result{}, err
	}
	if err := domain.ParsePromptTemplate(c.Fields); err != nil {
		return Result{}, err
	}
	if err := checkPromptTemplate(c.Fields.String); err != nil {
		return Result{}, err
	}
	now := h.d.Now()
	id := NewID(ctx, "prompt")
	candidates := slugCandidates(c.Slug, c.Name, "prompt", id, false)
	spec := domain.CreatePrompt{PromptID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID, CollectionID: collectionID,
		Slug: candidates[0], Name: c.Name, VersionID: NewID(ctx, "prompt-version:"+id),
		Template: c.Fields.Over(domain.PromptTemplate{}), By: actorName(actor)}
	// Decide once before any write, so that a refused prompt neither holds a slug nor makes
	// a default collection.
	if _, err := (&domain.Prompt{}).Create(spec, now); err != nil {
		return Result{}, err
	}
	var pos Result
	if collectionID == "" {
		var err error
		if spec.CollectionID, pos.Position, err = ensureDefaultCollection(ctx, h.d, actor.OrganisationID, wsID); err != nil {
			return Result{}, err
		}
	}
	slug, err := reserveFirst(ctx, h.d, PromptSlugReservation, actor.OrganisationID, id, "slug", candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPrefix, id), newPrompt,
		func(p *domain.Prompt) ([]domain.Event, error) { return p.Create(spec, now) })
	if err != nil {
		releaseAll(ctx, h.d, PromptSlugReservation, map[string]string{actor.OrganisationID + "/" + slug: id})
		return Result{}, err
	}
	res.ID, res.Position = id, max(res.Position, pos.Position)
	return res, nil
}
