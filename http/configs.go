package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// Saved configs answer in the reference's shapes ({"success": true, "data": ...}); lists also
// carry the list fields of every other list. A config is named in paths by its id or slug;
// is_default is the integer 0 or 1 the reference shows (isDefault is accepted as its other
// spelling, as an integer or a boolean).

// configAnswer is a saved config as reads show it; Config, its latest version, only where
// one config is read.
type configAnswer struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Slug           string          `json:"slug"`
	OrganisationID string          `json:"organisation_id"`
	WorkspaceID    string          `json:"workspace_id"`
	IsDefault      int             `json:"is_default"`
	Status         string          `json:"status"`
	OwnerID        string          `json:"owner_id"`
	UpdatedBy      string          `json:"updated_by"`
	VersionID      string          `json:"version_id"`
	Config         json.RawMessage `json:"config,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	LastUpdatedAt  time.Time       `json:"last_updated_at"`
	Object         string          `json:"object"`
}

// configView renders a config; defaultID is the id of its workspace's default config.
func configView(c domain.SavedConfig, defaultID string, withConfig bool) configAnswer {
	out := configAnswer{ID: c.ID, Name: c.Name, Slug: c.Slug, OrganisationID: c.OrganisationID, WorkspaceID: c.WorkspaceID,
		Status: c.Status, OwnerID: c.OwnerID, UpdatedBy: c.UpdatedBy, VersionID: c.Latest().ID,
		CreatedAt: millis(c.CreatedAt), LastUpdatedAt: millis(c.LastUpdatedAt), Object: "config"}
	if defaultID == c.ID {
		out.IsDefault = 1
	}
	if withConfig {
		out.Config = json.RawMessage(c.Latest().Config)
	}
	return out
}

// configVersionAnswer is one version, as the reference's version list shows it: the config
// serialised as a string.
type configVersionAnswer struct {
	ID             string    `json:"id"`
	VersionID      string    `json:"version_id"`
	Name           string    `json:"name"`
	Slug           string    `json:"slug"`
	OrganisationID string    `json:"organisation_id"`
	WorkspaceID    string    `json:"workspace_id"`
	IsDefault      int       `json:"is_default"`
	Status         string    `json:"status"`
	OwnerID        string    `json:"owner_id"`
	UpdatedBy      string    `json:"updated_by"`
	Config         string    `json:"config"`
	Format         string    `json:"format"`
	CreatedAt      time.Time `json:"created_at"`
	LastUpdatedAt  time.Time `json:"last_updated_at"`
	Object         string    `json:"object"`
}

// configBody is a config's create or update body, read field by field.
type configBody struct {
	Name        *string
	Slug        *string
	Config      []byte
	WorkspaceID string
	IsDefault   *bool
	Status      *string
}

// configCreateBody and configUpdateBody read a create's and an update's body
// (decodeConfigBody).
type (
	configCreateBody struct{ configBody }
	configUpdateBody struct{ configBody }
)

func (b *configCreateBody) readBody(r *http.Request) (err error) {
	b.configBody, err = decodeConfigBody(r, true)
	return err
}

func (b *configUpdateBody) readBody(r *http.Request) (err error) {
	b.configBody, err = decodeConfigBody(r, false)
	return err
}

// decodeConfigBody reads a create (create true) or update body.
func decodeConfigBody(r *http.Request, create bool) (configBody, error) {
	var b configBody
	err := decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		switch name {
		case "name":
			return true, decodeField(name, raw, &b.Name)
		case "slug":
			if !create {
				return false, nil
			}
			return true, decodeField(name, raw, &b.Slug)
		case "workspace_id":
			if !create {
				return false, nil
			}
			return true, decodeField(name, raw, &b.WorkspaceID)
		case "config":
			// Kept as sent: the config's own parser checks it and names its fields.
			b.Config = bytes.TrimSpace(raw)
			return true, nil
		case "is_default", "isDefault":
			v, err := flexibleBool(name, raw)
			b.IsDefault = &v
			return true, err
		case "status":
			if create {
				return false, nil
			}
			if err := decodeField(name, raw, &b.Status); err != nil {
				return true, err
			}
			if b.Status == nil || *b.Status != domain.StatusActive {
				return true, domain.Invalid("status", "status can only be active here; delete a config to archive it")
			}
			return true, nil
		}
		return false, nil
	})
	return b, err
}

// flexibleBool reads true, false, 1 or 0.
func flexibleBool(name string, raw json.RawMessage) (bool, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, domain.Invalid(name, "%s must be true, false, 1 or 0", name)
}

// savedConfigAsOf reads a config as it was, with the version then in force and whether it was
// its workspace's default then.
func (a *Admin) savedConfigAsOf(w http.ResponseWriter, r *http.Request, read GatewayResourceReader, id string) (int, any, error) {
	return gatewayAsOf(a, w, r, "config", domain.SavedConfigPrefix, id,
		func(c *domain.SavedConfig) string { return c.OrganisationID }, (*domain.SavedConfig).Exists,
		func(c domain.SavedConfig, at time.Time) (any, error) {
			def, _, _, err := queries.LoadAsOf(r.Context(), a.reads(), domain.Stream(domain.ConfigDefaultPrefix, c.WorkspaceID),
				func() *domain.ConfigDefault { return &domain.ConfigDefault{} }, at)
			if err != nil {
				return nil, err
			}
			view := configView(c, def.ConfigID, true)
			return map[string]any{"success": true, "data": view}, nil
		})
}

func (a *Admin) registerConfigs(r *mux.Router, read GatewayResourceReader) {
	on := func(h handler) http.Handler { return a.route("config", h) }

	// fromPath finds the config of the path (id or slug) that the actor may see, with scope.
	fromPath := func(r *http.Request, scope string) (domain.SavedConfig, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return domain.SavedConfig{}, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return domain.SavedConfig{}, err
		}
		return a.reads().VisibleConfig(r.Context(), actor, mux.Vars(r)["slug"], st)
	}

	r.Handle("/configs", on(write(a, a.Commands.CreateSavedConfig, nowhere,
		func(_ *http.Request, _ struct{}, b configCreateBody) (commands.CreateSavedConfig, error) {
			c := commands.CreateSavedConfig{WorkspaceID: b.WorkspaceID, Slug: b.Slug, Config: b.Config}
			if b.Name != nil {
				c.Name = *b.Name
			}
			if b.IsDefault != nil {
				c.IsDefault = *b.IsDefault
			}
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreateSavedConfig, res commands.Result) (int, any, error) {
			sc, _, err := read.SavedConfig(r.Context(), actorFrom(r.Context()).OrganisationID, res.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]any{"success": true, "data": map[string]string{"id": res.ID, "slug": sc.Slug,
				"version_id": sc.Latest().ID}}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/configs", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "configs.list"); err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		views := []configAnswer{}
		found, err := a.reads().SavedConfigs(r.Context(), actor, st, r.URL.Query().Get("workspace_id"))
		if err != nil {
			return 0, nil, err
		}
		for _, c := range found {
			def, err := a.reads().DefaultConfigID(r.Context(), c.WorkspaceID)
			if err != nil {
				return 0, nil, err
			}
			views = append(views, configView(c, def, false))
		}
		list, err := page(r, views)
		return http.StatusOK, struct {
			Success bool `json:"success"`
			listAnswer[configAnswer]
		}{true, list}, err
	})).Methods(http.MethodGet)

	r.Handle("/configs/{slug}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		c, err := fromPath(r, "configs.read")
		if err != nil {
			return 0, nil, err
		}
		if asOfRequested(r) {
			return a.savedConfigAsOf(w, r, read, c.ID)
		}
		def, err := a.reads().DefaultConfigID(r.Context(), c.WorkspaceID)
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.SavedConfigPrefix, c.ID)
		return http.StatusOK, map[string]any{"success": true, "data": configView(c, def, true)}, nil
	})).Methods(http.MethodGet)

	r.Handle("/configs/{slug}", on(write(a, a.Commands.UpdateSavedConfig, scoped(fromPath, "configs.update"),
		func(_ *http.Request, c domain.SavedConfig, b configUpdateBody) (commands.UpdateSavedConfig, error) {
			return commands.UpdateSavedConfig{ConfigID: c.ID, Name: b.Name, Config: b.Config, IsDefault: b.IsDefault}, nil
		},
		func(r *http.Request, c domain.SavedConfig, _ commands.UpdateSavedConfig, _ commands.Result) (int, any, error) {
			c, _, err := read.SavedConfig(r.Context(), c.OrganisationID, c.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]any{"success": true, "data": map[string]string{"id": c.ID, "slug": c.Slug,
				"version_id": c.Latest().ID}}, nil
		}))).Methods(http.MethodPut)

	r.Handle("/configs/{slug}", on(pathWrite(a, a.Commands.ArchiveSavedConfig, scoped(fromPath, "configs.delete"),
		func(c domain.SavedConfig) commands.ArchiveSavedConfig {
			return commands.ArchiveSavedConfig{ConfigID: c.ID}
		},
		func(c domain.SavedConfig) any {
			return map[string]any{"success": true, "data": map[string]string{"id": c.ID, "slug": c.Slug, "status": domain.StatusArchived}}
		}))).Methods(http.MethodDelete)

	r.Handle("/configs/{slug}/versions", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		c, err := fromPath(r, "configs.read")
		if err != nil {
			return 0, nil, err
		}
		def, err := a.reads().DefaultConfigID(r.Context(), c.WorkspaceID)
		if err != nil {
			return 0, nil, err
		}
		isDefault := 0
		if def == c.ID {
			isDefault = 1
		}
		views := make([]configVersionAnswer, 0, len(c.Versions))
		for n := len(c.Versions) - 1; n >= 0; n-- {
			v := c.Versions[n]
			views = append(views, configVersionAnswer{ID: c.ID, VersionID: v.ID, Name: v.Name, Slug: c.Slug,
				OrganisationID: c.OrganisationID, WorkspaceID: c.WorkspaceID, IsDefault: isDefault, Status: c.Status,
				OwnerID: c.OwnerID, UpdatedBy: v.CreatedBy, Config: v.Config, Format: "json",
				CreatedAt: millis(c.CreatedAt), LastUpdatedAt: millis(v.CreatedAt), Object: "config"})
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)
}
