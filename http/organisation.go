package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// organisationSettingsBody changes some security settings and the session TTL; what is not
// sent stays as it is.
type organisationSettingsBody struct {
	SecuritySettings securityPatch    `json:"security_settings"`
	SessionSettings  *sessionSettings `json:"session_settings"`
}

type sessionSettings struct {
	MaxSessionTTL *int `json:"max_session_ttl"`
}

// organisationSettingsAnswer is every security setting of 2.8 and the session settings.
type organisationSettingsAnswer struct {
	Object           string                  `json:"object"`
	OrganisationID   string                  `json:"organisation_id"`
	SecuritySettings domain.SecuritySettings `json:"security_settings"`
	SessionSettings  sessionSettings         `json:"session_settings"`
	LastUpdatedAt    time.Time               `json:"last_updated_at"`
}

// workspaceSettingsBody overrides some security settings in a workspace; null inherits the
// organisation's value again.
type workspaceSettingsBody struct {
	SecuritySettings securityPatch `json:"security_settings"`
}

// securityPatch decodes security settings by name, and names the setting whose value is not
// true, false or null (a plain map's decoding error names only the object).
type securityPatch domain.SecurityPatch

func (p *securityPatch) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return domain.Invalid("security_settings", "security_settings must be an object of booleans")
	}
	out := securityPatch{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		var val *bool
		if err := json.Unmarshal(raw[name], &val); err != nil {
			return domain.Invalid("security_settings."+name, "security_settings.%s must be true, false or null", name)
		}
		out[name] = val
	}
	*p = out
	return nil
}

// workspaceSettingsAnswer shows the workspace's own overrides and the settings in effect.
type workspaceSettingsAnswer struct {
	Object           string                   `json:"object"`
	WorkspaceID      string                   `json:"workspace_id"`
	SecuritySettings domain.SecurityOverrides `json:"security_settings"`
	Effective        domain.SecuritySettings  `json:"effective"`
}

// requireOrgSettingsReader is the read side's (queries.RequireOrgSettingsReader).
func requireOrgSettingsReader(a domain.Actor, scope string) error {
	return queries.RequireOrgSettingsReader(a, scope)
}

func (a *Admin) registerOrganisation(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("organisation", h) }

	// The specification names no path; the reference's shape is /organisations/{id}/...
	ownOrganisation := func(r *http.Request) (domain.Organisation, error) {
		actor := actorFrom(r.Context())
		if id, given := mux.Vars(r)["orgId"]; given && id != actor.OrganisationID {
			return domain.Organisation{}, domain.Errorf(domain.CodeNotFound, "organisation %s not found", id)
		}
		return a.reads().Organisation(r.Context(), actor)
	}
	view := func(o domain.Organisation) organisationSettingsAnswer {
		return organisationSettingsAnswer{Object: "organisation_settings", OrganisationID: o.ID, SecuritySettings: o.Security,
			SessionSettings: sessionSettings{MaxSessionTTL: o.MaxSessionTTL}, LastUpdatedAt: workspaceTime(o.LastUpdatedAt)}
	}
	get := on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			return asOf(a, w, r, organisationAsOf(view))
		}
		if err := requireOrgSettingsReader(actorFrom(r.Context()), "organisations.read"); err != nil {
			return 0, nil, err
		}
		o, err := ownOrganisation(r)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, view(o), nil
	})
	put := on(write(a, a.Commands.UpdateOrganisationSettings, ownOrganisation,
		func(_ *http.Request, _ domain.Organisation, b organisationSettingsBody) (commands.UpdateOrganisationSettings, error) {
			c := commands.UpdateOrganisationSettings{Security: domain.SecurityPatch(b.SecuritySettings)}
			if b.SessionSettings != nil {
				c.MaxSessionTTL = b.SessionSettings.MaxSessionTTL
			}
			return c, nil
		},
		func(r *http.Request, _ domain.Organisation, _ commands.UpdateOrganisationSettings, _ commands.Result) (int, any, error) {
			o, err := ownOrganisation(r)
			return http.StatusOK, view(o), err
		}))
	for _, path := range []string{"/organisation/settings", "/organisations/{orgId}/settings"} {
		r.Handle(path, get).Methods(http.MethodGet)
		r.Handle(path, put).Methods(http.MethodPut)
	}

	wsView := func(r *http.Request, ws domain.Workspace) (workspaceSettingsAnswer, error) {
		effective, err := a.reads().EffectiveSecurity(r.Context(), ws)
		return workspaceSettingsAnswer{Object: "workspace_settings", WorkspaceID: ws.ID, SecuritySettings: ws.Security,
			Effective: effective}, err
	}
	r.Handle("/workspaces/{id}/settings", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if err := requireScope(actorFrom(r.Context()), "workspaces.read"); err != nil {
			return 0, nil, err
		}
		ws, err := a.visibleWorkspace(r)
		if err != nil {
			return 0, nil, err
		}
		v, err := wsView(r, ws)
		return http.StatusOK, v, err
	})).Methods(http.MethodGet)
	r.Handle("/workspaces/{id}/settings", on(write(a, a.Commands.UpdateWorkspaceSecurity, a.pathWorkspace,
		func(_ *http.Request, ws domain.Workspace, b workspaceSettingsBody) (commands.UpdateWorkspaceSecurity, error) {
			return commands.UpdateWorkspaceSecurity{WorkspaceID: ws.ID, Patch: domain.SecurityPatch(b.SecuritySettings)}, nil
		},
		func(r *http.Request, ws domain.Workspace, _ commands.UpdateWorkspaceSecurity, _ commands.Result) (int, any, error) {
			ws, _, err := a.Read.Workspace(r.Context(), ws.OrganisationID, ws.ID)
			if err != nil {
				return 0, nil, err
			}
			v, err := wsView(r, ws)
			return http.StatusOK, v, err
		}))).Methods(http.MethodPut)

}
