package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Budgets: what a usage figure reported by the ledger decides, once per period, and what
// resets and raised limits do to an exhausted budget.

func fold[A Aggregate](agg A, events ...Event) A {
	for _, e := range events {
		agg.Apply(e)
	}
	return agg
}

func TestAPIKeyUsageReached(t *testing.T) {
	limited := keyCreated(func(e *APIKeyCreated) {
		e.UsageLimits = &UsageLimits{Type: UsageCost, CreditLimit: ptr(10.0), AlertThreshold: ptr(8.0)}
	})
	at := keyT0.Add(time.Hour)
	reached := func(period string, usage float64) func(*APIKey) ([]Event, error) {
		return func(k *APIKey) ([]Event, error) { return k.UsageReached(period, usage, at) }
	}
	threshold := APIKeyUsageThresholdReached{KeyID: apiKeyTestID, Usage: 8.5, AlertThreshold: 8, At: at}
	exhausted := APIKeyExhausted{KeyID: apiKeyTestID, Usage: 10, CreditLimit: 10, At: at}
	reset := APIKeyUsageReset{KeyID: apiKeyTestID, At: at}
	raised := APIKeyUpdated{KeyID: apiKeyTestID, UsageLimits: &UsageLimits{Type: UsageCost, CreditLimit: ptr(20.0), AlertThreshold: ptr(8.0)}, At: at}
	runScenarios(t, func() *APIKey { return &APIKey{} }, []scenario[*APIKey]{
		{name: "under the threshold", given: []Event{limited}, when: reached("0", 7.99), then: nil},
		{name: "the threshold is reached", given: []Event{limited}, when: reached("0", 8.5), then: []Event{threshold}},
		{name: "threshold and limit at once", given: []Event{limited}, when: reached("0", 10),
			then: []Event{APIKeyUsageThresholdReached{KeyID: apiKeyTestID, Usage: 10, AlertThreshold: 8, At: at}, exhausted}},
		{name: "the threshold alert once per period", given: []Event{limited, threshold}, when: reached("0", 9), then: nil},
		{name: "the limit after the threshold", given: []Event{limited, threshold}, when: reached("0", 10), then: []Event{exhausted}},
		{name: "exhausted already", given: []Event{limited, threshold, exhausted}, when: reached("0", 12), then: nil},
		{name: "a report of an earlier period", given: []Event{limited, reset}, when: reached("0", 10), then: nil},
		{name: "a report of a period not yet begun", given: []Event{limited}, when: reached("1", 10), then: nil},
		{name: "after a reset the alerts come again", given: []Event{limited, threshold, exhausted, reset}, when: reached("1", 8.5),
			then: []Event{threshold}},
		{name: "a raised limit: exhausted again at the new limit", given: []Event{limited, threshold, exhausted, raised},
			when: reached("0", 20), then: []Event{APIKeyExhausted{KeyID: apiKeyTestID, Usage: 20, CreditLimit: 20, At: at}}},
		{name: "without usage limits", given: []Event{keyCreated()}, when: reached("0", 1e9), then: nil},
		{name: "a deleted key", given: []Event{limited, APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}}, when: reached("0", 10), then: nil},
		{name: "an expired key", given: []Event{keyCreated(func(e *APIKeyCreated) {
			e.UsageLimits, e.ExpiresAt = limited.UsageLimits, ptr(keyT0.Add(time.Minute))
		})}, when: reached("0", 10), then: nil},
		{name: "an unknown key", when: reached("0", 10), then: nil},
		{name: "negative usage", given: []Event{limited}, when: reached("0", -1), wantCode: CodeInvalid, wantParam: "usage"},
	})

	k := fold(&APIKey{}, limited)
	assert.Equal(t, "0", k.UsagePeriod())
	fold(k, threshold, exhausted)
	assert.Equal(t, KeyExhausted, k.Status)
	assert.Equal(t, 10.0, k.CurrentUsage)
	fold(k, raised)
	assert.Equal(t, KeyActive, k.Status, "a limit raised above the usage it was exhausted at reactivates the key")
	fold(k, reset)
	assert.Equal(t, "1", k.UsagePeriod(), "a reset starts a new period")
	assert.False(t, k.ThresholdAlertSent || k.ExhaustedAlertSent)
}

