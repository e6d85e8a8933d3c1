package commands

import (
	"context"
	"strconv"
	"time"

	"github.com/causeway/causeway/domain"
)

// RecordBudgetUsage is the usage ledger's report that a budget has reached Usage in its usage
// Period (the aggregate's UsagePeriod, WorkspaceUsagePeriod or EntityPeriod when the ledger
// counted it). Kind is one of the Budget kinds; ID is the key, workspace, provider,
// integration or policy; Sub is the workspace's limit type, the integration's workspace or the
// policy's value key. The gateway sends it as the system actor of the budget's organisation.
//
// It records what the figure changes (an alert threshold reached, a budget exhausted) with a
// notification for each, and nothing else: a report about an earlier period (a reset came in
// between), about a budget that is gone, or repeated, writes nothing.
type RecordBudgetUsage struct {
	Kind   string
	ID     string
	Sub    string
	Period string
	Usage  float64
}

type recordBudgetUsageHandler struct{ d Deps }

// NewRecordBudgetUsageHandler refuses missing dependencies. Only the gateway's usage
// accounting reports usage (systemOnly).
func NewRecordBudgetUsageHandler(d Deps) (Handler[RecordBudgetUsage, Result], error) {
	return authorised(systemOnly("only the gateway's usage accounting reports budget usage"), recordBudgetUsageHandler{d}), d.check()
}

// Handle decides and appends the alerts, then records their notifications. An error with a
// Result that has a position means the alerts were recorded and only a notification failed:
// the same report again records the missing notifications (they are the alerts that end the
// budget's stream) and nothing twice.
func (h recordBudgetUsageHandler) Handle(ctx context.Context, c RecordBudgetUsage) (Result, error) {
	now := h.d.Now()
	switch c.Kind {
	case BudgetAPIKey, BudgetProvider:
		if c.Sub != "" {
			return Result{}, domain.Invalid("sub", "sub must be empty for a budget of kind %s", c.Kind)
		}
	case BudgetIntegrationWorkspace:
		if c.Sub == "" {
			return Result{}, domain.Invalid("sub", "sub must name the workspace of an integration_workspace budget")
		}
	}
	switch c.Kind {
	case BudgetAPIKey:
		return apiKeyBudget(c, now).record(ctx, h.d, c)
	case BudgetWorkspace:
		return workspaceBudget(c, now).record(ctx, h.d, c)
	case BudgetProvider:
		return providerBudget(c, now).record(ctx, h.d, c)
	case BudgetIntegrationWorkspace:
		return integrationWorkspaceBudget(c, now).record(ctx, h.d, c)
	case BudgetUsageLimitPolicy:
		return policyBudget(c, now).record(ctx, h.d, c)
	}
	return Result{}, domain.Invalid("kind", "kind must be api_key, workspace, provider, integration_workspace or usage_limit_policy (got %q)", c.Kind)
}

// budgetReport is how RecordBudgetUsage handles one kind of budget: the aggregate, the
// decision, the period, which events are alerts and what their notifications say.
type budgetReport[A domain.Aggregate] struct {
	prefix, what string
	newAgg       func() A
	org          func(A) string
	decide       func(A) ([]domain.Event, error)
	period       func(A) string
	alert        func(domain.Event) (budgetAlert, bool)
	notification func(A, budgetAlert, string) domain.NotificationRecorded
}

