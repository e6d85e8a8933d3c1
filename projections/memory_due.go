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
