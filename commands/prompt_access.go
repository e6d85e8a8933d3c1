package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/templates"
)

// Prompts, partials, labels and collections are written with the prompts scopes
// (prompts.create, .update, .delete), by whom the prompt security settings allow
// (domain.PromptAccess: membersWritePrompts, managersWritePrompts in the workspace, its own
// overrides first); organisation labels by organisation owners and admins only.

// Reservation kinds of prompts. Prompt and partial slugs and label names are unique in an
// organisation ("<organisation id>/<slug>"), so that a path or a template names one of them
// whatever key reads it; collection slugs in a workspace ("<workspace id>/<slug>"). A deleted
// one frees its name.
const (
	PromptSlugReservation           = "prompt-slug"
	PromptPartialSlugReservation    = "prompt-partial-slug"
	PromptLabelNameReservation      = "prompt-label-name"
	PromptCollectionSlugReservation = "prompt-collection-slug"
)

// CollectionContentsIndex counts what a collection holds (the read model): prompts and
// partials live in their own streams, so only a read model can count them by collection.
type CollectionContentsIndex interface {
	PromptCollectionContents(ctx context.Context, orgID, collectionID string) (domain.CollectionContents, error)
}

func newPrompt() *domain.Prompt                     { return &domain.Prompt{} }
func newPromptPartial() *domain.PromptPartial       { return &domain.PromptPartial{} }
func newPromptLabel() *domain.PromptLabel           { return &domain.PromptLabel{} }
func newPromptCollection() *domain.PromptCollection { return &domain.PromptCollection{} }

// promptWriter checks that the actor may change the prompts of workspaceID with scope: it
// carries the scope, reaches the workspace, and the security settings in force there let its
// role write prompts.
func promptWriter(ctx context.Context, d Deps, workspaceID, scope string) error {
	actor := RequestFrom(ctx).Actor
	if err := requireScope(actor, scope); err != nil {
		return err
	}
	if actor.IsOrgAdmin() {
		return nil
	}
	if _, ok := actor.WorkspaceRole(workspaceID); !ok {
		return forbidden("this API key has no access to workspace %s", workspaceID)
	}
	sec, err := effectiveSecurity(ctx, d, actor.OrganisationID, workspaceID)
	if err != nil {
		return err
	}
	return domain.PromptAccess(actor, workspaceID, sec, true)
}

// labelWriter checks that the actor may change a label of workspaceID ("" for an
// organisation label) with scope.
func labelWriter(ctx context.Context, d Deps, workspaceID, scope string) error {
	actor := RequestFrom(ctx).Actor
	if workspaceID == "" {
		if !actor.IsOrgAdmin() {
			return forbidden("only organisation owners and admins may change organisation labels, with an organisation key")
		}
		return requireScope(actor, scope)
	}
	return promptWriter(ctx, d, workspaceID, scope)
}

// loadPromptFor loads a live prompt of the actor's organisation that the actor may change
// with scope.
func loadPromptFor(ctx context.Context, d Deps, id, scope string) (*domain.Prompt, error) {
	p, err := Load(ctx, d, domain.Stream(domain.PromptPrefix, id), newPrompt)
	if err != nil {
		return nil, err
	}
	if !p.Exists() || p.OrganisationID != RequestFrom(ctx).Actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "prompt %s not found", id)
	}
	return p, promptWriter(ctx, d, p.WorkspaceID, scope)
}

// loadPartialFor loads a live partial the actor may change with scope.
func loadPartialFor(ctx context.Context, d Deps, id, scope string) (*domain.PromptPartial, error) {
	p, err := Load(ctx, d, domain.Stream(domain.PromptPartialPrefix, id), newPromptPartial)
	if err != nil {
		return nil, err
	}
	if !p.Exists() || p.OrganisationID != RequestFrom(ctx).Actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "prompt partial %s not found", id)
	}
	return p, promptWriter(ctx, d, p.WorkspaceID, scope)
}

// loadLabelFor loads a live label the actor may change with scope.
func loadLabelFor(ctx context.Context, d Deps, id, scope string) (*domain.PromptLabel, error) {
	l, err := Load(ctx, d, domain.Stream(domain.PromptLabelPrefix, id), newPromptLabel)
	if err != nil {
		return nil, err
	}
	if !l.Exists() || l.OrganisationID != RequestFrom(ctx).Actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "label %s not found", id)
	}
	return l, labelWriter(ctx, d, l.WorkspaceID, scope)
}

