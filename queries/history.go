package queries

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
)

// Reads of the past that need more than one stream: a list as it was (PastModel), a
// workspace's members and a user's workspaces at an instant, and the stream a history path
// names.

// PastEvents is an event store that can be read whole, as lists as of an instant need.
type PastEvents = memory.PastReader

// PastModel is the read model as it stood at an instant (memory.AsOf): lists as of then run
// their normal queries against it. It also says when the last event folded into it was
// recorded (zero when none was). ok is false when the event store cannot be read whole.
func (q *Queries) PastModel(ctx context.Context, at time.Time) (past *memory.Model, since time.Time, ok bool, err error) {
	if err := q.check(); err != nil {
		return nil, time.Time{}, false, err
	}
	store, ok := q.Events.(PastEvents)
	if !ok {
		return nil, time.Time{}, false, nil
	}
	past, since, err = memory.AsOf(ctx, store, q.Registry, at)
	return past, since, true, err
}

// WorkspaceMembersAsOf lists a workspace's members as they were at the instant, each user as
// they were then, in the order the read model lists them.
func (q *Queries) WorkspaceMembersAsOf(ctx context.Context, ws domain.Workspace, at time.Time) ([]projections.WorkspaceMember, error) {
	members := make([]projections.WorkspaceMember, 0, len(ws.Members))
	for id, role := range ws.Members {
		u, _, ok, err := LoadAsOf(ctx, q, domain.Stream(domain.UserPrefix, id), func() *domain.User { return &domain.User{} }, at)
		if err != nil {
			return nil, err
		}
		if !ok || !u.Exists() || u.OrganisationID != ws.OrganisationID {
			continue
		}
		members = append(members, projections.WorkspaceMember{User: *u, Role: role, CreatedAt: ws.MemberSince[id], LastUpdatedAt: ws.MemberChanged[id]})
	}
	sort.Slice(members, func(i, j int) bool {
		if !members[i].CreatedAt.Equal(members[j].CreatedAt) {
			return members[i].CreatedAt.Before(members[j].CreatedAt)
		}
		return members[i].User.ID < members[j].User.ID
	})
	return members, nil
}

// MemberWorkspacesAsOf is the user's workspaces at the instant. Memberships live in the
// workspace streams, so every workspace of the organisation is folded to the instant;
// workspaces are archived, never removed, so the read model lists every one there was.
func (q *Queries) MemberWorkspacesAsOf(ctx context.Context, u domain.User, at time.Time) ([]string, error) {
	out := []string{}
	all, err := q.Read.Workspaces(ctx, projections.WorkspaceFilter{OrganisationID: u.OrganisationID,
		Statuses: map[string]bool{domain.StatusActive: true, domain.StatusArchived: true}})
	if err != nil {
		return nil, err
	}
	for _, ws := range all {
		past, _, ok, err := LoadAsOf(ctx, q, domain.Stream(domain.WorkspacePrefix, ws.ID), func() *domain.Workspace { return &domain.Workspace{} }, at)
		if err != nil {
			return nil, err
		}
		if _, member := past.Members[u.ID]; ok && member {
			out = append(out, ws.ID)
		}
	}
	sort.Strings(out)
	return out, nil
}

// HistoryID is the stream id of the resource a history path names: its id, or the slug by
// which the API names workspaces, integrations, configs, guardrails, prompts, partials and
// (when one workspace has it) managed providers, or a label's name. Slugs never change, so
// today's slug names the same resource in the past; a label's name names the label that holds
// it now.
func (q *Queries) HistoryID(ctx context.Context, orgID, prefix, ref string, isID func(string) bool) (string, error) {
	if isID(ref) {
		return ref, nil
	}
	switch prefix {
	case domain.WorkspacePrefix:
		ws, ok, err := q.Read.WorkspaceBySlug(ctx, orgID, ref)
		if ok {
			return ws.ID, err
		}
		return ref, err
	case domain.IntegrationPrefix:
		i, ok, err := q.Read.IntegrationBySlug(ctx, orgID, ref)
		if ok {
			return i.ID, err
		}
		return ref, err
	case domain.SavedConfigPrefix:
		c, ok, err := q.Read.SavedConfig(ctx, orgID, ref)
		if ok {
			return c.ID, err
		}
		return ref, err
	case domain.GuardrailPrefix:
		g, ok, err := q.Read.Guardrail(ctx, orgID, ref)
		if ok {
			return g.ID, err
		}
		return ref, err
	case domain.PromptPrefix:
		p, ok, err := q.Read.Prompt(ctx, orgID, ref)
		if ok {
			return p.ID, err
		}
		return ref, err
	case domain.PromptPartialPrefix:
		p, ok, err := q.Read.PromptPartial(ctx, orgID, ref)
		if ok {
			return p.ID, err
		}
		return ref, err
	case domain.PromptLabelPrefix:
		l, ok, err := q.Read.PromptLabel(ctx, orgID, ref)
		if ok {
			return l.ID, err
		}
		return ref, err
	case domain.ProviderPrefix:
		ps, err := q.Read.ManagedProvidersBySlug(ctx, orgID, strings.TrimPrefix(ref, "@"))
		if len(ps) == 1 {
			return ps[0].ID, err
		}
		return ref, err
	}
	return ref, nil
}

// OrganisationOf is the organisation a resource belongs to ("" for none).
func OrganisationOf(agg domain.Aggregate) string {
	switch v := agg.(type) {
	case *domain.Organisation:
		return v.ID
	case *domain.Workspace:
		return v.OrganisationID
	case *domain.User:
		return v.OrganisationID
	case *domain.Invite:
		return v.OrganisationID
	case *domain.APIKey:
		return v.OrganisationID
	case *domain.RateLimitPolicy:
		return v.OrganisationID
	case *domain.UsageLimitPolicy:
		return v.OrganisationID
	case *domain.Notification:
		return v.OrganisationID
	case *domain.Integration:
		return v.OrganisationID
	case *domain.Provider:
		return v.OrganisationID
	case *domain.SavedConfig:
		return v.OrganisationID
	case *domain.Guardrail:
		return v.OrganisationID
	case *domain.Prompt:
		return v.OrganisationID
	case *domain.PromptPartial:
		return v.OrganisationID
	case *domain.PromptLabel:
		return v.OrganisationID
	case *domain.PromptCollection:
		return v.OrganisationID
	case *domain.ModelPricingOverride:
		return v.OrganisationID
	case *domain.LogExport:
		return v.OrganisationID
	case *domain.Webhook:
		return v.OrganisationID
	}
	return ""
}
