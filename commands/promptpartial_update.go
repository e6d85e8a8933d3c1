package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdatePromptPartial renames a partial and, when String is sent, saves a new version of it,
// described by Description. A new version is not the default until makeDefault names it.
type UpdatePromptPartial struct {
	PartialID   string
	Name        *string
	String      *string
	Description *string
}

type updatePromptPartialHandler struct{ d Deps }

// NewUpdatePromptPartialHandler refuses missing dependencies.
func NewUpdatePromptPartialHandler(d Deps) (updatePromptPartialHandler, error) {
	return updatePromptPartialHandler{d}, d.check()
}

func (h updatePromptPartialHandler) Handle(ctx context.Context, c UpdatePromptPartial) (Result, error) {
	if _, err := loadPartialFor(ctx, h.d, c.PartialID, "prompts.update"); err != nil {
		return Result{}, err
	}
	if err := checkPartialText(c.String); err != nil {
		return Result{}, err
	}
	in := domain.UpdatePromptPartial{Name: c.Name, String: c.String, Description: c.Description,
		By: actorName(RequestFrom(ctx).Actor)}
	if c.String != nil {
		in.VersionID = NewID(ctx, "prompt-partial-version:"+c.PartialID)
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPartialPrefix, c.PartialID), newPromptPartial,
		func(p *domain.PromptPartial) ([]domain.Event, error) { return p.Update(in, h.d.Now()) })
	res.ID = c.PartialID
	return res, err
}