func (b budgetReport[A]) record(ctx context.Context, d Deps, c RecordBudgetUsage) (Result, error) {
	stream := domain.Stream(b.prefix, c.ID)
	var (
		agg     A
		loaded  bool
		decided []domain.Event
	)
	res, err := executeForSystem(ctx, d, stream, b.what, b.newAgg, b.org, func(a A) ([]domain.Event, error) {
		events, err := b.decide(a)
		agg, loaded, decided = a, true, events
		return events, err
	})
	res.ID = c.ID
	if err != nil {
		return res, err
	}
	var alerts []budgetAlert
	if len(decided) > 0 {
		for _, e := range decided {
			agg.Apply(e)
			if a, ok := b.alert(e); ok {
				alerts = append(alerts, a)
			}
		}
	} else {
		// Nothing new. The alerts of this period may have been decided by a report whose
		// notifications were not all recorded: those still missing are recorded now.
		if !loaded {
			if agg, err = Load(ctx, d, stream, b.newAgg); err != nil {
				return res, err
			}
			if b.org(agg) != RequestFrom(ctx).Actor.OrganisationID {
				return res, domain.Errorf(domain.CodeNotFound, "%s not found", b.what)
			}
		}
		if b.period(agg) != c.Period {
			return res, nil
		}
		if alerts, err = trailingAlerts(ctx, d, stream, c.Sub, b.alert); err != nil {
			return res, err
		}
	}
	period := b.period(agg)
	notes := make([]domain.NotificationRecorded, len(alerts))
	for i, a := range alerts {
		notes[i] = b.notification(agg, a, period)
	}
	return res, recordNotifications(ctx, d, notes, &res)
}

func apiKeyBudget(c RecordBudgetUsage, now time.Time) budgetReport[*domain.APIKey] {
	return budgetReport[*domain.APIKey]{
		prefix: domain.APIKeyPrefix, what: "api key " + c.ID, newAgg: newAPIKey,
		org:    func(k *domain.APIKey) string { return k.OrganisationID },
		decide: func(k *domain.APIKey) ([]domain.Event, error) { return k.UsageReached(c.Period, c.Usage, now) },
		period: func(k *domain.APIKey) string { return k.UsagePeriod() },
		alert: func(ev domain.Event) (budgetAlert, bool) {
			switch e := ev.(type) {
			case domain.APIKeyUsageThresholdReached:
				return budgetAlert{kind: domain.NotifyUsageThreshold, usage: e.Usage, limit: e.AlertThreshold, at: e.At}, true
			case domain.APIKeyExhausted:
				return budgetAlert{kind: domain.NotifyUsageExhausted, usage: e.Usage, limit: e.CreditLimit, at: e.At}, true
			}
			return budgetAlert{}, false
		},
		notification: func(k *domain.APIKey, a budgetAlert, period string) domain.NotificationRecorded {
			if k.UsageLimits != nil {
				a.limitType = k.UsageLimits.Type
			}
			return budgetNotification(a, k.OrganisationID, k.WorkspaceID, "api_key", k.ID, "API key "+strconv.Quote(k.Name),
				period, budgetRecipients(k.WorkspaceID, keyRecipients(k)...), map[string]string{"key": k.Masked})
		},
	}
}

func workspaceBudget(c RecordBudgetUsage, now time.Time) budgetReport[*domain.Workspace] {
	return budgetReport[*domain.Workspace]{
		prefix: domain.WorkspacePrefix, what: "workspace " + c.ID, newAgg: newWorkspace,
		org: func(w *domain.Workspace) string { return w.OrganisationID },
		decide: func(w *domain.Workspace) ([]domain.Event, error) {
			return w.UsageReached(c.Period, c.Sub, c.Usage, now)
		},
		period: func(w *domain.Workspace) string { return w.UsagePeriod() },
		alert: func(ev domain.Event) (budgetAlert, bool) {
			switch e := ev.(type) {
			case domain.WorkspaceUsageThresholdReached:
				return budgetAlert{kind: domain.NotifyUsageThreshold, sub: e.LimitType, limitType: e.LimitType, usage: e.Usage,
					limit: e.AlertThreshold, at: e.At}, true
			case domain.WorkspaceBudgetExhausted:
				return budgetAlert{kind: domain.NotifyUsageExhausted, sub: e.LimitType, limitType: e.LimitType, usage: e.CurrentUsage,
					limit: e.CreditLimit, at: e.At}, true
			}
			return budgetAlert{}, false
		},
		notification: func(w *domain.Workspace, a budgetAlert, period string) domain.NotificationRecorded {
			return budgetNotification(a, w.OrganisationID, w.ID, domain.WorkspacePrefix, w.ID,
				"Workspace "+strconv.Quote(w.Name)+" ("+a.limitType+")", period, budgetRecipients(w.ID), nil)
		},
	}
}

