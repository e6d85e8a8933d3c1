package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/queries"
)

// GatewayResourceReader is what the gateway's admin resources read: integrations, managed
// providers (and virtual keys, the same aggregate) and saved configs.
type GatewayResourceReader interface {
	Integration(ctx context.Context, orgID, id string) (domain.Integration, bool, error)
	IntegrationBySlug(ctx context.Context, orgID, slug string) (domain.Integration, bool, error)
	Integrations(ctx context.Context, f projections.IntegrationFilter) ([]domain.Integration, error)
	ManagedProvider(ctx context.Context, orgID, id string) (domain.Provider, bool, error)
	ManagedProviderBySlug(ctx context.Context, orgID, workspaceID, slug string) (domain.Provider, bool, error)
	ManagedProvidersBySlug(ctx context.Context, orgID, slug string) ([]domain.Provider, error)
	ManagedProviders(ctx context.Context, f projections.ManagedProviderFilter) ([]domain.Provider, error)
	SavedConfig(ctx context.Context, orgID, ref string) (domain.SavedConfig, bool, error)
	SavedConfigs(ctx context.Context, f projections.SavedConfigFilter) ([]domain.SavedConfig, error)
	DefaultConfigID(ctx context.Context, workspaceID string) (string, error)
	Guardrail(ctx context.Context, orgID, ref string) (domain.Guardrail, bool, error)
	Guardrails(ctx context.Context, f projections.GuardrailFilter) ([]domain.Guardrail, error)
}

var _ GatewayResourceReader = projections.Reader(nil)

// registerGatewayResources adds the routes of integrations, providers, virtual keys, configs
// and guardrails.
func (a *Admin) registerGatewayResources(r *mux.Router) {
	read, ok := a.Read.(GatewayResourceReader)
	if !ok {
		panic("httpapi: the read model does not implement GatewayResourceReader")
	}
	a.registerIntegrations(r, read)
	a.registerProviders(r, read)
	a.registerVirtualKeys(r, read)
	a.registerConfigs(r, read)
	a.registerGuardrails(r, read)
}

// integrationCreateBody is the reference's CreateIntegrationRequest, with tags.
type integrationCreateBody struct {
	Name                  string            `json:"name"`
	Slug                  *string           `json:"slug"`
	AIProviderID          string            `json:"ai_provider_id"`
	Key                   *string           `json:"key"`
	Description           string            `json:"description"`
	WorkspaceID           string            `json:"workspace_id"`
	Configurations        map[string]any    `json:"configurations"`
	Tags                  map[string]string `json:"tags"`
	CreateDefaultProvider *bool             `json:"create_default_provider"`
	DefaultProviderSlug   *string           `json:"default_provider_slug"`
}

// integrationUpdateBody is the reference's UpdateIntegrationRequest, with tags (null removes
// them all).
type integrationUpdateBody struct {
	Name           *string                          `json:"name"`
	Key            *string                          `json:"key"`
	Description    *string                          `json:"description"`
	Configurations map[string]any                   `json:"configurations"`
	Tags           fieldPresence[map[string]string] `json:"tags"`
}

// integrationWorkspacesBody is the reference's BulkUpdateWorkspacesRequest.
type integrationWorkspacesBody struct {
	Workspaces []struct {
		ID                    string               `json:"id"`
		Enabled               *bool                `json:"enabled"`
		UsageLimits           []domain.UsageLimits `json:"usage_limits"`
		RateLimits            []domain.RateLimit   `json:"rate_limits"`
		CreateDefaultProvider *bool                `json:"create_default_provider"`
		DefaultProviderSlug   *string              `json:"default_provider_slug"`
		// ResetUsage starts the workspace's usage of the integration again from zero.
		ResetUsage bool `json:"reset_usage"`
	} `json:"workspaces"`
	CreateDefaultProvider *bool   `json:"create_default_provider"`
	DefaultProviderSlug   *string `json:"default_provider_slug"`
}

