package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// Virtual keys are the legacy spelling of managed providers (domain/virtualkey.go): the same
// aggregate, read and written here with the virtual_keys.* scopes, the reference's legacy
// body (provider, key, camelCase settings at the top level) and its answers
// ({"success": true, "data": ...}).

// virtualKeyAnswer is the reference's VirtualKeys object: the key never, only has_key and the
// last four characters; model_config in the legacy camelCase names.
type virtualKeyAnswer struct {
	ID             string             `json:"id"`
	Slug           string             `json:"slug"`
	Name           string             `json:"name"`
	Note           *string            `json:"note"`
	WorkspaceID    string             `json:"workspace_id"`
	OrganisationID string             `json:"organisation_id"`
	Provider       string             `json:"provider"`
	IntegrationID  *string            `json:"integration_id,omitempty"`
	Status         string             `json:"status"`
	UsageLimits    *usageLimitsAnswer `json:"usage_limits"`
	RateLimits     []domain.RateLimit `json:"rate_limits"`
	ExpiresAt      *time.Time         `json:"expires_at"`
	LastResetAt    *time.Time         `json:"last_reset_at"`
	ModelConfig    map[string]any     `json:"model_config"`
	Tags           map[string]string  `json:"tags"`
	HasKey         bool               `json:"has_key"`
	MaskedKey      *string            `json:"masked_key"`
	CreatedAt      time.Time          `json:"created_at"`
	LastUpdatedAt  time.Time          `json:"last_updated_at"`
	Object         string             `json:"object"`
}

func virtualKeyView(ctx context.Context, q *queries.Queries, p domain.Provider, now time.Time) (virtualKeyAnswer, error) {
	v, err := providerView(ctx, q, p, now)
	return virtualKeyAnswer{ID: v.ID, Slug: v.Slug, Name: v.Name, Note: v.Note, WorkspaceID: v.WorkspaceID,
		OrganisationID: v.OrganisationID, Provider: v.AIProviderID, IntegrationID: v.IntegrationID, Status: v.Status,
		UsageLimits: v.UsageLimits, RateLimits: v.RateLimits, ExpiresAt: v.ExpiresAt, LastResetAt: v.LastResetAt,
		ModelConfig: domain.LegacyModelConfig(configurationsView(p.Configurations, p.Masked)), Tags: v.Tags,
		HasKey: v.HasKey, MaskedKey: v.MaskedKey, CreatedAt: v.CreatedAt, LastUpdatedAt: v.LastUpdatedAt, Object: "virtual-key"}, err
}

// legacySetting stores a camelCase setting of a virtual key body under its configuration
// name; it reports false for a name that is no setting.
func legacySetting(configs *map[string]any, name string, raw json.RawMessage) (bool, error) {
	field, ok := domain.LegacyModelConfigField(name)
	if !ok {
		return false, nil
	}
	var v any
	if err := decodeField(name, raw, &v); err != nil {
		return true, err
	}
	if *configs == nil {
		*configs = map[string]any{}
	}
	(*configs)[field] = v
	return true, nil
}

// legacyParam names a field of a virtual key's error as the legacy body spells it: provider
// for ai_provider_id, resourceName for configurations.azure_resource_name.
func legacyParam(err error) error {
	var appErr *domain.Error
	if !errors.As(err, &appErr) || appErr.Param == "" {
		return err
	}
	param := appErr.Param
	if param == "ai_provider_id" {
		param = "provider"
	} else if field, ok := strings.CutPrefix(param, "configurations."); ok {
		for _, camel := range domain.LegacyModelConfigFields() {
			if f, _ := domain.LegacyModelConfigField(camel); f == field {
				param = camel
			}
		}
	}
	if param == appErr.Param {
		return err
	}
	e := *appErr
	e.Param = param
	e.Message = strings.ReplaceAll(e.Message, appErr.Param, param)
	return &e
}

