package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ResetUsageLimitPolicyPeriod starts a policy's next usage period when its
// next_usage_reset_at has passed; before then it writes nothing. The scheduler sends it as
// the system actor.
type ResetUsageLimitPolicyPeriod struct {
	PolicyID string
}

type resetUsageLimitPolicyPeriodHandler struct{ d Deps }

func NewResetUsageLimitPolicyPeriodHandler(d Deps) (resetUsageLimitPolicyPeriodHandler, error) {
	return resetUsageLimitPolicyPeriodHandler{d}, d.check()
}

func (h resetUsageLimitPolicyPeriodHandler) Handle(ctx context.Context, c ResetUsageLimitPolicyPeriod) (Result, error) {
	if _, err := loadUsageLimitPolicyAsSystem(ctx, h.d, c.PolicyID); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.UsageLimitPolicyPrefix, c.PolicyID), newUsageLimitPolicy,
		func(p *domain.UsageLimitPolicy) ([]domain.Event, error) { return p.ResetPeriod(h.d.Now()) })
	res.ID = c.PolicyID
	return res, err
}
