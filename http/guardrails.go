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

// Guardrails answer in the reference's shapes: CreateGuardrailResponse and
// UpdateGuardrailResponse {id, slug, version_id}; GuardrailSummary in lists, GuardrailDetails
// (the summary with checks and actions) where one is read; workspace_id is null for an
// organisation guardrail. A guardrail is named in paths by its id or slug. The reference names
// no scopes for guardrails: they take the configs scopes. GUARDRAILS_ENABLED=OFF turns the
// routes off.

// guardrailAnswer is a guardrail as reads show it; Checks and Actions, of its version in
// force, only where one guardrail is read.
type guardrailAnswer struct {
	ID             string                   `json:"id"`
	Name           string                   `json:"name"`
	Slug           string                   `json:"slug"`
	OrganisationID string                   `json:"organisation_id"`
	WorkspaceID    *string                  `json:"workspace_id"`
	Status         string                   `json:"status"`
	VersionID      string                   `json:"version_id"`
	Checks         []domain.GuardrailCheck  `json:"checks,omitempty"`
	Actions        *domain.GuardrailActions `json:"actions,omitempty"`
	OwnerID        string                   `json:"owner_id"`
	UpdatedBy      string                   `json:"updated_by"`
	CreatedAt      time.Time                `json:"created_at"`
	LastUpdatedAt  time.Time                `json:"last_updated_at"`
	Object         string                   `json:"object"`
}

func guardrailView(g domain.Guardrail, details bool) guardrailAnswer {
	latest := g.Latest()
	out := guardrailAnswer{ID: g.ID, Name: g.Name, Slug: g.Slug, OrganisationID: g.OrganisationID, Status: g.Status,
		VersionID: latest.ID, OwnerID: g.OwnerID, UpdatedBy: g.UpdatedBy, CreatedAt: millis(g.CreatedAt),
		LastUpdatedAt: millis(g.LastUpdatedAt), Object: "guardrail"}
	if g.WorkspaceID != "" {
		ws := g.WorkspaceID
		out.WorkspaceID = &ws
	}
	if details {
		out.Checks, out.Actions = latest.Checks, &latest.Actions
	}
	return out
}

// guardrailVersionAnswer is one version of a guardrail, newest first in its list.
type guardrailVersionAnswer struct {
	ID        string                  `json:"id"`
	VersionID string                  `json:"version_id"`
	Name      string                  `json:"name"`
	Slug      string                  `json:"slug"`
	Checks    []domain.GuardrailCheck `json:"checks"`
	Actions   domain.GuardrailActions `json:"actions"`
	CreatedBy string                  `json:"created_by"`
	CreatedAt time.Time               `json:"created_at"`
	Object    string                  `json:"object"`
}

// guardrailBody is a guardrail's create or update body, read field by field: checks and
// actions are kept as sent, for the domain to read and name their fields.
type guardrailBody struct {
	Name           *string
	Slug           *string
	WorkspaceID    string
	OrganisationID *string
	Checks         []byte
	Actions        []byte
}

type (
	guardrailCreateBody struct{ guardrailBody }
	guardrailUpdateBody struct{ guardrailBody }
)

func (b *guardrailCreateBody) readBody(r *http.Request) (err error) {
	b.guardrailBody, err = decodeGuardrailBody(r, true)
	return err
}

func (b *guardrailUpdateBody) readBody(r *http.Request) (err error) {
	b.guardrailBody, err = decodeGuardrailBody(r, false)
	return err
}

// decodeGuardrailBody reads a create (create true) or update body: the reference's
// CreateGuardrailRequest (name, workspace_id, organisation_id, checks, actions, and slug) or
// UpdateGuardrailRequest (name, checks, actions).
func decodeGuardrailBody(r *http.Request, create bool) (guardrailBody, error) {
	var b guardrailBody
	err := decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		switch name {
		case "name":
			return true, decodeField(name, raw, &b.Name)
		case "checks":
			b.Checks = bytes.TrimSpace(raw)
			return true, nil
		case "actions":
			b.Actions = bytes.TrimSpace(raw)
			return true, nil
		}
		if !create {
			return false, nil
		}
		switch name {
		case "slug":
			return true, decodeField(name, raw, &b.Slug)
		case "workspace_id":
			var ws *string
			err := decodeField(name, raw, &ws)
			if ws != nil {
				b.WorkspaceID = *ws
			}
			return true, err
		case "organisation_id":
			return true, decodeField(name, raw, &b.OrganisationID)
		}
		return false, nil
	})
	return b, err
}

// guardrailAsOf reads a guardrail as it was: the version then in force.
func (a *Admin) guardrailAsOf(w http.ResponseWriter, r *http.Request) (int, any, error) {
	actor := actorFrom(r.Context())
	id, err := a.reads().HistoryID(r.Context(), actor.OrganisationID, domain.GuardrailPrefix, mux.Vars(r)["guardrailId"], isUUID)
	if err != nil {
		return 0, nil, err
	}
	return gatewayAsOf(a, w, r, "guardrail", domain.GuardrailPrefix, id,
		func(g *domain.Guardrail) string { return g.OrganisationID }, (*domain.Guardrail).Exists,
		func(g domain.Guardrail, _ time.Time) (any, error) {
			if !queries.CanSeeGuardrail(actor, g) {
				return nil, notFound("guardrail", g.ID)
			}
			return guardrailView(g, true), nil
		})
}

