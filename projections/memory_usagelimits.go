package projections

import (
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// UsageLimitPolicies lists the usage-limit policies that f selects, newest first; typ, when
// set, keeps only policies of that type (cost or tokens).
func (m *Model) UsageLimitPolicies(f PolicyFilter, typ string) []domain.UsageLimitPolicy {
	return all(m, domain.UsageLimitPolicyPrefix, func(p *domain.UsageLimitPolicy) bool {
		return f.keep(p.OrganisationID, p.WorkspaceID, p.Status) && (typ == "" || p.Type == typ)
	}, newestFirst(func(p *domain.UsageLimitPolicy) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// UsageLimitPolicy returns one policy of the organisation.
func (m *Model) UsageLimitPolicy(orgID, id string) (domain.UsageLimitPolicy, bool) {
	p, ok := get[domain.UsageLimitPolicy](m, domain.UsageLimitPolicyPrefix, id)
	return p, ok && p.OrganisationID == orgID && p.Exists()
}

// UsageEntityFilter selects a policy's entities: by status (nil: every status) and by a part
// of the value key (case-insensitive; empty: every key).
type UsageEntityFilter struct {
	Statuses map[string]bool
	Search   string
}

// UsageLimitPolicyEntities lists the entities of a policy of the organisation that f
// selects, ordered by value key; false when there is no such policy.
func (m *Model) UsageLimitPolicyEntities(orgID, id string, f UsageEntityFilter) ([]domain.UsageLimitEntity, bool) {
	p, ok := m.UsageLimitPolicy(orgID, id)
	if !ok {
		return nil, false
	}
	search := strings.ToLower(f.Search)
	out := []domain.UsageLimitEntity{}
	for _, en := range p.SortedEntities() {
		if (f.Statuses == nil || f.Statuses[en.Status]) && strings.Contains(strings.ToLower(en.ValueKey), search) {
			out = append(out, en)
		}
	}
	return out, true
}