func TestAPIKeyPeriodicReset(t *testing.T) {
	due := keyT0.AddDate(0, 0, 7)
	weekly := keyCreated(func(e *APIKeyCreated) {
		e.UsageLimits = &UsageLimits{Type: UsageCost, CreditLimit: ptr(10.0), PeriodicReset: ptr("weekly"), NextUsageResetAt: &due}
	})
	resetAt := func(now time.Time) func(*APIKey) ([]Event, error) {
		return func(k *APIKey) ([]Event, error) { return k.ResetUsageIfDue(now) }
	}
	runScenarios(t, func() *APIKey { return &APIKey{} }, []scenario[*APIKey]{
		{name: "before it is due", given: []Event{weekly}, when: resetAt(due.Add(-time.Second)), then: nil},
		{name: "due: the next is a week later", given: []Event{weekly}, when: resetAt(due),
			then: []Event{APIKeyUsageReset{KeyID: apiKeyTestID, Scheduled: true, NextUsageResetAt: ptr(due.AddDate(0, 0, 7)), At: due}}},
		{name: "missed periods are skipped", given: []Event{weekly}, when: resetAt(due.AddDate(0, 0, 15)),
			then: []Event{APIKeyUsageReset{KeyID: apiKeyTestID, Scheduled: true, NextUsageResetAt: ptr(due.AddDate(0, 0, 21)), At: due.AddDate(0, 0, 15)}}},
		{name: "done already", given: []Event{weekly, APIKeyUsageReset{KeyID: apiKeyTestID, Scheduled: true,
			NextUsageResetAt: ptr(due.AddDate(0, 0, 7)), At: due}}, when: resetAt(due.Add(time.Minute)), then: nil},
		{name: "without a schedule", given: []Event{keyCreated()}, when: resetAt(due), then: nil},
		{name: "a deleted key", given: []Event{weekly, APIKeyDeleted{KeyID: apiKeyTestID, At: keyT0}}, when: resetAt(due), then: nil},
	})

	k := fold(&APIKey{}, weekly, APIKeyExhausted{KeyID: apiKeyTestID, Usage: 10, At: keyT0})
	assert.True(t, k.UsageResetDue(due))
	assert.False(t, k.UsageResetDue(due.Add(-time.Second)))
	shared := k.UsageLimits
	evs, err := k.ResetUsageIfDue(due)
	require.NoError(t, err)
	fold(k, evs...)
	assert.Equal(t, KeyActive, k.Status)
	assert.Equal(t, "1", k.UsagePeriod())
	assert.Equal(t, due.AddDate(0, 0, 7), *k.UsageLimits.NextUsageResetAt)
	assert.Equal(t, due, *shared.NextUsageResetAt, "the limits a read model handed out are not changed")
	fold(k, APIKeyUsageReset{KeyID: apiKeyTestID, At: due.Add(time.Hour)})
	assert.Equal(t, due.AddDate(0, 0, 7), *k.UsageLimits.NextUsageResetAt, "a manual reset keeps the schedule")
	assert.Equal(t, "2", k.UsagePeriod())
}

func TestWorkspaceUsageReached(t *testing.T) {
	limits := []UsageLimits{{Type: UsageCost, CreditLimit: wsPtr(100.0), AlertThreshold: wsPtr(80.0)},
		{Type: UsageTokens, CreditLimit: wsPtr(1000.0), AlertThreshold: wsPtr(500.0)}}
	budget := wsCreated(func(e *WorkspaceCreated) { e.UsageLimits = limits })
	reached := func(period, typ string, usage float64) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.UsageReached(period, typ, usage, wsLater) }
	}
	costAlert := WorkspaceUsageThresholdReached{WorkspaceID: testWorkspaceID, LimitType: UsageCost, Usage: 85, AlertThreshold: 80, At: wsLater}
	costExhausted := WorkspaceBudgetExhausted{WorkspaceID: testWorkspaceID, LimitType: UsageCost, CreditLimit: 100, CurrentUsage: 100, At: wsLater}
	reset := WorkspaceUsageReset{WorkspaceID: testWorkspaceID, At: wsLater}
	runDecisions(t, []decision{
		{name: "under the threshold", given: []Event{budget}, when: reached("0", UsageCost, 79), then: nil},
		{name: "the cost threshold", given: []Event{budget}, when: reached("0", UsageCost, 85), then: []Event{costAlert}},
		{name: "once per period and type", given: []Event{budget, costAlert}, when: reached("0", UsageCost, 90), then: nil},
		{name: "the other type alerts on its own", given: []Event{budget, costAlert}, when: reached("0", UsageTokens, 600),
			then: []Event{WorkspaceUsageThresholdReached{WorkspaceID: testWorkspaceID, LimitType: UsageTokens, Usage: 600, AlertThreshold: 500, At: wsLater}}},
		{name: "the credit limit", given: []Event{budget, costAlert}, when: reached("0", UsageCost, 100), then: []Event{costExhausted}},
		{name: "exhausted already", given: []Event{budget, costAlert, costExhausted}, when: reached("0", UsageCost, 120), then: nil},
		{name: "a report of an earlier period", given: []Event{budget, reset}, when: reached("0", UsageCost, 100), then: nil},
		{name: "after a reset the alert comes again", given: []Event{budget, costAlert, reset}, when: reached("1", UsageCost, 85),
			then: []Event{costAlert}},
		{name: "no limit of that type", given: []Event{wsCreated()}, when: reached("0", UsageCost, 100), then: nil},
		{name: "an archived workspace", given: []Event{budget, WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}},
			when: reached("0", UsageCost, 100), then: nil},
		{name: "a missing workspace", when: reached("0", UsageCost, 100), then: nil},
		{name: "an unknown type", given: []Event{budget}, when: reached("0", "euros", 1), code: CodeInvalid, param: "limit_type"},
		{name: "usage not a number", given: []Event{budget}, when: reached("0", UsageCost, -0.5), code: CodeInvalid, param: "usage"},
	})

	w := givenWorkspace(budget, costAlert)
	assert.Equal(t, []string{UsageCost}, w.ThresholdAlertsSent)
	assert.Equal(t, "0", w.UsagePeriod())
	w.Apply(reset)
	assert.Empty(t, w.ThresholdAlertsSent)
	assert.Equal(t, "1", w.UsagePeriod())
}

