package domain

import (
	"fmt"
	"time"
)

// A collection files a workspace's prompts (and, in its default collection, its partials),
// optionally under a parent collection of the same workspace. Each workspace has one default
// collection, made the first time something is filed there; it cannot be deleted. A
// collection is deleted only when it holds nothing live.

// PromptCollectionPrefix names the streams of collections.
const PromptCollectionPrefix = "promptcollection"

// DefaultCollectionSlug is the slug of every workspace's default collection.
const DefaultCollectionSlug = "default"

// PromptCollection is a collection of a workspace; its slug is unique in the workspace.
type PromptCollection struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	WorkspaceID    string `json:"workspace_id"`
	Name           string `json:"name"`
	Slug           string `json:"slug"`
	// ParentID is "" for a collection at the top.
	ParentID      string    `json:"parent_collection_id"`
	IsDefault     bool      `json:"is_default"`
	Status        string    `json:"status"`
	OwnerID       string    `json:"owner_id"`
	UpdatedBy     string    `json:"updated_by"`
	CreatedAt     time.Time `json:"created_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
}

type PromptCollectionCreated struct {
	CollectionID   string    `json:"collection_id"`
	OrganisationID string    `json:"organisation_id"`
	WorkspaceID    string    `json:"workspace_id"`
	Name           string    `json:"name"`
	Slug           string    `json:"slug"`
	ParentID       string    `json:"parent_collection_id,omitempty"`
	IsDefault      bool      `json:"is_default,omitempty"`
	By             string    `json:"by"`
	At             time.Time `json:"at"`
}

// PromptCollectionRenamed renames a collection.
type PromptCollectionRenamed struct {
	CollectionID string    `json:"collection_id"`
	Name         string    `json:"name"`
	By           string    `json:"by"`
	At           time.Time `json:"at"`
}

// PromptCollectionArchived is DELETE: the collection is gone, and its slug free.
type PromptCollectionArchived struct {
	CollectionID string    `json:"collection_id"`
	By           string    `json:"by"`
	At           time.Time `json:"at"`
}

func (PromptCollectionCreated) EventType() string  { return "PromptCollectionCreated" }
func (PromptCollectionRenamed) EventType() string  { return "PromptCollectionRenamed" }
func (PromptCollectionArchived) EventType() string { return "PromptCollectionArchived" }

func promptCollectionModule() module {
	return module{prefix: PromptCollectionPrefix, aggregate: func() Aggregate { return &PromptCollection{} },
		events: []Event{PromptCollectionCreated{}, PromptCollectionRenamed{}, PromptCollectionArchived{}}}
}

func (c *PromptCollection) Apply(e Event) {
	switch e := e.(type) {
	case PromptCollectionCreated:
		*c = PromptCollection{ID: e.CollectionID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Name: e.Name,
			Slug: e.Slug, ParentID: e.ParentID, IsDefault: e.IsDefault, Status: StatusActive, OwnerID: e.By, UpdatedBy: e.By,
			CreatedAt: e.At, LastUpdatedAt: e.At}
	case PromptCollectionRenamed:
		c.Name, c.UpdatedBy, c.LastUpdatedAt = e.Name, e.By, e.At
	case PromptCollectionArchived:
		c.Status, c.UpdatedBy, c.LastUpdatedAt = StatusArchived, e.By, e.At
	}
}

// Exists reports whether the collection was created and not deleted.
func (c *PromptCollection) Exists() bool { return c.ID != "" && c.Status != StatusArchived }

// CreatePromptCollection is the create command's input; Parent is the parent collection
// (nil: none), loaded by the caller.
type CreatePromptCollection struct {
	CollectionID   string
	OrganisationID string
	WorkspaceID    string
	Name           string
	Slug           string
	Parent         *PromptCollection
	IsDefault      bool
	By             string
}

// Create decides the creation of a collection.
func (c *PromptCollection) Create(in CreatePromptCollection, now time.Time) ([]Event, error) {
	if c.ID != "" {
		if c.IsDefault && in.IsDefault {
			return nil, nil // the default collection was made already
		}
		return nil, Errorf(CodeConflict, "collection %s exists already", in.CollectionID)
	}
	if err := ValidateName("name", in.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	e := PromptCollectionCreated{CollectionID: in.CollectionID, OrganisationID: in.OrganisationID, WorkspaceID: in.WorkspaceID,
		Name: in.Name, Slug: in.Slug, IsDefault: in.IsDefault, By: in.By, At: now}
	if p := in.Parent; p != nil {
		if !p.Exists() || p.WorkspaceID != in.WorkspaceID {
			return nil, &Error{Code: CodeNotFound, Param: "parent_collection_id",
				Message: fmt.Sprintf("parent collection %s not found in workspace %s", p.ID, in.WorkspaceID)}
		}
		e.ParentID = p.ID
	}
	return []Event{e}, nil
}

// Rename decides a collection's new name.
func (c *PromptCollection) Rename(name, by string, now time.Time) ([]Event, error) {
	if !c.Exists() {
		return nil, Errorf(CodeNotFound, "collection not found")
	}
	if err := ValidateName("name", name, true); err != nil {
		return nil, err
	}
	if name == c.Name {
		return nil, nil
	}
	return []Event{PromptCollectionRenamed{CollectionID: c.ID, Name: name, By: by, At: now}}, nil
}

// CollectionContents is what a collection holds that is live.
type CollectionContents struct {
	Prompts  int
	Partials int
	Children int
}

// Archive decides the deletion of a collection, which holds what contents says: the default
// collection is never deleted, nor one that holds anything live.
func (c *PromptCollection) Archive(contents CollectionContents, by string, now time.Time) ([]Event, error) {
	if !c.Exists() {
		return nil, Errorf(CodeNotFound, "collection not found")
	}
	if c.IsDefault {
		return nil, Errorf(CodeConflict, "collection %s is its workspace's default collection, which cannot be deleted", c.ID)
	}
	if contents.Prompts+contents.Partials+contents.Children > 0 {
		return nil, Errorf(CodeConflict, "collection %s holds %d prompts, %d partials and %d child collections: delete or move them first",
			c.ID, contents.Prompts, contents.Partials, contents.Children)
	}
	return []Event{PromptCollectionArchived{CollectionID: c.ID, By: by, At: now}}, nil
}
