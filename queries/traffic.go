package queries

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// The scope of request-log reads (analytics, logs and exports): which workspaces' rows an actor
// may read, which of them the security settings hide, and when the settings limit the rows to
// the actor's own API keys. http/ applies the answers to the analytics wing's queries; this
// package does not know them.

// TrafficWorkspaces is the set of workspaces whose rows the actor may read (nil: every
// workspace of the organisation), narrowed by slug (the workspace_slug parameter). Organisation
// admins see every workspace; anyone else sees the workspaces they hold a role in, and naming
// another one is refused with 403 whether or not it exists, so that slugs do not leak. With
// analytics set (the analytics views, not the logs), a key acting as a user who is a member
// (manager) of a workspace whose membersViewAnalytics (managersViewAnalytics) is off does not
// see that workspace.
func (q *Queries) TrafficWorkspaces(ctx context.Context, actor domain.Actor, slug string, analytics bool) ([]string, error) {
	slug = strings.TrimSpace(slug)
	if actor.IsOrgAdmin() {
		if slug == "" {
			return nil, nil
		}
		ws, ok, err := q.Read.WorkspaceBySlug(ctx, actor.OrganisationID, slug)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &domain.Error{Code: domain.CodeNotFound, Param: "workspace_slug",
				Message: "workspace_slug " + strconv.Quote(slug) + " names no workspace of this organisation"}
		}
		return []string{ws.ID}, nil
	}
	visible := VisibleWorkspaces(actor)
	var ids []string
	if slug != "" {
		ws, ok, err := q.Read.WorkspaceBySlug(ctx, actor.OrganisationID, slug)
		if err != nil {
			return nil, err
		}
		if !ok || !visible[ws.ID] {
			return nil, &domain.Error{Code: domain.CodeForbidden, Param: "workspace_slug",
				Message: "this API key cannot read workspace " + strconv.Quote(slug)}
		}
		ids = []string{ws.ID}
	} else {
		for id := range visible {
			ids = append(ids, id)
		}
		slices.Sort(ids)
	}
	if analytics {
		var refused string
		kept := ids[:0]
		for _, id := range ids {
			setting, err := q.AnalyticsRefusal(ctx, actor, id)
			if err != nil {
				return nil, err
			}
			if setting != "" {
				refused = setting
				continue
			}
			kept = append(kept, id)
		}
		ids = kept
		if refused != "" && len(ids) == 0 {
			return nil, domain.Errorf(domain.CodeForbidden, "analytics are hidden from your role in this workspace (%s is off)", refused)
		}
	}
	if len(ids) == 0 {
		return nil, domain.Errorf(domain.CodeForbidden, "this API key belongs to no workspace whose traffic it may read")
	}
	return ids, nil
}

// AnalyticsRefusal names the security setting that hides a workspace's analytics from the
// actor, or is empty. The settings are about people: they bind keys that act as a user whose
// role there is member or manager, never organisation admins or workspace service keys.
func (q *Queries) AnalyticsRefusal(ctx context.Context, actor domain.Actor, workspaceID string) (string, error) {
	if actor.UserID == "" && actor.Kind != domain.ActorUser {
		return "", nil
	}
	role, ok := actor.WorkspaceRole(workspaceID)
	if !ok {
		return "", nil
	}
	sec, err := q.Read.EffectiveSecurity(ctx, actor.OrganisationID, workspaceID)
	switch {
	case err != nil:
		return "", err
	case role == domain.RoleMember && !sec.MembersViewAnalytics:
		return "membersViewAnalytics", nil
	case role == domain.RoleManager && !sec.ManagersViewAnalytics:
		return "managersViewAnalytics", nil
	}
	return "", nil
}

// OwnKeysOnly reports whether the security settings (membersViewAllData, managersViewAllData)
// limit the actor's logs to the requests of their own API keys, and lists those keys. Like the
// analytics settings they bind keys acting as a user who is a member (manager) of a selected
// workspace whose setting is off; one such workspace limits the whole answer, which never
// shows more than any workspace allows.
func (q *Queries) OwnKeysOnly(ctx context.Context, actor domain.Actor, workspaces []string) ([]string, bool, error) {
	if actor.UserID == "" || actor.IsOrgAdmin() {
		return nil, false, nil
	}
	only := false
	for _, id := range workspaces {
		role, ok := actor.WorkspaceRole(id)
		if !ok {
			continue
		}
		sec, err := q.Read.EffectiveSecurity(ctx, actor.OrganisationID, id)
		if err != nil {
			return nil, false, err
		}
		if role == domain.RoleMember && !sec.MembersViewAllData || role == domain.RoleManager && !sec.ManagersViewAllData {
			only = true
		}
	}
	if !only {
		return nil, false, nil
	}
	keys, err := q.Read.APIKeys(ctx, projections.KeyFilter{OrganisationID: actor.OrganisationID,
		Visible: func(k domain.APIKey) bool { return k.UserID == actor.UserID }})
	if err != nil {
		return nil, false, err
	}
	var own []string
	for _, k := range keys {
		own = append(own, k.ID)
	}
	return own, true, nil
}

// OwnKeys is the api_key_ids filter of an actor limited to their own keys: the own keys, or
// those the client asked for, each of which must be one of them.
func OwnKeys(asked, own []string) ([]string, error) {
	if len(asked) == 0 {
		return own, nil
	}
	for _, id := range asked {
		if !slices.Contains(own, id) {
			return nil, &domain.Error{Code: domain.CodeForbidden, Param: "api_key_ids",
				Message: "your role sees only the logs of your own API keys (membersViewAllData or managersViewAllData is off); " + id + " is not one of them"}
		}
	}
	return asked, nil
}

// ConfigIDs turns config slugs (or ids) into the ids rows carry. A reference that names no
// config is kept as given, so that it matches no row rather than widening the filter.
func (q *Queries) ConfigIDs(ctx context.Context, orgID string, refs []string) ([]string, error) {
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		c, found, err := q.Read.SavedConfig(ctx, orgID, ref)
		if err != nil {
			return nil, err
		}
		if found {
			ref = c.ID
		}
		out = append(out, ref)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
