package projections

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// Organisation returns an organisation.
func (q Queries) Organisation(ctx context.Context, id string) (domain.Organisation, bool, error) {
	return get[domain.Organisation](ctx, q.Docs, domain.OrganisationPrefix, id)
}

// Workspace returns a workspace of the organisation.
func (q Queries) Workspace(ctx context.Context, orgID, id string) (domain.Workspace, bool, error) {
	ws, ok, err := get[domain.Workspace](ctx, q.Docs, domain.WorkspacePrefix, id)
	return ws, ok && ws.OrganisationID == orgID, err
}

// User returns a user of the organisation.
func (q Queries) User(ctx context.Context, orgID, id string) (domain.User, bool, error) {
	u, ok, err := get[domain.User](ctx, q.Docs, domain.UserPrefix, id)
	return u, ok && u.OrganisationID == orgID && u.Exists(), err
}

// APIKey returns a key of the organisation that has not been deleted.
func (q Queries) APIKey(ctx context.Context, orgID, id string) (domain.APIKey, bool, error) {
	k, ok, err := get[domain.APIKey](ctx, q.Docs, domain.APIKeyPrefix, id)
	return k, ok && k.OrganisationID == orgID && k.Exists(), err
}

// KeyFilter selects keys in a list.
type KeyFilter struct {
	OrganisationID string
	WorkspaceID    string // empty: every workspace (and organisation keys)
	Visible        func(domain.APIKey) bool
}

// APIKeys lists the keys that f selects, newest first.
func (q Queries) APIKeys(ctx context.Context, f KeyFilter) ([]domain.APIKey, error) {
	return all(ctx, q.Docs, domain.APIKeyPrefix, func(k *domain.APIKey) bool {
		return k.OrganisationID == f.OrganisationID && k.Exists() &&
			(f.WorkspaceID == "" || k.WorkspaceID == f.WorkspaceID) && (f.Visible == nil || f.Visible(*k))
	}, newestFirst(func(k *domain.APIKey) (time.Time, string) { return k.CreatedAt, k.ID }))
}

// PolicyFilter selects policies in a list.
type PolicyFilter struct {
	OrganisationID string
	WorkspaceIDs   map[string]bool // nil: every workspace
	Statuses       map[string]bool
}

func (f PolicyFilter) keep(org, ws, status string) bool {
	return org == f.OrganisationID && (f.WorkspaceIDs == nil || f.WorkspaceIDs[ws]) && f.Statuses[status]
}

// RateLimitPolicies lists the rate-limit policies that f selects, newest first.
func (q Queries) RateLimitPolicies(ctx context.Context, f PolicyFilter) ([]domain.RateLimitPolicy, error) {
	return all(ctx, q.Docs, domain.RateLimitPolicyPrefix, func(p *domain.RateLimitPolicy) bool {
		return f.keep(p.OrganisationID, p.WorkspaceID, p.Status)
	}, newestFirst(func(p *domain.RateLimitPolicy) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// RateLimitPolicy returns one policy of the organisation.
func (q Queries) RateLimitPolicy(ctx context.Context, orgID, id string) (domain.RateLimitPolicy, bool, error) {
	p, ok, err := get[domain.RateLimitPolicy](ctx, q.Docs, domain.RateLimitPolicyPrefix, id)
	return p, ok && p.OrganisationID == orgID, err
}
