package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ResetUsageLimitPolicyEntity zeroes one entity's usage; Entity is its id or its value key.
// ValueKey, when set instead, is a value key the caller resolved (the usage ledger counts
// entities the policy may not have seen yet): that entity is reset even when the policy has
// no record of it.
type ResetUsageLimitPolicyEntity struct {
	PolicyID string
	Entity   string
	ValueKey string
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
		func(p *domain.UsageLimitPolicy) ([]domain.Event, error) {
			if c.ValueKey != "" {
				return p.ResetEntityByValueKey(c.ValueKey, h.d.Now())
			}
			return p.ResetEntity(c.Entity, h.d.Now())
		})
	res.ID = c.PolicyID
	return res, err
}
