package commands

import (
	"context"
	"fmt"

	"github.com/causeway/causeway/domain"
)

// IntegrationWorkspaceAccess is one workspace's access in a bulk update, with its own say on
// the default provider (nil: the request's). ResetUsage (reset_usage) zeroes the workspace's
// usage of the integration: a new usage period, and an exhausted budget is active again.
type IntegrationWorkspaceAccess struct {
	domain.IntegrationWorkspace
	CreateDefaultProvider *bool
	DefaultProviderSlug   *string
	ResetUsage            bool
}

// UpdateIntegrationWorkspaces sets which workspaces may use an integration, and their limits.
// A workspace given access that it did not have gets a provider of the integration
// (CreateDefaultProvider, nil meaning true), whose slug is DefaultProviderSlug or else the
// integration's; a workspace that already has a provider of this integration by that slug
// keeps it.
type UpdateIntegrationWorkspaces struct {
	IntegrationID         string
	Workspaces            []IntegrationWorkspaceAccess
	CreateDefaultProvider *bool
	DefaultProviderSlug   *string
}

type updateIntegrationWorkspacesHandler struct {
	d Deps
	s Sealer
}

// NewUpdateIntegrationWorkspacesHandler refuses missing dependencies.
func NewUpdateIntegrationWorkspacesHandler(d Deps, s Sealer) (updateIntegrationWorkspacesHandler, error) {
	return updateIntegrationWorkspacesHandler{d, s}, checkSealerDeps(d, s)
}

func (h updateIntegrationWorkspacesHandler) Handle(ctx context.Context, c UpdateIntegrationWorkspaces) (Result, error) {
	actor := RequestFrom(ctx).Actor
	i, err := loadIntegrationFor(ctx, h.d, c.IntegrationID, "integrations.update")
	if err != nil {
		return Result{}, err
	}
	now := h.d.Now()
	entries := make([]domain.IntegrationWorkspace, len(c.Workspaces))
	var resetUsage []string
	for n, w := range c.Workspaces {
		entries[n] = w.IntegrationWorkspace
		if w.ResetUsage {
			resetUsage = append(resetUsage, w.ID)
		}
	}
	// Decide once before any write: a refused request changes nothing.
	if _, err := i.UpdateWorkspacesResetting(entries, resetUsage, now); err != nil {
		return Result{}, err
	}
	if c.DefaultProviderSlug != nil {
		if err := domain.ValidateSlug("default_provider_slug", *c.DefaultProviderSlug); err != nil {
			return Result{}, err
		}
	}
	var providers []domain.CreateProvider
	for n, w := range c.Workspaces {
		p := fmt.Sprintf("workspaces[%d]", n)
		if err := h.checkWorkspace(ctx, actor.OrganisationID, w.ID, w.Enabled, p+".id"); err != nil {
			return Result{}, err
		}
		create := c.CreateDefaultProvider == nil || *c.CreateDefaultProvider
		if w.CreateDefaultProvider != nil {
			create = *w.CreateDefaultProvider
		}
		if !w.Enabled || i.Serves(w.ID) || !create {
			continue
		}
		slug, param := i.Slug, "default_provider_slug"
		if c.DefaultProviderSlug != nil {
			slug = *c.DefaultProviderSlug
		}
		if w.DefaultProviderSlug != nil {
			slug, param = *w.DefaultProviderSlug, p+".default_provider_slug"
			if err := domain.ValidateSlug(param, slug); err != nil {
				return Result{}, err
			}
		}
		has, err := h.hasProvider(ctx, i.ID, w.ID, slug, param)
		if err != nil {
			return Result{}, err
		}
		if !has {
			providers = append(providers, domain.CreateProvider{ProviderID: NewID(ctx, "provider:"+w.ID),
				OrganisationID: actor.OrganisationID, WorkspaceID: w.ID, Slug: slug, Name: i.Name, IntegrationID: i.ID,
				AIProviderID: i.AIProviderID, CreatedBy: actorName(actor)})
		}
	}
	reserved := map[string]string{}
	for _, p := range providers {
		if err := reserve(ctx, h.d, ProviderSlugReservation, p.WorkspaceID+"/"+p.Slug, p.ProviderID, "default_provider_slug"); err != nil {
			releaseAll(ctx, h.d, ProviderSlugReservation, reserved)
			return Result{}, err
		}
		reserved[p.WorkspaceID+"/"+p.Slug] = p.ProviderID
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.IntegrationPrefix, i.ID), newIntegration,
		func(i *domain.Integration) ([]domain.Event, error) {
			return i.UpdateWorkspacesResetting(entries, resetUsage, now)
		})
	if err != nil {
		releaseAll(ctx, h.d, ProviderSlugReservation, reserved)
		return Result{}, err
	}
	for _, p := range providers {
		pres, err := writeProvider(ctx, h.d, h.s, p)
		if err != nil {
			return Result{}, err
		}
		res.Position = max(res.Position, pres.Position)
	}
	res.ID = i.ID
	return res, nil
}

// checkWorkspace: the workspace is the organisation's; one given access must be active.
func (h updateIntegrationWorkspacesHandler) checkWorkspace(ctx context.Context, orgID, wsID string, enabled bool, param string) error {
	if enabled {
		_, err := activeWorkspace(ctx, h.d, orgID, wsID)
		return withParam(err, param)
	}
	ws, err := Load(ctx, h.d, domain.Stream(domain.WorkspacePrefix, wsID), newWorkspace)
	if err != nil {
		return err
	}
	if !ws.Exists() || ws.OrganisationID != orgID {
		return &domain.Error{Code: domain.CodeNotFound, Param: param, Message: "workspace " + wsID + " not found"}
	}
	return nil
}

// hasProvider reports whether the workspace's slug is held by a provider of this integration
// (it is kept); held by anything else, the slug is a conflict.
func (h updateIntegrationWorkspacesHandler) hasProvider(ctx context.Context, integrationID, wsID, slug, param string) (bool, error) {
	holder, held, err := slugHolder(ctx, h.d, ProviderSlugReservation, wsID+"/"+slug)
	if err != nil || !held {
		return false, err
	}
	p, err := Load(ctx, h.d, domain.Stream(domain.ProviderPrefix, holder), newProvider)
	if err != nil {
		return false, err
	}
	if p.Exists() && p.IntegrationID == integrationID && p.WorkspaceID == wsID {
		return true, nil
	}
	return false, &domain.Error{Code: domain.CodeConflict, Param: param,
		Message: fmt.Sprintf("%s %q is taken in workspace %s", param, slug, wsID)}
}
