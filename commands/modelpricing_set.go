package commands

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
)

// SetModelPricing overrides the price of a provider's model for the organisation, or for one
// of its workspaces when WorkspaceID is set. The override replaces every price of the model.
type SetModelPricing struct {
	WorkspaceID string
	Provider    string
	Model       string
	PayAsYouGo  domain.ModelPrices
}

type setModelPricingHandler struct{ d Deps }

// NewSetModelPricingHandler refuses missing dependencies. Prices are set by organisation admins
// (requireModelPricingAdmin).
func NewSetModelPricingHandler(d Deps) (Handler[SetModelPricing, Result], error) {
	return authorised(requireModelPricingAdmin, setModelPricingHandler{d}), d.check()
}

func (h setModelPricingHandler) Handle(ctx context.Context, c SetModelPricing) (Result, error) {
	actor := RequestFrom(ctx).Actor
	wsID := strings.TrimSpace(c.WorkspaceID)
	if wsID != "" {
		if _, err := activeWorkspace(ctx, h.d, actor.OrganisationID, wsID); err != nil {
			return Result{}, err
		}
	}
	id := domain.ModelPricingOverrideID(actor.OrganisationID, wsID, c.Provider, c.Model)
	res, err := execute(ctx, h.d, domain.Stream(domain.ModelPricingPrefix, id), newModelPricingOverride,
		func(o *domain.ModelPricingOverride) ([]domain.Event, error) {
			return o.Set(domain.SetModelPricing{OverrideID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID,
				Provider: c.Provider, Model: c.Model, PayAsYouGo: c.PayAsYouGo}, h.d.Now())
		})
	res.ID = id
	return res, err
}

func newModelPricingOverride() *domain.ModelPricingOverride { return &domain.ModelPricingOverride{} }

// requireModelPricingAdmin: prices are an organisation setting (5.2): only organisation owners
// and admins change them, through an organisation key with organisations.update, whatever
// workspace the override is for.
func requireModelPricingAdmin(a domain.Actor) error {
	return requireAdminKey(a, "organisations.update")
}
