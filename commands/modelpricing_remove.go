package commands

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
)

// RemoveModelPricing takes back an override: the model's price is the default again.
type RemoveModelPricing struct {
	WorkspaceID string
	Provider    string
	Model       string
}

type removeModelPricingHandler struct{ d Deps }

// NewRemoveModelPricingHandler refuses missing dependencies. Prices are set by organisation admins
// (requireModelPricingAdmin).
func NewRemoveModelPricingHandler(d Deps) (Handler[RemoveModelPricing, Result], error) {
	return authorised(requireModelPricingAdmin, removeModelPricingHandler{d}), d.check()
}

func (h removeModelPricingHandler) Handle(ctx context.Context, c RemoveModelPricing) (Result, error) {
	actor := RequestFrom(ctx).Actor
	id := domain.ModelPricingOverrideID(actor.OrganisationID, strings.TrimSpace(c.WorkspaceID), c.Provider, c.Model)
	res, err := execute(ctx, h.d, domain.Stream(domain.ModelPricingPrefix, id), newModelPricingOverride,
		func(o *domain.ModelPricingOverride) ([]domain.Event, error) { return o.Remove(h.d.Now()) })
	res.ID = id
	return res, err
}