func (a *Admin) registerGuardrails(r *mux.Router, read GatewayResourceReader) {
	on := func(h handler) http.Handler {
		return a.route("guardrail", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
			if !a.Features.Guardrails {
				return 0, nil, domain.Errorf(domain.CodeDisabled, "guardrails are turned off (GUARDRAILS_ENABLED=OFF)")
			}
			return h(w, r)
		})
	}

	// fromPath finds the guardrail of the path (id or slug) that the actor may see, with scope.
	fromPath := func(r *http.Request, scope string) (domain.Guardrail, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return domain.Guardrail{}, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return domain.Guardrail{}, err
		}
		return a.reads().VisibleGuardrail(r.Context(), actor, mux.Vars(r)["guardrailId"], st)
	}
	// written answers a write with the guardrail as it is now.
	written := func(r *http.Request, id string) (int, any, error) {
		g, _, err := read.Guardrail(r.Context(), actorFrom(r.Context()).OrganisationID, id)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]string{"id": g.ID, "slug": g.Slug, "version_id": g.Latest().ID}, nil
	}

	r.Handle("/guardrails", on(write(a, a.Commands.CreateGuardrail, nowhere,
		func(r *http.Request, _ struct{}, b guardrailCreateBody) (commands.CreateGuardrail, error) {
			c := commands.CreateGuardrail{WorkspaceID: b.WorkspaceID, Slug: b.Slug, Checks: b.Checks, Actions: b.Actions}
			if b.OrganisationID != nil {
				if err := ownOrganisationID(r, *b.OrganisationID); err != nil {
					return c, err
				}
				c.Organisation = true
			}
			if b.Name != nil {
				c.Name = *b.Name
			}
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreateGuardrail, res commands.Result) (int, any, error) {
			return written(r, res.ID)
		}))).Methods(http.MethodPost)

	r.Handle("/guardrails", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "configs.list"); err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		l := queries.GuardrailList{Statuses: st, WorkspaceID: q.Get("workspace_id")}
		if org := q.Get("organisation_id"); org != "" {
			if err := ownOrganisationID(r, org); err != nil {
				return 0, nil, err
			}
			l.Organisation = true
		}
		found, err := a.reads().Guardrails(r.Context(), actor, l)
		if err != nil {
			return 0, nil, err
		}
		views := make([]guardrailAnswer, 0, len(found))
		for _, g := range found {
			views = append(views, guardrailView(g, false))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/guardrails/{guardrailId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			if err := requireScope(actorFrom(r.Context()), "configs.read"); err != nil {
				return 0, nil, err
			}
			return a.guardrailAsOf(w, r)
		}
		g, err := fromPath(r, "configs.read")
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.GuardrailPrefix, g.ID)
		return http.StatusOK, guardrailView(g, true), nil
	})).Methods(http.MethodGet)

	r.Handle("/guardrails/{guardrailId}", on(write(a, a.Commands.UpdateGuardrail, scoped(fromPath, "configs.update"),
		func(_ *http.Request, g domain.Guardrail, b guardrailUpdateBody) (commands.UpdateGuardrail, error) {
			return commands.UpdateGuardrail{GuardrailID: g.ID, Name: b.Name, Checks: b.Checks, Actions: b.Actions}, nil
		},
		func(r *http.Request, g domain.Guardrail, _ commands.UpdateGuardrail, _ commands.Result) (int, any, error) {
			return written(r, g.ID)
		}))).Methods(http.MethodPut)

	r.Handle("/guardrails/{guardrailId}", on(pathWrite(a, a.Commands.ArchiveGuardrail, scoped(fromPath, "configs.delete"),
		func(g domain.Guardrail) commands.ArchiveGuardrail {
			return commands.ArchiveGuardrail{GuardrailID: g.ID}
		},
		func(g domain.Guardrail) any {
			return map[string]string{"id": g.ID, "slug": g.Slug, "object": "guardrail", "status": domain.StatusArchived}
		}))).Methods(http.MethodDelete)

	r.Handle("/guardrails/{guardrailId}/versions", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		g, err := fromPath(r, "configs.read")
		if err != nil {
			return 0, nil, err
		}
		views := make([]guardrailVersionAnswer, 0, len(g.Versions))
		for n := len(g.Versions) - 1; n >= 0; n-- {
			v := g.Versions[n]
			views = append(views, guardrailVersionAnswer{ID: g.ID, VersionID: v.ID, Name: v.Name, Slug: g.Slug, Checks: v.Checks,
				Actions: v.Actions, CreatedBy: v.CreatedBy, CreatedAt: millis(v.CreatedAt), Object: "guardrail_version"})
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)
}
