package projections

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
)

// ModelPricingOverride returns the price override in force for provider's model in a
// workspace (workspaceID empty: the organisation's own). Its id is derived from the names, so
// this is one lookup, cheap enough for the gateway to make for every request it logs (on the
// in-memory model, memory.Model.Overrides).
func (q Queries) ModelPricingOverride(ctx context.Context, orgID, workspaceID, provider, model string) (domain.ModelPricingOverride, bool, error) {
	id := domain.ModelPricingOverrideID(orgID, workspaceID, provider, model)
	o, ok, err := get[domain.ModelPricingOverride](ctx, q.Docs, domain.ModelPricingPrefix, id)
	return o, ok && o.Active() && o.OrganisationID == orgID && o.WorkspaceID == workspaceID, err
}

// ModelPricingOverrides lists the overrides in force in an organisation, its own and its
// workspaces', by provider and model.
func (q Queries) ModelPricingOverrides(ctx context.Context, orgID string) ([]domain.ModelPricingOverride, error) {
	return all(ctx, q.Docs, domain.ModelPricingPrefix,
		func(o *domain.ModelPricingOverride) bool { return o.Active() && o.OrganisationID == orgID },
		func(a, b *domain.ModelPricingOverride) bool {
			ka := a.Provider + "\x00" + strings.ToLower(a.Model) + "\x00" + a.WorkspaceID
			kb := b.Provider + "\x00" + strings.ToLower(b.Model) + "\x00" + b.WorkspaceID
			return ka < kb
		})
}