// integrationAnswer is an integration as reads show it: its key never, only has_key and the
// last four characters; secret configuration fields as masked_<field>.
type integrationAnswer struct {
	ID             string            `json:"id"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    *string           `json:"workspace_id"`
	AIProviderID   string            `json:"ai_provider_id"`
	Name           string            `json:"name"`
	Slug           string            `json:"slug"`
	Description    string            `json:"description"`
	Status         string            `json:"status"`
	Tags           map[string]string `json:"tags"`
	HasKey         bool              `json:"has_key"`
	MaskedKey      *string           `json:"masked_key"`
	Configurations map[string]any    `json:"configurations,omitempty"`
	WorkspaceCount *int              `json:"workspace_count,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	LastUpdatedAt  time.Time         `json:"last_updated_at"`
	Object         string            `json:"object"`
}

func integrationView(i domain.Integration, detail bool) integrationAnswer {
	out := integrationAnswer{ID: i.ID, OrganisationID: i.OrganisationID, AIProviderID: i.AIProviderID, Name: i.Name,
		Slug: i.Slug, Description: i.Description, Status: i.Status, Tags: nonNilTags(i.Tags), HasKey: i.Masked.HasKey(),
		CreatedAt: millis(i.CreatedAt), LastUpdatedAt: millis(i.LastUpdatedAt), Object: "integration"}
	if i.WorkspaceID != "" {
		out.WorkspaceID = &i.WorkspaceID
	}
	if out.HasKey {
		masked := i.Masked.Key
		out.MaskedKey = &masked
	}
	if detail {
		out.Configurations = configurationsView(i.Configurations, i.Masked)
		n := i.EnabledWorkspaces()
		out.WorkspaceCount = &n
	}
	return out
}

// configurationsView shows configurations with each secret field as masked_<field>.
func configurationsView(configs map[string]any, masked domain.MaskedCredential) map[string]any {
	out := map[string]any{}
	for k, v := range configs {
		out[k] = v
	}
	for k, v := range masked.Secrets {
		out["masked_"+k] = v
	}
	return out
}

func nonNilTags(t map[string]string) map[string]string {
	if t == nil {
		return map[string]string{}
	}
	return t
}

