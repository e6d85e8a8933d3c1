package commands

import (
	"context"
	"errors"
	"time"

	"github.com/causeway/causeway/domain"
)

// DueResets is what the reset worker reads: the usage-limit policies and workspaces whose
// usage period has ended.
type DueResets interface {
	UsageResetsDue(ctx context.Context, now time.Time) (policies []domain.UsageLimitPolicy, workspaces []domain.Workspace, err error)
}

// DueBudgetResets is what the reset worker also reads when its read model offers it: the API
// keys, managed providers and integrations with a budget whose usage period has ended
// (APIKey.UsageResetDue, Provider.UsageResetDue and Integration.WorkspaceResetsDue say which).
type DueBudgetResets interface {
	BudgetResetsDue(ctx context.Context, now time.Time) (keys []domain.APIKey, providers []domain.Provider, integrations []domain.Integration, err error)
}

// ResetWorker starts the next usage period of every budget whose next_usage_reset_at has
// passed, as the system actor: usage-limit policies and workspaces, and, when the read model
// is also DueBudgetResets, API keys, managed providers and integration workspaces. Each reset
// is idempotent by a key that names the period it ends, and the budgets' own resets decide
// nothing before they are due, so two processes running workers reset once.
type ResetWorker struct {
	d          Deps
	due        DueResets
	policies   Handler[ResetUsageLimitPolicyPeriod, Result]
	workspaces Handler[ResetWorkspaceUsage, Result]
	budgets    Handler[ResetBudgetUsageIfDue, Result]
	// OnError, when set, hears the errors of Run's passes.
	OnError func(error)
}

func NewResetWorker(d Deps, due DueResets) (*ResetWorker, error) {
	if due == nil {
		return nil, errors.New("commands: the reset worker needs the due resets")
	}
	p, err := NewResetUsageLimitPolicyPeriodHandler(d)
	if err != nil {
		return nil, err
	}
	w, err := NewResetWorkspaceUsageHandler(d)
	if err != nil {
		return nil, err
	}
	b, err := NewResetBudgetUsageIfDueHandler(d)
	if err != nil {
		return nil, err
	}
	return &ResetWorker{d: d, due: due, policies: p, workspaces: w, budgets: b}, nil
}

// Tick makes one pass.
func (w *ResetWorker) Tick(ctx context.Context) error {
	now := w.d.Now()
	policies, workspaces, err := w.due.UsageResetsDue(ctx, now)
	if err != nil {
		return err
	}
	var errs []error
	as := func(org, key string) context.Context {
		return WithRequest(ctx, Request{Actor: domain.System(org), RequestID: key, IdempotencyKey: key})
	}
	for _, p := range policies {
		key := "period-reset-" + p.ID + "-" + p.NextUsageResetAt.UTC().Format(time.RFC3339)
		if _, err := w.policies.Handle(as(p.OrganisationID, key), ResetUsageLimitPolicyPeriod{PolicyID: p.ID}); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ws := range workspaces {
		key := "usage-reset-" + ws.ID + "-" + ws.NextUsageResetAt.UTC().Format(time.RFC3339)
		if _, err := w.workspaces.Handle(as(ws.OrganisationID, key), ResetWorkspaceUsage{WorkspaceID: ws.ID}); err != nil {
			errs = append(errs, err)
		}
	}
	more, ok := w.due.(DueBudgetResets)
	if !ok {
		return errors.Join(errs...)
	}
	reset := func(org string, c ResetBudgetUsageIfDue, next *time.Time) {
		key := "usage-reset-" + c.Kind + "-" + c.ID + "-" + c.Sub
		if next != nil {
			key += "-" + next.UTC().Format(time.RFC3339)
		}
		if _, err := w.budgets.Handle(as(org, key), c); err != nil {
			errs = append(errs, err)
		}
	}
	keys, providers, integrations, err := more.BudgetResetsDue(ctx, now)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, k := range keys {
		if k.UsageLimits != nil {
			reset(k.OrganisationID, ResetBudgetUsageIfDue{Kind: BudgetAPIKey, ID: k.ID}, k.UsageLimits.NextUsageResetAt)
		}
	}
	for _, p := range providers {
		if p.UsageLimits != nil {
			reset(p.OrganisationID, ResetBudgetUsageIfDue{Kind: BudgetProvider, ID: p.ID}, p.UsageLimits.NextUsageResetAt)
		}
	}
	for _, i := range integrations {
		for _, ws := range i.WorkspaceResetsDue(now) {
			var next *time.Time
			if limits := i.Workspaces[ws].UsageLimits; len(limits) > 0 {
				next = limits[0].NextUsageResetAt
			}
			reset(i.OrganisationID, ResetBudgetUsageIfDue{Kind: BudgetIntegrationWorkspace, ID: i.ID, Sub: ws}, next)
		}
	}
	return errors.Join(errs...)
}

// Run makes a pass at once and then every interval, until ctx ends.
func (w *ResetWorker) Run(ctx context.Context, every time.Duration) error {
	return RunEvery(ctx, "reset worker", every, w.Tick, w.OnError)
}
