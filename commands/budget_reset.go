package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ResetBudgetUsageIfDue starts the next usage period of a budget whose next_usage_reset_at has
// passed; before then it writes nothing. Kind and ID are as in RecordBudgetUsage; Sub names
// the workspace of an integration_workspace budget (a workspace's limit types and a policy's
// entities share their periodic reset, so they take none). The scheduler sends it as the
// system actor.
type ResetBudgetUsageIfDue struct {
	Kind string
	ID   string
	Sub  string
}

type resetBudgetUsageIfDueHandler struct{ d Deps }

// NewResetBudgetUsageIfDueHandler refuses missing dependencies. Only the scheduler resets a
// budget (systemOnly).
func NewResetBudgetUsageIfDueHandler(d Deps) (Handler[ResetBudgetUsageIfDue, Result], error) {
	return authorised(systemOnly("only the scheduler resets a budget on its schedule"), resetBudgetUsageIfDueHandler{d}), d.check()
}

func (h resetBudgetUsageIfDueHandler) Handle(ctx context.Context, c ResetBudgetUsageIfDue) (Result, error) {
	now := h.d.Now()
	var (
		res Result
		err error
	)
	switch c.Kind {
	case BudgetAPIKey:
		res, err = executeForSystem(ctx, h.d, domain.Stream(domain.APIKeyPrefix, c.ID), "api key "+c.ID, newAPIKey,
			func(k *domain.APIKey) string { return k.OrganisationID },
			func(k *domain.APIKey) ([]domain.Event, error) { return k.ResetUsageIfDue(now) })
	case BudgetWorkspace:
		res, err = executeForSystem(ctx, h.d, domain.Stream(domain.WorkspacePrefix, c.ID), "workspace "+c.ID, newWorkspace,
			func(w *domain.Workspace) string { return w.OrganisationID },
			func(w *domain.Workspace) ([]domain.Event, error) { return w.ResetUsageIfDue(now) })
	case BudgetProvider:
		res, err = executeForSystem(ctx, h.d, domain.Stream(domain.ProviderPrefix, c.ID), "provider "+c.ID, newProvider,
			func(p *domain.Provider) string { return p.OrganisationID },
			func(p *domain.Provider) ([]domain.Event, error) { return p.ResetUsageIfDue(now) })
	case BudgetIntegrationWorkspace:
		if c.Sub == "" {
			return Result{}, domain.Invalid("sub", "sub must name the workspace of an integration_workspace budget")
		}
		res, err = executeForSystem(ctx, h.d, domain.Stream(domain.IntegrationPrefix, c.ID), "integration "+c.ID, newIntegration,
			func(i *domain.Integration) string { return i.OrganisationID },
			func(i *domain.Integration) ([]domain.Event, error) { return i.ResetWorkspaceUsageIfDue(c.Sub, now) })
	case BudgetUsageLimitPolicy:
		res, err = executeForSystem(ctx, h.d, domain.Stream(domain.UsageLimitPolicyPrefix, c.ID), "usage limit policy "+c.ID,
			newUsageLimitPolicy, func(p *domain.UsageLimitPolicy) string { return p.OrganisationID },
			func(p *domain.UsageLimitPolicy) ([]domain.Event, error) { return p.ResetPeriod(now) })
	default:
		return Result{}, domain.Invalid("kind", "kind must be api_key, workspace, provider, integration_workspace or usage_limit_policy (got %q)", c.Kind)
	}
	res.ID = c.ID
	return res, err
}
