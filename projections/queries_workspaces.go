package projections

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// WorkspaceFilter selects workspaces in a list.
type WorkspaceFilter struct {
	OrganisationID string
	Visible        map[string]bool // nil: every workspace
	Statuses       map[string]bool
	NameContains   string // case-sensitive, as the reference says
	ExactName      string
}

// Workspaces lists the workspaces that f selects, newest first.
func (q Queries) Workspaces(ctx context.Context, f WorkspaceFilter) ([]domain.Workspace, error) {
	return all(ctx, q.Docs, domain.WorkspacePrefix, func(w *domain.Workspace) bool {
		return w.OrganisationID == f.OrganisationID && (f.Visible == nil || f.Visible[w.ID]) && f.Statuses[w.Status] &&
			strings.Contains(w.Name, f.NameContains) && (f.ExactName == "" || w.Name == f.ExactName)
	}, newestFirst(func(w *domain.Workspace) (time.Time, string) { return w.CreatedAt, w.ID }))
}

// WorkspaceBySlug returns the workspace of the organisation that holds slug.
func (q Queries) WorkspaceBySlug(ctx context.Context, orgID, slug string) (domain.Workspace, bool, error) {
	return first(all(ctx, q.Docs, domain.WorkspacePrefix, func(w *domain.Workspace) bool {
		return w.OrganisationID == orgID && w.Slug == slug
	}, func(a, b *domain.Workspace) bool { return a.ID < b.ID }))
}

// WorkspaceMember is a member of a workspace: the user, their role there, and when they
// joined it and last changed role.
type WorkspaceMember struct {
	User          domain.User
	Role          domain.Role
	CreatedAt     time.Time
	LastUpdatedAt time.Time
}

// WorkspaceMembers lists the members of a workspace of the organisation who are still
// members of the organisation, in the order they joined.
func (q Queries) WorkspaceMembers(ctx context.Context, orgID, workspaceID string) ([]WorkspaceMember, error) {
	ws, ok, err := q.Workspace(ctx, orgID, workspaceID)
	if err != nil || !ok {
		return nil, err
	}
	out := make([]WorkspaceMember, 0, len(ws.Members))
	for id, role := range ws.Members {
		u, ok, err := q.User(ctx, orgID, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out = append(out, WorkspaceMember{User: u, Role: role, CreatedAt: ws.MemberSince[id], LastUpdatedAt: ws.MemberChanged[id]})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].User.ID < out[j].User.ID
	})
	return out, nil
}

// EffectiveSecurity returns the security settings that hold in a workspace: the
// organisation's, with the workspace's overrides on top (2.8). An unknown workspace gets the
// organisation's; an unknown organisation the defaults.
func (q Queries) EffectiveSecurity(ctx context.Context, orgID, workspaceID string) (domain.SecuritySettings, error) {
	base := domain.DefaultSecuritySettings()
	o, ok, err := q.Organisation(ctx, orgID)
	if err != nil {
		return base, err
	}
	if ok {
		base = o.Security
	}
	ws, ok, err := q.Workspace(ctx, orgID, workspaceID)
	if err != nil {
		return base, err
	}
	if ok {
		return ws.Security.Over(base), nil
	}
	return base, nil
}
