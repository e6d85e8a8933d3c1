package domain

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A prompt partial is a piece of template that prompts include ({{> slug}}): a text of its
// workspace, filed in the workspace's default collection, with versions as a prompt has
// (every change of its text is a new one; makeDefault names the one included by default;
// labels point at versions).

// PromptPartialPrefix names the streams of prompt partials.
const PromptPartialPrefix = "promptpartial"

// PartialVersion is one version of a partial.
type PartialVersion struct {
	ID          string    `json:"version_id"`
	Number      int       `json:"version"`
	String      string    `json:"string"`
	Description string    `json:"description,omitempty"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
}

// PromptPartial is a partial of a workspace, referred to by its id or slug (unique in the
// organisation); templates include it by slug.
type PromptPartial struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	WorkspaceID    string `json:"workspace_id"`
	CollectionID   string `json:"collection_id"`
	Slug           string `json:"slug"`
	Name           string `json:"name"`
	Status         string `json:"status"`
	Versioned[PartialVersion]
	OwnerID       string    `json:"owner_id"`
	UpdatedBy     string    `json:"updated_by"`
	CreatedAt     time.Time `json:"created_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
}

type PromptPartialCreated struct {
	PartialID      string    `json:"partial_id"`
	OrganisationID string    `json:"organisation_id"`
	WorkspaceID    string    `json:"workspace_id"`
	CollectionID   string    `json:"collection_id"`
	Slug           string    `json:"slug"`
	Name           string    `json:"name"`
	VersionID      string    `json:"version_id"`
	String         string    `json:"string"`
	Description    string    `json:"description,omitempty"`
	By             string    `json:"by"`
	At             time.Time `json:"at"`
}

// PromptPartialUpdated renames a partial and, when VersionID is set, adds a version of text
// String.
type PromptPartialUpdated struct {
	PartialID   string    `json:"partial_id"`
	Name        *string   `json:"name,omitempty"`
	VersionID   string    `json:"version_id,omitempty"`
	String      string    `json:"string,omitempty"`
	Description string    `json:"description,omitempty"`
	By          string    `json:"by"`
	At          time.Time `json:"at"`
}

