package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/queries"
)

// Prompts answer in the reference's shapes: createPrompt {id, slug, version_id, object},
// PromptSummary in lists, Prompt where one is read (the default version, or the version the
// path names: /prompts/{id}@3, @latest, @<label>, or /prompts/{id}/versions/{versionId}),
// PromptVersionSummary in the version list (an array, as the reference has it). A prompt is
// named in paths by its id or slug. They take the prompts scopes, and the prompt security
// settings decide who sees and who changes them (package queries and commands).

// promptAnswer is the reference's Prompt: a prompt with one of its versions.
type promptAnswer struct {
	ID                       string         `json:"id"`
	Slug                     string         `json:"slug"`
	Name                     string         `json:"name"`
	CollectionID             string         `json:"collection_id"`
	WorkspaceID              string         `json:"workspace_id"`
	String                   string         `json:"string"`
	Parameters               map[string]any `json:"parameters"`
	PromptVersion            int            `json:"prompt_version"`
	PromptVersionID          string         `json:"prompt_version_id"`
	PromptVersionStatus      string         `json:"prompt_version_status"`
	PromptVersionDescription string         `json:"prompt_version_description"`
	PromptVersionLabelID     *string        `json:"prompt_version_label_id"`
	VirtualKey               string         `json:"virtual_key"`
	Model                    string         `json:"model"`
	Functions                []any          `json:"functions"`
	Tools                    []any          `json:"tools"`
	ToolChoice               any            `json:"tool_choice"`
	TemplateMetadata         map[string]any `json:"template_metadata"`
	IsRawTemplate            bool           `json:"is_raw_template"`
	DefaultVersion           int            `json:"default_version"`
	Status                   string         `json:"status"`
	CreatedAt                time.Time      `json:"created_at"`
	LastUpdatedAt            time.Time      `json:"last_updated_at"`
	Object                   string         `json:"object"`
}

// liveLabels says which label ids name a live label: a version's label is shown only then.
type liveLabels map[string]bool

func (l liveLabels) of(id string) *string {
	if id == "" || !l[id] {
		return nil
	}
	return &id
}

// labelsOf reads the organisation's live labels.
func (a *Admin) labelsOf(ctx context.Context, orgID string) (liveLabels, error) {
	found, err := a.Read.PromptLabels(ctx, projections.PromptLabelFilter{OrganisationID: orgID,
		Statuses: map[string]bool{domain.StatusActive: true}})
	out := liveLabels{}
	for _, l := range found {
		out[l.ID] = true
	}
	return out, err
}

// versionStatus is a version's status: its prompt's.
func versionStatus(status string) string {
	if status == domain.StatusArchived {
		return domain.StatusArchived
	}
	return domain.StatusActive
}

