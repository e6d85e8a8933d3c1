package domain

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A prompt is a template of a workspace, filed in one of its collections: its text (Mustache,
// rendered by the gateway with the variables of each request) and what the rendered messages
// are sent with (model, parameters, functions, tools, the managed provider that serves it).
// Every change of those is a new version, numbered from 1; one version is the default (the
// first, until makeDefault names another), and labels (production, staging...) point at one
// version each and move between them. What a template may hold is the renderer's to say
// (package templates); the domain bounds its size and checks the rest.

// PromptPrefix names the streams of prompts.
const PromptPrefix = "prompt"

// Bounds of a prompt version.
const (
	// MaxPromptTemplateBytes bounds a template's (and a partial's) text.
	MaxPromptTemplateBytes = 256 << 10
	// MaxPromptObjectBytes bounds each of a version's JSON objects (parameters, metadata,
	// tool_choice) as compact JSON.
	MaxPromptObjectBytes = 64 << 10
	// MaxPromptTools bounds a version's functions, and its tools.
	MaxPromptTools = 128
	// MaxVersionDescription bounds a version's description, in characters.
	MaxVersionDescription = 1024
)

// PromptTemplate is what a version of a prompt holds: the version fields of the reference.
type PromptTemplate struct {
	String     string         `json:"string"`
	Parameters map[string]any `json:"parameters"`
	Model      string         `json:"model,omitempty"`
	// VirtualKey is the managed provider that serves the prompt, by slug (with or without
	// its '@').
	VirtualKey  string `json:"virtual_key,omitempty"`
	Description string `json:"version_description,omitempty"`
	Functions   []any  `json:"functions,omitempty"`
	Tools       []any  `json:"tools,omitempty"`
	// ToolChoice is a string (none, auto, required) or an object naming a function.
	ToolChoice any            `json:"tool_choice,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	// IsRawTemplate is kept as the client set it (the reference's is_raw_template).
	IsRawTemplate bool `json:"is_raw_template,omitempty"`
}

// PromptVersion is one version of a prompt.
type PromptVersion struct {
	ID        string         `json:"version_id"`
	Number    int            `json:"version"`
	Template  PromptTemplate `json:"template"`
	CreatedBy string         `json:"created_by"`
	CreatedAt time.Time      `json:"created_at"`
}

// Prompt is a prompt of a workspace, referred to by its id or slug (unique in the
// organisation).
type Prompt struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	WorkspaceID    string `json:"workspace_id"`
	CollectionID   string `json:"collection_id"`
	Slug           string `json:"slug"`
	Name           string `json:"name"`
	Status         string `json:"status"`
	Versioned[PromptVersion]
	OwnerID       string    `json:"owner_id"`
	UpdatedBy     string    `json:"updated_by"`
	CreatedAt     time.Time `json:"created_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
}

type PromptCreated struct {
	PromptID       string         `json:"prompt_id"`
	OrganisationID string         `json:"organisation_id"`
	WorkspaceID    string         `json:"workspace_id"`
	CollectionID   string         `json:"collection_id"`
	Slug           string         `json:"slug"`
	Name           string         `json:"name"`
	VersionID      string         `json:"version_id"`
	Template       PromptTemplate `json:"template"`
	By             string         `json:"by"`
	At             time.Time      `json:"at"`
}

// PromptUpdated renames a prompt, files it in another collection of its workspace and, when
// VersionID is set, adds the version Template (whole).
type PromptUpdated struct {
	PromptID     string          `json:"prompt_id"`
	Name         *string         `json:"name,omitempty"`
	CollectionID *string         `json:"collection_id,omitempty"`
	VersionID    string          `json:"version_id,omitempty"`
	Template     *PromptTemplate `json:"template,omitempty"`
	By           string          `json:"by"`
	At           time.Time       `json:"at"`
}

// PromptDefaultSet makes Version the version served by default.
type PromptDefaultSet struct {
	PromptID string    `json:"prompt_id"`
	Version  int       `json:"version"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
}

// PromptVersionLabelled points LabelID at Version, taking it from the version it pointed at;
// the version's previous label, if another, leaves it. LabelID "" takes the version's label
// away.
type PromptVersionLabelled struct {
	PromptID string    `json:"prompt_id"`
	Version  int       `json:"version"`
	LabelID  string    `json:"label_id,omitempty"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
}

// PromptArchived is DELETE: the prompt stops serving and frees its slug.
type PromptArchived struct {
	PromptID string    `json:"prompt_id"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
}

func (PromptCreated) EventType() string         { return "PromptCreated" }
func (PromptUpdated) EventType() string         { return "PromptUpdated" }
func (PromptDefaultSet) EventType() string      { return "PromptDefaultSet" }
func (PromptVersionLabelled) EventType() string { return "PromptVersionLabelled" }
func (PromptArchived) EventType() string        { return "PromptArchived" }

// promptModules are the aggregates of prompts: prompts, partials, labels and collections.
func promptModules() []module {
	return []module{promptModule(), promptPartialModule(), promptLabelModule(), promptCollectionModule()}
}

func promptModule() module {
	return module{prefix: PromptPrefix, aggregate: func() Aggregate { return &Prompt{} },
		events: []Event{PromptCreated{}, PromptUpdated{}, PromptDefaultSet{}, PromptVersionLabelled{}, PromptArchived{}}}
}

func (p *Prompt) Apply(e Event) {
	switch e := e.(type) {
	case PromptCreated:
		*p = Prompt{ID: e.PromptID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, CollectionID: e.CollectionID,
			Slug: e.Slug, Name: e.Name, Status: StatusActive, OwnerID: e.By, UpdatedBy: e.By,
			CreatedAt: e.At, LastUpdatedAt: e.At,
			Versioned: Versioned[PromptVersion]{DefaultVersion: 1,
				Versions: []PromptVersion{{ID: e.VersionID, Number: 1, Template: e.Template, CreatedBy: e.By, CreatedAt: e.At}}}}
	case PromptUpdated:
		if e.Name != nil {
			p.Name = *e.Name
		}
		if e.CollectionID != nil {
			p.CollectionID = *e.CollectionID
		}
		if e.VersionID != "" && e.Template != nil {
			// Copy on write: read models hand out copies that share the slice.
			p.Versions = append(slices.Clip(p.Versions), PromptVersion{ID: e.VersionID, Number: len(p.Versions) + 1,
				Template: *e.Template, CreatedBy: e.By, CreatedAt: e.At})
		}
		p.UpdatedBy, p.LastUpdatedAt = e.By, e.At
	case PromptDefaultSet:
		p.DefaultVersion, p.UpdatedBy, p.LastUpdatedAt = e.Version, e.By, e.At
	case PromptVersionLabelled:
		p.Labels = relabel(p.Labels, e.Version, e.LabelID)
		p.UpdatedBy, p.LastUpdatedAt = e.By, e.At
	case PromptArchived:
		p.Status, p.UpdatedBy, p.LastUpdatedAt = StatusArchived, e.By, e.At
	}
}

// relabel returns labels (never changed: read models share it) with labelID pointing at
// version, and no other label on that version.
func relabel(labels map[string]int, version int, labelID string) map[string]int {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]int{}
	}
	for id, v := range out {
		if v == version {
			delete(out, id)
		}
	}
	if labelID != "" {
		out[labelID] = version
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Exists reports whether the prompt was created and not deleted.
func (p *Prompt) Exists() bool { return p.ID != "" && p.Status != StatusArchived }

// CreatePrompt is the create command's input, already decoded: Template as the domain reads
// it (ParsePromptTemplate has checked its fields).
type CreatePrompt struct {
	PromptID       string
	OrganisationID string
	WorkspaceID    string
	CollectionID   string
	Slug           string
	Name           string
	VersionID      string
	Template       PromptTemplate
	By             string
}

// Create decides the creation of a prompt.
func (p *Prompt) Create(in CreatePrompt, now time.Time) ([]Event, error) {
	if p.ID != "" {
		return nil, Errorf(CodeConflict, "prompt %s exists already", in.PromptID)
	}
	if err := ValidateName("name", in.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	if err := requireTemplate(in.Template, true); err != nil {
		return nil, err
	}
	return []Event{PromptCreated{PromptID: in.PromptID, OrganisationID: in.OrganisationID, WorkspaceID: in.WorkspaceID,
		CollectionID: in.CollectionID, Slug: in.Slug, Name: in.Name, VersionID: in.VersionID, Template: in.Template,
		By: in.By, At: now}}, nil
}

// requireTemplate checks what a new version must hold: its text and parameters (and, when
// strict, the managed provider that serves it: what a create needs).
func requireTemplate(t PromptTemplate, strict bool) *Error {
	if strings.TrimSpace(t.String) == "" {
		return Invalid("string", "string is required: the prompt's template")
	}
	if t.Parameters == nil {
		return Invalid("parameters", "parameters is required: an object of the model's parameters (it may be empty)")
	}
	if strict && t.VirtualKey == "" {
		return Invalid("virtual_key", "virtual_key is required: the slug of the managed provider that serves the prompt")
	}
	return nil
}

// PromptVersionFields are the version fields an update sends (nil: not sent), read by
// ParsePromptTemplate.
type PromptVersionFields struct {
	String        *string
	Parameters    map[string]any
	Model         *string
	VirtualKey    *string
	Description   *string
	Functions     []any
	Tools         []any
	ToolChoice    any
	Metadata      map[string]any
	IsRawTemplate *bool
	// Sent names the version fields the body carried, so that a field sent empty is told
	// from one not sent.
	Sent map[string]bool
}

// Any reports whether a version field was sent.
func (f PromptVersionFields) Any() bool { return len(f.Sent) > 0 }

// UpdatePrompt renames a prompt, files it in another collection and, when version fields are
// sent, saves a new version VersionID. Patch fills the fields not sent from the latest
// version (4.3); without it a new version needs what a create needs (string, parameters,
// virtual_key), and the fields not sent are empty.
type UpdatePrompt struct {
	Name         *string
	CollectionID *string
	Fields       PromptVersionFields
	Patch        bool
	VersionID    string
	By           string
}

// Update decides a change of the prompt.
func (p *Prompt) Update(in UpdatePrompt, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt not found")
	}
	if in.Name == nil && in.CollectionID == nil && !in.Fields.Any() {
		return nil, Invalid("", "nothing to update: give name, collection_id or version fields (string, parameters, model, virtual_key, ...)")
	}
	if in.Name != nil {
		if err := ValidateName("name", *in.Name, true); err != nil {
			return nil, err
		}
	}
	e := PromptUpdated{PromptID: p.ID, Name: in.Name, By: in.By, At: now}
	if in.CollectionID != nil && *in.CollectionID != p.CollectionID {
		e.CollectionID = in.CollectionID
	}
	if in.Fields.Any() {
		base := PromptTemplate{}
		if in.Patch {
			base = p.Latest().Template
		}
		t := in.Fields.Over(base)
		if err := requireTemplate(t, !in.Patch); err != nil {
			if !in.Patch {
				err.Message += " (or send patch: true to keep the latest version's)"
			}
			return nil, err
		}
		e.VersionID, e.Template = in.VersionID, &t
	}
	return []Event{e}, nil
}

// Over is base with the fields sent put over it.
func (f PromptVersionFields) Over(base PromptTemplate) PromptTemplate {
	t := base
	if f.String != nil {
		t.String = *f.String
	}
	if f.Sent["parameters"] {
		t.Parameters = f.Parameters
	}
	if f.Model != nil {
		t.Model = *f.Model
	}
	if f.VirtualKey != nil {
		t.VirtualKey = *f.VirtualKey
	}
	if f.Description != nil {
		t.Description = *f.Description
	}
	if f.Sent["functions"] {
		t.Functions = f.Functions
	}
	if f.Sent["tools"] {
		t.Tools = f.Tools
	}
	if f.Sent["tool_choice"] {
		t.ToolChoice = f.ToolChoice
	}
	if f.Sent["metadata"] {
		t.Metadata = f.Metadata
	}
	if f.IsRawTemplate != nil {
		t.IsRawTemplate = *f.IsRawTemplate
	}
	return t
}

// MakeDefault decides serving version n by default; an unknown version is not found.
func (p *Prompt) MakeDefault(n int, by string, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt not found")
	}
	if changed, err := p.defaultTo("prompt "+p.ID, n); err != nil || !changed {
		return nil, err
	}
	return []Event{PromptDefaultSet{PromptID: p.ID, Version: n, By: by, At: now}}, nil
}

// LabelVersion decides pointing labelID (checked by the caller: a live label the prompt's
// workspace may use) at the version versionID; labelID "" takes the version's label away.
func (p *Prompt) LabelVersion(versionID, labelID, by string, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt not found")
	}
	n, changed, err := p.labelTo("prompt "+p.ID, versionID, labelID)
	if err != nil || !changed {
		return nil, err
	}
	return []Event{PromptVersionLabelled{PromptID: p.ID, Version: n, LabelID: labelID, By: by, At: now}}, nil
}

// Archive decides the deletion of a prompt.
func (p *Prompt) Archive(by string, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt not found")
	}
	return []Event{PromptArchived{PromptID: p.ID, By: by, At: now}}, nil
}

// VersionSelector picks a version of a prompt or partial: its default (the zero value), its
// latest, a number, or the version a label points at.
type VersionSelector struct {
	Kind   string
	Number int
	Label  string
}

// Version selector kinds; "" is the default version.
const (
	SelectLatest = "latest"
	SelectNumber = "number"
	SelectLabel  = "label"
)

// String is the selector as a reference spells it after '@' ("" for the default).
func (s VersionSelector) String() string {
	switch s.Kind {
	case SelectLatest:
		return "latest"
	case SelectNumber:
		return strconv.Itoa(s.Number)
	case SelectLabel:
		return s.Label
	}
	return ""
}

// ParseVersionRef reads a reference to a prompt or partial with an optional version
// selector: ref, ref@default, ref@latest, ref@<version number> or ref@<label name>. param
// names the reference in errors.
func ParseVersionRef(param, raw string) (string, VersionSelector, error) {
	ref, sel, has := strings.Cut(raw, "@")
	if strings.TrimSpace(ref) == "" {
		return "", VersionSelector{}, Invalid(param, "%s must name a prompt or partial by its id or slug, optionally followed by @version, @latest, @default or @label (got %q)", param, truncate(raw, 64))
	}
	if !has {
		return ref, VersionSelector{}, nil
	}
	switch {
	case sel == "default":
		return ref, VersionSelector{}, nil
	case sel == "latest":
		return ref, VersionSelector{Kind: SelectLatest}, nil
	case sel != "" && strings.Trim(sel, "0123456789") == "":
		n, err := strconv.Atoi(sel)
		if err != nil || n < 1 {
			return "", VersionSelector{}, Invalid(param, "%s: a version number is a whole number from 1 (got %q)", param, truncate(sel, 32))
		}
		return ref, VersionSelector{Kind: SelectNumber, Number: n}, nil
	}
	if err := ValidateLabelName(param, sel); err != nil {
		return "", VersionSelector{}, Invalid(param, "%s: after @ comes a version number, latest, default or a label name (got %q)", param, truncate(sel, 64))
	}
	return ref, VersionSelector{Kind: SelectLabel, Label: sel}, nil
}

// ParsePromptTemplate checks the version fields sent, naming the field of the first that
// breaks a rule: string (text, at most MaxPromptTemplateBytes), parameters (an object without
// messages), model, virtual_key (a managed provider's slug, '@' allowed), version_description,
// functions and tools (at most MaxPromptTools objects each), tool_choice (none, auto,
// required, or an object), metadata (an object).
func ParsePromptTemplate(f PromptVersionFields) error {
	if f.String != nil && len(*f.String) > MaxPromptTemplateBytes {
		return Invalid("string", "string must be at most %d bytes (got %d)", MaxPromptTemplateBytes, len(*f.String))
	}
	if f.Sent["parameters"] {
		if f.Parameters == nil {
			return Invalid("parameters", "parameters must be an object (it may be empty)")
		}
		if _, ok := f.Parameters["messages"]; ok {
			return Invalid("parameters.messages", "parameters.messages is not a parameter: the messages are the template's (string)")
		}
		if err := boundJSON("parameters", f.Parameters); err != nil {
			return err
		}
	}
	if f.Model != nil {
		if err := ValidateName("model", *f.Model, false); err != nil {
			return err
		}
	}
	if f.VirtualKey != nil && *f.VirtualKey != "" {
		if ValidateSlug("virtual_key", strings.TrimPrefix(*f.VirtualKey, "@")) != nil {
			return Invalid("virtual_key", "virtual_key must be a managed provider's slug, such as openai-prod or @openai-prod (got %q)", truncate(*f.VirtualKey, 64))
		}
	}
	if f.Description != nil {
		if n := utf8.RuneCountInString(*f.Description); n > MaxVersionDescription {
			return Invalid("version_description", "version_description must be at most %d characters (got %d)", MaxVersionDescription, n)
		}
	}
	for _, list := range []struct {
		name  string
		items []any
	}{{"functions", f.Functions}, {"tools", f.Tools}} {
		if !f.Sent[list.name] {
			continue
		}
		if len(list.items) > MaxPromptTools {
			return Invalid(list.name, "%s must hold at most %d items (got %d)", list.name, MaxPromptTools, len(list.items))
		}
		for i, it := range list.items {
			if _, ok := it.(map[string]any); !ok {
				return Invalid(fmt.Sprintf("%s[%d]", list.name, i), "%s[%d] must be an object, not %s", list.name, i, describe(it))
			}
		}
		if err := boundJSON(list.name, list.items); err != nil {
			return err
		}
	}
	if f.Sent["tool_choice"] && f.ToolChoice != nil {
		switch c := f.ToolChoice.(type) {
		case string:
			if c != "none" && c != "auto" && c != "required" {
				return Invalid("tool_choice", "tool_choice must be none, auto, required or an object naming a function (got %q)", truncate(c, 32))
			}
		case map[string]any:
			if err := boundJSON("tool_choice", c); err != nil {
				return err
			}
		default:
			return Invalid("tool_choice", "tool_choice must be none, auto, required or an object, not %s", describe(c))
		}
	}
	if f.Sent["metadata"] && f.Metadata != nil {
		if err := boundJSON("metadata", f.Metadata); err != nil {
			return err
		}
	}
	return nil
}

// boundJSON refuses a value over MaxPromptObjectBytes as compact JSON.
func boundJSON(param string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return Invalid(param, "%s is not valid JSON", param)
	}
	if len(b) > MaxPromptObjectBytes {
		return Invalid(param, "%s must be at most %d bytes of JSON (got %d)", param, MaxPromptObjectBytes, len(b))
	}
	return nil
}

// PromptAccess decides whether the actor may see (write false) or change (write true) the
// prompts, partials and collections of a workspace, under the security settings in force
// there (2.8): organisation owners and admins, and a workspace's admins, always may; a
// manager as managersViewPrompts and managersWritePrompts say, a member as membersViewPrompts
// and membersWritePrompts say. A workspace service key acts as its workspace's manager. The
// refusal names the setting.
func PromptAccess(a Actor, workspaceID string, sec SecuritySettings, write bool) error {
	if a.IsOrgAdmin() {
		return nil
	}
	role, ok := a.WorkspaceRole(workspaceID)
	if !ok {
		return Errorf(CodeForbidden, "this API key has no access to workspace %s", workspaceID)
	}
	var setting string
	var allowed bool
	switch {
	case role == RoleAdmin || role == RoleOwner:
		return nil
	case role == RoleManager && write:
		setting, allowed = "managersWritePrompts", sec.ManagersWritePrompts
	case role == RoleManager:
		setting, allowed = "managersViewPrompts", sec.ManagersViewPrompts
	case write:
		setting, allowed = "membersWritePrompts", sec.MembersWritePrompts
	default:
		setting, allowed = "membersViewPrompts", sec.MembersViewPrompts
	}
	if allowed {
		return nil
	}
	verb := "see"
	if write {
		verb = "change"
	}
	return Errorf(CodeForbidden, "workspace %ss may not %s prompts in workspace %s (%s is off)", role, verb, workspaceID, setting)
}