// PromptPartialDefaultSet makes Version the version included by default.
type PromptPartialDefaultSet struct {
	PartialID string    `json:"partial_id"`
	Version   int       `json:"version"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

// PromptPartialVersionLabelled points LabelID at Version (as PromptVersionLabelled does for
// prompts).
type PromptPartialVersionLabelled struct {
	PartialID string    `json:"partial_id"`
	Version   int       `json:"version"`
	LabelID   string    `json:"label_id,omitempty"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

// PromptPartialArchived is DELETE: templates can no longer include it, and its slug is free.
type PromptPartialArchived struct {
	PartialID string    `json:"partial_id"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

func (PromptPartialCreated) EventType() string         { return "PromptPartialCreated" }
func (PromptPartialUpdated) EventType() string         { return "PromptPartialUpdated" }
func (PromptPartialDefaultSet) EventType() string      { return "PromptPartialDefaultSet" }
func (PromptPartialVersionLabelled) EventType() string { return "PromptPartialVersionLabelled" }
func (PromptPartialArchived) EventType() string        { return "PromptPartialArchived" }

func promptPartialModule() module {
	return module{prefix: PromptPartialPrefix, aggregate: func() Aggregate { return &PromptPartial{} },
		events: []Event{PromptPartialCreated{}, PromptPartialUpdated{}, PromptPartialDefaultSet{},
			PromptPartialVersionLabelled{}, PromptPartialArchived{}}}
}

func (p *PromptPartial) Apply(e Event) {
	switch e := e.(type) {
	case PromptPartialCreated:
		*p = PromptPartial{ID: e.PartialID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID,
			CollectionID: e.CollectionID, Slug: e.Slug, Name: e.Name, Status: StatusActive,
			OwnerID: e.By, UpdatedBy: e.By, CreatedAt: e.At, LastUpdatedAt: e.At,
			Versioned: Versioned[PartialVersion]{DefaultVersion: 1, Versions: []PartialVersion{{ID: e.VersionID, Number: 1,
				String: e.String, Description: e.Description, CreatedBy: e.By, CreatedAt: e.At}}}}
	case PromptPartialUpdated:
		if e.Name != nil {
			p.Name = *e.Name
		}
		if e.VersionID != "" {
			// Copy on write: read models hand out copies that share the slice.
			p.Versions = append(slices.Clip(p.Versions), PartialVersion{ID: e.VersionID, Number: len(p.Versions) + 1,
				String: e.String, Description: e.Description, CreatedBy: e.By, CreatedAt: e.At})
		}
		p.UpdatedBy, p.LastUpdatedAt = e.By, e.At
	case PromptPartialDefaultSet:
		p.DefaultVersion, p.UpdatedBy, p.LastUpdatedAt = e.Version, e.By, e.At
	case PromptPartialVersionLabelled:
		p.Labels = relabel(p.Labels, e.Version, e.LabelID)
		p.UpdatedBy, p.LastUpdatedAt = e.By, e.At
	case PromptPartialArchived:
		p.Status, p.UpdatedBy, p.LastUpdatedAt = StatusArchived, e.By, e.At
	}
}

// Exists reports whether the partial was created and not deleted.
func (p *PromptPartial) Exists() bool { return p.ID != "" && p.Status != StatusArchived }

// CreatePromptPartial is the create command's input.
type CreatePromptPartial struct {
	PartialID      string
	OrganisationID string
	WorkspaceID    string
	CollectionID   string
	Slug           string
	Name           string
	VersionID      string
	String         string
	Description    string
	By             string
}

// validatePartialText checks a partial's text: required, at most MaxPromptTemplateBytes.
func validatePartialText(s string) error {
	if strings.TrimSpace(s) == "" {
		return Invalid("string", "string is required: the partial's template")
	}
	if len(s) > MaxPromptTemplateBytes {
		return Invalid("string", "string must be at most %d bytes (got %d)", MaxPromptTemplateBytes, len(s))
	}
	return nil
}

func validateVersionDescription(param, s string) error {
	if n := utf8.RuneCountInString(s); n > MaxVersionDescription {
		return Invalid(param, "%s must be at most %d characters (got %d)", param, MaxVersionDescription, n)
	}
	return nil
}

// Create decides the creation of a partial.
func (p *PromptPartial) Create(in CreatePromptPartial, now time.Time) ([]Event, error) {
	if p.ID != "" {
		return nil, Errorf(CodeConflict, "prompt partial %s exists already", in.PartialID)
	}
	if err := ValidateName("name", in.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	if err := validatePartialText(in.String); err != nil {
		return nil, err
	}
	if err := validateVersionDescription("version_description", in.Description); err != nil {
		return nil, err
	}
	return []Event{PromptPartialCreated{PartialID: in.PartialID, OrganisationID: in.OrganisationID, WorkspaceID: in.WorkspaceID,
		CollectionID: in.CollectionID, Slug: in.Slug, Name: in.Name, VersionID: in.VersionID, String: in.String,
		Description: in.Description, By: in.By, At: now}}, nil
}

// UpdatePromptPartial renames a partial and, when String is given, saves a new version
// VersionID of it, described by Description.
type UpdatePromptPartial struct {
	Name        *string
	String      *string
	Description *string
	VersionID   string
	By          string
}

// Update decides a change of the partial.
func (p *PromptPartial) Update(in UpdatePromptPartial, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt partial not found")
	}
	if in.Name == nil && in.String == nil && in.Description == nil {
		return nil, Invalid("", "nothing to update: give name, or string for a new version")
	}
	if in.String == nil && in.Description != nil {
		return nil, Invalid("description", "description describes a new version: send string with it")
	}
	if in.Name != nil {
		if err := ValidateName("name", *in.Name, true); err != nil {
			return nil, err
		}
	}
	e := PromptPartialUpdated{PartialID: p.ID, Name: in.Name, By: in.By, At: now}
	if in.String != nil {
		if err := validatePartialText(*in.String); err != nil {
			return nil, err
		}
		e.VersionID, e.String = in.VersionID, *in.String
		if in.Description != nil {
			if err := validateVersionDescription("description", *in.Description); err != nil {
				return nil, err
			}
			e.Description = *in.Description
		}
	}
	return []Event{e}, nil
}

// MakeDefault decides including version n by default.
func (p *PromptPartial) MakeDefault(n int, by string, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt partial not found")
	}
	if changed, err := p.defaultTo("prompt partial "+p.ID, n); err != nil || !changed {
		return nil, err
	}
	return []Event{PromptPartialDefaultSet{PartialID: p.ID, Version: n, By: by, At: now}}, nil
}

// LabelVersion decides pointing labelID at the version versionID ("" takes its label away).
func (p *PromptPartial) LabelVersion(versionID, labelID, by string, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt partial not found")
	}
	n, changed, err := p.labelTo("prompt partial "+p.ID, versionID, labelID)
	if err != nil || !changed {
		return nil, err
	}
	return []Event{PromptPartialVersionLabelled{PartialID: p.ID, Version: n, LabelID: labelID, By: by, At: now}}, nil
}

// Archive decides the deletion of a partial.
func (p *PromptPartial) Archive(by string, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "prompt partial not found")
	}
	return []Event{PromptPartialArchived{PartialID: p.ID, By: by, At: now}}, nil
}
