package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/queries"
)

// providerCreateBody is the reference's provider create body: a provider of an integration
// (integration_id: the integration's slug, as the reference has it, or its id;
// integration_slug is accepted as its clearer name), or one with a credential of its own
// (ai_provider_id, key, configurations). rate_limits may be one object, as the reference
// writes it, or an array.
type providerCreateBody struct {
	Name            string              `json:"name"`
	Slug            *string             `json:"slug"`
	IntegrationID   string              `json:"integration_id"`
	IntegrationSlug string              `json:"integration_slug"`
	WorkspaceID     string              `json:"workspace_id"`
	Note            *string             `json:"note"`
	UsageLimits     *domain.UsageLimits `json:"usage_limits"`
	RateLimits      json.RawMessage     `json:"rate_limits"`
	ExpiresAt       *time.Time          `json:"expires_at"`
	Tags            map[string]string   `json:"tags"`
	AIProviderID    string              `json:"ai_provider_id"`
	Key             *string             `json:"key"`
	Configurations  map[string]any      `json:"configurations"`
}

// providerAnswer is a provider as reads show it: its key never, only has_key and the last
// four characters; the status a reader sees now (expired, exhausted).
type providerAnswer struct {
	ID             string             `json:"id"`
	Slug           string             `json:"slug"`
	Name           string             `json:"name"`
	Note           *string            `json:"note"`
	OrganisationID string             `json:"organisation_id"`
	WorkspaceID    string             `json:"workspace_id"`
	IntegrationID  *string            `json:"integration_id"` // the integration's slug, as the reference has it
	AIProviderID   string             `json:"ai_provider_id"`
	Status         string             `json:"status"`
	UsageLimits    *usageLimitsAnswer `json:"usage_limits"`
	RateLimits     []domain.RateLimit `json:"rate_limits"`
	ExpiresAt      *time.Time         `json:"expires_at"`
	LastResetAt    *time.Time         `json:"last_reset_at"`
	Tags           map[string]string  `json:"tags"`
	HasKey         bool               `json:"has_key"`
	MaskedKey      *string            `json:"masked_key"`
	Configurations map[string]any     `json:"configurations,omitempty"`
	CreatedAt      time.Time          `json:"created_at"`
	LastUpdatedAt  time.Time          `json:"last_updated_at"`
	Object         string             `json:"object"`
}

func providerView(ctx context.Context, q *queries.Queries, p domain.Provider, now time.Time) (providerAnswer, error) {
	out := providerAnswer{ID: p.ID, Slug: p.Slug, Name: p.Name, OrganisationID: p.OrganisationID, WorkspaceID: p.WorkspaceID,
		AIProviderID: p.AIProviderID, Status: p.StatusAt(now), RateLimits: p.RateLimits, ExpiresAt: p.ExpiresAt,
		LastResetAt: p.LastResetAt, Tags: nonNilTags(p.Tags), HasKey: p.Masked.HasKey(),
		CreatedAt: millis(p.CreatedAt), LastUpdatedAt: millis(p.LastUpdatedAt), Object: "provider"}
	if p.Note != "" {
		out.Note = &p.Note
	}
	if out.RateLimits == nil {
		out.RateLimits = []domain.RateLimit{}
	}
	if p.UsageLimits != nil {
		out.UsageLimits = &usageLimitsAnswer{UsageLimits: *p.UsageLimits, CurrentUsage: amount(p.CurrentUsage)}
	}
	if p.IntegrationID != "" {
		slug, ok, err := q.IntegrationSlug(ctx, p.OrganisationID, p.IntegrationID)
		if err != nil {
			return out, err
		}
		if ok {
			out.IntegrationID = &slug
		}
	} else {
		out.Configurations = configurationsView(p.Configurations, p.Masked)
	}
	if out.HasKey {
		masked := p.Masked.Key
		out.MaskedKey = &masked
	}
	return out, nil
}

// rateLimitsOf reads rate_limits given as one object or an array of them.
func rateLimitsOf(name string, raw json.RawMessage) ([]domain.RateLimit, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	if trimmed[0] == '{' {
		var one domain.RateLimit
		if err := decodeField(name, trimmed, &one); err != nil {
			return nil, err
		}
		return []domain.RateLimit{one}, nil
	}
	var many []domain.RateLimit
	if err := decodeField(name, trimmed, &many); err != nil {
		return nil, err
	}
	if many == nil {
		many = []domain.RateLimit{}
	}
	return many, nil
}

