package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CreatePromptPartial creates a partial with its first version in a workspace (a workspace
// key's own; an organisation key names one), filed in the workspace's default collection.
// Templates include it by slug ({{> slug}}): a nil or empty Slug is derived from the name,
// without a suffix when that one is free; slugs are unique in the organisation.
type CreatePromptPartial struct {
	WorkspaceID string
	Name        string
	Slug        *string
	String      string
	Description string
}

func (c CreatePromptPartial) workspace() string { return c.WorkspaceID }

type createPromptPartialHandler struct{ d Deps }

// NewCreatePromptPartialHandler refuses missing dependencies.
func NewCreatePromptPartialHandler(d Deps) (Handler[CreatePromptPartial, Result], error) {
	h := createPromptPartialHandler{d}
	return inWorkspace(d, domain.RoleMember, always[CreatePromptPartial]("prompts.create"), h.decide), d.check()
}

func (h createPromptPartialHandler) decide(ctx context.Context, c CreatePromptPartial, ws *domain.Workspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if err := promptWriter(ctx, h.d, ws.ID, "prompts.create"); err != nil {
		return Result{}, err
	}
	if err := checkPartialText(&c.String); err != nil {
		return Result{}, err
	}
	now := h.d.Now()
	id := NewID(ctx, "prompt-partial")
	candidates := slugCandidates(c.Slug, c.Name, "partial", id, true)
	spec := domain.CreatePromptPartial{PartialID: id, OrganisationID: actor.OrganisationID, WorkspaceID: ws.ID,
		CollectionID: DefaultCollectionID(ws.ID), Slug: candidates[0], Name: c.Name,
		VersionID: NewID(ctx, "prompt-partial-version:"+id), String: c.String, Description: c.Description, By: actorName(actor)}
	// Decide once before any write.
	if _, err := (&domain.PromptPartial{}).Create(spec, now); err != nil {
		return Result{}, err
	}
	_, defaultPos, err := ensureDefaultCollection(ctx, h.d, actor.OrganisationID, ws.ID)
	if err != nil {
		return Result{}, err
	}
	slug, err := reserveFirst(ctx, h.d, PromptPartialSlugReservation, actor.OrganisationID, id, "slug", candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPartialPrefix, id), newPromptPartial,
		func(p *domain.PromptPartial) ([]domain.Event, error) { return p.Create(spec, now) })
	if err != nil {
		releaseAll(ctx, h.d, PromptPartialSlugReservation, map[string]string{actor.OrganisationID + "/" + slug: id})
		return Result{}, err
	}
	res.ID, res.Position = id, max(res.Position, defaultPos)
	return res, nil
}