func millis(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// integrationWorkspaceAnswer is one workspace's access, as the reference's IntegrationWorkspace.
type integrationWorkspaceAnswer struct {
	ID          string               `json:"id"`
	Enabled     bool                 `json:"enabled"`
	UsageLimits []domain.UsageLimits `json:"usage_limits"`
	RateLimits  []domain.RateLimit   `json:"rate_limits"`
}

func integrationWorkspacesView(i domain.Integration, actor domain.Actor) map[string]any {
	out := []integrationWorkspaceAnswer{}
	for _, w := range i.Workspaces {
		if canSee(actor, w.ID) {
			out = append(out, integrationWorkspaceAnswer{ID: w.ID, Enabled: w.Enabled, UsageLimits: w.UsageLimits, RateLimits: w.RateLimits})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return map[string]any{"object": "list", "total": len(out), "workspaces": out}
}

// canSeeIntegration is the read side's (queries.CanSeeIntegration).
func canSeeIntegration(actor domain.Actor, i domain.Integration) bool {
	return queries.CanSeeIntegration(actor, i)
}

// tagFilter reads ?tags=key:value[,key:value] (the parameter may repeat): every pair must
// match.
func tagFilter(r *http.Request) (map[string]string, error) {
	var out map[string]string
	for _, raw := range r.URL.Query()["tags"] {
		for _, pair := range strings.Split(raw, ",") {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			k, v, ok := strings.Cut(pair, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, domain.Invalid("tags", "tags must be key:value pairs separated by commas, such as tags=env:prod,team:ml")
			}
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out, nil
}

func (a *Admin) registerIntegrations(r *mux.Router, read GatewayResourceReader) {
	on := func(h handler) http.Handler { return a.route("integration", h) }

	// bySlug finds the integration of the path that the actor may see; scope is the read's.
	bySlug := func(r *http.Request, scope string) (domain.Integration, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return domain.Integration{}, err
		}
		return a.reads().VisibleIntegration(r.Context(), actor, mux.Vars(r)["slug"])
	}

	r.Handle("/integrations", on(write(a, a.Commands.CreateIntegration, nowhere,
		func(_ *http.Request, _ struct{}, b integrationCreateBody) (commands.CreateIntegration, error) {
			return commands.CreateIntegration{Slug: b.Slug, Name: b.Name, AIProviderID: b.AIProviderID,
				Key: b.Key, Description: b.Description, WorkspaceID: b.WorkspaceID, Configurations: b.Configurations, Tags: b.Tags,
				CreateDefaultProvider: b.CreateDefaultProvider, DefaultProviderSlug: b.DefaultProviderSlug}, nil
		},
		func(r *http.Request, _ struct{}, c commands.CreateIntegration, res commands.Result) (int, any, error) {
			actor := actorFrom(r.Context())
			i, _, err := read.Integration(r.Context(), actor.OrganisationID, res.ID)
			if err != nil {
				return 0, nil, err
			}
			out := map[string]any{"id": res.ID, "slug": i.Slug, "object": "integration"}
			if i.WorkspaceID != "" {
				slug := i.Slug
				if c.DefaultProviderSlug != nil {
					slug = *c.DefaultProviderSlug
				}
				p, ok, err := read.ManagedProviderBySlug(r.Context(), actor.OrganisationID, i.WorkspaceID, slug)
				if err != nil {
					return 0, nil, err
				}
				if ok && p.IntegrationID == i.ID {
					out["default_provider_slug"] = p.Slug
				}
			}
			return http.StatusOK, out, nil
		}))).Methods(http.MethodPost)

	r.Handle("/integrations", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "integrations.list"); err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		tags, err := tagFilter(r)
		if err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		f := projections.IntegrationFilter{Statuses: st, ServingWorkspace: q.Get("workspace_id"), AIProviderID: q.Get("ai_provider_id"), Tags: tags}
		switch typ := q.Get("type"); typ {
		case "", "all":
		case "organisation", "workspace":
			f.Scope = typ
		default:
			return 0, nil, domain.Invalid("type", "type must be workspace, organisation or all (got %q)", typ)
		}
		views := []integrationAnswer{}
		found, err := a.reads().Integrations(r.Context(), actor, f)
		if err != nil {
			return 0, nil, err
		}
		for _, i := range found {
			views = append(views, integrationView(i, false))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/integrations/{slug}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return a.integrationAsOf(w, r, read)
		}
		i, err := bySlug(r, "integrations.read")
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.IntegrationPrefix, i.ID)
		return http.StatusOK, integrationView(i, true), nil
	})).Methods(http.MethodGet)

	r.Handle("/integrations/{slug}", on(write(a, a.Commands.UpdateIntegration, scoped(bySlug, "integrations.update"),
		func(_ *http.Request, i domain.Integration, b integrationUpdateBody) (commands.UpdateIntegration, error) {
			c := commands.UpdateIntegration{IntegrationID: i.ID, Name: b.Name, Description: b.Description, Key: b.Key,
				Configurations: b.Configurations}
			if b.Tags.Set {
				c.ClearTags = b.Tags.Value == nil
				if b.Tags.Value != nil {
					c.Tags = *b.Tags.Value
				}
			}
			return c, nil
		},
		func(r *http.Request, i domain.Integration, _ commands.UpdateIntegration, _ commands.Result) (int, any, error) {
			i, _, err := read.Integration(r.Context(), i.OrganisationID, i.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, integrationView(i, true), nil
		}))).Methods(http.MethodPut)

	r.Handle("/integrations/{slug}", on(pathWrite(a, a.Commands.ArchiveIntegration, scoped(bySlug, "integrations.delete"),
		func(i domain.Integration) commands.ArchiveIntegration {
			return commands.ArchiveIntegration{IntegrationID: i.ID}
		},
		func(i domain.Integration) any {
			return map[string]string{"id": i.ID, "slug": i.Slug, "object": "integration", "status": domain.StatusArchived}
		}))).Methods(http.MethodDelete)

	r.Handle("/integrations/{slug}/workspaces", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		i, err := bySlug(r, "integrations.read")
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, integrationWorkspacesView(i, actorFrom(r.Context())), nil
	})).Methods(http.MethodGet)

	r.Handle("/integrations/{slug}/workspaces", on(write(a, a.Commands.UpdateIntegrationWorkspaces, scoped(bySlug, "integrations.update"),
		func(_ *http.Request, i domain.Integration, b integrationWorkspacesBody) (commands.UpdateIntegrationWorkspaces, error) {
			c := commands.UpdateIntegrationWorkspaces{IntegrationID: i.ID, CreateDefaultProvider: b.CreateDefaultProvider,
				DefaultProviderSlug: b.DefaultProviderSlug}
			for n, ws := range b.Workspaces {
				if ws.Enabled == nil {
					return c, domain.Invalid(jsonIndex("workspaces", n, "enabled"), "%s is required", jsonIndex("workspaces", n, "enabled"))
				}
				c.Workspaces = append(c.Workspaces, commands.IntegrationWorkspaceAccess{
					IntegrationWorkspace: domain.IntegrationWorkspace{ID: ws.ID, Enabled: *ws.Enabled, UsageLimits: ws.UsageLimits,
						RateLimits: ws.RateLimits},
					CreateDefaultProvider: ws.CreateDefaultProvider, DefaultProviderSlug: ws.DefaultProviderSlug, ResetUsage: ws.ResetUsage})
			}
			return c, nil
		},
		func(r *http.Request, i domain.Integration, _ commands.UpdateIntegrationWorkspaces, _ commands.Result) (int, any, error) {
			i, _, err := read.Integration(r.Context(), i.OrganisationID, i.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, integrationWorkspacesView(i, actorFrom(r.Context())), nil
		}))).Methods(http.MethodPut)

}

