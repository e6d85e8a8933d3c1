package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// RecordUsageLimitPolicyUsage adds an amount of cost or tokens to one entity of a policy.
// The gateway sends it, as the system actor, for each request the policy selects.
type RecordUsageLimitPolicyUsage struct {
	PolicyID string
	ValueKey string
	Amount   float64
}

type recordUsageLimitPolicyUsageHandler struct{ d Deps }

func NewRecordUsageLimitPolicyUsageHandler(d Deps) (recordUsageLimitPolicyUsageHandler, error) {
	return recordUsageLimitPolicyUsageHandler{d}, d.check()
}

// Handle records the usage, then the alerts it raised. An error with a Result that has a
// position means the usage was recorded and only an alert's notification failed: retrying
// with the same idempotency key records nothing twice.
func (h recordUsageLimitPolicyUsageHandler) Handle(ctx context.Context, c RecordUsageLimitPolicyUsage) (Result, error) {
	if _, err := loadUsageLimitPolicyAsSystem(ctx, h.d, c.PolicyID); err != nil {
		return Result{}, err
	}
	var decided usageDecision
	res, err := execute(ctx, h.d, domain.Stream(domain.UsageLimitPolicyPrefix, c.PolicyID), newUsageLimitPolicy,
		func(p *domain.UsageLimitPolicy) ([]domain.Event, error) {
			return decided.keep(p)(p.RecordUsage(c.ValueKey, c.Amount, h.d.Now()))
		})
	res.ID = c.PolicyID
	if err != nil {
		return res, err
	}
	err = notifyUsageAlerts(ctx, h.d, decided, &res)
	return res, err
}

// loadUsageLimitPolicyAsSystem: usage and period resets come from the gateway and the
// scheduler, never from an admin key, and only for the system actor's own organisation.
func loadUsageLimitPolicyAsSystem(ctx context.Context, d Deps, id string) (*domain.UsageLimitPolicy, error) {
	actor := RequestFrom(ctx).Actor
	if actor.Kind != domain.ActorSystem {
		return nil, forbidden("only the gateway and the scheduler may record usage or reset periods")
	}
	p, err := Load(ctx, d, domain.Stream(domain.UsageLimitPolicyPrefix, id), newUsageLimitPolicy)
	if err != nil {
		return nil, err
	}
	if !p.Exists() || p.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "usage limit policy %s not found", id)
	}
	return p, nil
}