func (a *Admin) registerVirtualKeys(r *mux.Router, read GatewayResourceReader) {
	on := func(h handler) http.Handler {
		return a.route("virtual_key", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			status, body, err := h(w, r)
			return status, body, legacyParam(err)
		})
	}
	find := func(r *http.Request, scope string) (domain.Provider, error) {
		return a.providerFromPath(r, scope, "virtual key")
	}

	r.Handle("/virtual-keys", on(write(a, a.Commands.CreateProvider, nowhere,
		func(_ *http.Request, _ struct{}, b virtualKeyCreateBody) (commands.CreateProvider, error) {
			c := b.CreateProvider
			c.VirtualKey = true
			if c.AIProviderID == "" {
				return c, domain.Invalid("provider", "provider is required: the provider type, such as openai or anthropic")
			}
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreateProvider, res commands.Result) (int, any, error) {
			p, _, err := read.ManagedProvider(r.Context(), actorFrom(r.Context()).OrganisationID, res.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]any{"success": true, "data": map[string]string{"id": res.ID, "slug": p.Slug}}, nil
		}))).Methods(http.MethodPost)

	managedProviderReads(a, r, on, "/virtual-keys", "virtual_keys", "virtual key", virtualKeyView)

	r.Handle("/virtual-keys/{slug}", on(write(a, a.Commands.UpdateProvider, scoped(find, "virtual_keys.update"),
		func(_ *http.Request, p domain.Provider, b virtualKeyUpdateBody) (commands.UpdateProvider, error) {
			c := b.UpdateProvider
			c.VirtualKey, c.ProviderID = true, p.ID
			return c, nil
		},
		func(r *http.Request, p domain.Provider, _ commands.UpdateProvider, _ commands.Result) (int, any, error) {
			v, err := rereadProvider(r, a, read, p, virtualKeyView)
			return http.StatusOK, map[string]any{"success": true, "data": v}, err
		}))).Methods(http.MethodPut)

	r.Handle("/virtual-keys/{slug}", on(pathWrite(a, a.Commands.ArchiveProvider, scoped(find, "virtual_keys.delete"),
		func(p domain.Provider) commands.ArchiveProvider {
			return commands.ArchiveProvider{VirtualKey: true, ProviderID: p.ID}
		},
		func(p domain.Provider) any {
			return map[string]any{"success": true, "data": map[string]string{"id": p.ID, "slug": p.Slug, "status": domain.StatusArchived}}
		}))).Methods(http.MethodDelete)
}

// virtualKeyCreateBody is the legacy create body: the provider's fields by their old names,
// and any other field a setting of its configuration (legacySetting).
type virtualKeyCreateBody struct{ commands.CreateProvider }

func (b *virtualKeyCreateBody) readBody(r *http.Request) error {
	c := &b.CreateProvider
	return decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		null := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		switch name {
		case "name":
			return true, decodeField(name, raw, &c.Name)
		case "slug":
			return true, decodeField(name, raw, &c.Slug)
		case "provider":
			return true, decodeField(name, raw, &c.AIProviderID)
		case "key":
			return true, decodeField(name, raw, &c.Key)
		case "note":
			if null {
				return true, nil
			}
			return true, decodeField(name, raw, &c.Note)
		case "workspace_id":
			return true, decodeField(name, raw, &c.WorkspaceID)
		case "usage_limits":
			return true, decodeField(name, raw, &c.UsageLimits)
		case "rate_limits":
			var err error
			c.RateLimits, err = rateLimitsOf(name, raw)
			return true, err
		case "expires_at":
			return true, decodeField(name, raw, &c.ExpiresAt)
		case "tags":
			return true, decodeField(name, raw, &c.Tags)
		}
		return legacySetting(&c.Configurations, name, raw)
	})
}

// virtualKeyUpdateBody is the legacy update body: a provider's update fields, and any other
// field a setting of its configuration; configurations itself is not taken.
type virtualKeyUpdateBody struct{ commands.UpdateProvider }

func (b *virtualKeyUpdateBody) readBody(r *http.Request) error {
	c := &b.UpdateProvider
	return decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		if name == "configurations" {
			return false, nil
		}
		if known, err := providerUpdateField(c, name, raw); known || err != nil {
			return known, err
		}
		return legacySetting(&c.Configurations, name, raw)
	})
}
