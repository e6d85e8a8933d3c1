package projections

import (
	"context"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// UsageLimitPolicies lists the usage-limit policies that f selects, newest first; typ, when
// set, keeps only policies of that type (cost or tokens).
func (q Queries) UsageLimitPolicies(ctx context.Context, f PolicyFilter, typ string) ([]domain.UsageLimitPolicy, error) {
	return all(ctx, q.Docs, domain.UsageLimitPolicyPrefix, func(p *domain.UsageLimitPolicy) bool {
		return f.keep(p.OrganisationID, p.WorkspaceID, p.Status) && (typ == "" || p.Type == typ)
	}, newestFirst(func(p *domain.UsageLimitPolicy) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// UsageLimitPolicy returns one policy of the organisation.
func (q Queries) UsageLimitPolicy(ctx context.Context, orgID, id string) (domain.UsageLimitPolicy, bool, error) {
	p, ok, err := get[domain.UsageLimitPolicy](ctx, q.Docs, domain.UsageLimitPolicyPrefix, id)
	return p, ok && p.OrganisationID == orgID && p.Exists(), err
}

// UsageEntityFilter selects a policy's entities: by status (nil: every status) and by a part
// of the value key (case-insensitive; empty: every key).
type UsageEntityFilter struct {
	Statuses map[string]bool
	Search   string
}

// Keep is whether f selects en.
func (f UsageEntityFilter) Keep(en domain.UsageLimitEntity) bool {
	return (f.Statuses == nil || f.Statuses[en.Status]) && strings.Contains(strings.ToLower(en.ValueKey), strings.ToLower(f.Search))
}

// UsageLimitPolicyEntities lists the entities of a policy of the organisation that f
// selects, ordered by value key; false when there is no such policy.
func (q Queries) UsageLimitPolicyEntities(ctx context.Context, orgID, id string, f UsageEntityFilter) ([]domain.UsageLimitEntity, bool, error) {
	p, ok, err := q.UsageLimitPolicy(ctx, orgID, id)
	if err != nil || !ok {
		return nil, false, err
	}
	out := []domain.UsageLimitEntity{}
	for _, en := range p.SortedEntities() {
		if f.Keep(en) {
			out = append(out, en)
		}
	}
	return out, true, nil
}