// loadCollectionFor loads a live collection the actor may change with scope.
func loadCollectionFor(ctx context.Context, d Deps, id, scope string) (*domain.PromptCollection, error) {
	c, err := Load(ctx, d, domain.Stream(domain.PromptCollectionPrefix, id), newPromptCollection)
	if err != nil {
		return nil, err
	}
	if !c.Exists() || c.OrganisationID != RequestFrom(ctx).Actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "collection %s not found", id)
	}
	return c, promptWriter(ctx, d, c.WorkspaceID, scope)
}

// collectionIn loads the live collection id of the organisation that prompts are filed in;
// param names the field in errors.
func collectionIn(ctx context.Context, d Deps, orgID, id, param string) (*domain.PromptCollection, error) {
	c, err := Load(ctx, d, domain.Stream(domain.PromptCollectionPrefix, id), newPromptCollection)
	if err != nil {
		return nil, err
	}
	if !c.Exists() || c.OrganisationID != orgID {
		return nil, &domain.Error{Code: domain.CodeNotFound, Param: param, Message: "collection " + id + " not found"}
	}
	return c, nil
}

// usableLabel loads a live label that a prompt or partial of workspaceID may carry.
func usableLabel(ctx context.Context, d Deps, orgID, workspaceID, labelID string) error {
	l, err := Load(ctx, d, domain.Stream(domain.PromptLabelPrefix, labelID), newPromptLabel)
	if err != nil {
		return err
	}
	if !l.Exists() || l.OrganisationID != orgID {
		return &domain.Error{Code: domain.CodeNotFound, Param: "label_id", Message: "label " + labelID + " not found"}
	}
	if !l.UsableBy(workspaceID) {
		return domain.Invalid("label_id", "label %s belongs to another workspace: use this workspace's labels or the organisation's", labelID)
	}
	return nil
}

// defaultCollectionNamespace derives the id of each workspace's default collection from the
// workspace's, so that every writer that files something there names the same collection.
var defaultCollectionNamespace = uuid.MustParse("3c0f6f5e-8d58-4f0e-9a43-5e2b1f0c7a19")

// DefaultCollectionID is the id of a workspace's default collection.
func DefaultCollectionID(workspaceID string) string {
	return uuid.NewSHA1(defaultCollectionNamespace, []byte("prompt-default-collection:"+workspaceID)).String()
}

// ensureDefaultCollection makes the workspace's default collection if it does not exist yet,
// and returns its id and the position of the write (0: none).
func ensureDefaultCollection(ctx context.Context, d Deps, orgID, workspaceID string) (string, eventstore.Position, error) {
	id := DefaultCollectionID(workspaceID)
	stream := domain.Stream(domain.PromptCollectionPrefix, id)
	c, err := Load(ctx, d, stream, newPromptCollection)
	if err != nil || c.ID != "" {
		return id, 0, err
	}
	slug, err := reserveFirst(ctx, d, PromptCollectionSlugReservation, workspaceID, id, "slug",
		[]string{domain.DefaultCollectionSlug, domain.DefaultCollectionSlug + "-" + id[:6]})
	if err != nil {
		return "", 0, err
	}
	spec := domain.CreatePromptCollection{CollectionID: id, OrganisationID: orgID, WorkspaceID: workspaceID, Name: "Default",
		Slug: slug, IsDefault: true, By: actorName(RequestFrom(ctx).Actor)}
	res, err := execute(ctx, d, stream, newPromptCollection,
		func(c *domain.PromptCollection) ([]domain.Event, error) { return c.Create(spec, d.Now()) })
	return id, res.Position, err
}

// checkPromptTemplate checks a template as the gateway will render it (package templates).
func checkPromptTemplate(text *string) error {
	if text == nil {
		return nil
	}
	_, err := templates.Parse("string", *text)
	return err
}

func collectionIndexDeps(d Deps, i CollectionContentsIndex) error {
	if i == nil {
		return errors.New("commands: nil collection contents index")
	}
	return d.check()
}

// checkPartialText checks a partial's text as the gateway will render it.
func checkPartialText(text *string) error {
	if text == nil {
		return nil
	}
	return templates.CheckPartial("string", *text)
}
