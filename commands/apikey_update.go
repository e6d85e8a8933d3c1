package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateAPIKey changes a key's settings (PUT /api-keys/{id}); nil fields stay as they are and
// Clear flags remove a field.
type UpdateAPIKey struct {
	KeyID string
	domain.UpdateAPIKey
}

type updateAPIKeyHandler struct{ d Deps }

func NewUpdateAPIKeyHandler(d Deps) (updateAPIKeyHandler, error) {
	return updateAPIKeyHandler{d}, d.check()
}

func (h updateAPIKeyHandler) Handle(ctx context.Context, c UpdateAPIKey) (Result, error) {
	if _, err := loadAPIKeyFor(ctx, h.d, c.KeyID, "update"); err != nil {
		return Result{}, err
	}
	if c.Scopes != nil {
		if err := scopesHeld(RequestFrom(ctx).Actor, c.Scopes); err != nil {
			return Result{}, err
		}
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.APIKeyPrefix, c.KeyID), newAPIKey,
		func(k *domain.APIKey) ([]domain.Event, error) { return k.Update(c.UpdateAPIKey, h.d.Now()) })
	res.ID = c.KeyID
	return res, err
}