func TestWorkspaceLimitsResetThresholdAlerts(t *testing.T) {
	limits := func(credit, threshold float64) []UsageLimits {
		return []UsageLimits{{Type: UsageCost, CreditLimit: wsPtr(credit), AlertThreshold: wsPtr(threshold)}}
	}
	budget := wsCreated(func(e *WorkspaceCreated) { e.UsageLimits = limits(100, 80) })
	alerted := WorkspaceUsageThresholdReached{WorkspaceID: testWorkspaceID, LimitType: UsageCost, Usage: 85, AlertThreshold: 80, At: wsT0}
	exhausted := WorkspaceBudgetExhausted{WorkspaceID: testWorkspaceID, LimitType: UsageCost, CreditLimit: 100, CurrentUsage: 100, At: wsT0}
	update := func(l []UsageLimits) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.Update(UpdateWorkspace{UsageLimits: &l}, wsLater) }
	}
	updated := func(l []UsageLimits) WorkspaceUpdated {
		return WorkspaceUpdated{WorkspaceID: testWorkspaceID, UsageLimits: &l, At: wsLater}
	}
	alertReset := WorkspaceUsageAlertsReset{WorkspaceID: testWorkspaceID, LimitType: UsageCost, At: wsLater}
	runDecisions(t, []decision{
		{name: "credit raised", given: []Event{budget, alerted}, when: update(limits(150, 80)),
			then: []Event{updated(limits(150, 80)), alertReset}},
		{name: "threshold raised", given: []Event{budget, alerted}, when: update(limits(100, 90)),
			then: []Event{updated(limits(100, 90)), alertReset}},
		{name: "threshold removed", given: []Event{budget, alerted}, when: update([]UsageLimits{costLimit(100)}),
			then: []Event{updated([]UsageLimits{costLimit(100)}), alertReset}},
		{name: "limit removed", given: []Event{budget, alerted}, when: update([]UsageLimits{}),
			then: []Event{updated([]UsageLimits{}), alertReset}},
		{name: "threshold lowered: nothing is reset", given: []Event{budget, alerted}, when: update(limits(100, 70)),
			then: []Event{updated(limits(100, 70))}},
		{name: "no alert sent: nothing to reset", given: []Event{budget}, when: update(limits(150, 90)),
			then: []Event{updated(limits(150, 90))}},
		{name: "raised while exhausted: reactivated and reset", given: []Event{budget, alerted, exhausted}, when: update(limits(150, 80)),
			then: []Event{updated(limits(150, 80)), WorkspaceBudgetReactivated{WorkspaceID: testWorkspaceID, Reason: ReactivatedCreditRaised, At: wsLater}, alertReset}},
	})
	w := givenWorkspace(budget, alerted, alertReset)
	assert.Empty(t, w.ThresholdAlertsSent)
}

func TestWorkspaceResetUsageIfDue(t *testing.T) {
	due := wsT0.AddDate(0, 0, 7)
	weekly := wsCreated(func(e *WorkspaceCreated) { e.PeriodicReset, e.NextUsageResetAt = wsPtr("weekly"), &due })
	resetAt := func(now time.Time) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.ResetUsageIfDue(now) }
	}
	runDecisions(t, []decision{
		{name: "before it is due", given: []Event{weekly}, when: resetAt(due.Add(-time.Second)), then: nil},
		{name: "due", given: []Event{weekly}, when: resetAt(due),
			then: []Event{WorkspaceUsageReset{WorkspaceID: testWorkspaceID, NextUsageResetAt: wsPtr(due.AddDate(0, 0, 7)), At: due}}},
		{name: "without a schedule", given: []Event{wsCreated()}, when: resetAt(due), then: nil},
		{name: "archived", given: []Event{weekly, WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}}, when: resetAt(due), then: nil},
	})
}

