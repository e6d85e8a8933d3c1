package queries

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// The gateway's admin resources: integrations, managed providers (virtual keys are their
// legacy name) and saved configs. Secrets stay sealed in what these answer.

// Integrations lists the integrations of the actor's organisation that f selects and the
// actor sees, newest first; a workspace f serves must be one the actor sees.
func (q *Queries) Integrations(ctx context.Context, actor domain.Actor, f projections.IntegrationFilter) ([]domain.Integration, error) {
	f.OrganisationID, f.Visible = actor.OrganisationID, VisibleWorkspaces(actor)
	if f.ServingWorkspace != "" && !CanSee(actor, f.ServingWorkspace) {
		return nil, domain.Errorf(domain.CodeForbidden, "this API key has no access to workspace %s", f.ServingWorkspace)
	}
	return q.Read.Integrations(ctx, f)
}

// VisibleIntegration is the integration that holds slug now, if the actor sees it; not found
// otherwise.
func (q *Queries) VisibleIntegration(ctx context.Context, actor domain.Actor, slug string) (domain.Integration, error) {
	i, ok, err := q.Read.IntegrationBySlug(ctx, actor.OrganisationID, slug)
	if err != nil {
		return domain.Integration{}, err
	}
	if !ok || !CanSeeIntegration(actor, i) {
		return domain.Integration{}, domain.Errorf(domain.CodeNotFound, "integration %s not found", slug)
	}
	return i, nil
}

// IntegrationID is the id of the integration ref names: the one that holds the slug ref now,
// else ref itself (an id, or nothing).
func (q *Queries) IntegrationID(ctx context.Context, orgID, ref string) (string, error) {
	i, ok, err := q.Read.IntegrationBySlug(ctx, orgID, ref)
	if err != nil || !ok {
		return ref, err
	}
	return i.ID, nil
}

// IntegrationSlug is the slug of an integration of the organisation, and false when there is
// none.
func (q *Queries) IntegrationSlug(ctx context.Context, orgID, id string) (string, bool, error) {
	i, ok, err := q.Read.Integration(ctx, orgID, id)
	if err != nil || !ok {
		return "", false, err
	}
	return i.Slug, true, nil
}

// ProviderList selects the managed providers a list shows.
type ProviderList struct {
	Statuses     map[string]bool
	WorkspaceID  string // "" : every workspace the actor sees
	Integration  string // its slug or id; "": any
	AIProviderID string
	Tags         map[string]string
}

// ProviderFilter is the filter of l for the actor: a workspace it asks for must be one it
// sees, and an integration is named by its slug or id.
func (q *Queries) ProviderFilter(ctx context.Context, actor domain.Actor, l ProviderList) (projections.ManagedProviderFilter, error) {
	f := projections.ManagedProviderFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: VisibleWorkspaces(actor),
		Statuses: l.Statuses, Tags: l.Tags, AIProviderID: l.AIProviderID}
	if l.WorkspaceID != "" {
		ws, err := WorkspaceScope(actor, l.WorkspaceID)
		if err != nil {
			return f, err
		}
		f.WorkspaceIDs = ws
	}
	if l.Integration != "" {
		id, err := q.IntegrationID(ctx, actor.OrganisationID, l.Integration)
		if err != nil {
			return f, err
		}
		f.IntegrationID = id
	}
	return f, nil
}

// ManagedProviders lists the providers that f selects (ProviderFilter), newest first.
func (q *Queries) ManagedProviders(ctx context.Context, f projections.ManagedProviderFilter) ([]domain.Provider, error) {
	return q.Read.ManagedProviders(ctx, f)
}

// VisibleProvider finds the provider that holds slug that the actor may see: in workspaceID
// (a workspace key's own by default, and no other); an organisation key may leave it out when
// the slug is used in one workspace only. noun names the resource in messages (provider, or
// virtual key).
func (q *Queries) VisibleProvider(ctx context.Context, actor domain.Actor, slug, workspaceID, noun string) (domain.Provider, error) {
	ws := strings.TrimSpace(workspaceID)
	if WorkspaceKeyActor(actor) {
		if ws != "" && ws != actor.WorkspaceID {
			return domain.Provider{}, domain.Errorf(domain.CodeForbidden, "this API key belongs to workspace %s and cannot act on workspace %s", actor.WorkspaceID, ws)
		}
		ws = actor.WorkspaceID
	}
	notFound := domain.Errorf(domain.CodeNotFound, "%s %s not found", noun, slug)
	if ws != "" {
		p, ok, err := q.Read.ManagedProviderBySlug(ctx, actor.OrganisationID, ws, slug)
		if err != nil {
			return domain.Provider{}, err
		}
		if !ok || !CanSee(actor, p.WorkspaceID) {
			return domain.Provider{}, notFound
		}
		return p, nil
	}
	bySlug, err := q.Read.ManagedProvidersBySlug(ctx, actor.OrganisationID, slug)
	if err != nil {
		return domain.Provider{}, err
	}
	var found []domain.Provider
	for _, p := range bySlug {
		if CanSee(actor, p.WorkspaceID) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return domain.Provider{}, notFound
	case 1:
		return found[0], nil
	}
	return domain.Provider{}, domain.Invalid("workspace_id", "workspace_id is required: %s %s exists in %d workspaces", noun, slug, len(found))
}

// SavedConfigs lists the configs of the actor's organisation of a status in statuses, of
// workspaceID when set (which the actor must see) or of every workspace it sees, newest first.
func (q *Queries) SavedConfigs(ctx context.Context, actor domain.Actor, statuses map[string]bool, workspaceID string) ([]domain.SavedConfig, error) {
	ws, err := WorkspaceScope(actor, workspaceID)
	if err != nil {
		return nil, err
	}
	return q.Read.SavedConfigs(ctx, projections.SavedConfigFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: ws, Statuses: statuses})
}

// VisibleConfig is the config ref names (its id or the slug it holds now), of a status in
// statuses, if the actor sees its workspace; not found otherwise.
func (q *Queries) VisibleConfig(ctx context.Context, actor domain.Actor, ref string, statuses map[string]bool) (domain.SavedConfig, error) {
	c, ok, err := q.Read.SavedConfig(ctx, actor.OrganisationID, ref)
	if err != nil {
		return domain.SavedConfig{}, err
	}
	if !ok || !statuses[c.Status] || !CanSee(actor, c.WorkspaceID) {
		return domain.SavedConfig{}, domain.Errorf(domain.CodeNotFound, "config %s not found", ref)
	}
	return c, nil
}

// DefaultConfigID is the id of the workspace's default config, or "".
func (q *Queries) DefaultConfigID(ctx context.Context, workspaceID string) (string, error) {
	return q.Read.DefaultConfigID(ctx, workspaceID)
}
