package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateUsageLimitPolicy changes a policy's name, limits or schedule, or zeroes one value's
// usage (see domain.UpdateUsageLimitPolicy for what each field means).
type UpdateUsageLimitPolicy struct {
	PolicyID string
	domain.UpdateUsageLimitPolicy
}

type updateUsageLimitPolicyHandler struct{ d Deps }

func NewUpdateUsageLimitPolicyHandler(d Deps) (updateUsageLimitPolicyHandler, error) {
	return updateUsageLimitPolicyHandler{d}, d.check()
}

func (h updateUsageLimitPolicyHandler) Handle(ctx context.Context, c UpdateUsageLimitPolicy) (Result, error) {
	if _, err := loadUsageLimitPolicyFor(ctx, h.d, c.PolicyID, "policies.update"); err != nil {
		return Result{}, err
	}
	var decided usageDecision
	res, err := execute(ctx, h.d, domain.Stream(domain.UsageLimitPolicyPrefix, c.PolicyID), newUsageLimitPolicy,
		func(p *domain.UsageLimitPolicy) ([]domain.Event, error) {
			return decided.keep(p)(p.Update(c.UpdateUsageLimitPolicy, h.d.Now()))
		})
	res.ID = c.PolicyID
	if err != nil {
		return res, err
	}
	err = notifyUsageAlerts(ctx, h.d, decided, &res)
	return res, err
}
