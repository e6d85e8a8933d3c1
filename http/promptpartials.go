package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// Prompt partials answer in the reference's shapes: createPromptPartial {id, slug,
// version_id}, PromptPartialSummary in the list and PromptPartialVersion in the version list
// (arrays, as the reference has them), PromptPartial where one is read (its default
// version), updatePromptPartial {prompt_partial_version_id}. A partial is named in paths by
// its id or slug. Beyond the reference, PUT /prompts/partials/{id}/versions/{versionId}
// {label_id} points a label at a version, as it does for prompts.

// partialAnswer is the reference's PromptPartial.
type partialAnswer struct {
	ID                     string    `json:"id"`
	Slug                   string    `json:"slug"`
	Name                   string    `json:"name"`
	CollectionID           string    `json:"collection_id"`
	WorkspaceID            string    `json:"workspace_id"`
	String                 string    `json:"string"`
	Version                int       `json:"version"`
	VersionDescription     string    `json:"version_description"`
	PromptPartialVersionID string    `json:"prompt_partial_version_id"`
	DefaultVersion         int       `json:"default_version"`
	CreatedAt              time.Time `json:"created_at"`
	LastUpdatedAt          time.Time `json:"last_updated_at"`
	Status                 string    `json:"status"`
	Object                 string    `json:"object"`
}

func partialView(p domain.PromptPartial) partialAnswer {
	v := p.Default()
	return partialAnswer{ID: p.ID, Slug: p.Slug, Name: p.Name, CollectionID: p.CollectionID, WorkspaceID: p.WorkspaceID,
		String: v.String, Version: v.Number, VersionDescription: v.Description, PromptPartialVersionID: v.ID,
		DefaultVersion: p.DefaultVersion, CreatedAt: millis(p.CreatedAt), LastUpdatedAt: millis(p.LastUpdatedAt),
		Status: p.Status, Object: "partial"}
}

