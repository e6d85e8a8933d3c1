package projections

import (
	"time"

	"github.com/causeway/causeway/domain"
)

// Authenticate resolves a presented client key to its actor, reading only memory. The
// reasons for refusal are kept apart so that the caller can log them; the client sees one
// 401 for a key that is unknown, deleted, expired or rotated out.
func (m *Model) Authenticate(presented string, now time.Time) (domain.Actor, error) {
	if presented == "" {
		return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "missing x-gateway-api-key header")
	}
	hash := domain.HashKey(presented)
	m.mu.RLock()
	id := m.keyIDs[hash]
	m.mu.RUnlock()
	k, ok := get[domain.APIKey](m, domain.APIKeyPrefix, id)
	if !ok {
		return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "invalid API key")
	}
	if accepted, reason := k.Accepts(hash, now); !accepted {
		if reason == "expired" {
			return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "this API key has expired")
		}
		return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "invalid API key")
	}
	if k.IsOrganisationKey() {
		return domain.KeyActor(&k, nil, nil)
	}
	var (
		ws   *domain.Workspace
		user *domain.User
	)
	if w, ok := get[domain.Workspace](m, domain.WorkspacePrefix, k.WorkspaceID); ok {
		ws = &w
	}
	if u, ok := get[domain.User](m, domain.UserPrefix, k.UserID); ok {
		user = &u
	}
	return domain.KeyActor(&k, ws, user)
}

// Organisation returns an organisation.
func (m *Model) Organisation(id string) (domain.Organisation, bool) {
	return get[domain.Organisation](m, domain.OrganisationPrefix, id)
}

// Workspace returns a workspace of the organisation.
func (m *Model) Workspace(orgID, id string) (domain.Workspace, bool) {
	ws, ok := get[domain.Workspace](m, domain.WorkspacePrefix, id)
	return ws, ok && ws.OrganisationID == orgID
}

// User returns a user of the organisation.
func (m *Model) User(orgID, id string) (domain.User, bool) {
	u, ok := get[domain.User](m, domain.UserPrefix, id)
	return u, ok && u.OrganisationID == orgID && u.Exists()
}

// APIKey returns a key of the organisation that has not been deleted.
func (m *Model) APIKey(orgID, id string) (domain.APIKey, bool) {
	k, ok := get[domain.APIKey](m, domain.APIKeyPrefix, id)
	return k, ok && k.OrganisationID == orgID && k.Exists()
}

// KeyFilter selects keys in a list.
type KeyFilter struct {
	OrganisationID string
	WorkspaceID    string // empty: every workspace (and organisation keys)
	Visible        func(domain.APIKey) bool
}

// APIKeys lists the keys that f selects, newest first.
func (m *Model) APIKeys(f KeyFilter) []domain.APIKey {
	return all(m, domain.APIKeyPrefix, func(k *domain.APIKey) bool {
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
func (m *Model) RateLimitPolicies(f PolicyFilter) []domain.RateLimitPolicy {
	return all(m, domain.RateLimitPolicyPrefix, func(p *domain.RateLimitPolicy) bool {
		return f.keep(p.OrganisationID, p.WorkspaceID, p.Status)
	}, newestFirst(func(p *domain.RateLimitPolicy) (time.Time, string) { return p.CreatedAt, p.ID }))
}

// RateLimitPolicy returns one policy of the organisation.
func (m *Model) RateLimitPolicy(orgID, id string) (domain.RateLimitPolicy, bool) {
	p, ok := get[domain.RateLimitPolicy](m, domain.RateLimitPolicyPrefix, id)
	return p, ok && p.OrganisationID == orgID
}

func newestFirst[A any](key func(*A) (time.Time, string)) func(a, b *A) bool {
	return func(a, b *A) bool {
		ta, ia := key(a)
		tb, ib := key(b)
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
		return ia < ib
	}
}
