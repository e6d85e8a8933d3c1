package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// LabelPromptVersion points a label at a version of a prompt (the reference's
// updatePromptVersion, label_id): the label leaves the version it pointed at, and the version
// its previous label. An empty LabelID takes the version's label away. The label must be
// live and usable by the prompt's workspace.
type LabelPromptVersion struct {
	PromptID  string
	VersionID string
	LabelID   string
}

type labelPromptVersionHandler struct{ d Deps }

// NewLabelPromptVersionHandler refuses missing dependencies.
func NewLabelPromptVersionHandler(d Deps) (labelPromptVersionHandler, error) {
	return labelPromptVersionHandler{d}, d.check()
}

func (h labelPromptVersionHandler) Handle(ctx context.Context, c LabelPromptVersion) (Result, error) {
	p, err := loadPromptFor(ctx, h.d, c.PromptID, "prompts.update")
	if err != nil {
		return Result{}, err
	}
	if c.LabelID != "" {
		if err := usableLabel(ctx, h.d, p.OrganisationID, p.WorkspaceID, c.LabelID); err != nil {
			return Result{}, err
		}
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptPrefix, c.PromptID), newPrompt,
		func(p *domain.Prompt) ([]domain.Event, error) {
			return p.LabelVersion(c.VersionID, c.LabelID, by, h.d.Now())
		})
	res.ID = c.PromptID
	return res, err
}