// partialSummary is the reference's PromptPartialSummary.
type partialSummary struct {
	ID            string    `json:"id"`
	Slug          string    `json:"slug"`
	Name          string    `json:"name"`
	CollectionID  string    `json:"collection_id"`
	WorkspaceID   string    `json:"workspace_id"`
	CreatedAt     time.Time `json:"created_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
	Status        string    `json:"status"`
	Object        string    `json:"object"`
}

// partialVersionAnswer is the reference's PromptPartialVersion (version as a string, as it
// has it).
type partialVersionAnswer struct {
	PromptPartialID        string    `json:"prompt_partial_id"`
	PromptPartialVersionID string    `json:"prompt_partial_version_id"`
	Slug                   string    `json:"slug"`
	Version                string    `json:"version"`
	String                 string    `json:"string"`
	Description            string    `json:"description"`
	LabelID                *string   `json:"label_id"`
	IsDefault              bool      `json:"is_default"`
	CreatedAt              time.Time `json:"created_at"`
	PromptVersionStatus    string    `json:"prompt_version_status"`
	Object                 string    `json:"object"`
}

// partialCreateBody is createPromptPartial's body, with an optional slug.
type partialCreateBody struct {
	WorkspaceID        string  `json:"workspace_id"`
	Name               *string `json:"name"`
	Slug               *string `json:"slug"`
	String             *string `json:"string"`
	VersionDescription string  `json:"version_description"`
}

// partialUpdateBody is updatePromptPartial's body; status can only be active (DELETE
// archives).
type partialUpdateBody struct {
	Name        *string
	String      *string
	Description *string
}

func (b *partialUpdateBody) readBody(r *http.Request) error {
	return decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		switch name {
		case "name":
			return true, decodeField(name, raw, &b.Name)
		case "string":
			return true, decodeField(name, raw, &b.String)
		case "description", "version_description":
			return true, decodeField(name, raw, &b.Description)
		case "status":
			var s *string
			if err := decodeField(name, raw, &s); err != nil {
				return true, err
			}
			if s == nil || *s != domain.StatusActive {
				return true, domain.Invalid("status", "status can only be active here; delete a partial to archive it")
			}
			return true, nil
		}
		return false, nil
	})
}

func (a *Admin) registerPromptPartials(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("prompt_partial", h) }
	// fromPath finds the partial of the path (id or slug) that the actor may see, with scope.
	fromPath := func(r *http.Request, scope string) (domain.PromptPartial, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return domain.PromptPartial{}, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return domain.PromptPartial{}, err
		}
		return a.reads().VisiblePromptPartial(r.Context(), actor, mux.Vars(r)["promptPartialId"], st)
	}

	r.Handle("/prompts/partials", on(write(a, a.Commands.CreatePromptPartial, nowhere,
		func(r *http.Request, _ struct{}, b partialCreateBody) (commands.CreatePromptPartial, error) {
			c := commands.CreatePromptPartial{Slug: b.Slug, Description: b.VersionDescription}
			if b.Name == nil {
				return c, domain.Invalid("name", "name is required")
			}
			if b.String == nil {
				return c, domain.Invalid("string", "string is required: the partial's template")
			}
			ws, err := a.workspaceID(r, b.WorkspaceID)
			c.WorkspaceID, c.Name, c.String = ws, *b.Name, *b.String
			return c, err
		},
		func(r *http.Request, _ struct{}, _ commands.CreatePromptPartial, res commands.Result) (int, any, error) {
			p, _, err := a.Read.PromptPartial(r.Context(), actorFrom(r.Context()).OrganisationID, res.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]string{"id": p.ID, "slug": p.Slug, "version_id": p.Latest().ID}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/prompts/partials", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "prompts.list"); err != nil {
			return 0, nil, err
		}
		st, err := statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
		if err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		found, err := a.reads().PromptPartials(r.Context(), actor, queries.PromptList{Statuses: st, WorkspaceRef: q.Get("workspace_id"),
			CollectionRef: q.Get("collection_id"), Search: q.Get("search")})
		if err != nil {
			return 0, nil, err
		}
		views := make([]partialSummary, 0, len(found))
		for _, p := range found {
			views = append(views, partialSummary{ID: p.ID, Slug: p.Slug, Name: p.Name, CollectionID: p.CollectionID,
				WorkspaceID: p.WorkspaceID, CreatedAt: millis(p.CreatedAt), LastUpdatedAt: millis(p.LastUpdatedAt),
				Status: p.Status, Object: "partial"})
		}
		return http.StatusOK, views, nil
	})).Methods(http.MethodGet)

	r.Handle("/prompts/partials/{promptPartialId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "prompts.read"); err != nil {
			return 0, nil, err
		}
		if asOfRequested(r) {
			id, err := a.reads().HistoryID(r.Context(), actor.OrganisationID, domain.PromptPartialPrefix, mux.Vars(r)["promptPartialId"], isUUID)
			if err != nil {
				return 0, nil, err
			}
			return gatewayAsOf(a, w, r, "prompt partial", domain.PromptPartialPrefix, id,
				func(p *domain.PromptPartial) string { return p.OrganisationID }, (*domain.PromptPartial).Exists,
				func(p domain.PromptPartial, _ time.Time) (any, error) {
					if !canSee(actor, p.WorkspaceID) {
						return nil, notFound("prompt partial", p.ID)
					}
					if err := a.reads().CanViewPrompts(r.Context(), actor, p.WorkspaceID); err != nil {
						return nil, err
					}
					return partialView(p), nil
				})
		}
		p, err := fromPath(r, "prompts.read")
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.PromptPartialPrefix, p.ID)
		return http.StatusOK, partialView(p), nil
	})).Methods(http.MethodGet)

	r.Handle("/prompts/partials/{promptPartialId}", on(write(a, a.Commands.UpdatePromptPartial, scoped(fromPath, "prompts.update"),
		func(_ *http.Request, p domain.PromptPartial, b partialUpdateBody) (commands.UpdatePromptPartial, error) {
			return commands.UpdatePromptPartial{PartialID: p.ID, Name: b.Name, String: b.String, Description: b.Description}, nil
		},
		func(r *http.Request, p domain.PromptPartial, _ commands.UpdatePromptPartial, _ commands.Result) (int, any, error) {
			now, _, err := a.Read.PromptPartial(r.Context(), p.OrganisationID, p.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]string{"prompt_partial_version_id": now.Latest().ID}, nil
		}))).Methods(http.MethodPut)

	r.Handle("/prompts/partials/{promptPartialId}", on(pathWrite(a, a.Commands.ArchivePromptPartial, scoped(fromPath, "prompts.delete"),
		func(p domain.PromptPartial) commands.ArchivePromptPartial {
			return commands.ArchivePromptPartial{PartialID: p.ID}
		},
		func(domain.PromptPartial) any { return map[string]any{} }))).Methods(http.MethodDelete)

	r.Handle("/prompts/partials/{promptPartialId}/versions", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		p, err := fromPath(r, "prompts.read")
		if err != nil {
			return 0, nil, err
		}
		labels, err := a.labelsOf(r.Context(), p.OrganisationID)
		if err != nil {
			return 0, nil, err
		}
		views := make([]partialVersionAnswer, 0, len(p.Versions))
		for n := len(p.Versions) - 1; n >= 0; n-- {
			v := p.Versions[n]
			views = append(views, partialVersionAnswer{PromptPartialID: p.ID, PromptPartialVersionID: v.ID, Slug: p.Slug,
				Version: strconv.Itoa(v.Number), String: v.String, Description: v.Description, LabelID: labels.of(p.LabelOf(v.Number)),
				IsDefault: p.DefaultVersion == v.Number, CreatedAt: millis(v.CreatedAt), PromptVersionStatus: versionStatus(p.Status),
				Object: "partial"})
		}
		return http.StatusOK, views, nil
	})).Methods(http.MethodGet)

	r.Handle("/prompts/partials/{promptPartialId}/makeDefault", on(write(a, a.Commands.MakePromptPartialDefault, scoped(fromPath, "prompts.update"),
		func(_ *http.Request, p domain.PromptPartial, b versionBody) (commands.MakePromptPartialDefault, error) {
			return commands.MakePromptPartialDefault{PartialID: p.ID, Version: b.Version}, nil
		},
		func(*http.Request, domain.PromptPartial, commands.MakePromptPartialDefault, commands.Result) (int, any, error) {
			return http.StatusOK, map[string]any{}, nil
		}))).Methods(http.MethodPut)

	r.Handle("/prompts/partials/{promptPartialId}/versions/{versionId}", on(write(a, a.Commands.LabelPromptPartialVersion, scoped(fromPath, "prompts.update"),
		func(r *http.Request, p domain.PromptPartial, b labelBody) (commands.LabelPromptPartialVersion, error) {
			raw := mux.Vars(r)["versionId"]
			v, ok := p.VersionByID(raw)
			if n, err := strconv.Atoi(raw); !ok && err == nil {
				v, ok = p.Version(n)
			}
			if !ok {
				return commands.LabelPromptPartialVersion{}, &domain.Error{Code: domain.CodeNotFound, Param: "versionId",
					Message: "prompt partial " + p.Slug + " has no version " + raw}
			}
			return commands.LabelPromptPartialVersion{PartialID: p.ID, VersionID: v.ID, LabelID: b.LabelID}, nil
		},
		func(*http.Request, domain.PromptPartial, commands.LabelPromptPartialVersion, commands.Result) (int, any, error) {
			return http.StatusOK, map[string]any{}, nil
		}))).Methods(http.MethodPut)
}