func promptView(p domain.Prompt, v domain.PromptVersion, labels liveLabels) promptAnswer {
	t := v.Template
	params := t.Parameters
	if params == nil {
		params = map[string]any{}
	}
	return promptAnswer{ID: p.ID, Slug: p.Slug, Name: p.Name, CollectionID: p.CollectionID, WorkspaceID: p.WorkspaceID,
		String: t.String, Parameters: params, PromptVersion: v.Number, PromptVersionID: v.ID,
		PromptVersionStatus: versionStatus(p.Status), PromptVersionDescription: t.Description,
		PromptVersionLabelID: labels.of(p.LabelOf(v.Number)), VirtualKey: t.VirtualKey, Model: t.Model,
		Functions: orEmpty(t.Functions), Tools: orEmpty(t.Tools), ToolChoice: t.ToolChoice, TemplateMetadata: t.Metadata,
		IsRawTemplate: t.IsRawTemplate, DefaultVersion: p.DefaultVersion, Status: p.Status,
		CreatedAt: millis(p.CreatedAt), LastUpdatedAt: millis(p.LastUpdatedAt), Object: "prompt"}
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// promptSummary is the reference's PromptSummary.
type promptSummary struct {
	ID            string    `json:"id"`
	Slug          string    `json:"slug"`
	Name          string    `json:"name"`
	CollectionID  string    `json:"collection_id"`
	WorkspaceID   string    `json:"workspace_id"`
	Model         string    `json:"model"`
	Status        string    `json:"status"`
	CreatedAt     time.Time `json:"created_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
	Object        string    `json:"object"`
}

// promptVersionSummary is the reference's PromptVersionSummary.
type promptVersionSummary struct {
	ID                string         `json:"id"`
	PromptID          string         `json:"prompt_id"`
	PromptTemplate    map[string]any `json:"prompt_template"`
	PromptVersion     int            `json:"prompt_version"`
	PromptDescription string         `json:"prompt_description"`
	LabelID           *string        `json:"label_id"`
	IsDefault         bool           `json:"is_default"`
	CreatedBy         string         `json:"created_by"`
	CreatedAt         time.Time      `json:"created_at"`
	Status            string         `json:"status"`
	Object            string         `json:"object"`
}

func promptVersionView(p domain.Prompt, v domain.PromptVersion, labels liveLabels) promptVersionSummary {
	t := v.Template
	tmpl := map[string]any{"string": t.String, "parameters": t.Parameters, "model": t.Model, "virtual_key": t.VirtualKey,
		"functions": orEmpty(t.Functions), "tools": orEmpty(t.Tools), "tool_choice": t.ToolChoice,
		"template_metadata": t.Metadata, "is_raw_template": t.IsRawTemplate}
	return promptVersionSummary{ID: v.ID, PromptID: p.ID, PromptTemplate: tmpl, PromptVersion: v.Number,
		PromptDescription: t.Description, LabelID: labels.of(p.LabelOf(v.Number)), IsDefault: p.DefaultVersion == v.Number,
		CreatedBy: v.CreatedBy, CreatedAt: millis(v.CreatedAt), Status: versionStatus(p.Status), Object: "prompt"}
}

// promptBody is a prompt's create or update body, read field by field so that a version
// field sent is told from one left out (patch).
type promptBody struct {
	Name         *string
	Slug         *string
	CollectionID *string
	WorkspaceID  string
	Patch        bool
	Fields       domain.PromptVersionFields
}

type (
	promptCreateBody struct{ promptBody }
	promptUpdateBody struct{ promptBody }
)

func (b *promptCreateBody) readBody(r *http.Request) (err error) {
	b.promptBody, err = decodePromptBody(r, true)
	return err
}

func (b *promptUpdateBody) readBody(r *http.Request) (err error) {
	b.promptBody, err = decodePromptBody(r, false)
	return err
}

// decodePromptBody reads createPrompt's body (create) or updatePrompt's. The version's
// metadata is template_metadata on create and prompt_metadata on update in the reference;
// both spellings are read on both, and metadata too.
func decodePromptBody(r *http.Request, create bool) (promptBody, error) {
	var b promptBody
	f := &b.Fields
	f.Sent = map[string]bool{}
	err := decodeObject(r, func(name string, raw json.RawMessage) (bool, error) {
		sent := func(field string, err error) (bool, error) {
			f.Sent[field] = true
			return true, err
		}
		switch name {
		case "name":
			return true, decodeField(name, raw, &b.Name)
		case "collection_id":
			return true, decodeField(name, raw, &b.CollectionID)
		case "string":
			return sent(name, decodeField(name, raw, &f.String))
		case "parameters":
			return sent(name, decodeField(name, raw, &f.Parameters))
		case "model":
			return sent(name, decodeField(name, raw, &f.Model))
		case "virtual_key":
			return sent(name, decodeField(name, raw, &f.VirtualKey))
		case "version_description":
			return sent(name, decodeField(name, raw, &f.Description))
		case "functions":
			return sent(name, decodeField(name, raw, &f.Functions))
		case "tools":
			return sent(name, decodeField(name, raw, &f.Tools))
		case "tool_choice":
			return sent(name, decodeField(name, raw, &f.ToolChoice))
		case "template_metadata", "prompt_metadata", "metadata":
			return sent("metadata", decodeField(name, raw, &f.Metadata))
		case "is_raw_template":
			v, err := flexibleBool(name, raw)
			f.IsRawTemplate = &v
			return sent(name, err)
		}
		if create {
			switch name {
			case "slug":
				return true, decodeField(name, raw, &b.Slug)
			case "workspace_id":
				return true, decodeField(name, raw, &b.WorkspaceID)
			}
			return false, nil
		}
		if name == "patch" {
			return true, decodeField(name, raw, &b.Patch)
		}
		return false, nil
	})
	if create && err == nil {
		if b.Name == nil {
			return b, domain.Invalid("name", "name is required")
		}
		if b.CollectionID == nil || *b.CollectionID == "" {
			return b, domain.Invalid("collection_id", "collection_id is required: the id or slug of the collection to file the prompt in")
		}
	}
	return b, err
}

// versionBody is a makeDefault body: version, a whole number from 1.
type versionBody struct {
	Version int
}

func (b *versionBody) readBody(r *http.Request) error {
	var raw struct {
		Version *json.Number `json:"version"`
	}
	if err := decode(r, &raw); err != nil {
		return err
	}
	if raw.Version == nil {
		return domain.Invalid("version", "version is required: the number of the version to make the default")
	}
	n, err := strconv.Atoi(raw.Version.String())
	if err != nil || n < 1 {
		return domain.Invalid("version", "version must be a whole number from 1 (got %s)", raw.Version.String())
	}
	b.Version = n
	return nil
}

// labelBody is updatePromptVersion's body: label_id, a label's id (null: take the version's
// label away).
type labelBody struct {
	LabelID string
}

func (b *labelBody) readBody(r *http.Request) error {
	var raw map[string]json.RawMessage
	if err := decode(r, &raw); err != nil {
		return err
	}
	for k := range raw {
		if k != "label_id" {
			return domain.Invalid(k, "unknown field %q: only label_id can be changed on a version", k)
		}
	}
	v, ok := raw["label_id"]
	if !ok {
		return domain.Invalid("label_id", "label_id is required: a label's id, or null to take the version's label away")
	}
	var id *string
	if err := decodeField("label_id", v, &id); err != nil {
		return err
	}
	if id != nil {
		if !isUUID(*id) {
			return domain.Invalid("label_id", "label_id must be a label's id (a UUID), or null")
		}
		b.LabelID = *id
	}
	return nil
}

// workspaceID turns a workspace reference of a body (id or slug) into its id; "" stays "".
func (a *Admin) workspaceID(r *http.Request, ref string) (string, error) {
	if ref == "" || isUUID(ref) {
		return ref, nil
	}
	ws, err := a.reads().WorkspaceByRef(r.Context(), actorFrom(r.Context()).OrganisationID, ref)
	if err != nil {
		return "", withParam(err, "workspace_id")
	}
	return ws.ID, nil
}

// withParam names the field of an application error that names none.
func withParam(err error, param string) error {
	if e := asAppError(err); e.Param == "" && e.Code != domain.CodeInternal {
		c := *e
		c.Param = param
		return &c
	}
	return err
}

// promptRef is a prompt named by a path, with the version the path selects.
type promptRef struct {
	prompt   domain.Prompt
	selector domain.VersionSelector
}

// promptAsOf reads a prompt as it was: its version then in force (or the one named).
func (a *Admin) promptAsOf(w http.ResponseWriter, r *http.Request, ref string, pick func(p domain.Prompt, labels liveLabels) (domain.PromptVersion, error)) (int, any, error) {
	actor := actorFrom(r.Context())
	id, err := a.reads().HistoryID(r.Context(), actor.OrganisationID, domain.PromptPrefix, ref, isUUID)
	if err != nil {
		return 0, nil, err
	}
	return gatewayAsOf(a, w, r, "prompt", domain.PromptPrefix, id,
		func(p *domain.Prompt) string { return p.OrganisationID }, (*domain.Prompt).Exists,
		func(p domain.Prompt, _ time.Time) (any, error) {
			if !canSee(actor, p.WorkspaceID) {
				return nil, notFound("prompt", p.ID)
			}
			if err := a.reads().CanViewPrompts(r.Context(), actor, p.WorkspaceID); err != nil {
				return nil, err
			}
			labels, err := a.labelsOf(r.Context(), actor.OrganisationID)
			if err != nil {
				return nil, err
			}
			v, err := pick(p, labels)
			if err != nil {
				return nil, err
			}
			return promptView(p, v, labels), nil
		})
}

// selectVersion is the version of p that sel names, a label by its name.
func (a *Admin) selectVersion(ctx context.Context, p domain.Prompt, sel domain.VersionSelector) (domain.PromptVersion, error) {
	labelID := ""
	if sel.Kind == domain.SelectLabel {
		l, ok, err := a.Read.PromptLabel(ctx, p.OrganisationID, sel.Label)
		if err != nil {
			return domain.PromptVersion{}, err
		}
		if ok && l.Exists() && l.UsableBy(p.WorkspaceID) {
			labelID = l.ID
		}
	}
	v, ok := p.Select(sel, labelID)
	if !ok {
		return v, &domain.Error{Code: domain.CodeNotFound, Param: "promptId",
			Message: "prompt " + p.Slug + " has no version " + sel.String()}
	}
	return v, nil
}

func (a *Admin) registerPrompts(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("prompt", h) }
	active := func(r *http.Request) (map[string]bool, error) {
		return statuses(r, domain.StatusActive, domain.StatusActive, domain.StatusArchived)
	}
	// fromPath finds the prompt of the path (id or slug, and a version selector after @)
	// that the actor may see, with scope.
	fromPath := func(r *http.Request, scope string) (promptRef, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, scope); err != nil {
			return promptRef{}, err
		}
		st, err := active(r)
		if err != nil {
			return promptRef{}, err
		}
		ref, sel, err := domain.ParseVersionRef("promptId", mux.Vars(r)["promptId"])
		if err != nil {
			return promptRef{}, err
		}
		p, err := a.reads().VisiblePrompt(r.Context(), actor, ref, st)
		return promptRef{p, sel}, err
	}
	written := func(r *http.Request, id string) (domain.Prompt, error) {
		p, _, err := a.Read.Prompt(r.Context(), actorFrom(r.Context()).OrganisationID, id)
		return p, err
	}

	r.Handle("/prompts", on(write(a, a.Commands.CreatePrompt, nowhere,
		func(r *http.Request, _ struct{}, b promptCreateBody) (commands.CreatePrompt, error) {
			c := commands.CreatePrompt{Name: *b.Name, Slug: b.Slug, Fields: b.Fields}
			ws, err := a.workspaceID(r, b.WorkspaceID)
			if err != nil {
				return c, err
			}
			if *b.CollectionID == domain.DefaultCollectionSlug {
				// The default collection: the body's workspace's (a workspace key's own), made
				// with the prompt when the workspace has none yet.
				if ws == "" && !workspaceKeyActor(actorFrom(r.Context())) {
					return c, domain.Invalid("workspace_id", "collection_id %q needs workspace_id with an organisation key: whose default collection?", domain.DefaultCollectionSlug)
				}
				if ws == "" {
					ws = actorFrom(r.Context()).WorkspaceID
				}
				if id := commands.DefaultCollectionID(ws); a.collectionExists(r.Context(), id) {
					c.CollectionID = id
				} else {
					c.WorkspaceID = ws
				}
				return c, nil
			}
			col, err := a.reads().CollectionByRef(r.Context(), actorFrom(r.Context()), *b.CollectionID, ws, "collection_id")
			if err != nil {
				return c, err
			}
			c.CollectionID = col.ID
			return c, nil
		},
		func(r *http.Request, _ struct{}, _ commands.CreatePrompt, res commands.Result) (int, any, error) {
			p, err := written(r, res.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]string{"id": p.ID, "slug": p.Slug, "version_id": p.Latest().ID, "object": "prompt"}, nil
		}))).Methods(http.MethodPost)

	r.Handle("/prompts", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "prompts.list"); err != nil {
			return 0, nil, err
		}
		st, err := active(r)
		if err != nil {
			return 0, nil, err
		}
		q := r.URL.Query()
		found, err := a.reads().Prompts(r.Context(), actor, queries.PromptList{Statuses: st, WorkspaceRef: q.Get("workspace_id"),
			CollectionRef: q.Get("collection_id"), Search: q.Get("search")})
		if err != nil {
			return 0, nil, err
		}
		views := make([]promptSummary, 0, len(found))
		for _, p := range found {
			views = append(views, promptSummary{ID: p.ID, Slug: p.Slug, Name: p.Name, CollectionID: p.CollectionID,
				WorkspaceID: p.WorkspaceID, Model: p.Default().Template.Model, Status: p.Status, CreatedAt: millis(p.CreatedAt),
				LastUpdatedAt: millis(p.LastUpdatedAt), Object: "prompt"})
		}
		list, err := page(r, views)
		return http.StatusOK, list, err
	})).Methods(http.MethodGet)

	r.Handle("/prompts/{promptId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "prompts.read"); err != nil {
			return 0, nil, err
		}
		if asOfRequested(r) {
			ref, sel, err := domain.ParseVersionRef("promptId", mux.Vars(r)["promptId"])
			if _, tErr := asOfTime(r); tErr != nil {
				return 0, nil, tErr
			}
			if err != nil {
				return 0, nil, err
			}
			return a.promptAsOf(w, r, ref, func(p domain.Prompt, _ liveLabels) (domain.PromptVersion, error) {
				return a.selectVersion(r.Context(), p, sel)
			})
		}
		pr, err := fromPath(r, "prompts.read")
		if err != nil {
			return 0, nil, err
		}
		v, err := a.selectVersion(r.Context(), pr.prompt, pr.selector)
		if err != nil {
			return 0, nil, err
		}
		labels, err := a.labelsOf(r.Context(), actor.OrganisationID)
		if err != nil {
			return 0, nil, err
		}
		a.etag(w, r, domain.PromptPrefix, pr.prompt.ID)
		return http.StatusOK, promptView(pr.prompt, v, labels), nil
	})).Methods(http.MethodGet)

	r.Handle("/prompts/{promptId}", on(write(a, a.Commands.UpdatePrompt, scoped(fromPath, "prompts.update"),
		func(r *http.Request, pr promptRef, b promptUpdateBody) (commands.UpdatePrompt, error) {
			c := commands.UpdatePrompt{PromptID: pr.prompt.ID, Name: b.Name, Fields: b.Fields, Patch: b.Patch}
			if b.CollectionID != nil {
				col, err := a.reads().CollectionByRef(r.Context(), actorFrom(r.Context()), *b.CollectionID, pr.prompt.WorkspaceID, "collection_id")
				if err != nil {
					return c, err
				}
				c.CollectionID = &col.ID
			}
			return c, nil
		},
		func(r *http.Request, pr promptRef, _ commands.UpdatePrompt, _ commands.Result) (int, any, error) {
			p, err := written(r, pr.prompt.ID)
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, map[string]string{"id": p.ID, "slug": p.Slug, "prompt_version_id": p.Latest().ID}, nil
		}))).Methods(http.MethodPut)

	r.Handle("/prompts/{promptId}", on(pathWrite(a, a.Commands.ArchivePrompt, scoped(fromPath, "prompts.delete"),
		func(pr promptRef) commands.ArchivePrompt { return commands.ArchivePrompt{PromptID: pr.prompt.ID} },
		func(promptRef) any { return map[string]any{} }))).Methods(http.MethodDelete)

	r.Handle("/prompts/{promptId}/versions", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		pr, err := fromPath(r, "prompts.read")
		if err != nil {
			return 0, nil, err
		}
		labels, err := a.labelsOf(r.Context(), pr.prompt.OrganisationID)
		if err != nil {
			return 0, nil, err
		}
		p := pr.prompt
		views := make([]promptVersionSummary, 0, len(p.Versions))
		for n := len(p.Versions) - 1; n >= 0; n-- {
			views = append(views, promptVersionView(p, p.Versions[n], labels))
		}
		return http.StatusOK, views, nil
	})).Methods(http.MethodGet)

	// versionOf is the version of the path: its id, or its number.
	versionOf := func(p domain.Prompt, raw string) (domain.PromptVersion, error) {
		if v, ok := p.VersionByID(raw); ok {
			return v, nil
		}
		if n, err := strconv.Atoi(raw); err == nil {
			if v, ok := p.Version(n); ok {
				return v, nil
			}
		}
		return domain.PromptVersion{}, &domain.Error{Code: domain.CodeNotFound, Param: "versionId",
			Message: "prompt " + p.Slug + " has no version " + raw}
	}

	r.Handle("/prompts/{promptId}/versions/{versionId}", on(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		actor := actorFrom(r.Context())
		if err := requireScope(actor, "prompts.read"); err != nil {
			return 0, nil, err
		}
		raw := mux.Vars(r)["versionId"]
		if asOfRequested(r) {
			return a.promptAsOf(w, r, mux.Vars(r)["promptId"], func(p domain.Prompt, _ liveLabels) (domain.PromptVersion, error) {
				return versionOf(p, raw)
			})
		}
		pr, err := fromPath(r, "prompts.read")
		if err != nil {
			return 0, nil, err
		}
		v, err := versionOf(pr.prompt, raw)
		if err != nil {
			return 0, nil, err
		}
		labels, err := a.labelsOf(r.Context(), actor.OrganisationID)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, promptView(pr.prompt, v, labels), nil
	})).Methods(http.MethodGet)

	r.Handle("/prompts/{promptId}/versions/{versionId}", on(write(a, a.Commands.LabelPromptVersion, scoped(fromPath, "prompts.update"),
		func(r *http.Request, pr promptRef, b labelBody) (commands.LabelPromptVersion, error) {
			v, err := versionOf(pr.prompt, mux.Vars(r)["versionId"])
			return commands.LabelPromptVersion{PromptID: pr.prompt.ID, VersionID: v.ID, LabelID: b.LabelID}, err
		},
		func(*http.Request, promptRef, commands.LabelPromptVersion, commands.Result) (int, any, error) {
			return http.StatusOK, map[string]any{}, nil
		}))).Methods(http.MethodPut)

	r.Handle("/prompts/{promptId}/makeDefault", on(write(a, a.Commands.MakePromptDefault, scoped(fromPath, "prompts.update"),
		func(_ *http.Request, pr promptRef, b versionBody) (commands.MakePromptDefault, error) {
			return commands.MakePromptDefault{PromptID: pr.prompt.ID, Version: b.Version}, nil
		},
		func(*http.Request, promptRef, commands.MakePromptDefault, commands.Result) (int, any, error) {
			return http.StatusOK, map[string]any{}, nil
		}))).Methods(http.MethodPut)
}

// collectionExists reports whether the read model holds the collection, live.
func (a *Admin) collectionExists(ctx context.Context, id string) bool {
	c, ok, err := a.Read.PromptCollection(ctx, actorFrom(ctx).OrganisationID, id)
	return err == nil && ok && c.Exists()
}
