package projections

import (
	"time"

	"github.com/causeway/causeway/domain"
)

// UsageResetsDue lists the active usage-limit policies and workspaces whose usage period has
// ended by now (commands.DueResets).
func (m *Model) UsageResetsDue(now time.Time) ([]domain.UsageLimitPolicy, []domain.Workspace) {
	due := func(next *time.Time) bool { return next != nil && !now.Before(*next) }
	byCreation := func(a, b *domain.UsageLimitPolicy) bool { return a.ID < b.ID }
	policies := all(m, domain.UsageLimitPolicyPrefix, func(p *domain.UsageLimitPolicy) bool {
		return p.Status == domain.StatusActive && due(p.NextUsageResetAt)
	}, byCreation)
	workspaces := all(m, domain.WorkspacePrefix, func(w *domain.Workspace) bool {
		return w.Active() && due(w.NextUsageResetAt)
	}, func(a, b *domain.Workspace) bool { return a.ID < b.ID })
	return policies, workspaces
}

// BudgetResetsDue lists, by id across organisations, the keys, managed providers and
// integrations (by their workspaces) whose periodic usage reset has come
// (commands.DueBudgetResets).
func (m *Model) BudgetResetsDue(now time.Time) (keys []domain.APIKey, providers []domain.Provider, integrations []domain.Integration) {
	keys = all(m, domain.APIKeyPrefix, func(k *domain.APIKey) bool { return k.UsageResetDue(now) },
		func(a, b *domain.APIKey) bool { return a.ID < b.ID })
	providers = all(m, domain.ProviderPrefix, func(p *domain.Provider) bool { return p.UsageResetDue(now) },
		func(a, b *domain.Provider) bool { return a.ID < b.ID })
	integrations = all(m, domain.IntegrationPrefix, func(i *domain.Integration) bool { return len(i.WorkspaceResetsDue(now)) > 0 },
		func(a, b *domain.Integration) bool { return a.ID < b.ID })
	return keys, providers, integrations
}
