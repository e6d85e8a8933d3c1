package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ResetUsageLimitPolicyEntity zeroes one entity's usage; Entity is its id or its value key.
type ResetUsageLimitPolicyEntity struct {
	PolicyID string
	Entity   string
}

type resetUsageLimitPolicyEntityHandler struct{ d Deps }

func NewResetUsageLimitPolicyEntityHandler(d Deps) (resetUsageLimitPolicyEntityHandler, error) {
	return resetUsageLimitPolicyEntityHandler{d}, d.check()
}

func (h resetUsageLimitPolicyEntityHandler) Handle(ctx context.Context, c ResetUsageLimitPolicyEntity) (Result, error) {
	if _, err := loadUsageLimitPolicyFor(ctx, h.d, c.PolicyID, "policies.update"); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.UsageLimitPolicyPrefix, c.PolicyID), newUsageLimitPolicy,
		func(p *domain.UsageLimitPolicy) ([]domain.Event, error) { return p.ResetEntity(c.Entity, h.d.Now()) })
	res.ID = c.PolicyID
	return res, err
}