func TestProviderUsageReached(t *testing.T) {
	limited := ProviderCreated{ProviderID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
		IntegrationID: "i-1", AIProviderID: "openai", UsageLimits: &UsageLimits{Type: UsageCost, CreditLimit: ptr(10.0), AlertThreshold: ptr(8.0)}, At: t0}
	at := t0.Add(time.Hour)
	reached := func(period string, usage float64) func(*Provider) ([]Event, error) {
		return func(p *Provider) ([]Event, error) { return p.UsageReached(period, usage, at) }
	}
	threshold := ProviderUsageThresholdReached{ProviderID: "p-1", Usage: 8.5, AlertThreshold: 8, At: at}
	exhausted := ProviderBudgetExhausted{ProviderID: "p-1", Usage: 10, CreditLimit: 10, At: at}
	reset := ProviderUsageReset{ProviderID: "p-1", At: at}
	runScenarios(t, func() *Provider { return &Provider{} }, []scenario[*Provider]{
		{name: "under the threshold", given: []Event{limited}, when: reached("0", 7), then: nil},
		{name: "the threshold", given: []Event{limited}, when: reached("0", 8.5), then: []Event{threshold}},
		{name: "once per period", given: []Event{limited, threshold}, when: reached("0", 9), then: nil},
		{name: "the credit limit", given: []Event{limited, threshold}, when: reached("0", 10), then: []Event{exhausted}},
		{name: "both at once", given: []Event{limited}, when: reached("0", 10),
			then: []Event{ProviderUsageThresholdReached{ProviderID: "p-1", Usage: 10, AlertThreshold: 8, At: at}, exhausted}},
		{name: "exhausted already", given: []Event{limited, threshold, exhausted}, when: reached("0", 11), then: nil},
		{name: "a report of an earlier period", given: []Event{limited, reset}, when: reached("0", 10), then: nil},
		{name: "after a reset", given: []Event{limited, threshold, exhausted, reset}, when: reached("1", 8.5), then: []Event{threshold}},
		{name: "archived", given: []Event{limited, ProviderArchived{ProviderID: "p-1", At: t0}}, when: reached("0", 10), then: nil},
		{name: "expired", given: []Event{func() Event { e := limited; e.ExpiresAt = ptr(t0.Add(time.Minute)); return e }()},
			when: reached("0", 10), then: nil},
		{name: "without limits", given: []Event{func() Event { e := limited; e.UsageLimits = nil; return e }()}, when: reached("0", 10), then: nil},
		{name: "usage not a number", given: []Event{limited}, when: reached("0", -1), wantCode: CodeInvalid, wantParam: "usage"},
	})

	p := fold(&Provider{}, limited, threshold, exhausted)
	assert.Equal(t, ProviderExhausted, p.StatusAt(at))
	assert.True(t, p.BudgetExhausted)
	fold(p, reset)
	assert.Equal(t, StatusActive, p.StatusAt(at), "a reset clears the exhaustion")
	assert.Equal(t, "1", p.UsagePeriod())
	assert.False(t, p.ThresholdAlertSent || p.ExhaustedAlertSent)
}

func TestProviderLimitsReactivateAndResetAlerts(t *testing.T) {
	limited := ProviderCreated{ProviderID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
		IntegrationID: "i-1", AIProviderID: "openai", UsageLimits: &UsageLimits{Type: UsageCost, CreditLimit: ptr(10.0), AlertThreshold: ptr(8.0)}, At: t0}
	threshold := ProviderUsageThresholdReached{ProviderID: "p-1", Usage: 8.5, AlertThreshold: 8, At: t0}
	exhausted := ProviderBudgetExhausted{ProviderID: "p-1", Usage: 12, CreditLimit: 10, At: t0}
	later := t0.Add(time.Hour)
	limits := func(credit float64, threshold *float64) *UsageLimits {
		return &UsageLimits{Type: UsageCost, CreditLimit: &credit, AlertThreshold: threshold}
	}
	update := func(c UpdateProvider) func(*Provider) ([]Event, error) {
		return func(p *Provider) ([]Event, error) { return p.Update(c, fakeSeal, later) }
	}
	runScenarios(t, func() *Provider { return &Provider{} }, []scenario[*Provider]{
		{name: "raised above the usage: reactivated, both alerts reset", given: []Event{limited, threshold, exhausted},
			when: update(UpdateProvider{UsageLimits: limits(20, ptr(8.0))}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(20, ptr(8.0)), At: later},
				ProviderBudgetReactivated{ProviderID: "p-1", Reason: ReactivatedCreditRaised, At: later},
				ProviderUsageAlertsReset{ProviderID: "p-1", Threshold: true, Exhausted: true, At: later}}},
		{name: "raised, still under the usage: alerts reset, still exhausted", given: []Event{limited, threshold, exhausted},
			when: update(UpdateProvider{UsageLimits: limits(11, ptr(8.0))}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(11, ptr(8.0)), At: later},
				ProviderUsageAlertsReset{ProviderID: "p-1", Threshold: true, Exhausted: true, At: later}}},
		{name: "limits removed", given: []Event{limited, threshold, exhausted}, when: update(UpdateProvider{ClearUsageLimits: true}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", ClearUsageLimits: true, At: later},
				ProviderBudgetReactivated{ProviderID: "p-1", Reason: ReactivatedLimitRemoved, At: later},
				ProviderUsageAlertsReset{ProviderID: "p-1", Threshold: true, Exhausted: true, At: later}}},
		{name: "threshold raised", given: []Event{limited, threshold}, when: update(UpdateProvider{UsageLimits: limits(10, ptr(9.0))}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(10, ptr(9.0)), At: later},
				ProviderUsageAlertsReset{ProviderID: "p-1", Threshold: true, At: later}}},
		{name: "threshold removed", given: []Event{limited, threshold}, when: update(UpdateProvider{UsageLimits: limits(10, nil)}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(10, nil), At: later},
				ProviderUsageAlertsReset{ProviderID: "p-1", Threshold: true, At: later}}},
		{name: "threshold lowered: nothing", given: []Event{limited, threshold}, when: update(UpdateProvider{UsageLimits: limits(10, ptr(7.0))}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(10, ptr(7.0)), At: later}}},
		{name: "lowered while exhausted: stays so", given: []Event{limited, threshold, exhausted}, when: update(UpdateProvider{UsageLimits: limits(9, nil)}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(9, nil), At: later},
				ProviderUsageAlertsReset{ProviderID: "p-1", Threshold: true, At: later}}},
		{name: "raised with a reset: the reset clears everything", given: []Event{limited, threshold, exhausted},
			when: update(UpdateProvider{UsageLimits: limits(20, nil), ResetUsage: true}),
			then: []Event{ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(20, nil), At: later}, ProviderUsageReset{ProviderID: "p-1", At: later}}},
	})

	p := fold(&Provider{}, limited, threshold, exhausted)
	fold(p, ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(11, ptr(8.0)), At: later})
	assert.Equal(t, ProviderExhausted, p.StatusAt(later), "a limit still under the usage keeps it exhausted")
	fold(p, ProviderUpdated{ProviderID: "p-1", UsageLimits: limits(20, ptr(8.0)), At: later},
		ProviderBudgetReactivated{ProviderID: "p-1", Reason: ReactivatedCreditRaised, At: later})
	assert.Equal(t, StatusActive, p.StatusAt(later))
	assert.Equal(t, "0", p.UsagePeriod(), "a raised limit does not start a new period")
}

