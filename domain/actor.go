package domain

import (
	"slices"
	"sort"
	"strings"
)

// ActorKind says what authenticated a request.
type ActorKind string

const (
	ActorUser   ActorKind = "user"
	ActorAPIKey ActorKind = "api_key"
	ActorSystem ActorKind = "system"
)

// Role is an organisation role (owner, admin, member) or a workspace role (admin, manager,
// member). Role names are case-insensitive on input (SCIM); stored lower case.
type Role string

const (
	RoleOwner   Role = "owner"
	RoleAdmin   Role = "admin"
	RoleManager Role = "manager"
	RoleMember  Role = "member"
)

// rank orders roles by privilege, for "may not grant more than you hold".
func (r Role) rank() int {
	switch r {
	case RoleOwner:
		return 4
	case RoleAdmin:
		return 3
	case RoleManager:
		return 2
	case RoleMember:
		return 1
	}
	return 0
}

// ParseOrgRole accepts an organisation role in any case.
func ParseOrgRole(s string) (Role, bool) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	return r, r == RoleOwner || r == RoleAdmin || r == RoleMember
}

// ParseWorkspaceRole accepts a workspace role in any case.
func ParseWorkspaceRole(s string) (Role, bool) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	return r, r == RoleAdmin || r == RoleManager || r == RoleMember
}

// Key types, as the reference names them.
const (
	KeyOrganisationService = "organisation-service"
	KeyWorkspaceService    = "workspace-service"
	KeyWorkspaceUser       = "workspace-user"
)

// Actor is who a request acts as, resolved by authentication. Its rights are the
// intersection of what its key's scopes allow and what its role allows.
type Actor struct {
	Kind           ActorKind `json:"kind"`
	ID             string    `json:"id"` // user id, key id, or "system"
	OrganisationID string    `json:"organisation_id"`
	// For keys: the key's type, its workspace (workspace keys), the user it belongs to
	// (user keys) and its scopes.
	KeyType     string   `json:"key_type,omitempty"`
	WorkspaceID string   `json:"workspace_id,omitempty"`
	UserID      string   `json:"user_id,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	// OrgRole is the organisation role: owner or admin for organisation keys and their users,
	// member otherwise. WorkspaceRoles holds the roles in each workspace.
	OrgRole        Role            `json:"org_role,omitempty"`
	WorkspaceRoles map[string]Role `json:"workspace_roles,omitempty"`
}

// System is the actor of background work (expiry, scheduled rotation, bootstrap).
func System(orgID string) Actor {
	return Actor{Kind: ActorSystem, ID: "system", OrganisationID: orgID, OrgRole: RoleOwner, Scopes: AllScopes()}
}

// IsOrgAdmin: owners and admins have full access to the organisation.
func (a Actor) IsOrgAdmin() bool { return a.OrgRole == RoleOwner || a.OrgRole == RoleAdmin }

// HasScope reports whether the actor's key carries scope. Actors that are not keys (system)
// have every scope.
func (a Actor) HasScope(scope string) bool {
	if a.Kind != ActorAPIKey {
		return true
	}
	return slices.Contains(a.Scopes, scope)
}

// WorkspaceRole returns the actor's role in a workspace: admin for organisation admins, the
// key's own workspace role for workspace keys, or the membership role.
func (a Actor) WorkspaceRole(workspaceID string) (Role, bool) {
	if a.IsOrgAdmin() {
		return RoleAdmin, true
	}
	if a.Kind == ActorAPIKey && a.KeyType != KeyOrganisationService {
		if a.WorkspaceID != workspaceID {
			return "", false
		}
	}
	r, ok := a.WorkspaceRoles[workspaceID]
	return r, ok
}

// CanGrant reports whether the actor may give role to someone: nobody grants more than they
// hold (a manager cannot add an admin).
func (a Actor) CanGrant(workspaceID string, role Role) bool {
	if a.IsOrgAdmin() {
		return true
	}
	mine, ok := a.WorkspaceRole(workspaceID)
	return ok && mine.rank() >= RoleManager.rank() && mine.rank() >= role.rank()
}

// ScopesWithin reports the scopes of want that the actor does not hold: a key is created only
// with permissions its creator holds.
func (a Actor) ScopesWithin(want []string) (missing []string) {
	for _, s := range want {
		if !a.HasScope(s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// Scopes are what an API key may do. The catalogue is the reference's; a key's scopes must
// come from it.
var scopeCatalogue = []string{
	"analytics.view",
	"api_keys.create", "api_keys.delete", "api_keys.list", "api_keys.read", "api_keys.update", "api_keys.rotate",
	"audit_logs.list",
	"completions.write",
	"configs.create", "configs.delete", "configs.list", "configs.read", "configs.update",
	"feedback.create", "feedback.update",
	"integrations.create", "integrations.delete", "integrations.list", "integrations.read", "integrations.update",
	"invites.create", "invites.delete", "invites.list", "invites.read",
	"logs.export", "logs.list", "logs.view",
	"mcp.invoke",
	"organisation_service_api_keys.create", "organisation_service_api_keys.delete", "organisation_service_api_keys.list",
	"organisation_service_api_keys.read", "organisation_service_api_keys.update", "organisation_service_api_keys.rotate",
	"organisation_users.create", "organisation_users.delete", "organisation_users.list", "organisation_users.read",
	"organisation_users.update",
	"organisations.read", "organisations.update",
	"policies.create", "policies.delete", "policies.list", "policies.read", "policies.update",
	"prompts.create", "prompts.delete", "prompts.list", "prompts.read", "prompts.render", "prompts.update",
	"providers.create", "providers.delete", "providers.list", "providers.read", "providers.update",
	"virtual_keys.copy", "virtual_keys.create", "virtual_keys.delete", "virtual_keys.list", "virtual_keys.read",
	"virtual_keys.update",
	"workspace_service_api_keys.create", "workspace_service_api_keys.delete", "workspace_service_api_keys.list",
	"workspace_service_api_keys.read", "workspace_service_api_keys.update", "workspace_service_api_keys.rotate",
	"workspace_user_api_keys.create", "workspace_user_api_keys.delete", "workspace_user_api_keys.list",
	"workspace_user_api_keys.read", "workspace_user_api_keys.update", "workspace_user_api_keys.rotate",
	"workspace_users.create", "workspace_users.delete", "workspace_users.list", "workspace_users.read",
	"workspace_users.update",
	"workspaces.create", "workspaces.delete", "workspaces.list", "workspaces.read", "workspaces.update",
}

// AllScopes returns a copy of the scope catalogue, sorted.
func AllScopes() []string {
	out := slices.Clone(scopeCatalogue)
	sort.Strings(out)
	return out
}

// IsScope reports whether s is in the catalogue.
func IsScope(s string) bool { return slices.Contains(scopeCatalogue, s) }

// WorkspaceScopes are what a workspace key may hold: nothing that reaches across the
// organisation (its users, its admin keys, its settings, creating workspaces).
func WorkspaceScopes() []string {
	var out []string
	for _, s := range AllScopes() {
		switch {
		case strings.HasPrefix(s, "organisation_"), strings.HasPrefix(s, "organisations."),
			s == "workspaces.create", s == "workspaces.delete":
		default:
			out = append(out, s)
		}
	}
	return out
}
