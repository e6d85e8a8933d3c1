package commands

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
)

// CreatePromptLabel creates a label: of WorkspaceID, or, when an organisation key names no
// workspace, of the organisation (every workspace may use it). A workspace key creates labels
// of its own workspace. Names are unique in the organisation.
type CreatePromptLabel struct {
	WorkspaceID string
	Name        string
	Description string
	ColorCode   string
}

type createPromptLabelHandler struct{ d Deps }

// NewCreatePromptLabelHandler refuses missing dependencies.
func NewCreatePromptLabelHandler(d Deps) (createPromptLabelHandler, error) {
	return createPromptLabelHandler{d}, d.check()
}

func (h createPromptLabelHandler) Handle(ctx context.Context, c CreatePromptLabel) (Result, error) {
	actor := RequestFrom(ctx).Actor
	wsID := strings.TrimSpace(c.WorkspaceID)
	if actor.Kind == domain.ActorAPIKey && actor.KeyType != domain.KeyOrganisationService {
		var err error
		if wsID, err = targetWorkspace(actor, wsID); err != nil {
			return Result{}, err
		}
	}
	if err := labelWriter(ctx, h.d, wsID, "prompts.create"); err != nil {
		return Result{}, err
	}
	if wsID != "" {
		if _, err := activeWorkspace(ctx, h.d, actor.OrganisationID, wsID); err != nil {
			return Result{}, err
		}
	}
	now := h.d.Now()
	id := NewID(ctx, "prompt-label")
	spec := domain.CreatePromptLabel{LabelID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID, Name: c.Name,
		Description: c.Description, ColorCode: c.ColorCode, By: actorName(actor)}
	// Decide once before reserving, so that a refused label never holds a name.
	if _, err := (&domain.PromptLabel{}).Create(spec, now); err != nil {
		return Result{}, err
	}
	name := actor.OrganisationID + "/" + c.Name
	if err := reserve(ctx, h.d, PromptLabelNameReservation, name, id, "name"); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.PromptLabelPrefix, id), newPromptLabel,
		func(l *domain.PromptLabel) ([]domain.Event, error) { return l.Create(spec, now) })
	if err != nil {
		releaseAll(ctx, h.d, PromptLabelNameReservation, map[string]string{name: id})
		return Result{}, err
	}
	res.ID = id
	return res, nil
}