func TestProviderPeriodicReset(t *testing.T) {
	due := t0.AddDate(0, 0, 30)
	scheduled := ProviderCreated{ProviderID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "main", Name: "Main",
		IntegrationID: "i-1", AIProviderID: "openai", At: t0,
		UsageLimits: &UsageLimits{Type: UsageTokens, CreditLimit: ptr(1000.0), PeriodicResetDays: ptr(30), NextUsageResetAt: &due}}
	resetAt := func(now time.Time) func(*Provider) ([]Event, error) {
		return func(p *Provider) ([]Event, error) { return p.ResetUsageIfDue(now) }
	}
	runScenarios(t, func() *Provider { return &Provider{} }, []scenario[*Provider]{
		{name: "before it is due", given: []Event{scheduled}, when: resetAt(due.Add(-time.Second)), then: nil},
		{name: "due", given: []Event{scheduled}, when: resetAt(due),
			then: []Event{ProviderUsageReset{ProviderID: "p-1", Scheduled: true, NextUsageResetAt: ptr(due.AddDate(0, 0, 30)), At: due}}},
		{name: "archived", given: []Event{scheduled, ProviderArchived{ProviderID: "p-1", At: t0}}, when: resetAt(due), then: nil},
	})
	p := fold(&Provider{}, scheduled, ProviderBudgetExhausted{ProviderID: "p-1", Usage: 1000, CreditLimit: 1000, At: t0})
	assert.True(t, p.UsageResetDue(due))
	evs, err := p.ResetUsageIfDue(due)
	require.NoError(t, err)
	fold(p, evs...)
	assert.False(t, p.UsageResetDue(due))
	assert.Equal(t, StatusActive, p.StatusAt(due))
	assert.Equal(t, due.AddDate(0, 0, 30), *p.UsageLimits.NextUsageResetAt)
}

