package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// keyScope returns the scope an operation on a key of keyType needs, e.g.
// workspace_user_api_keys.delete.
func keyScope(keyType, op string) string {
	switch keyType {
	case domain.KeyOrganisationService:
		return "organisation_service_api_keys." + op
	case domain.KeyWorkspaceService:
		return "workspace_service_api_keys." + op
	}
	return "workspace_user_api_keys." + op
}

// loadAPIKeyFor loads a key the actor may act on with op (read, update, delete, rotate):
// organisation keys need an organisation admin; workspace keys a manager of their workspace,
// or the user the key belongs to.
func loadAPIKeyFor(ctx context.Context, d Deps, id, op string) (*domain.APIKey, error) {
	actor := RequestFrom(ctx).Actor
	k, err := Load(ctx, d, domain.Stream(domain.APIKeyPrefix, id), newAPIKey)
	if err != nil {
		return nil, err
	}
	if !k.Exists() || k.OrganisationID != actor.OrganisationID || !withinReach(actor, k) {
		return nil, domain.Errorf(domain.CodeNotFound, "api key %s not found", id)
	}
	return k, authoriseKeyAccess(actor, k, op)
}

// withinReach: a key the actor could not even read is not found, so that a workspace key
// learns nothing of the organisation's other keys; within reach, too few rights are a 403.
func withinReach(actor domain.Actor, k *domain.APIKey) bool {
	switch {
	case k.IsOrganisationKey():
		return actor.IsOrgAdmin()
	case k.Type == domain.KeyWorkspaceUser && actor.UserID != "" && actor.UserID == k.UserID:
		return true
	}
	_, ok := actor.WorkspaceRole(k.WorkspaceID)
	return ok
}

func authoriseKeyAccess(actor domain.Actor, k *domain.APIKey, op string) error {
	scope := keyScope(k.Type, op)
	if k.IsOrganisationKey() {
		return requireOrgAdmin(actor, scope)
	}
	if k.Type == domain.KeyWorkspaceUser && actor.UserID != "" && actor.UserID == k.UserID {
		return requireScope(actor, scope) // one's own key
	}
	return requireWorkspaceRole(actor, k.WorkspaceID, domain.RoleManager, scope)
}