// providerUpdateField decodes one field of a provider or virtual key update into c; it
// reports false for a field it does not know.
func providerUpdateField(c *commands.UpdateProvider, name string, raw json.RawMessage) (bool, error) {
	null := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	var err error
	switch name {
	case "name":
		c.Name = new(string)
		err = notNull(name, null, func() error { return decodeField(name, raw, c.Name) })
	case "note":
		c.Note = new(string)
		if !null {
			err = decodeField(name, raw, c.Note)
		}
	case "key":
		c.Key = new(string)
		err = notNull(name, null, func() error { return decodeField(name, raw, c.Key) })
	case "configurations":
		err = notNull(name, null, func() error { return decodeField(name, raw, &c.Configurations) })
	case "usage_limits":
		c.ClearUsageLimits = null
		err = decodeField(name, raw, &c.UsageLimits)
	case "rate_limits":
		c.ClearRateLimits = null
		c.RateLimits, err = rateLimitsOf(name, raw)
	case "expires_at":
		c.ClearExpiresAt = null
		err = decodeField(name, raw, &c.ExpiresAt)
	case "tags":
		c.ClearTags = null
		err = decodeField(name, raw, &c.Tags)
	case "reset_usage":
		err = notNull(name, null, func() error { return decodeField(name, raw, &c.ResetUsage) })
	default:
		return false, nil
	}
	return true, err
}

// decodeObject reads a JSON object body field by field, in a stable order: each field goes
// to field, which reports whether it knows it; an unknown field is refused.
func decodeObject(r *http.Request, field func(name string, raw json.RawMessage) (bool, error)) error {
	var raw map[string]json.RawMessage
	if err := decode(r, &raw); err != nil {
		return err
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		known, err := field(n, raw[n])
		if err != nil {
			return err
		}
		if !known {
			return domain.Invalid(n, "unknown field %q", n)
		}
	}
	return nil
}

// providerFromPath finds the provider of the path that the actor may see, with scope
// (queries.VisibleProvider): in the workspace of ?workspace_id= (a workspace key's own by
// default); an organisation key may leave it out when the slug is used in one workspace only.
func (a *Admin) providerFromPath(r *http.Request, scope, noun string) (domain.Provider, error) {
	actor := actorFrom(r.Context())
	if err := requireScope(actor, scope); err != nil {
		return domain.Provider{}, err
	}
	return a.reads().VisibleProvider(r.Context(), actor, mux.Vars(r)["slug"], r.URL.Query().Get("workspace_id"), noun)
}

// providerListFilter reads a provider list's filters: status (default active), workspace_id,
// integration_id (slug or id), tags; limited to the workspaces the actor may see
// (queries.ProviderFilter).
func (a *Admin) providerListFilter(r *http.Request, scope string) (projections.ManagedProviderFilter, error) {
	actor := actorFrom(r.Context())
	if err := requireScope(actor, scope); err != nil {
		return projections.ManagedProviderFilter{}, err
	}
	st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
	if err != nil {
		return projections.ManagedProviderFilter{}, err
	}
	tags, err := tagFilter(r)
	if err != nil {
		return projections.ManagedProviderFilter{}, err
	}
	q := r.URL.Query()
	return a.reads().ProviderFilter(r.Context(), actor, queries.ProviderList{Statuses: st, WorkspaceID: q.Get("workspace_id"),
		Integration: q.Get("integration_id"), AIProviderID: q.Get("ai_provider_id"), Tags: tags})
}

// providerAsOf reads a provider (or virtual key) as it was, found by the slug it holds now.
func providerAsOf(a *Admin, w http.ResponseWriter, r *http.Request, id string, view func(domain.Provider, time.Time) (any, error)) (int, any, error) {
	return gatewayAsOf(a, w, r, "provider", domain.ProviderPrefix, id,
		func(p *domain.Provider) string { return p.OrganisationID }, (*domain.Provider).Exists,
		view)
}

