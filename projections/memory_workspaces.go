package projections

import (
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
func (m *Model) Workspaces(f WorkspaceFilter) []domain.Workspace {
	return all(m, domain.WorkspacePrefix, func(w *domain.Workspace) bool {
		return w.OrganisationID == f.OrganisationID && (f.Visible == nil || f.Visible[w.ID]) && f.Statuses[w.Status] &&
			strings.Contains(w.Name, f.NameContains) && (f.ExactName == "" || w.Name == f.ExactName)
	}, newestFirst(func(w *domain.Workspace) (time.Time, string) { return w.CreatedAt, w.ID }))
}

// WorkspaceBySlug returns the workspace of the organisation that holds slug.
func (m *Model) WorkspaceBySlug(orgID, slug string) (domain.Workspace, bool) {
	found := all(m, domain.WorkspacePrefix, func(w *domain.Workspace) bool {
		return w.OrganisationID == orgID && w.Slug == slug
	}, func(a, b *domain.Workspace) bool { return a.ID < b.ID })
	if len(found) == 0 {
		return domain.Workspace{}, false
	}
	return found[0], true
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
func (m *Model) WorkspaceMembers(orgID, workspaceID string) []WorkspaceMember {
	ws, ok := m.Workspace(orgID, workspaceID)
	if !ok {
		return nil
	}
	out := make([]WorkspaceMember, 0, len(ws.Members))
	for id, role := range ws.Members {
		u, ok := m.User(orgID, id)
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
	return out
}

// EffectiveSecurity returns the security settings that hold in a workspace: the
// organisation's, with the workspace's overrides on top (2.8). An unknown workspace gets the
// organisation's; an unknown organisation the defaults.
func (m *Model) EffectiveSecurity(orgID, workspaceID string) domain.SecuritySettings {
	base := domain.DefaultSecuritySettings()
	if o, ok := m.Organisation(orgID); ok {
		base = o.Security
	}
	if ws, ok := m.Workspace(orgID, workspaceID); ok {
		return ws.Security.Over(base)
	}
	return base
}
