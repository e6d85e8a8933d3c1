package projections

import (
	"strings"

	"github.com/causeway/causeway/domain"
)

// ModelPricingOverride returns the price override in force for provider's model in a
// workspace (workspaceID empty: the organisation's own). Its id is derived from the names, so
// this is one lookup, cheap enough for the gateway to make for every request it logs.
func (m *Model) ModelPricingOverride(orgID, workspaceID, provider, model string) (domain.ModelPricingOverride, bool) {
	if m.none(domain.ModelPricingPrefix) {
		return domain.ModelPricingOverride{}, false
	}
	id := domain.ModelPricingOverrideID(orgID, workspaceID, provider, model)
	o, ok := get[domain.ModelPricingOverride](m, domain.ModelPricingPrefix, id)
	return o, ok && o.Active() && o.OrganisationID == orgID && o.WorkspaceID == workspaceID
}

// ModelPricingOverrides lists the overrides in force in an organisation, its own and its
// workspaces', by provider and model.
func (m *Model) ModelPricingOverrides(orgID string) []domain.ModelPricingOverride {
	return all(m, domain.ModelPricingPrefix,
		func(o *domain.ModelPricingOverride) bool { return o.Active() && o.OrganisationID == orgID },
		func(a, b *domain.ModelPricingOverride) bool {
			ka := a.Provider + "\x00" + strings.ToLower(a.Model) + "\x00" + a.WorkspaceID
			kb := b.Provider + "\x00" + strings.ToLower(b.Model) + "\x00" + b.WorkspaceID
			return ka < kb
		})
}
