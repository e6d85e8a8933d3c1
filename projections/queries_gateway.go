package projections

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// The gateway's admin resources: integrations, managed providers (virtual keys included),
// saved configs and guardrails. The admin API lists and reads them here; the gateway resolves @slug,
// x-gateway-virtual-key and saved config ids from its own index (gateway.Index), which the
// in-memory model feeds. Secrets stay sealed in what these return (domain.SealedCredential).

// IntegrationFilter selects integrations in a list.
type IntegrationFilter struct {
	OrganisationID string
	Statuses       map[string]bool
	// Scope is "organisation" (organisation integrations only), "workspace" (workspace
	// integrations only) or "" for both.
	Scope string
	// ServingWorkspace keeps the integrations that serve that workspace ("" for any).
	ServingWorkspace string
	// Visible keeps the integrations that serve one of these workspaces; nil: all.
	Visible      map[string]bool
	AIProviderID string
	Tags         map[string]string
}

func (f IntegrationFilter) keep(i *domain.Integration) bool {
	if i.OrganisationID != f.OrganisationID || !f.Statuses[i.Status] || !domain.TagsMatch(i.Tags, f.Tags) ||
		(f.AIProviderID != "" && i.AIProviderID != f.AIProviderID) {
		return false
	}
	switch f.Scope {
	case "organisation":
		if i.WorkspaceID != "" {
			return false
		}
	case "workspace":
		if i.WorkspaceID == "" {
			return false
		}
	}
	if f.ServingWorkspace != "" && !i.Workspaces[f.ServingWorkspace].Enabled {
		return false
	}
	if f.Visible != nil {
		for ws, access := range i.Workspaces {
			if access.Enabled && f.Visible[ws] {
				return true
			}
		}
		return false
	}
	return true
}

// Integrations lists the integrations that f selects, newest first.
func (q Queries) Integrations(ctx context.Context, f IntegrationFilter) ([]domain.Integration, error) {
	return all(ctx, q.Docs, domain.IntegrationPrefix, f.keep,
		newestFirst(func(i *domain.Integration) (time.Time, string) { return i.CreatedAt, i.ID }))
}

// Integration returns an integration of the organisation by id, deleted or not.
func (q Queries) Integration(ctx context.Context, orgID, id string) (domain.Integration, bool, error) {
	i, ok, err := get[domain.Integration](ctx, q.Docs, domain.IntegrationPrefix, id)
	return i, ok && i.OrganisationID == orgID, err
}

// IntegrationBySlug returns the organisation's integration that holds slug now: a deleted
// one has given its slug up.
func (q Queries) IntegrationBySlug(ctx context.Context, orgID, slug string) (domain.Integration, bool, error) {
	return first(all(ctx, q.Docs, domain.IntegrationPrefix, func(i *domain.Integration) bool {
		return i.OrganisationID == orgID && i.Slug == slug && i.Exists()
	}, newestFirst(func(i *domain.Integration) (time.Time, string) { return i.CreatedAt, i.ID })))
}

// ManagedProviderFilter selects providers in a list.
type ManagedProviderFilter struct {
	OrganisationID string
	WorkspaceIDs   map[string]bool // nil: every workspace
	Statuses       map[string]bool // active or archived (the stored status)
	IntegrationID  string
	AIProviderID   string
	Tags           map[string]string
}

func (f ManagedProviderFilter) keep(p *domain.Provider) bool {
	return p.OrganisationID == f.OrganisationID && (f.WorkspaceIDs == nil || f.WorkspaceIDs[p.WorkspaceID]) &&
		f.Statuses[p.Status] && (f.IntegrationID == "" || p.IntegrationID == f.IntegrationID) &&
		(f.AIProviderID == "" || p.AIProviderID == f.AIProviderID) && domain.TagsMatch(p.Tags, f.Tags)
}

