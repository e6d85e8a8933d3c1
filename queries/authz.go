package queries

import (
	"strings"

	"github.com/causeway/causeway/domain"
)

// Read authorisation: what an actor may read, decided from the actor alone or from the
// resource read. A resource out of the actor's sight is not found; one in sight that the
// actor's key is not scoped for is forbidden.

// VisibleWorkspaces is the set of workspaces the actor may read in lists: nil (all) for
// organisation admins, else the workspaces it has a role in.
func VisibleWorkspaces(a domain.Actor) map[string]bool {
	if a.IsOrgAdmin() {
		return nil
	}
	out := map[string]bool{}
	if a.WorkspaceID != "" {
		out[a.WorkspaceID] = true
	}
	for ws := range a.WorkspaceRoles {
		out[ws] = true
	}
	return out
}

// CanSee reports whether the actor may read a resource of workspaceID.
func CanSee(a domain.Actor, workspaceID string) bool {
	v := VisibleWorkspaces(a)
	return v == nil || v[workspaceID]
}

// RequireScope refuses a read the actor's key is not scoped for.
func RequireScope(a domain.Actor, scope string) error {
	if !a.HasScope(scope) {
		return domain.Errorf(domain.CodeForbidden, "this API key lacks the scope %s", scope)
	}
	return nil
}

// WorkspaceKeyActor reports whether the actor is an API key bound to one workspace.
func WorkspaceKeyActor(a domain.Actor) bool {
	return a.Kind == domain.ActorAPIKey && a.KeyType != domain.KeyOrganisationService
}

// RequireUserAdmin: users are managed, and read, with an organisation admin key only (5.2).
func RequireUserAdmin(a domain.Actor, scope string) error {
	if !a.IsOrgAdmin() || WorkspaceKeyActor(a) {
		return domain.Errorf(domain.CodeForbidden, "only organisation owners and admins may manage users")
	}
	return RequireScope(a, scope)
}

// RequireOrgSettingsReader: organisation settings are for organisation keys only (5.2), reads too.
func RequireOrgSettingsReader(a domain.Actor, scope string) error {
	if a.Kind == domain.ActorAPIKey && a.KeyType != domain.KeyOrganisationService || !a.IsOrgAdmin() {
		return domain.Errorf(domain.CodeForbidden, "organisation settings are read with an organisation admin key")
	}
	return RequireScope(a, scope)
}

// CanSeeInvite: organisation admins see every invite; a manager the invites into a workspace
// they manage.
func CanSeeInvite(a domain.Actor, i domain.Invite) bool {
	if a.IsOrgAdmin() && !WorkspaceKeyActor(a) {
		return true
	}
	for _, w := range i.Workspaces {
		if WorkspaceKeyActor(a) && w.WorkspaceID != a.WorkspaceID {
			continue
		}
		if role, ok := a.WorkspaceRole(w.WorkspaceID); ok && (role == domain.RoleAdmin || role == domain.RoleManager) {
			return true
		}
	}
	return false
}

// CanSeeIntegration: organisation admins see every integration, others those that serve a
// workspace they reach.
func CanSeeIntegration(actor domain.Actor, i domain.Integration) bool {
	v := VisibleWorkspaces(actor)
	if v == nil {
		return true
	}
	for ws, access := range i.Workspaces {
		if access.Enabled && v[ws] {
			return true
		}
	}
	return false
}

// KeyReadScope is the scope that reads a key of keyType.
func KeyReadScope(keyType string) string {
	switch keyType {
	case domain.KeyOrganisationService:
		return "organisation_service_api_keys.read"
	case domain.KeyWorkspaceService:
		return "workspace_service_api_keys.read"
	}
	return "workspace_user_api_keys.read"
}

// KeyReadable: organisation admins read every key; managers the keys of their workspace, and
// everyone their own user keys. A key out of the actor's reach is not found; one within reach
// but without the read (or list) scope is forbidden.
func KeyReadable(actor domain.Actor, k domain.APIKey) error {
	notFound := domain.Errorf(domain.CodeNotFound, "api key %s not found", k.ID)
	switch {
	case k.IsOrganisationKey():
		if !actor.IsOrgAdmin() {
			return notFound
		}
	case k.Type == domain.KeyWorkspaceUser && actor.UserID != "" && actor.UserID == k.UserID:
		return nil
	default:
		role, ok := actor.WorkspaceRole(k.WorkspaceID)
		if !ok {
			return notFound
		}
		if role != domain.RoleAdmin && role != domain.RoleManager {
			return domain.Errorf(domain.CodeForbidden, "reading the keys of workspace %s needs the manager role", k.WorkspaceID)
		}
	}
	read := KeyReadScope(k.Type)
	if !actor.HasScope(read) && !actor.HasScope(strings.TrimSuffix(read, "read")+"list") {
		return domain.Errorf(domain.CodeForbidden, "this API key lacks the scope %s", read)
	}
	return nil
}

// WorkspaceScope is the set of workspaces a list of the actor's shows: the workspace it asks
// for (which it must see, or the list is forbidden), else every workspace it sees (nil: all).
func WorkspaceScope(actor domain.Actor, workspaceID string) (map[string]bool, error) {
	if workspaceID == "" {
		return VisibleWorkspaces(actor), nil
	}
	if !CanSee(actor, workspaceID) {
		return nil, domain.Errorf(domain.CodeForbidden, "this API key has no access to workspace %s", workspaceID)
	}
	return map[string]bool{workspaceID: true}, nil
}
