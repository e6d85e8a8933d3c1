package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// MakePromptPartialDefault makes a version of a partial, by number, the one templates include
// when they name none.
type MakePromptPartialDefault struct {
	PartialID string
	Version   int
}

type makePromptPartialDefaultHandler struct{ d Deps }

// NewMakePromptPartialDefaultHandler refuses missing dependencies.
func NewMakePromptPartialDefaultHandler(d Deps) (makePromptPartialDefaultHandler, error) {
	return makePromptPartialDefaultHandler{d}, d.check()
}

func (h makePromptPartialDefaultHandler) Handle(ctx context.Context, c MakePromptPartialDefault) (Result, error) {
	if _, err := loadPartialFor(ctx, h.d, c.PartialID, "prompts.update"); err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPartialPrefix, c.PartialID), newPromptPartial,
		func(p *domain.PromptPartial) ([]domain.Event, error) { return p.MakeDefault(c.Version, by, h.d.Now()) })
	res.ID = c.PartialID
	return res, err
}
