package commands

import (
	"strings"

	"github.com/causeway/causeway/domain"
)

// Authorisation is checked here, against the actor the HTTP layer authenticated: a key must
// carry the operation's scope, and its role must reach the resource (5.2).

func forbidden(format string, args ...any) error {
	return domain.Errorf(domain.CodeForbidden, format, args...)
}

// requireScope: the actor's key carries scope.
func requireScope(a domain.Actor, scope string) error {
	if !a.HasScope(scope) {
		return forbidden("this API key lacks the scope %s", scope)
	}
	return nil
}

// requireOrgAdmin: organisation settings, workspaces and users are managed by organisation
// owners and admins (admin keys) only.
func requireOrgAdmin(a domain.Actor, scope string) error {
	if !a.IsOrgAdmin() {
		return forbidden("only organisation owners and admins may do this")
	}
	return requireScope(a, scope)
}

// requireWorkspaceRole: the actor reaches workspaceID with at least role min, and carries
// scope. Organisation admins reach every workspace; workspace keys only their own.
func requireWorkspaceRole(a domain.Actor, workspaceID string, min domain.Role, scope string) error {
	if err := requireScope(a, scope); err != nil {
		return err
	}
	role, ok := a.WorkspaceRole(workspaceID)
	if !ok {
		return forbidden("this API key has no access to workspace %s", workspaceID)
	}
	if !roleAtLeast(role, min) {
		return forbidden("this needs the %s role in the workspace; the key has %s", min, role)
	}
	return nil
}

func roleAtLeast(have, min domain.Role) bool {
	rank := map[domain.Role]int{domain.RoleMember: 1, domain.RoleManager: 2, domain.RoleAdmin: 3, domain.RoleOwner: 4}
	return rank[have] >= rank[min]
}

// targetWorkspace decides which workspace a workspace-owned resource belongs to: a workspace
// key's own (the body may repeat it, not change it); an organisation key must name one.
func targetWorkspace(a domain.Actor, requested string) (string, error) {
	requested = strings.TrimSpace(requested)
	if a.Kind == domain.ActorAPIKey && a.KeyType != domain.KeyOrganisationService {
		if requested != "" && requested != a.WorkspaceID {
			return "", forbidden("this API key belongs to workspace %s and cannot act on workspace %s", a.WorkspaceID, requested)
		}
		return a.WorkspaceID, nil
	}
	if requested == "" {
		return "", domain.Invalid("workspace_id", "workspace_id is required with an organisation API key")
	}
	return requested, nil
}

// requireAdminKey: workspaces and organisation settings are managed by organisation owners
// and admins through organisation keys; a workspace key never may (5.2), whatever the
// organisation role of its user.
func requireAdminKey(a domain.Actor, scope string) error {
	if a.Kind == domain.ActorAPIKey && a.KeyType != domain.KeyOrganisationService {
		return forbidden("a workspace API key cannot do this; use an organisation admin key")
	}
	return requireOrgAdmin(a, scope)
}
