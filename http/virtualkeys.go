package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
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

func virtualKeyView(read GatewayResourceReader, p domain.Provider, now time.Time) virtualKeyAnswer {
	v := providerView(read, p, now)
	return virtualKeyAnswer{ID: v.ID, Slug: v.Slug, Name: v.Name, Note: v.Note, WorkspaceID: v.WorkspaceID,
		OrganisationID: v.OrganisationID, Provider: v.AIProviderID, IntegrationID: v.IntegrationID, Status: v.Status,
		UsageLimits: v.UsageLimits, RateLimits: v.RateLimits, ExpiresAt: v.ExpiresAt, LastResetAt: v.LastResetAt,
		ModelConfig: domain.LegacyModelConfig(configurationsView(p.Configurations, p.Masked)), Tags: v.Tags,
		HasKey: v.HasKey, MaskedKey: v.MaskedKey, CreatedAt: v.CreatedAt, LastUpdatedAt: v.LastUpdatedAt, Object: "virtual-key"}
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
	create := a.Commands.CreateProvider
	update := a.Commands.UpdateProvider
	archive := a.Commands.ArchiveProvider
	on := func(h handler) http.Handler {
		return a.route("virtual_key", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			status, body, err := h(w, r)
			return status, body, legacyParam(err)
		})
	}

	r.Handle("/virtual-keys", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		c := commands.CreateProvider{VirtualKey: true}
		err := decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
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
		if err != nil {
			return 0, nil, err
		}
		if c.AIProviderID == "" {
			return 0, nil, domain.Invalid("provider", "provider is required: the provider type, such as openai or anthropic")
		}
		res, err := create.Handle(r.Context(), c)
		if err := a.written(w, r, res, err); err != nil {
			return 0, nil, err
		}
		p, _ := read.ManagedProvider(actorFrom(r.Context()).OrganisationID, res.ID)
		return http.StatusOK, map[string]any{"success": true, "data": map[string]string{"id": res.ID, "slug": p.Slug}}, nil
	})).Methods(http.MethodPost)

	r.Handle("/virtual-keys", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		f, err := providerListFilter(r, read, "virtual_keys.list")
		if err != nil {
			return 0, nil, err
		}
		now := a.Now()
		views := []virtualKeyAnswer{}
		for _, p := range read.ManagedProviders(f) {
			views = append(views, virtualKeyView(read, p, now))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/virtual-keys/{slug}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		p, err := providerFromPath(r, read, "virtual_keys.read", "virtual key")
		if err != nil {
			return 0, nil, err
		}
		if asOfRequested(r) {
			return providerAsOf(a, w, r, p.ID, func(p domain.Provider, at time.Time) any { return virtualKeyView(read, p, at) })
		}
		return http.StatusOK, virtualKeyView(read, p, a.Now()), nil
	})).Methods(http.MethodGet)

	r.Handle("/virtual-keys/{slug}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		p, err := providerFromPath(r, read, "virtual_keys.update", "virtual key")
		if err != nil {
			return 0, nil, err
		}
		c := commands.UpdateProvider{VirtualKey: true, ProviderID: p.ID}
		if err := decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
			if name == "configurations" {
				return false, nil
			}
			if known, err := providerUpdateField(&c, name, raw); known || err != nil {
				return known, err
			}
			return legacySetting(&c.Configurations, name, raw)
		}); err != nil {
			return 0, nil, err
		}
		res, err := update.Handle(r.Context(), c)
		if err := a.written(w, r, res, err); err != nil {
			return 0, nil, err
		}
		p, _ = read.ManagedProvider(p.OrganisationID, p.ID)
		return http.StatusOK, map[string]any{"success": true, "data": virtualKeyView(read, p, a.Now())}, nil
	})).Methods(http.MethodPut)

	r.Handle("/virtual-keys/{slug}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		p, err := providerFromPath(r, read, "virtual_keys.delete", "virtual key")
		if err != nil {
			return 0, nil, err
		}
		res, err := archive.Handle(r.Context(), commands.ArchiveProvider{VirtualKey: true, ProviderID: p.ID})
		if err := a.written(w, r, res, err); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{"success": true, "data": map[string]string{"id": p.ID, "slug": p.Slug, "status": domain.StatusArchived}}, nil
	})).Methods(http.MethodDelete)
}
