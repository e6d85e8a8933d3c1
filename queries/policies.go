package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// PolicyList selects the policies a list shows: by status, and by workspace (nil: every
// workspace the actor sees).
type PolicyList struct {
	Statuses     map[string]bool
	WorkspaceIDs map[string]bool
}

func (l PolicyList) filter(actor domain.Actor) projections.PolicyFilter {
	f := projections.PolicyFilter{OrganisationID: actor.OrganisationID, WorkspaceIDs: VisibleWorkspaces(actor), Statuses: l.Statuses}
	if l.WorkspaceIDs != nil {
		f.WorkspaceIDs = l.WorkspaceIDs
	}
	return f
}

// RateLimitPolicies lists the rate-limit policies that l selects, newest first.
func (q *Queries) RateLimitPolicies(ctx context.Context, actor domain.Actor, l PolicyList) ([]domain.RateLimitPolicy, error) {
	return q.Read.RateLimitPolicies(ctx, l.filter(actor))
}

// RateLimitPolicy is one rate-limit policy of a status in statuses that the actor sees; not
// found otherwise.
func (q *Queries) RateLimitPolicy(ctx context.Context, actor domain.Actor, id string, statuses map[string]bool) (domain.RateLimitPolicy, error) {
	p, ok, err := q.Read.RateLimitPolicy(ctx, actor.OrganisationID, id)
	if err != nil {
		return domain.RateLimitPolicy{}, err
	}
	if !ok || !statuses[p.Status] || !CanSee(actor, p.WorkspaceID) {
		return domain.RateLimitPolicy{}, domain.Errorf(domain.CodeNotFound, "rate limit policy %s not found", id)
	}
	return p, nil
}

// UsageLimitPolicies lists the usage-limit policies that l selects, of type typ when set
// (cost or tokens), newest first.
func (q *Queries) UsageLimitPolicies(ctx context.Context, actor domain.Actor, l PolicyList, typ string) ([]domain.UsageLimitPolicy, error) {
	return q.Read.UsageLimitPolicies(ctx, l.filter(actor), typ)
}

// UsageLimitPolicy is a usage-limit policy the actor sees, or not found as if it did not
// exist.
func (q *Queries) UsageLimitPolicy(ctx context.Context, actor domain.Actor, id string) (domain.UsageLimitPolicy, error) {
	p, ok, err := q.Read.UsageLimitPolicy(ctx, actor.OrganisationID, id)
	if err != nil {
		return domain.UsageLimitPolicy{}, err
	}
	if !ok || !CanSee(actor, p.WorkspaceID) {
		return domain.UsageLimitPolicy{}, domain.Errorf(domain.CodeNotFound, "usage limit policy %s not found", id)
	}
	return p, nil
}

// UsageLimitPolicyEntities lists the entities that f selects of a usage-limit policy the actor
// sees, ordered by value key.
func (q *Queries) UsageLimitPolicyEntities(ctx context.Context, actor domain.Actor, id string, f projections.UsageEntityFilter) ([]domain.UsageLimitEntity, error) {
	if _, err := q.UsageLimitPolicy(ctx, actor, id); err != nil {
		return nil, err
	}
	entities, _, err := q.Read.UsageLimitPolicyEntities(ctx, actor.OrganisationID, id, f)
	return entities, err
}