// integrationAsOf reads an integration as it was: named by its id, or by the slug it holds
// now.
func (a *Admin) integrationAsOf(w http.ResponseWriter, r *http.Request, read GatewayResourceReader) (int, any, error) {
	actor := actorFrom(r.Context())
	if err := requireScope(actor, "integrations.read"); err != nil {
		return 0, nil, err
	}
	ref := mux.Vars(r)["slug"]
	id := ref
	id, err := a.reads().IntegrationID(r.Context(), actor.OrganisationID, ref)
	if err != nil {
		return 0, nil, err
	}
	return gatewayAsOf(a, w, r, "integration", domain.IntegrationPrefix, id,
		func(i *domain.Integration) string { return i.OrganisationID }, (*domain.Integration).Exists,
		func(i domain.Integration, _ time.Time) (any, error) {
			if !canSeeIntegration(actor, i) {
				return nil, domain.Errorf(domain.CodeNotFound, "integration %s not found", ref)
			}
			return integrationView(i, true), nil
		})
}

// jsonIndex names an element's field: workspaces[2].enabled.
func jsonIndex(list string, n int, field string) string {
	return fmt.Sprintf("%s[%d].%s", list, n, field)
}

// gatewayAsOf answers ?as_of= on the read of a gateway resource: the resource the path names
// now (id), folded from its own stream up to the instant and shown in the normal read's view,
// or 404 when it did not exist then. It is asOf's counterpart for aggregates that carry their
// organisation as OrganisationID, which org reads.
func gatewayAsOf[A any, P aggregate[A]](a *Admin, w http.ResponseWriter, r *http.Request, noun, prefix, id string,
	org func(P) string, exists func(P) bool, view func(v A, at time.Time) (any, error)) (int, any, error) {
	at, err := asOfTime(r)
	if err != nil {
		return 0, nil, err
	}
	agg, last, ok, err := queries.LoadAsOfEvent(r.Context(), a.reads(), domain.Stream(prefix, id), func() P { return P(new(A)) }, at)
	if err != nil {
		return 0, nil, err
	}
	if !ok || org(agg) != actorFrom(r.Context()).OrganisationID || !exists(agg) {
		return 0, nil, domain.Errorf(domain.CodeNotFound, "%s %s did not exist at %s", noun, id, at.UTC().Format(time.RFC3339Nano))
	}
	body, err := view(*agg, at)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set(AsOfHeader, last.RecordedAt.UTC().Format(time.RFC3339Nano))
	return http.StatusOK, body, nil
}
