package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// PricingOverride is the price override in force for provider's model for the organisation's
// workspace: the workspace's own (workspace true), else the organisation's; false when neither
// is set. The admin API reads overrides from the read model a write waits for, so a price set
// is read back at once.
func (q *Queries) PricingOverride(ctx context.Context, orgID, workspaceID, provider, model string) (o domain.ModelPricingOverride, workspace, ok bool, err error) {
	if workspaceID != "" {
		if o, ok, err = q.Read.ModelPricingOverride(ctx, orgID, workspaceID, provider, model); err != nil || ok {
			return o, ok, ok, err
		}
	}
	o, ok, err = q.Read.ModelPricingOverride(ctx, orgID, "", provider, model)
	return o, false, ok, err
}
