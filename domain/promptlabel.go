package domain

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// A label names a version of a prompt or partial by role rather than by number (production,
// staging): each prompt's versions carry at most one label each, and a label points at one
// version of each prompt, moved by PUT /prompts/{id}/versions/{versionId}. A label belongs to
// an organisation (every workspace may use it: is_universal) or to one workspace. Names are
// unique in the organisation, so that prompt@production names one version wherever it is
// read.

// PromptLabelPrefix names the streams of labels.
const PromptLabelPrefix = "promptlabel"

// Bounds of a label.
const (
	MaxLabelDescription = 1024
)

// PromptLabel is a label of an organisation or of one of its workspaces.
type PromptLabel struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	// WorkspaceID is "" for an organisation label.
	WorkspaceID   string    `json:"workspace_id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	ColorCode     string    `json:"color_code"`
	Status        string    `json:"status"`
	OwnerID       string    `json:"owner_id"`
	UpdatedBy     string    `json:"updated_by"`
	CreatedAt     time.Time `json:"created_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
}

type PromptLabelCreated struct {
	LabelID        string    `json:"label_id"`
	OrganisationID string    `json:"organisation_id"`
	WorkspaceID    string    `json:"workspace_id,omitempty"`
	Name           string    `json:"name"`
	Description    string    `json:"description,omitempty"`
	ColorCode      string    `json:"color_code,omitempty"`
	By             string    `json:"by"`
	At             time.Time `json:"at"`
}

// PromptLabelUpdated changes what it carries.
type PromptLabelUpdated struct {
	LabelID     string    `json:"label_id"`
	Name        *string   `json:"name,omitempty"`
	Description *string   `json:"description,omitempty"`
	ColorCode   *string   `json:"color_code,omitempty"`
	By          string    `json:"by"`
	At          time.Time `json:"at"`
}

// PromptLabelArchived is DELETE: the label names no version any more, and its name is free.
type PromptLabelArchived struct {
	LabelID string    `json:"label_id"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

func (PromptLabelCreated) EventType() string  { return "PromptLabelCreated" }
func (PromptLabelUpdated) EventType() string  { return "PromptLabelUpdated" }
func (PromptLabelArchived) EventType() string { return "PromptLabelArchived" }

func promptLabelModule() module {
	return module{prefix: PromptLabelPrefix, aggregate: func() Aggregate { return &PromptLabel{} },
		events: []Event{PromptLabelCreated{}, PromptLabelUpdated{}, PromptLabelArchived{}}}
}

func (l *PromptLabel) Apply(e Event) {
	switch e := e.(type) {
	case PromptLabelCreated:
		*l = PromptLabel{ID: e.LabelID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Name: e.Name,
			Description: e.Description, ColorCode: e.ColorCode, Status: StatusActive, OwnerID: e.By, UpdatedBy: e.By,
			CreatedAt: e.At, LastUpdatedAt: e.At}
	case PromptLabelUpdated:
		if e.Name != nil {
			l.Name = *e.Name
		}
		if e.Description != nil {
			l.Description = *e.Description
		}
		if e.ColorCode != nil {
			l.ColorCode = *e.ColorCode
		}
		l.UpdatedBy, l.LastUpdatedAt = e.By, e.At
	case PromptLabelArchived:
		l.Status, l.UpdatedBy, l.LastUpdatedAt = StatusArchived, e.By, e.At
	}
}

// Exists reports whether the label was created and not deleted.
func (l *PromptLabel) Exists() bool { return l.ID != "" && l.Status != StatusArchived }

// UsableBy reports whether a prompt of workspaceID may carry the label.
func (l *PromptLabel) UsableBy(workspaceID string) bool {
	return l.WorkspaceID == "" || l.WorkspaceID == workspaceID
}

// labelNamePattern is the reference's pattern without its look-aheads (latest, default and
// numbers are refused apart): letters, digits, '_' and '-', with at most one other character
// that is neither '@' nor a space.
var labelNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]*[^@\s]?[a-zA-Z0-9_-]*$`)

// ValidateLabelName checks a label's name against the reference's pattern: it cannot be
// latest, default or a number, which name versions after '@'.
func ValidateLabelName(param, name string) error {
	if err := ValidateName(param, name, true); err != nil {
		return err
	}
	switch {
	case name == "latest" || name == "default":
		return Invalid(param, "%s cannot be %q: prompt@%s names a version already", param, name, name)
	case strings.Trim(name, "0123456789") == "":
		return Invalid(param, "%s cannot be a number: prompt@<number> names a version", param)
	case !labelNamePattern.MatchString(name):
		return Invalid(param, "%s may hold letters, digits, '_' and '-', and at most one other character that is neither '@' nor a space (got %q)", param, truncate(name, 64))
	}
	return nil
}

var colorCodePattern = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)

func validateLabelFields(description, color *string) error {
	if description != nil {
		if n := utf8.RuneCountInString(*description); n > MaxLabelDescription {
			return Invalid("description", "description must be at most %d characters (got %d)", MaxLabelDescription, n)
		}
	}
	if color != nil && *color != "" && !colorCodePattern.MatchString(*color) {
		return Invalid("color_code", "color_code must be a hex colour such as #1f8a70 (got %q)", truncate(*color, 32))
	}
	return nil
}

// CreatePromptLabel is the create command's input.
type CreatePromptLabel struct {
	LabelID        string
	OrganisationID string
	WorkspaceID    string
	Name           string
	Description    string
	ColorCode      string
	By             string
}

// Create decides the creation of a label.
func (l *PromptLabel) Create(in CreatePromptLabel, now time.Time) ([]Event, error) {
	if l.ID != "" {
		return nil, Errorf(CodeConflict, "label %s exists already", in.LabelID)
	}
	if err := ValidateLabelName("name", in.Name); err != nil {
		return nil, err
	}
	if err := validateLabelFields(&in.Description, &in.ColorCode); err != nil {
		return nil, err
	}
	return []Event{PromptLabelCreated{LabelID: in.LabelID, OrganisationID: in.OrganisationID, WorkspaceID: in.WorkspaceID,
		Name: in.Name, Description: in.Description, ColorCode: in.ColorCode, By: in.By, At: now}}, nil
}

// UpdatePromptLabel changes a label's name, description or colour; nil fields stay.
type UpdatePromptLabel struct {
	Name        *string
	Description *string
	ColorCode   *string
	By          string
}

// Update decides a change of the label.
func (l *PromptLabel) Update(in UpdatePromptLabel, now time.Time) ([]Event, error) {
	if !l.Exists() {
		return nil, Errorf(CodeNotFound, "label not found")
	}
	if in.Name == nil && in.Description == nil && in.ColorCode == nil {
		return nil, Invalid("", "nothing to update: give name, description or color_code")
	}
	if in.Name != nil {
		if err := ValidateLabelName("name", *in.Name); err != nil {
			return nil, err
		}
	}
	if err := validateLabelFields(in.Description, in.ColorCode); err != nil {
		return nil, err
	}
	return []Event{PromptLabelUpdated{LabelID: l.ID, Name: in.Name, Description: in.Description, ColorCode: in.ColorCode,
		By: in.By, At: now}}, nil
}

// Archive decides the deletion of a label.
func (l *PromptLabel) Archive(by string, now time.Time) ([]Event, error) {
	if !l.Exists() {
		return nil, Errorf(CodeNotFound, "label not found")
	}
	return []Event{PromptLabelArchived{LabelID: l.ID, By: by, At: now}}, nil
}
