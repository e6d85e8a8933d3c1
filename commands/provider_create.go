package commands

import (
	"context"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// CreateProvider creates a managed provider in a workspace: of an integration (Integration,
// its slug or id; the integration must serve the workspace), or with a credential of its own
// (AIProviderID, Key, Configurations). VirtualKey marks the legacy path, which the
// virtual_keys.* scopes govern instead of providers.*. A nil or empty Slug is derived from the
// name with a suffix.
type CreateProvider struct {
	VirtualKey     bool
	WorkspaceID    string
	Slug           *string
	Name           string
	Note           string
	Integration    string
	AIProviderID   string
	Key            *string
	Configurations map[string]any
	UsageLimits    *domain.UsageLimits
	RateLimits     []domain.RateLimit
	ExpiresAt      *time.Time
	Tags           map[string]string
}

type createProviderHandler struct {
	d Deps
	s Sealer
	u URLChecker
}

// NewCreateProviderHandler refuses missing dependencies. Managers of the workspace create its
// providers (inWorkspace).
func NewCreateProviderHandler(d Deps, s Sealer, u URLChecker) (Handler[CreateProvider, Result], error) {
	h := createProviderHandler{d, s, u}
	scope := func(c CreateProvider) string { return providerScope(c.VirtualKey, "create") }
	return inWorkspace(d, domain.RoleManager, scope, h.decide), checkSecretDeps(d, s, u)
}

func (c CreateProvider) workspace() string { return c.WorkspaceID }

// providerScope is the scope of an action on providers: providers.* on /providers,
// virtual_keys.* on the legacy /virtual-keys.
func providerScope(virtualKey bool, action string) string {
	if virtualKey {
		return "virtual_keys." + action
	}
	return "providers." + action
}

func (h createProviderHandler) decide(ctx context.Context, c CreateProvider, ws *domain.Workspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	wsID := ws.ID
	id := NewID(ctx, "provider")
	spec := domain.CreateProvider{ProviderID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID, Name: c.Name,
		Note: c.Note, AIProviderID: c.AIProviderID, Key: c.Key, Configurations: c.Configurations, UsageLimits: c.UsageLimits,
		RateLimits: c.RateLimits, ExpiresAt: c.ExpiresAt, Tags: c.Tags, CreatedBy: actorName(actor)}
	ref := strings.TrimSpace(c.Integration)
	if ref == "" && c.AIProviderID == "" && !c.VirtualKey {
		return Result{}, domain.Invalid("integration_id", "integration_id is required: the slug of an integration (or give ai_provider_id and a key of the provider's own)")
	}
	if ref != "" {
		i, err := integrationByRef(ctx, h.d, actor.OrganisationID, ref, "integration_id")
		if err != nil {
			return Result{}, err
		}
		if !i.Serves(wsID) {
			return Result{}, domain.Invalid("integration_id", "integration %s is not enabled for workspace %s: give the workspace access first (PUT /integrations/{slug}/workspaces)", ref, wsID)
		}
		if c.AIProviderID != "" && c.AIProviderID != i.AIProviderID {
			return Result{}, domain.Invalid("ai_provider_id", "ai_provider_id must be the integration's (%s) or left out", i.AIProviderID)
		}
		spec.IntegrationID, spec.AIProviderID = i.ID, i.AIProviderID
	}
	if err := checkURLs(h.u, c.Configurations); err != nil {
		return Result{}, err
	}
	candidates := slugCandidates(c.Slug, c.Name, "provider", id, false)
	spec.Slug = candidates[0]
	stream := domain.Stream(domain.ProviderPrefix, id)
	// Decide once before reserving, so that a refused provider never holds a slug.
	if _, err := (&domain.Provider{}).Create(spec, sealFor(h.s, stream), h.d.Now()); err != nil {
		return Result{}, err
	}
	slug, err := reserveFirst(ctx, h.d, ProviderSlugReservation, wsID, id, "slug", candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	res, err := writeProvider(ctx, h.d, h.s, spec)
	if err != nil {
		releaseAll(ctx, h.d, ProviderSlugReservation, map[string]string{wsID + "/" + spec.Slug: id})
		return Result{}, err
	}
	res.ID = id
	return res, nil
}

func newProvider() *domain.Provider { return &domain.Provider{} }

// writeProvider appends the creation of a provider whose slug is already reserved.
func writeProvider(ctx context.Context, d Deps, s Sealer, spec domain.CreateProvider) (Result, error) {
	stream := domain.Stream(domain.ProviderPrefix, spec.ProviderID)
	now := d.Now()
	res, err := execute(ctx, d, stream, newProvider,
		func(p *domain.Provider) ([]domain.Event, error) { return p.Create(spec, sealFor(s, stream), now) })
	res.ID = spec.ProviderID
	return res, err
}

// loadProviderFor loads a provider of the actor's organisation that the actor may act on with
// scope: it must reach the provider's workspace as a manager.
func loadProviderFor(ctx context.Context, d Deps, id, scope string) (*domain.Provider, error) {
	actor := RequestFrom(ctx).Actor
	p, err := Load(ctx, d, domain.Stream(domain.ProviderPrefix, id), newProvider)
	if err != nil {
		return nil, err
	}
	if !p.Exists() || p.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "provider %s not found", id)
	}
	if err := requireWorkspaceRole(actor, p.WorkspaceID, domain.RoleManager, scope); err != nil {
		return nil, err
	}
	return p, nil
}
