package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdatePrompt renames a prompt, files it in another collection of its workspace, and, when
// version fields are sent, saves a new version of it (4.3: with Patch the fields not sent
// are the latest version's; without it the new version needs string, parameters and
// virtual_key). A new version is not the default until makeDefault names it.
type UpdatePrompt struct {
	PromptID     string
	Name         *string
	CollectionID *string
	Fields       domain.PromptVersionFields
	Patch        bool
}

type updatePromptHandler struct{ d Deps }

// NewUpdatePromptHandler refuses missing dependencies.
func NewUpdatePromptHandler(d Deps) (updatePromptHandler, error) {
	return updatePromptHandler{d}, d.check()
}

func (h updatePromptHandler) Handle(ctx context.Context, c UpdatePrompt) (Result, error) {
	p, err := loadPromptFor(ctx, h.d, c.PromptID, "prompts.update")
	if err != nil {
		return Result{}, err
	}
	if c.CollectionID != nil {
		col, err := collectionIn(ctx, h.d, p.OrganisationID, *c.CollectionID, "collection_id")
		if err != nil {
			return Result{}, err
		}
		if col.WorkspaceID != p.WorkspaceID {
			return Result{}, domain.Invalid("collection_id", "collection %s belongs to another workspace: a prompt moves between the collections of its own workspace", col.ID)
		}
	}
	if err := domain.ParsePromptTemplate(c.Fields); err != nil {
		return Result{}, err
	}
	if err := checkPromptTemplate(c.Fields.String); err != nil {
		return Result{}, err
	}
	in := domain.UpdatePrompt{Name: c.Name, CollectionID: c.CollectionID, Fields: c.Fields, Patch: c.Patch,
		By: actorName(RequestFrom(ctx).Actor)}
	if c.Fields.Any() {
		in.VersionID = NewID(ctx, "prompt-version:"+c.PromptID)
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPrefix, c.PromptID), newPrompt,
		func(p *domain.Prompt) ([]domain.Event, error) { return p.Update(in, h.d.Now()) })
	res.ID = c.PromptID
	return res, err
}
