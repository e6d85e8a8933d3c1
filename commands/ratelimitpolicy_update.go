package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateRateLimitPolicy changes a policy's name, unit or value.
type UpdateRateLimitPolicy struct {
	PolicyID string
	Name     *string
	Unit     *string
	Value    *float64
}

type updateRateLimitPolicyHandler struct{ d Deps }

func NewUpdateRateLimitPolicyHandler(d Deps) (updateRateLimitPolicyHandler, error) {
	return updateRateLimitPolicyHandler{d}, d.check()
}

func (h updateRateLimitPolicyHandler) Handle(ctx context.Context, c UpdateRateLimitPolicy) (Result, error) {
	if _, err := loadRateLimitPolicyFor(ctx, h.d, c.PolicyID, "policies.update"); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.RateLimitPolicyPrefix, c.PolicyID), newRateLimitPolicy,
		func(p *domain.RateLimitPolicy) ([]domain.Event, error) {
			return p.Update(domain.UpdateRateLimitPolicy{Name: c.Name, Unit: c.Unit, Value: c.Value}, h.d.Now())
		})
	res.ID = c.PolicyID
	return res, err
}
