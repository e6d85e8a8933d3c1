package commands

import (
	"context"
	"errors"
	"strings"

	"github.com/causeway/causeway/domain"
)

// CreateIntegration creates an integration: an organisation integration, or with WorkspaceID a
// workspace integration, which serves that workspace only and by default gets a provider
// there at once (CreateDefaultProvider, nil meaning true; DefaultProviderSlug, else the
// integration's slug). A workspace key creates a workspace integration of its own workspace.
type CreateIntegration struct {
	Slug                  *string
	Name                  string
	AIProviderID          string
	Key                   *string
	Description           string
	WorkspaceID           string
	Configurations        map[string]any
	Tags                  map[string]string
	CreateDefaultProvider *bool
	DefaultProviderSlug   *string
}

type createIntegrationHandler struct {
	d Deps
	s Sealer
	u URLChecker
}

// NewCreateIntegrationHandler refuses missing dependencies.
func NewCreateIntegrationHandler(d Deps, s Sealer, u URLChecker) (createIntegrationHandler, error) {
	return createIntegrationHandler{d, s, u}, checkSecretDeps(d, s, u)
}

func checkSecretDeps(d Deps, s Sealer, u URLChecker) error {
	if s == nil {
		return errors.New("commands: nil sealer")
	}
	return checkURLDeps(d, u)
}

func checkURLDeps(d Deps, u URLChecker) error {
	if u == nil {
		return errors.New("commands: nil URL checker")
	}
	return d.check()
}

func checkSealerDeps(d Deps, s Sealer) error {
	if s == nil {
		return errors.New("commands: nil sealer")
	}
	return d.check()
}

func (h createIntegrationHandler) Handle(ctx context.Context, c CreateIntegration) (Result, error) {
	actor := RequestFrom(ctx).Actor
	wsID := strings.TrimSpace(c.WorkspaceID)
	if actor.Kind == domain.ActorAPIKey && actor.KeyType != domain.KeyOrganisationService {
		var err error
		if wsID, err = targetWorkspace(actor, wsID); err != nil {
			return Result{}, err
		}
	}
	if err := integrationWriter(ctx, h.d, wsID, "integrations.create"); err != nil {
		return Result{}, err
	}
	if wsID != "" {
		if _, err := activeWorkspace(ctx, h.d, actor.OrganisationID, wsID); err != nil {
			return Result{}, err
		}
	} else if c.DefaultProviderSlug != nil {
		return Result{}, domain.Invalid("default_provider_slug", "default_provider_slug needs workspace_id: an organisation integration gets providers when workspaces are given access (PUT /integrations/{slug}/workspaces)")
	}
	if err := checkURLs(h.u, c.Configurations); err != nil {
		return Result{}, err
	}
	now := h.d.Now()
	id := NewID(ctx, "integration")
	stream := domain.Stream(domain.IntegrationPrefix, id)
	seal := sealFor(h.s, stream)
	candidates := slugCandidates(c.Slug, c.Name, "integration", id, true)
	spec := domain.CreateIntegration{IntegrationID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID,
		Slug: candidates[0], Name: c.Name, AIProviderID: c.AIProviderID, Description: c.Description, Key: c.Key,
		Configurations: c.Configurations, Tags: c.Tags, CreatedBy: actorName(actor)}
	// Decide once before reserving, so that a refused integration never holds a slug.
	if _, err := (&domain.Integration{}).Create(spec, seal, now); err != nil {
		return Result{}, err
	}
	var provider *domain.CreateProvider
	if wsID != "" && (c.CreateDefaultProvider == nil || *c.CreateDefaultProvider) {
		provider = &domain.CreateProvider{ProviderID: NewID(ctx, "provider:"+wsID), OrganisationID: actor.OrganisationID,
			WorkspaceID: wsID, Name: c.Name, IntegrationID: id, AIProviderID: c.AIProviderID, CreatedBy: actorName(actor)}
		if c.DefaultProviderSlug != nil {
			if err := domain.ValidateSlug("default_provider_slug", *c.DefaultProviderSlug); err != nil {
				return Result{}, err
			}
		}
	}

	slug, err := reserveFirst(ctx, h.d, IntegrationSlugReservation, actor.OrganisationID, id, "slug", candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	reserved := map[string]string{actor.OrganisationID + "/" + slug: id}
	if provider != nil {
		provider.Slug = slug
		if c.DefaultProviderSlug != nil {
			provider.Slug = *c.DefaultProviderSlug
		}
		if err := reserve(ctx, h.d, ProviderSlugReservation, wsID+"/"+provider.Slug, provider.ProviderID, "default_provider_slug"); err != nil {
			releaseAll(ctx, h.d, IntegrationSlugReservation, reserved)
			return Result{}, err
		}
	}
	res, err := execute(ctx, h.d, stream, newIntegration,
		func(i *domain.Integration) ([]domain.Event, error) { return i.Create(spec, seal, now) })
	if err != nil {
		releaseAll(ctx, h.d, IntegrationSlugReservation, reserved)
		if provider != nil {
			releaseAll(ctx, h.d, ProviderSlugReservation, map[string]string{wsID + "/" + provider.Slug: provider.ProviderID})
		}
		return Result{}, err
	}
	if provider != nil {
		pres, err := writeProvider(ctx, h.d, h.s, *provider)
		if err != nil {
			releaseAll(ctx, h.d, ProviderSlugReservation, map[string]string{wsID + "/" + provider.Slug: provider.ProviderID})
			return Result{}, err
		}
		res.Position = max(res.Position, pres.Position)
	}
	res.ID = id
	return res, nil
}
