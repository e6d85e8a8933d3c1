package projections

import (
	"time"

	"github.com/causeway/causeway/domain"
)

// The gateway's admin resources: integrations, managed providers (virtual keys included) and
// saved configs. The admin API lists and reads them here; the gateway resolves @slug,
// x-gateway-virtual-key and saved config ids with the same queries on its in-memory model.
// Secrets stay sealed in what these return (domain.SealedCredential).

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
func (m *Model) Integrations(f IntegrationFilter) []domain.Integration {
	return all(m, domain.IntegrationPrefix, f.keep,
		newestFirst(func(i *domain.Integration) (time.Time, string) { return i.CreatedAt, i.ID }))
}

// Integration returns an integration of the organisation by id, deleted or not.
func (m *Model) Integration(orgID, id string) (domain.Integration, bool) {
	i, ok := get[domain.Integration](m, domain.IntegrationPrefix, id)
	return i, ok && i.OrganisationID == orgID
}

// IntegrationBySlug returns the organisation's integration that holds slug now: a deleted
// one has given its slug up.
func (m *Model) IntegrationBySlug(orgID, slug string) (domain.Integration, bool) {
	found := all(m, domain.IntegrationPrefix, func(i *domain.Integration) bool {
		return i.OrganisationID == orgID && i.Slug == slug && i.Exists()
	}, newestFirst(func(i *domain.Integration) (time.Time, string) { return i.CreatedAt, i.ID }))
	if len(found) == 0 {
		return domain.Integration{}, false
	}
	return found[0], true
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
func (m *Model) ManagedProviders(f ManagedProviderFilter) []domain.Provider {
	return all(m, domain.ProviderPrefix, f.keep,
		newestFirst(func(p *domain.Provider) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// ManagedProvider returns a provider of the organisation by id, deleted or not.
func (m *Model) ManagedProvider(orgID, id string) (domain.Provider, bool) {
	p, ok := get[domain.Provider](m, domain.ProviderPrefix, id)
	return p, ok && p.OrganisationID == orgID
}

// ManagedProviderBySlug returns the workspace's provider that holds slug now: what
// `x-gateway-provider: @<slug>` and `x-gateway-virtual-key: <slug>` name.
func (m *Model) ManagedProviderBySlug(orgID, workspaceID, slug string) (domain.Provider, bool) {
	found := m.ManagedProvidersBySlug(orgID, slug)
	for _, p := range found {
		if p.WorkspaceID == workspaceID {
			return p, true
		}
	}
	return domain.Provider{}, false
}

// ManagedProvidersBySlug returns the organisation's live providers that hold slug, one per
// workspace at most, newest first.
func (m *Model) ManagedProvidersBySlug(orgID, slug string) []domain.Provider {
	return all(m, domain.ProviderPrefix, func(p *domain.Provider) bool {
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
func (m *Model) SavedConfigs(f SavedConfigFilter) []domain.SavedConfig {
	return all(m, domain.SavedConfigPrefix, func(c *domain.SavedConfig) bool {
		return c.OrganisationID == f.OrganisationID && (f.WorkspaceIDs == nil || f.WorkspaceIDs[c.WorkspaceID]) && f.Statuses[c.Status]
	}, newestFirst(func(c *domain.SavedConfig) (time.Time, string) { return c.CreatedAt, c.ID }))
}

// SavedConfig returns a config of the organisation by its id (deleted or not) or by the slug
// it holds now; its Latest version is the one in force.
func (m *Model) SavedConfig(orgID, ref string) (domain.SavedConfig, bool) {
	if c, ok := get[domain.SavedConfig](m, domain.SavedConfigPrefix, ref); ok && c.OrganisationID == orgID {
		return c, true
	}
	found := all(m, domain.SavedConfigPrefix, func(c *domain.SavedConfig) bool {
		return c.OrganisationID == orgID && c.Slug == ref && c.Exists()
	}, newestFirst(func(c *domain.SavedConfig) (time.Time, string) { return c.CreatedAt, c.ID }))
	if len(found) == 0 {
		return domain.SavedConfig{}, false
	}
	return found[0], true
}

// DefaultConfigID returns the id of the workspace's default config, or "".
func (m *Model) DefaultConfigID(workspaceID string) string {
	d, _ := get[domain.ConfigDefault](m, domain.ConfigDefaultPrefix, workspaceID)
	return d.ConfigID
}
