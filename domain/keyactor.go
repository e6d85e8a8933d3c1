package domain

// KeyActor is the actor a client key acts as: an organisation key acts as an organisation
// admin; a workspace service key as the manager of its workspace; a workspace user key as its
// user's role in the workspace (an organisation owner's or admin's as that workspace's admin
// only: a workspace key never reaches organisation settings, users or other workspaces, 5.2).
// ws and user are the key's workspace and user (nil when the key has none, or they are
// unknown). A key whose workspace is archived, or whose user is gone or no longer a member,
// cannot act: the error says why, for the caller to answer 401 or 403.
func KeyActor(k *APIKey, ws *Workspace, user *User) (Actor, error) {
	actor := Actor{Kind: ActorAPIKey, ID: k.ID, OrganisationID: k.OrganisationID, KeyType: k.Type,
		WorkspaceID: k.WorkspaceID, UserID: k.UserID, Scopes: k.Scopes, OrgRole: RoleMember}
	if k.IsOrganisationKey() {
		actor.OrgRole = RoleAdmin
		return actor, nil
	}
	if ws == nil || !ws.Active() {
		return Actor{}, Errorf(CodeForbidden, "this API key's workspace is archived")
	}
	switch k.Type {
	case KeyWorkspaceService:
		actor.WorkspaceRoles = map[string]Role{k.WorkspaceID: RoleManager}
	case KeyWorkspaceUser:
		if user == nil || !user.Exists() {
			return Actor{}, Errorf(CodeUnauthorized, "invalid API key")
		}
		role, member := ws.Members[k.UserID]
		if user.Role == RoleOwner || user.Role == RoleAdmin {
			role, member = RoleAdmin, true
		}
		if !member {
			return Actor{}, Errorf(CodeForbidden, "this API key's user is no longer a member of its workspace")
		}
		actor.WorkspaceRoles = map[string]Role{k.WorkspaceID: role}
	}
	return actor, nil
}
