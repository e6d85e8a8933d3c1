package projections

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// UsageResetsDue lists the active usage-limit policies and workspaces whose usage period has
// ended by now (commands.DueResets).
func (q Queries) UsageResetsDue(ctx context.Context, now time.Time) ([]domain.UsageLimitPolicy, []domain.Workspace, error) {
	due := func(next *time.Time) bool { return next != nil && !now.Before(*next) }
	byCreation := func(a, b *domain.UsageLimitPolicy) bool { return a.ID < b.ID }
	policies, err := all(ctx, q.Docs, domain.UsageLimitPolicyPrefix, func(p *domain.UsageLimitPolicy) bool {
		return p.Status == domain.StatusActive && due(p.NextUsageResetAt)
	}, byCreation)
	if err != nil {
		return nil, nil, err
	}
	workspaces, err := all(ctx, q.Docs, domain.WorkspacePrefix, func(w *domain.Workspace) bool {
		return w.Active() && due(w.NextUsageResetAt)
	}, func(a, b *domain.Workspace) bool { return a.ID < b.ID })
	if err != nil {
		return nil, nil, err
	}
	return policies, workspaces, nil
}

// BudgetResetsDue lists, by id across organisations, the keys, managed providers and
// integrations (by their workspaces) whose periodic usage reset has come
// (commands.DueBudgetResets).
func (q Queries) BudgetResetsDue(ctx context.Context, now time.Time) (keys []domain.APIKey, providers []domain.Provider, integrations []domain.Integration, err error) {
	if keys, err = all(ctx, q.Docs, domain.APIKeyPrefix, func(k *domain.APIKey) bool { return k.UsageResetDue(now) },
		func(a, b *domain.APIKey) bool { return a.ID < b.ID }); err != nil {
		return nil, nil, nil, err
	}
	if providers, err = all(ctx, q.Docs, domain.ProviderPrefix, func(p *domain.Provider) bool { return p.UsageResetDue(now) },
		func(a, b *domain.Provider) bool { return a.ID < b.ID }); err != nil {
		return nil, nil, nil, err
	}
	if integrations, err = all(ctx, q.Docs, domain.IntegrationPrefix, func(i *domain.Integration) bool { return len(i.WorkspaceResetsDue(now)) > 0 },
		func(a, b *domain.Integration) bool { return a.ID < b.ID }); err != nil {
		return nil, nil, nil, err
	}
	return keys, providers, integrations, nil
}
