package commands

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// SlugReservation is the reservation kind that holds workspace slugs, one per organisation
// and slug ("<organisation id>/<slug>").
const SlugReservation = "workspace-slug"

// CreateWorkspace creates a workspace in the actor's organisation. A nil or empty Slug is
// derived from the name.
type CreateWorkspace struct {
	Name              string
	Slug              *string
	Description       string
	Defaults          map[string]any
	RateLimits        []domain.RateLimit
	UsageLimits       []domain.UsageLimits
	PeriodicReset     *string
	PeriodicResetDays *int
	NextUsageResetAt  *time.Time
}

type createWorkspaceHandler struct{ d Deps }

// NewCreateWorkspaceHandler refuses missing dependencies. Organisation admins create
// workspaces with an organisation key (requireAdminKey).
func NewCreateWorkspaceHandler(d Deps) (Handler[CreateWorkspace, Result], error) {
	return authorised(needs(requireAdminKey, "workspaces.create"), createWorkspaceHandler{d}), d.check()
}

func (h createWorkspaceHandler) Handle(ctx context.Context, c CreateWorkspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	id := NewID(ctx, "workspace")
	now := h.d.Now()
	spec := domain.CreateWorkspace{WorkspaceID: id, OrganisationID: actor.OrganisationID, Name: c.Name,
		Description: c.Description, Defaults: c.Defaults, RateLimits: c.RateLimits, UsageLimits: c.UsageLimits,
		PeriodicReset: c.PeriodicReset, PeriodicResetDays: c.PeriodicResetDays, NextUsageResetAt: c.NextUsageResetAt}
	// A derived slug that is taken gets a suffix from the id rather than failing a request
	// that never named a slug.
	candidates := []string{domain.DeriveSlug(c.Name)}
	if c.Slug != nil && *c.Slug != "" {
		candidates = []string{*c.Slug}
	} else {
		candidates = append(candidates, candidates[0][:min(len(candidates[0]), domain.MaxNameLength-9)]+"-"+id[:8])
	}
	spec.Slug = candidates[0]
	// Decide once before reserving, so that a refused workspace never holds a slug.
	if _, err := (&domain.Workspace{}).Create(spec, now); err != nil {
		return Result{}, err
	}
	// A new workspace has no guardrails of its own yet: its defaults attach the organisation's.
	if err := checkGuardrailRefs(ctx, h.d, actor.OrganisationID, id, domain.DefaultGuardrailRefs(c.Defaults), "", ""); err != nil {
		return Result{}, err
	}
	slug, err := h.reserveSlug(ctx, actor.OrganisationID, id, candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	res, err := execute(ctx, h.d, domain.Stream(domain.WorkspacePrefix, id), newWorkspace,
		func(w *domain.Workspace) ([]domain.Event, error) { return w.Create(spec, now) })
	if err != nil {
		// The release gets fresh event ids: ids derived from the idempotency key would repeat
		// the reservation's own and be taken for a replay of it.
		req := RequestFrom(ctx)
		req.IdempotencyKey = ""
		_ = release(WithRequest(ctx, req), h.d, SlugReservation, slugName(actor.OrganisationID, slug), id)
		return Result{}, err
	}
	res.ID = id
	return res, nil
}

// reserveSlug claims the first candidate that is free; the last one's conflict is the answer
// when none is.
func (h createWorkspaceHandler) reserveSlug(ctx context.Context, orgID, id string, candidates []string) (string, error) {
	var err error
	for _, slug := range candidates {
		if err = reserve(ctx, h.d, SlugReservation, slugName(orgID, slug), id, "slug"); err == nil {
			return slug, nil
		}
		if domain.ErrorCode(err) != domain.CodeConflict {
			return "", err
		}
	}
	return "", err
}

// slugName is the reserved name of a slug: slugs are unique within an organisation.
func slugName(orgID, slug string) string { return orgID + "/" + slug }

func newWorkspace() *domain.Workspace { return &domain.Workspace{} }

// executeOnWorkspace decides on a workspace of the actor's organisation; another
// organisation's workspace is not found.
func executeOnWorkspace(ctx context.Context, d Deps, id string, decide func(*domain.Workspace) ([]domain.Event, error)) (Result, error) {
	orgID := RequestFrom(ctx).Actor.OrganisationID
	res, err := execute(ctx, d, domain.Stream(domain.WorkspacePrefix, id), newWorkspace,
		func(w *domain.Workspace) ([]domain.Event, error) {
			if !w.Exists() || w.OrganisationID != orgID {
				return nil, domain.Errorf(domain.CodeNotFound, "workspace %s not found", id)
			}
			return decide(w)
		})
	res.ID = id
	return res, err
}