func (a *Admin) registerProviders(r *mux.Router, read GatewayResourceReader) {
	on := func(h handler) http.Handler { return a.route("provider", h) }
	find := func(r *http.Request, scope string) (domain.Provider, error) {
		return a.providerFromPath(r, scope, "provider")
	}

	r.Handle("/providers", on(write(a, a.Commands.CreateProvider, nowhere,
		func(_ *http.Request, _ struct{}, b providerCreateBody) (commands.CreateProvider, error) {
			if b.IntegrationID != "" && b.IntegrationSlug != "" && b.IntegrationID != b.IntegrationSlug {
				return commands.CreateProvider{}, domain.Invalid("integration_slug", "give integration_id or integration_slug, not both")
			}
			rates, err := rateLimitsOf("rate_limits", b.RateLimits)
			if err != nil {
				return commands.CreateProvider{}, err
			}
			c := commands.CreateProvider{WorkspaceID: b.WorkspaceID, Slug: b.Slug, Name: b.Name, Integration: b.IntegrationID,
				AIProviderID: b.AIProviderID, Key: b.Key, Configurations: b.Configurations, UsageLimits: b.UsageLimits,
				RateLimits: rates, ExpiresAt: b.ExpiresAt, Tags: b.Tags}
			if c.Integration == "" {
				c.Integration = b.IntegrationSlug
			}
			if b.Note != nil {
				c.Note = *b.Note
			}
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreateProvider, res commands.Result) (int, any, error) {
			p, _, err := read.ManagedProvider(r.Context(), actorFrom(r.Context()).OrganisationID, res.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]string{"id": res.ID, "slug": p.Slug, "object": "provider"}, nil
		}))).Methods(http.MethodPost)

	managedProviderReads(a, r, on, "/providers", "providers", "provider", providerView)

	r.Handle("/providers/{slug}", on(write(a, a.Commands.UpdateProvider, scoped(find, "providers.update"),
		func(_ *http.Request, p domain.Provider, b providerUpdateBody) (commands.UpdateProvider, error) {
			c := b.UpdateProvider
			c.ProviderID = p.ID
			return c, nil
		},
		func(r *http.Request, p domain.Provider, _ commands.UpdateProvider, _ commands.Result) (int, any, error) {
			v, err := rereadProvider(r, a, read, p, providerView)
			return http.StatusOK, v, err
		}))).Methods(http.MethodPut)

	r.Handle("/providers/{slug}", on(pathWrite(a, a.Commands.ArchiveProvider, scoped(find, "providers.delete"),
		func(p domain.Provider) commands.ArchiveProvider { return commands.ArchiveProvider{ProviderID: p.ID} },
		func(p domain.Provider) any {
			return map[string]string{"id": p.ID, "slug": p.Slug, "object": "provider", "status": domain.StatusArchived}
		}))).Methods(http.MethodDelete)
}

// providerUpdateBody is a provider's update body, read field by field (providerUpdateField).
type providerUpdateBody struct{ commands.UpdateProvider }

func (b *providerUpdateBody) readBody(r *http.Request) error {
	return decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		return providerUpdateField(&b.UpdateProvider, name, raw)
	})
}

// managedProviderReads registers the list of managed providers at base and one by its slug at
// base/{slug}, each rendered by view: /providers and /virtual-keys are one resource in two
// shapes, read with the scopes <scopes>.list and <scopes>.read.
func managedProviderReads[V any](a *Admin, r *mux.Router, on func(handler) http.Handler, base, scopes, noun string,
	view func(context.Context, *queries.Queries, domain.Provider, time.Time) (V, error)) {
	r.Handle(base, on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		f, err := a.providerListFilter(r, scopes+".list")
		if err != nil {
			return 0, nil, err
		}
		now := a.Now()
		views := []V{}
		found, err := a.reads().ManagedProviders(r.Context(), f)
		if err != nil {
			return 0, nil, err
		}
		for _, p := range found {
			v, err := view(r.Context(), a.reads(), p, now)
			if err != nil {
				return 0, nil, err
			}
			views = append(views, v)
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle(base+"/{slug}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		p, err := a.providerFromPath(r, scopes+".read", noun)
		if err != nil {
			return 0, nil, err
		}
		if asOfRequested(r) {
			return providerAsOf(a, w, r, p.ID, func(p domain.Provider, at time.Time) (any, error) {
				return view(r.Context(), a.reads(), p, at)
			})
		}
		v, err := view(r.Context(), a.reads(), p, a.Now())
		a.etag(w, r, domain.ProviderPrefix, p.ID)
		return http.StatusOK, v, err
	})).Methods(http.MethodGet)
}

// rereadProvider renders a managed provider as the read model holds it after a write.
func rereadProvider[V any](r *http.Request, a *Admin, read GatewayResourceReader, p domain.Provider,
	view func(context.Context, *queries.Queries, domain.Provider, time.Time) (V, error)) (V, error) {
	p, _, err := read.ManagedProvider(r.Context(), p.OrganisationID, p.ID)
	if err != nil {
		var zero V
		return zero, err
	}
	return view(r.Context(), a.reads(), p, a.Now())
}
