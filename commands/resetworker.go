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
	UsageResetsDue(now time.Time) (policies []domain.UsageLimitPolicy, workspaces []domain.Workspace)
}

// ResetWorker starts the next usage period of every usage-limit policy and workspace whose
// next_usage_reset_at has passed, as the system actor. Each reset is idempotent by a key that
// names the period it ends, so two processes running workers reset once.
type ResetWorker struct {
	d          Deps
	due        DueResets
	policies   resetUsageLimitPolicyPeriodHandler
	workspaces resetWorkspaceUsageHandler
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
	return &ResetWorker{d: d, due: due, policies: p, workspaces: w}, nil
}

// Tick makes one pass.
func (w *ResetWorker) Tick(ctx context.Context) error {
	policies, workspaces := w.due.UsageResetsDue(w.d.Now())
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
	return errors.Join(errs...)
}

// Run makes a pass at once and then every interval, until ctx ends.
func (w *ResetWorker) Run(ctx context.Context, every time.Duration) error {
	return runEvery(ctx, "reset worker", every, w.Tick, w.OnError)
}
