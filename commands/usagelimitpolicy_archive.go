package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchiveUsageLimitPolicy is DELETE on a policy: it is archived and stays readable.
type ArchiveUsageLimitPolicy struct {
	PolicyID string
}

type archiveUsageLimitPolicyHandler struct{ d Deps }

func NewArchiveUsageLimitPolicyHandler(d Deps) (archiveUsageLimitPolicyHandler, error) {
	return archiveUsageLimitPolicyHandler{d}, d.check()
}

func (h archiveUsageLimitPolicyHandler) Handle(ctx context.Context, c ArchiveUsageLimitPolicy) (Result, error) {
	if _, err := loadUsageLimitPolicyFor(ctx, h.d, c.PolicyID, "policies.delete"); err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.UsageLimitPolicyPrefix, c.PolicyID), newUsageLimitPolicy,
		func(p *domain.UsageLimitPolicy) ([]domain.Event, error) { return p.Archive(h.d.Now()) })
	res.ID = c.PolicyID
	return res, err
}