func providerBudget(c RecordBudgetUsage, now time.Time) budgetReport[*domain.Provider] {
	return budgetReport[*domain.Provider]{
		prefix: domain.ProviderPrefix, what: "provider " + c.ID, newAgg: newProvider,
		org:    func(p *domain.Provider) string { return p.OrganisationID },
		decide: func(p *domain.Provider) ([]domain.Event, error) { return p.UsageReached(c.Period, c.Usage, now) },
		period: func(p *domain.Provider) string { return p.UsagePeriod() },
		alert: func(ev domain.Event) (budgetAlert, bool) {
			switch e := ev.(type) {
			case domain.ProviderUsageThresholdReached:
				return budgetAlert{kind: domain.NotifyUsageThreshold, usage: e.Usage, limit: e.AlertThreshold, at: e.At}, true
			case domain.ProviderBudgetExhausted:
				return budgetAlert{kind: domain.NotifyUsageExhausted, usage: e.Usage, limit: e.CreditLimit, at: e.At}, true
			}
			return budgetAlert{}, false
		},
		notification: func(p *domain.Provider, a budgetAlert, period string) domain.NotificationRecorded {
			if p.UsageLimits != nil {
				a.limitType = p.UsageLimits.Type
			}
			return budgetNotification(a, p.OrganisationID, p.WorkspaceID, domain.ProviderPrefix, p.ID, "Provider @"+p.Slug,
				period, budgetRecipients(p.WorkspaceID), map[string]string{"slug": p.Slug})
		},
	}
}

func integrationWorkspaceBudget(c RecordBudgetUsage, now time.Time) budgetReport[*domain.Integration] {
	return budgetReport[*domain.Integration]{
		prefix: domain.IntegrationPrefix, what: "integration " + c.ID, newAgg: newIntegration,
		org: func(i *domain.Integration) string { return i.OrganisationID },
		decide: func(i *domain.Integration) ([]domain.Event, error) {
			return i.WorkspaceUsageReached(c.Sub, c.Period, c.Usage, now)
		},
		period: func(i *domain.Integration) string { return i.WorkspaceUsagePeriod(c.Sub) },
		alert: func(ev domain.Event) (budgetAlert, bool) {
			switch e := ev.(type) {
			case domain.IntegrationWorkspaceUsageThresholdReached:
				return budgetAlert{kind: domain.NotifyUsageThreshold, sub: e.WorkspaceID, limitType: e.LimitType, usage: e.Usage,
					limit: e.AlertThreshold, at: e.At}, true
			case domain.IntegrationWorkspaceBudgetExhausted:
				return budgetAlert{kind: domain.NotifyUsageExhausted, sub: e.WorkspaceID, limitType: e.LimitType, usage: e.Usage,
					limit: e.CreditLimit, at: e.At}, true
			}
			return budgetAlert{}, false
		},
		notification: func(i *domain.Integration, a budgetAlert, period string) domain.NotificationRecorded {
			return budgetNotification(a, i.OrganisationID, a.sub, domain.IntegrationPrefix, i.ID,
				"Integration "+strconv.Quote(i.Name)+" in workspace "+a.sub, period, budgetRecipients(a.sub),
				map[string]string{"integration_id": i.ID, "slug": i.Slug, "workspace_id": a.sub})
		},
	}
}

func policyBudget(c RecordBudgetUsage, now time.Time) budgetReport[*domain.UsageLimitPolicy] {
	return budgetReport[*domain.UsageLimitPolicy]{
		prefix: domain.UsageLimitPolicyPrefix, what: "usage limit policy " + c.ID, newAgg: newUsageLimitPolicy,
		org: func(p *domain.UsageLimitPolicy) string { return p.OrganisationID },
		decide: func(p *domain.UsageLimitPolicy) ([]domain.Event, error) {
			return p.UsageReached(c.Sub, c.Period, c.Usage, now)
		},
		period: func(p *domain.UsageLimitPolicy) string { return p.EntityPeriod(c.Sub) },
		alert:  policyAlert,
		notification: func(p *domain.UsageLimitPolicy, a budgetAlert, _ string) domain.NotificationRecorded {
			return policyNotification(p, a)
		},
	}
}
