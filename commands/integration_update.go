package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateIntegration changes an integration's name, description, key, configurations (merged
// field by field; a nil value removes the field) or tags (replaced whole; ClearTags removes
// them).
type UpdateIntegration struct {
	IntegrationID  string
	Name           *string
	Description    *string
	Key            *string
	Configurations map[string]any
	Tags           map[string]string
	ClearTags      bool
}

type updateIntegrationHandler struct {
	d Deps
	s Sealer
	u URLChecker
}

// NewUpdateIntegrationHandler refuses missing dependencies.
func NewUpdateIntegrationHandler(d Deps, s Sealer, u URLChecker) (updateIntegrationHandler, error) {
	return updateIntegrationHandler{d, s, u}, checkSecretDeps(d, s, u)
}

func (h updateIntegrationHandler) Handle(ctx context.Context, c UpdateIntegration) (Result, error) {
	if _, err := loadIntegrationFor(ctx, h.d, c.IntegrationID, "integrations.update"); err != nil {
		return Result{}, err
	}
	if err := checkURLs(h.u, c.Configurations); err != nil {
		return Result{}, err
	}
	stream := domain.Stream(domain.IntegrationPrefix, c.IntegrationID)
	res, err := execute(ctx, h.d, stream, newIntegration, func(i *domain.Integration) ([]domain.Event, error) {
		return i.Update(domain.UpdateIntegration{Name: c.Name, Description: c.Description, Key: c.Key,
			Configurations: c.Configurations, Tags: c.Tags, ClearTags: c.ClearTags}, sealFor(h.s, stream), h.d.Now())
	})
	res.ID = c.IntegrationID
	return res, err
}