func TestIntegrationWorkspaceUsage(t *testing.T) {
	created := IntegrationCreated{IntegrationID: "i-1", OrganisationID: "org", Slug: "prod", Name: "Prod", AIProviderID: "openai", At: t0}
	limit := func(credit float64, threshold *float64) []UsageLimits {
		return []UsageLimits{{Type: UsageCost, CreditLimit: &credit, AlertThreshold: threshold}}
	}
	access := IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: t0,
		Workspaces: []IntegrationWorkspace{{ID: "ws-1", Enabled: true, UsageLimits: limit(10, ptr(8.0))}, {ID: "ws-2", Enabled: false}}}
	at := t0.Add(time.Hour)
	reached := func(ws, period string, usage float64) func(*Integration) ([]Event, error) {
		return func(i *Integration) ([]Event, error) { return i.WorkspaceUsageReached(ws, period, usage, at) }
	}
	threshold := IntegrationWorkspaceUsageThresholdReached{IntegrationID: "i-1", WorkspaceID: "ws-1", LimitType: UsageCost, Usage: 8.5, AlertThreshold: 8, At: at}
	exhausted := IntegrationWorkspaceBudgetExhausted{IntegrationID: "i-1", WorkspaceID: "ws-1", LimitType: UsageCost, Usage: 12, CreditLimit: 10, At: at}
	reset := IntegrationWorkspaceUsageReset{IntegrationID: "i-1", WorkspaceID: "ws-1", At: at}
	entries := func(ws ...IntegrationWorkspace) []IntegrationWorkspace { return ws }
	update := func(resetUsage []string, ws ...IntegrationWorkspace) func(*Integration) ([]Event, error) {
		return func(i *Integration) ([]Event, error) { return i.UpdateWorkspacesResetting(ws, resetUsage, at) }
	}
	runScenarios(t, func() *Integration { return &Integration{} }, []scenario[*Integration]{
		{name: "under the threshold", given: []Event{created, access}, when: reached("ws-1", "0", 7), then: nil},
		{name: "the threshold", given: []Event{created, access}, when: reached("ws-1", "0", 8.5), then: []Event{threshold}},
		{name: "once per period", given: []Event{created, access, threshold}, when: reached("ws-1", "0", 9), then: nil},
		{name: "the credit limit", given: []Event{created, access, threshold}, when: reached("ws-1", "0", 12), then: []Event{exhausted}},
		{name: "exhausted already", given: []Event{created, access, threshold, exhausted}, when: reached("ws-1", "0", 13), then: nil},
		{name: "a report of an earlier period", given: []Event{created, access, reset}, when: reached("ws-1", "0", 12), then: nil},
		{name: "after a reset", given: []Event{created, access, threshold, exhausted, reset}, when: reached("ws-1", "1", 8.5),
			then: []Event{threshold}},
		{name: "without limits", given: []Event{created, access}, when: reached("ws-2", "0", 100), then: nil},
		{name: "a workspace without access", given: []Event{created, access}, when: reached("ws-9", "0", 100), then: nil},
		{name: "access disabled", given: []Event{created, access, IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: t0,
			Workspaces: []IntegrationWorkspace{{ID: "ws-1", UsageLimits: limit(10, ptr(8.0))}}}}, when: reached("ws-1", "0", 12), then: nil},
		{name: "a deleted integration", given: []Event{created, access, IntegrationArchived{IntegrationID: "i-1", At: t0}},
			when: reached("ws-1", "0", 12), then: nil},
		{name: "usage not a number", given: []Event{created, access}, when: reached("ws-1", "0", -2), wantCode: CodeInvalid, wantParam: "usage"},

		{name: "raised above the usage: reactivated, both alerts reset", given: []Event{created, access, threshold, exhausted},
			when: update(nil, IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(20, ptr(8.0))}),
			then: []Event{IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: at,
				Workspaces: entries(IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(20, ptr(8.0))})},
				IntegrationWorkspaceBudgetReactivated{IntegrationID: "i-1", WorkspaceID: "ws-1", Reason: ReactivatedCreditRaised, At: at},
				IntegrationWorkspaceUsageAlertsReset{IntegrationID: "i-1", WorkspaceID: "ws-1", Threshold: true, Exhausted: true, At: at}}},
		{name: "raised under the usage: alerts reset only", given: []Event{created, access, threshold, exhausted},
			when: update(nil, IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(11, ptr(8.0))}),
			then: []Event{IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: at,
				Workspaces: entries(IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(11, ptr(8.0))})},
				IntegrationWorkspaceUsageAlertsReset{IntegrationID: "i-1", WorkspaceID: "ws-1", Threshold: true, Exhausted: true, At: at}}},
		{name: "threshold raised", given: []Event{created, access, threshold},
			when: update(nil, IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(10, ptr(9.0))}),
			then: []Event{IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: at,
				Workspaces: entries(IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(10, ptr(9.0))})},
				IntegrationWorkspaceUsageAlertsReset{IntegrationID: "i-1", WorkspaceID: "ws-1", Threshold: true, At: at}}},
		{name: "limit removed", given: []Event{created, access, threshold, exhausted},
			when: update(nil, IntegrationWorkspace{ID: "ws-1", Enabled: true}),
			then: []Event{IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: at, Workspaces: entries(IntegrationWorkspace{ID: "ws-1", Enabled: true})},
				IntegrationWorkspaceBudgetReactivated{IntegrationID: "i-1", WorkspaceID: "ws-1", Reason: ReactivatedLimitRemoved, At: at},
				IntegrationWorkspaceUsageAlertsReset{IntegrationID: "i-1", WorkspaceID: "ws-1", Threshold: true, Exhausted: true, At: at}}},
		{name: "reset_usage: the reset alone clears the budget", given: []Event{created, access, threshold, exhausted},
			when: update([]string{"ws-1"}, IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(20, ptr(8.0))}),
			then: []Event{IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: at,
				Workspaces: entries(IntegrationWorkspace{ID: "ws-1", Enabled: true, UsageLimits: limit(20, ptr(8.0))})}, reset}},
		{name: "reset_usage of a workspace the update does not name", given: []Event{created, access},
			when: update([]string{"ws-2"}, IntegrationWorkspace{ID: "ws-1", Enabled: true}), wantCode: CodeInvalid, wantParam: "workspaces"},
		{name: "an update's entries carry no budget state", given: []Event{created, access, threshold, exhausted},
			when: update(nil, IntegrationWorkspace{ID: "ws-2", Enabled: true,
				IntegrationWorkspaceBudget: IntegrationWorkspaceBudget{BudgetExhausted: true, UsageResets: 9}}),
			then: []Event{IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: at, Workspaces: entries(IntegrationWorkspace{ID: "ws-2", Enabled: true})}}},
	})

	i := fold(&Integration{}, created, access, threshold, exhausted)
	shared := i.Workspaces
	assert.True(t, i.Workspaces["ws-1"].BudgetExhausted)
	assert.Equal(t, 12.0, i.Workspaces["ws-1"].CurrentUsage)
	fold(i, IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: at,
		Workspaces: []IntegrationWorkspace{{ID: "ws-1", Enabled: true, UsageLimits: limit(11, ptr(8.0))}}})
	assert.True(t, i.Workspaces["ws-1"].BudgetExhausted, "an update keeps the budget state")
	assert.Equal(t, limit(11, ptr(8.0)), i.Workspaces["ws-1"].UsageLimits)
	fold(i, reset)
	assert.False(t, i.Workspaces["ws-1"].BudgetExhausted)
	assert.Equal(t, "1", i.WorkspaceUsagePeriod("ws-1"))
	assert.Equal(t, "0", i.WorkspaceUsagePeriod("ws-2"))
	assert.Equal(t, "0", i.WorkspaceUsagePeriod("ws-9"))
	assert.Equal(t, &at, i.Workspaces["ws-1"].LastResetAt)
	assert.True(t, shared["ws-1"].BudgetExhausted, "the map a read model handed out is not changed")
}

