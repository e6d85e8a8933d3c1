package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/queries"
)

// Labels answer in the reference's shapes: CreateLabelResponse {id}, Label where one is read
// and in ListLabelsResponse {total, data}; is_universal is true for an organisation's label
// (workspace_id null), which every workspace may use. A label is named in paths by its id
// (or its name, unique in the organisation).

// labelAnswer is the reference's Label.
type labelAnswer struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	ColorCode      string    `json:"color_code"`
	OrganisationID string    `json:"organisation_id"`
	WorkspaceID    *string   `json:"workspace_id"`
	IsUniversal    bool      `json:"is_universal"`
	CreatedAt      time.Time `json:"created_at"`
	LastUpdatedAt  time.Time `json:"last_updated_at"`
	Status         string    `json:"status"`
	Object         string    `json:"object"`
}

func labelView(l domain.PromptLabel) labelAnswer {
	out := labelAnswer{ID: l.ID, Name: l.Name, Description: l.Description, ColorCode: l.ColorCode, OrganisationID: l.OrganisationID,
		IsUniversal: l.WorkspaceID == "", CreatedAt: millis(l.CreatedAt), LastUpdatedAt: millis(l.LastUpdatedAt),
		Status: l.Status, Object: "label"}
	if l.WorkspaceID != "" {
		ws := l.WorkspaceID
		out.WorkspaceID = &ws
	}
	return out
}

// labelCreateBody is the reference's CreateLabelRequest.
type labelCreateBody struct {
	OrganisationID string  `json:"organisation_id"`
	WorkspaceID    string  `json:"workspace_id"`
	Name           *string `json:"name"`
	Description    string  `json:"description"`
	ColorCode      string  `json:"color_code"`
}

// labelUpdateBody is the reference's UpdateLabelRequest.
type labelUpdateBody struct {
	Name        *string
	Description *string
	ColorCode   *string
}

func (b *labelUpdateBody) readBody(r *http.Request) error {
	return decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		switch name {
		case "name":
			return true, decodeField(name, raw, &b.Name)
		case "description":
			return true, decodeField(name, raw, &b.Description)
		case "color_code":
			return true, decodeField(name, raw, &b.ColorCode)
		}
		return false, nil
	})
}

// labelAsOf reads a label as it was.
func (a *Admin) labelAsOf(w http.ResponseWriter, r *http.Request) (int, any, error) {
	actor := actorFrom(r.Context())
	id, err := a.reads().HistoryID(r.Context(), actor.OrganisationID, domain.PromptLabelPrefix, mux.Vars(r)["labelId"], isUUID)
	if err != nil {
		return 0, nil, err
	}
	return gatewayAsOf(a, w, r, "label", domain.PromptLabelPrefix, id,
		func(l *domain.PromptLabel) string { return l.OrganisationID }, (*domain.PromptLabel).Exists,
		func(l domain.PromptLabel, _ time.Time) (any, error) {
			if !queries.CanSeePromptLabel(actor, l) {
				return nil, notFound("label", l.ID)
			}
			return labelView(l), nil
		})
}

func (a *Admin) registerPromptLabels(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("prompt_label", h) }
	// fromPath finds the live label of the path that the actor sees, with scope; the
	// reference's organisation_id and workspace_id, when sent, must be the label's.
	fromPath := func(r *http.Request, scope string) (domain.PromptLabel, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return domain.PromptLabel{}, err
		}
		q := r.URL.Query()
		if err := ownOrganisationID(r, q.Get("organisation_id")); err != nil {
			return domain.PromptLabel{}, err
		}
		l, err := a.reads().VisiblePromptLabel(r.Context(), actor, mux.Vars(r)["labelId"])
		if err != nil {
			return l, err
		}
		if ref := q.Get("workspace_id"); ref != "" && l.WorkspaceID != "" {
			ws, err := a.workspaceID(r, ref)
			if err != nil {
				return l, err
			}
			if ws != l.WorkspaceID {
				return l, notFound("label", mux.Vars(r)["labelId"])
			}
		}
		return l, nil
	}

	r.Handle("/labels", on(write(a, a.Commands.CreatePromptLabel, nowhere,
		func(r *http.Request, _ struct{}, b labelCreateBody) (commands.CreatePromptLabel, error) {
			c := commands.CreatePromptLabel{Description: b.Description, ColorCode: b.ColorCode}
			if err := ownOrganisationID(r, b.OrganisationID); err != nil {
				return c, err
			}
			if b.Name == nil {
				return c, domain.Invalid("name", "name is required")
			}
			ws, err := a.workspaceID(r, b.WorkspaceID)
			c.Name, c.WorkspaceID = *b.Name, ws
			return c, err
		},
		func(_ *http.Request, _ struct{}, _ commands.CreatePromptLabel, res commands.Result) (int, any, error) {
			return http.StatusOK, map[string]string{"id": res.ID}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/labels", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "prompts.list"); err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		l := queries.PromptLabelList{WorkspaceRef: q.Get("workspace_id"), Search: q.Get("search")}
		if org := q.Get("organisation_id"); org != "" {
			if err := ownOrganisationID(r, org); err != nil {
				return 0, nil, err
			}
			l.Organisation = l.WorkspaceRef == ""
		}
		found, err := a.reads().PromptLabels(r.Context(), actor, l)
		if err != nil {
			return 0, nil, err
		}
		views := make([]labelAnswer, 0, len(found))
		for _, l := range found {
			views = append(views, labelView(l))
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/labels/{labelId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if asOfRequested(r) {
			if err := requireScope(actorFrom(r.Context()), "prompts.read"); err != nil {
				return 0, nil, err
			}
			return a.labelAsOf(w, r)
		}
		l, err := fromPath(r, "prompts.read")
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.PromptLabelPrefix, l.ID)
		return http.StatusOK, labelView(l), nil
	})).Methods(http.MethodGet)

	r.Handle("/labels/{labelId}", on(write(a, a.Commands.UpdatePromptLabel, scoped(fromPath, "prompts.update"),
		func(_ *http.Request, l domain.PromptLabel, b labelUpdateBody) (commands.UpdatePromptLabel, error) {
			return commands.UpdatePromptLabel{LabelID: l.ID, Name: b.Name, Description: b.Description, ColorCode: b.ColorCode}, nil
		},
		func(*http.Request, domain.PromptLabel, commands.UpdatePromptLabel, commands.Result) (int, any, error) {
			return http.StatusOK, map[string]any{}, nil
		}))).Methods(http.MethodPut)

	r.Handle("/labels/{labelId}", on(pathWrite(a, a.Commands.ArchivePromptLabel, scoped(fromPath, "prompts.delete"),
		func(l domain.PromptLabel) commands.ArchivePromptLabel {
			return commands.ArchivePromptLabel{LabelID: l.ID}
		},
		func(domain.PromptLabel) any { return map[string]any{} }))).Methods(http.MethodDelete)
}
