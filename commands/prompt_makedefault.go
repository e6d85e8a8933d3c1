package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// MakePromptDefault makes a version of a prompt, by number, the one served when a request
// names none.
type MakePromptDefault struct {
	PromptID string
	Version  int
}

type makePromptDefaultHandler struct{ d Deps }

// NewMakePromptDefaultHandler refuses missing dependencies.
func NewMakePromptDefaultHandler(d Deps) (makePromptDefaultHandler, error) {
	return makePromptDefaultHandler{d}, d.check()
}

func (h makePromptDefaultHandler) Handle(ctx context.Context, c MakePromptDefault) (Result, error) {
	if _, err := loadPromptFor(ctx, h.d, c.PromptID, "prompts.update"); err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPrefix, c.PromptID), newPrompt,
		func(p *domain.Prompt) ([]domain.Event, error) { return p.MakeDefault(c.Version, by, h.d.Now()) })
	res.ID = c.PromptID
	return res, err
}