// ManagedProviders lists the providers that f selects, newest first.
func (q Queries) ManagedProviders(ctx context.Context, f ManagedProviderFilter) ([]domain.Provider, error) {
	return all(ctx, q.Docs, domain.ProviderPrefix, f.keep,
		newestFirst(func(p *domain.Provider) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// ManagedProvider returns a provider of the organisation by id, deleted or not.
func (q Queries) ManagedProvider(ctx context.Context, orgID, id string) (domain.Provider, bool, error) {
	p, ok, err := get[domain.Provider](ctx, q.Docs, domain.ProviderPrefix, id)
	return p, ok && p.OrganisationID == orgID, err
}

// ManagedProviderBySlug returns the workspace's provider that holds slug now: what
// `x-gateway-provider: @<slug>` and `x-gateway-virtual-key: <slug>` name.
func (q Queries) ManagedProviderBySlug(ctx context.Context, orgID, workspaceID, slug string) (domain.Provider, bool, error) {
	found, err := q.ManagedProvidersBySlug(ctx, orgID, slug)
	if err != nil {
		return domain.Provider{}, false, err
	}
	for _, p := range found {
		if p.WorkspaceID == workspaceID {
			return p, true, nil
		}
	}
	return domain.Provider{}, false, nil
}

// ManagedProvidersBySlug returns the organisation's live providers that hold slug, one per
// workspace at most, newest first.
func (q Queries) ManagedProvidersBySlug(ctx context.Context, orgID, slug string) ([]domain.Provider, error) {
	return all(ctx, q.Docs, domain.ProviderPrefix, func(p *domain.Provider) bool {
		return p.OrganisationID == orgID && p.Slug == slug && p.Exists()
	}, newestFirst(func(p *domain.Provider) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// SavedConfigFilter selects configs in a list.
type SavedConfigFilter struct {
	OrganisationID string
	WorkspaceIDs   map[string]bool // nil: every workspace
	Statuses       map[string]bool
}

// SavedConfigs lists the configs that f selects, newest first.
func (q Queries) SavedConfigs(ctx context.Context, f SavedConfigFilter) ([]domain.SavedConfig, error) {
	return all(ctx, q.Docs, domain.SavedConfigPrefix, func(c *domain.SavedConfig) bool {
		return c.OrganisationID == f.OrganisationID && (f.WorkspaceIDs == nil || f.WorkspaceIDs[c.WorkspaceID]) && f.Statuses[c.Status]
	}, newestFirst(func(c *domain.SavedConfig) (time.Time, string) { return c.CreatedAt, c.ID }))
}

// SavedConfig returns a config of the organisation by its id (deleted or not) or by the slug
// it holds now; its Latest version is the one in force.
func (q Queries) SavedConfig(ctx context.Context, orgID, ref string) (domain.SavedConfig, bool, error) {
	c, ok, err := get[domain.SavedConfig](ctx, q.Docs, domain.SavedConfigPrefix, ref)
	if err != nil || (ok && c.OrganisationID == orgID) {
		return c, err == nil, err
	}
	return first(all(ctx, q.Docs, domain.SavedConfigPrefix, func(c *domain.SavedConfig) bool {
		return c.OrganisationID == orgID && c.Slug == ref && c.Exists()
	}, newestFirst(func(c *domain.SavedConfig) (time.Time, string) { return c.CreatedAt, c.ID })))
}

// GuardrailFilter selects guardrails in a list.
type GuardrailFilter struct {
	OrganisationID string
	Statuses       map[string]bool
	// Scope is "organisation" (the organisation's own guardrails only), "workspace"
	// (workspaces' guardrails only) or "" for both.
	Scope string
	// WorkspaceIDs keeps the workspace guardrails of these workspaces; nil: of every
	// workspace. Organisation guardrails are kept whatever it holds.
	WorkspaceIDs map[string]bool
}

func (f GuardrailFilter) keep(g *domain.Guardrail) bool {
	if g.OrganisationID != f.OrganisationID || !f.Statuses[g.Status] {
		return false
	}
	switch {
	case g.WorkspaceID == "":
		return f.Scope != "workspace"
	case f.Scope == "organisation":
		return false
	}
	return f.WorkspaceIDs == nil || f.WorkspaceIDs[g.WorkspaceID]
}

// Guardrails lists the guardrails that f selects, newest first.
func (q Queries) Guardrails(ctx context.Context, f GuardrailFilter) ([]domain.Guardrail, error) {
	return all(ctx, q.Docs, domain.GuardrailPrefix, f.keep,
		newestFirst(func(g *domain.Guardrail) (time.Time, string) { return g.CreatedAt, g.ID }))
}

// Guardrail returns a guardrail of the organisation by its id (deleted or not) or by the slug
// it holds now; its Latest version is the one in force.
func (q Queries) Guardrail(ctx context.Context, orgID, ref string) (domain.Guardrail, bool, error) {
	g, ok, err := get[domain.Guardrail](ctx, q.Docs, domain.GuardrailPrefix, ref)
	if err != nil || (ok && g.OrganisationID == orgID) {
		return g, err == nil, err
	}
	return first(all(ctx, q.Docs, domain.GuardrailPrefix, func(g *domain.Guardrail) bool {
		return g.OrganisationID == orgID && g.Slug == ref && g.Exists()
	}, newestFirst(func(g *domain.Guardrail) (time.Time, string) { return g.CreatedAt, g.ID })))
}

// DefaultConfigID returns the id of the workspace's default config, or "".
func (q Queries) DefaultConfigID(ctx context.Context, workspaceID string) (string, error) {
	d, _, err := get[domain.ConfigDefault](ctx, q.Docs, domain.ConfigDefaultPrefix, workspaceID)
	return d.ConfigID, err
}
