package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// DeleteAPIKey revokes a key: it stops working everywhere at once.
type DeleteAPIKey struct{ KeyID string }

type deleteAPIKeyHandler struct{ d Deps }

func NewDeleteAPIKeyHandler(d Deps) (deleteAPIKeyHandler, error) {
	return deleteAPIKeyHandler{d}, d.check()
}

func (h deleteAPIKeyHandler) Handle(ctx context.Context, c DeleteAPIKey) (Result, error) {
	if _, err := loadAPIKeyFor(ctx, h.d, c.KeyID, "delete"); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.APIKeyPrefix, c.KeyID), newAPIKey,
		func(k *domain.APIKey) ([]domain.Event, error) { return k.Delete(h.d.Now()) })
	res.ID = c.KeyID
	return res, err
}
