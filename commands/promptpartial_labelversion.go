package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// LabelPromptPartialVersion points a label at a version of a partial, as LabelPromptVersion
// does for prompts: a template includes it as {{> slug@label}}, and a prompt served by that
// label includes its partials' versions of the same label where they have one.
type LabelPromptPartialVersion struct {
	PartialID string
	VersionID string
	LabelID   string
}

type labelPromptPartialVersionHandler struct{ d Deps }

// NewLabelPromptPartialVersionHandler refuses missing dependencies.
func NewLabelPromptPartialVersionHandler(d Deps) (labelPromptPartialVersionHandler, error) {
	return labelPromptPartialVersionHandler{d}, d.check()
}

func (h labelPromptPartialVersionHandler) Handle(ctx context.Context, c LabelPromptPartialVersion) (Result, error) {
	p, err := loadPartialFor(ctx, h.d, c.PartialID, "prompts.update")
	if err != nil {
		return Result{}, err
	}
	if c.LabelID != "" {
		if err := usableLabel(ctx, h.d, p.OrganisationID, p.WorkspaceID, c.LabelID); err != nil {
			return Result{}, err
		}
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPartialPrefix, c.PartialID), newPromptPartial,
		func(p *domain.PromptPartial) ([]domain.Event, error) {
			return p.LabelVersion(c.VersionID, c.LabelID, by, h.d.Now())
		})
	res.ID = c.PartialID
	return res, err
}
