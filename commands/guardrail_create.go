package commands

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
)

// CreateGuardrail creates a guardrail: a workspace guardrail of WorkspaceID, or with
// Organisation (the body named the organisation and no workspace) an organisation guardrail,
// which any workspace of the organisation may attach. A workspace key creates guardrails of
// its own workspace only. Checks and Actions are their JSON as sent; each check is validated
// by the guardrail engine (domain.CheckValidator). A nil or empty Slug is derived from the
// name with a suffix.
type CreateGuardrail struct {
	WorkspaceID  string
	Organisation bool
	Name         string
	Slug         *string
	Checks       []byte
	Actions      []byte
}

type createGuardrailHandler struct {
	d Deps
	v domain.CheckValidator
}

// NewCreateGuardrailHandler refuses missing dependencies.
func NewCreateGuardrailHandler(d Deps, v domain.CheckValidator) (createGuardrailHandler, error) {
	return createGuardrailHandler{d, v}, checkValidatorDeps(d, v)
}

func (h createGuardrailHandler) Handle(ctx context.Context, c CreateGuardrail) (Result, error) {
	actor := RequestFrom(ctx).Actor
	wsID, err := guardrailOwner(actor, c)
	if err != nil {
		return Result{}, err
	}
	if err := guardrailWriter(actor, wsID, guardrailCreateScope); err != nil {
		return Result{}, err
	}
	if wsID != "" {
		if _, err := activeWorkspace(ctx, h.d, actor.OrganisationID, wsID); err != nil {
			return Result{}, err
		}
	}
	now := h.d.Now()
	id := NewID(ctx, "guardrail")
	candidates := slugCandidates(c.Slug, c.Name, "guardrail", id, false)
	spec := domain.CreateGuardrail{GuardrailID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID,
		Slug: candidates[0], Name: c.Name, VersionID: NewID(ctx, "guardrail-version:"+id), Checks: c.Checks,
		Actions: c.Actions, By: actorName(actor)}
	// Decide once before reserving, so that a refused guardrail never holds a slug.
	if _, err := (&domain.Guardrail{}).Create(spec, h.v, now); err != nil {
		return Result{}, err
	}
	slug, err := reserveFirst(ctx, h.d, GuardrailSlugReservation, actor.OrganisationID, id, "slug", candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	res, err := execute(ctx, h.d, domain.Stream(domain.GuardrailPrefix, id), newGuardrail,
		func(g *domain.Guardrail) ([]domain.Event, error) { return g.Create(spec, h.v, now) })
	if err != nil {
		releaseAll(ctx, h.d, GuardrailSlugReservation, map[string]string{actor.OrganisationID + "/" + slug: id})
		return Result{}, err
	}
	res.ID = id
	return res, nil
}

// guardrailOwner is the workspace a new guardrail belongs to ("" for the organisation): a
// workspace key's own; for an organisation key the workspace named, else the organisation
// when it was named.
func guardrailOwner(actor domain.Actor, c CreateGuardrail) (string, error) {
	wsID := strings.TrimSpace(c.WorkspaceID)
	if actor.Kind == domain.ActorAPIKey && actor.KeyType != domain.KeyOrganisationService {
		if wsID == "" && c.Organisation {
			return "", forbidden("a workspace API key creates guardrails of its own workspace; an organisation guardrail needs an organisation admin key")
		}
		return targetWorkspace(actor, wsID)
	}
	if wsID == "" && !c.Organisation {
		return "", domain.Invalid("workspace_id", "give workspace_id for a guardrail of that workspace, or organisation_id for a guardrail of the organisation")
	}
	return wsID, nil
}