func TestIntegrationWorkspacePeriodicReset(t *testing.T) {
	created := IntegrationCreated{IntegrationID: "i-1", OrganisationID: "org", Slug: "prod", Name: "Prod", AIProviderID: "openai", At: t0}
	weekly := []UsageLimits{{Type: UsageCost, CreditLimit: ptr(10.0), PeriodicReset: ptr("weekly")}}
	first := t0.AddDate(0, 0, 7)
	scheduled := []UsageLimits{{Type: UsageCost, CreditLimit: ptr(10.0), PeriodicReset: ptr("weekly"), NextUsageResetAt: &first}}
	access := IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: t0, Workspaces: []IntegrationWorkspace{{ID: "ws-1", Enabled: true, UsageLimits: scheduled}}}

	i := fold(&Integration{}, created)
	evs, err := i.UpdateWorkspaces([]IntegrationWorkspace{{ID: "ws-1", Enabled: true, UsageLimits: weekly}}, t0)
	require.NoError(t, err)
	assert.Equal(t, []Event{access}, evs, "a periodic reset without a next reset starts its first period now")
	assert.Nil(t, weekly[0].NextUsageResetAt, "the caller's limits are not changed")
	fold(i, evs...)
	evs, err = i.UpdateWorkspaces([]IntegrationWorkspace{{ID: "ws-1", Enabled: true, UsageLimits: weekly}}, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, scheduled, evs[0].(IntegrationWorkspacesUpdated).Workspaces[0].UsageLimits, "an unchanged schedule keeps its next reset")

	resetAt := func(ws string, now time.Time) func(*Integration) ([]Event, error) {
		return func(i *Integration) ([]Event, error) { return i.ResetWorkspaceUsageIfDue(ws, now) }
	}
	runScenarios(t, func() *Integration { return &Integration{} }, []scenario[*Integration]{
		{name: "before it is due", given: []Event{created, access}, when: resetAt("ws-1", first.Add(-time.Second)), then: nil},
		{name: "due", given: []Event{created, access}, when: resetAt("ws-1", first),
			then: []Event{IntegrationWorkspaceUsageReset{IntegrationID: "i-1", WorkspaceID: "ws-1", Scheduled: true,
				NextUsageResetAt: ptr(first.AddDate(0, 0, 7)), At: first}}},
		{name: "a workspace without access", given: []Event{created, access}, when: resetAt("ws-2", first), then: nil},
		{name: "a deleted integration", given: []Event{created, access, IntegrationArchived{IntegrationID: "i-1", At: t0}},
			when: resetAt("ws-1", first), then: nil},
	})

	i = fold(&Integration{}, created, access)
	assert.Equal(t, []string{"ws-1"}, i.WorkspaceResetsDue(first))
	assert.Empty(t, i.WorkspaceResetsDue(first.Add(-time.Second)))
	evs, err = i.ResetWorkspaceUsageIfDue("ws-1", first)
	require.NoError(t, err)
	fold(i, evs...)
	assert.Empty(t, i.WorkspaceResetsDue(first))
	assert.Equal(t, first.AddDate(0, 0, 7), *i.Workspaces["ws-1"].UsageLimits[0].NextUsageResetAt)
	assert.Equal(t, first, *access.Workspaces[0].UsageLimits[0].NextUsageResetAt, "the event folded is not changed")
}

