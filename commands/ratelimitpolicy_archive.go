package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchiveRateLimitPolicy is DELETE on a policy: it is archived and stays readable.
type ArchiveRateLimitPolicy struct {
	PolicyID string
}

type archiveRateLimitPolicyHandler struct{ d Deps }

func NewArchiveRateLimitPolicyHandler(d Deps) (archiveRateLimitPolicyHandler, error) {
	return archiveRateLimitPolicyHandler{d}, d.check()
}

func (h archiveRateLimitPolicyHandler) Handle(ctx context.Context, c ArchiveRateLimitPolicy) (Result, error) {
	if _, err := loadRateLimitPolicyFor(ctx, h.d, c.PolicyID, "policies.delete"); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.RateLimitPolicyPrefix, c.PolicyID), newRateLimitPolicy,
		func(p *domain.RateLimitPolicy) ([]domain.Event, error) { return p.Archive(h.d.Now()) })
	res.ID = c.PolicyID
	return res, err
}
