package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdatePromptLabel changes a label's name, description or colour; nil fields stay. A new
// name must be free in the organisation; the old one is freed. The versions the label points
// at keep it: they are named by the label's id.
type UpdatePromptLabel struct {
	LabelID     string
	Name        *string
	Description *string
	ColorCode   *string
}

type updatePromptLabelHandler struct{ d Deps }

// NewUpdatePromptLabelHandler refuses missing dependencies.
func NewUpdatePromptLabelHandler(d Deps) (updatePromptLabelHandler, error) {
	return updatePromptLabelHandler{d}, d.check()
}

func (h updatePromptLabelHandler) Handle(ctx context.Context, c UpdatePromptLabel) (Result, error) {
	l, err := loadLabelFor(ctx, h.d, c.LabelID, "prompts.update")
	if err != nil {
		return Result{}, err
	}
	in := domain.UpdatePromptLabel{Name: c.Name, Description: c.Description, ColorCode: c.ColorCode,
		By: actorName(RequestFrom(ctx).Actor)}
	if _, err := l.Update(in, h.d.Now()); err != nil {
		return Result{}, err
	}
	renamed := c.Name != nil && *c.Name != l.Name
	newName := ""
	if renamed {
		newName = l.OrganisationID + "/" + *c.Name
		if err := reserve(ctx, h.d, PromptLabelNameReservation, newName, l.ID, "name"); err != nil {
			return Result{}, err
		}
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptLabelPrefix, c.LabelID), newPromptLabel,
		func(l *domain.PromptLabel) ([]domain.Event, error) { return l.Update(in, h.d.Now()) })
	if err != nil {
		if renamed {
			releaseAll(ctx, h.d, PromptLabelNameReservation, map[string]string{newName: l.ID})
		}
		return Result{}, err
	}
	if renamed {
		if err := release(withoutIdempotency(ctx), h.d, PromptLabelNameReservation, l.OrganisationID+"/"+l.Name, l.ID); err != nil {
			return Result{}, err
		}
	}
	res.ID = c.LabelID
	return res, nil
}