func TestUsageLimitPolicyUsageReached(t *testing.T) {
	reached := func(key, period string, usage float64) func(*UsageLimitPolicy) ([]Event, error) {
		return func(p *UsageLimitPolicy) ([]Event, error) { return p.UsageReached(key, period, usage, ulpT1) }
	}
	threshold := ulpThreshold(ulpKeyA, 85, 80)
	exhausted := ulpExhausted(ulpKeyA, 100, 100)
	entityReset := UsageLimitPolicyEntityReset{PolicyID: ulpID, ValueKey: ulpKeyA, At: ulpT1}
	periodReset := UsageLimitPolicyPeriodReset{PolicyID: ulpID, At: ulpT1}
	runULP(t, []ulpCase{
		{name: "a new entity under the threshold", given: []Event{ulpCreated()}, when: reached(ulpKeyA, "0.0", 50), then: nil},
		{name: "a new entity at the threshold", given: []Event{ulpCreated()}, when: reached(ulpKeyA, "0.0", 85), then: []Event{threshold}},
		{name: "once per period", given: []Event{ulpCreated(), threshold}, when: reached(ulpKeyA, "0.0", 90), then: nil},
		{name: "the credit limit", given: []Event{ulpCreated(), threshold}, when: reached(ulpKeyA, "0.0", 100), then: []Event{exhausted}},
		{name: "exhausted already", given: []Event{ulpCreated(), threshold, exhausted}, when: reached(ulpKeyA, "0.0", 120), then: nil},
		{name: "another entity alerts on its own", given: []Event{ulpCreated(), threshold}, when: reached(ulpKeyB, "0.0", 85),
			then: []Event{ulpThreshold(ulpKeyB, 85, 80)}},
		{name: "a report from before the entity's reset", given: []Event{ulpCreated(), threshold, entityReset},
			when: reached(ulpKeyA, "0.0", 100), then: nil},
		{name: "after the entity's reset", given: []Event{ulpCreated(), threshold, entityReset}, when: reached(ulpKeyA, "0.1", 85),
			then: []Event{threshold}},
		{name: "a report from before the period's reset", given: []Event{ulpCreated(), threshold, periodReset},
			when: reached(ulpKeyA, "0.0", 100), then: nil},
		{name: "after the period's reset", given: []Event{ulpCreated(), threshold, periodReset}, when: reached(ulpKeyA, "1.0", 85),
			then: []Event{threshold}},
		{name: "an archived policy", given: []Event{ulpCreated(), UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT0}},
			when: reached(ulpKeyA, "0.0", 100), then: nil},
		{name: "no value key", given: []Event{ulpCreated()}, when: reached(" ", "0.0", 100), code: CodeInvalid, param: "value_key", wantIn: "required"},
		{name: "usage not a number", given: []Event{ulpCreated()}, when: reached(ulpKeyA, "0.0", -1), code: CodeInvalid, param: "usage"},
	})

	p := fold(&UsageLimitPolicy{}, ulpCreated(), threshold)
	assert.Equal(t, 85.0, p.Entities[ulpKeyA].CurrentUsage, "an alert records its usage as the entity's")
	assert.Equal(t, UsageEntityID(ulpID, ulpKeyA), p.Entities[ulpKeyA].ID)
	fold(p, exhausted)
	assert.Equal(t, UsageEntityExhausted, p.Entities[ulpKeyA].Status)
	assert.Equal(t, 100.0, p.Entities[ulpKeyA].CurrentUsage)
	fold(p, entityReset, periodReset, entityReset)
	assert.Equal(t, "1.2", p.EntityPeriod(ulpKeyA))
	assert.Equal(t, "1.0", p.EntityPeriod(ulpKeyB))

	// Old histories: usage recorded, then alerts at the same figure, fold as before.
	old := fold(&UsageLimitPolicy{}, ulpCreated(), ulpUsed(ulpKeyA, 85), ulpThreshold(ulpKeyA, 85, 80))
	assert.Equal(t, 85.0, old.Entities[ulpKeyA].CurrentUsage)
}

func TestResetEntityByValueKey(t *testing.T) {
	reset := func(key string) func(*UsageLimitPolicy) ([]Event, error) {
		return func(p *UsageLimitPolicy) ([]Event, error) { return p.ResetEntityByValueKey(key, ulpT1) }
	}
	runULP(t, []ulpCase{
		{name: "an entity the policy has not seen", given: []Event{ulpCreated()}, when: reset(ulpKeyB),
			then: []Event{UsageLimitPolicyEntityReset{PolicyID: ulpID, ValueKey: ulpKeyB, At: ulpT1}}},
		{name: "a known entity", given: []Event{ulpCreated(), ulpThreshold(ulpKeyA, 85, 80)}, when: reset(ulpKeyA),
			then: []Event{UsageLimitPolicyEntityReset{PolicyID: ulpID, ValueKey: ulpKeyA, At: ulpT1}}},
		{name: "no value key", given: []Event{ulpCreated()}, when: reset(""), code: CodeInvalid, param: "value_key", wantIn: "required"},
		{name: "an archived policy", given: []Event{ulpCreated(), UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT0}},
			when: reset(ulpKeyA), code: CodeNotFound},
	})
	p := fold(&UsageLimitPolicy{}, ulpCreated(), UsageLimitPolicyEntityReset{PolicyID: ulpID, ValueKey: ulpKeyB, At: ulpT1})
	require.Contains(t, p.Entities, ulpKeyB)
	assert.Equal(t, UsageEntityActive, p.Entities[ulpKeyB].Status)
	assert.Zero(t, p.Entities[ulpKeyB].CurrentUsage)
	assert.Equal(t, "0.1", p.EntityPeriod(ulpKeyB))
}

// Usage summed from charges reaches a limit as the ledger says it does: ten charges of 0.1 are
// 0.9999999999999999, which the ledger reports (once) as reaching 1; the alert is due.
func TestUsageReachesALimitDespiteRounding(t *testing.T) {
	sum := 0.0
	for range 10 {
		sum += 0.1
	}
	require.Less(t, sum, 1.0)
	one, two := 1.0, 2.0
	threshold, exhaust := budgetAlertsDue(&UsageLimits{AlertThreshold: &one, CreditLimit: &two}, false, false, sum)
	assert.True(t, threshold)
	assert.False(t, exhaust)
	_, exhaust = budgetAlertsDue(&UsageLimits{CreditLimit: &one}, false, false, 0.99)
	assert.False(t, exhaust, "a real shortfall is not rounding")
}
