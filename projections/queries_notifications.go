package projections

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// StatusScanner is what a backend may offer beyond Documents: a scan of the aggregates of
// prefix whose JSON "status" is status, which it can select without reading the others
// (PostgreSQL's status column). Queries fall back to Scan where it is missing.
type StatusScanner interface {
	ScanStatus(ctx context.Context, prefix, status string, fn func(domain.Aggregate)) error
}

// PendingDeliveries lists, across organisations and oldest first, the notifications the
// delivery worker has to act on: those whose deliveries are not all settled. A notification
// not yet planned counts only when it was recorded at notBefore or later, so that a
// deployment that starts delivering does not deliver its whole history.
func (q Queries) PendingDeliveries(ctx context.Context, notBefore time.Time) ([]domain.Notification, error) {
	var out []domain.Notification
	keep := func(agg domain.Aggregate) {
		if n, ok := agg.(*domain.Notification); ok && n.ID != "" && n.Status == domain.DeliveryPending &&
			(n.Planned() || !n.CreatedAt.Before(notBefore)) {
			out = append(out, *n)
		}
	}
	var err error
	if s, ok := q.Docs.(StatusScanner); ok {
		err = s.ScanStatus(ctx, domain.NotificationPrefix, domain.DeliveryPending, keep)
	} else {
		err = q.Docs.Scan(ctx, domain.NotificationPrefix, keep)
	}
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []domain.Notification{}
	}
	slices.SortFunc(out, func(a, b domain.Notification) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Audiences a notification's recipients may name, beside e-mail addresses: the organisation's
// owners and admins, and a workspace's admins or managers (workspace:<id>:admins).
const (
	AudienceOrganisationAdmins = "organisation:admins"
	audienceWorkspace          = "workspace:"
)

// NotificationAddresses resolves recipients to e-mail addresses as they are now: an address
// stands for itself; organisation:admins are the organisation's active owners and admins;
// workspace:<id>:admins and workspace:<id>:managers the members of that workspace with that
// role who are still in the organisation. The answer is lower case, sorted, each address once;
// an audience it does not know resolves to nobody.
func (q Queries) NotificationAddresses(ctx context.Context, orgID string, recipients []string) ([]string, error) {
	seen := map[string]bool{}
	add := func(addr string) {
		if addr = strings.ToLower(strings.TrimSpace(addr)); strings.Contains(addr, "@") {
			seen[addr] = true
		}
	}
	for _, r := range recipients {
		switch {
		case r == AudienceOrganisationAdmins:
			users, err := all(ctx, q.Docs, domain.UserPrefix, func(u *domain.User) bool {
				return u.OrganisationID == orgID && u.Exists() && (u.Role == domain.RoleOwner || u.Role == domain.RoleAdmin)
			}, func(a, b *domain.User) bool { return a.ID < b.ID })
			if err != nil {
				return nil, err
			}
			for _, u := range users {
				add(u.Email)
			}
		case strings.HasPrefix(r, audienceWorkspace):
			wsID, role, ok := workspaceAudience(r)
			if !ok {
				continue
			}
			members, err := q.WorkspaceMembers(ctx, orgID, wsID)
			if err != nil {
				return nil, err
			}
			for _, m := range members {
				if m.Role == role {
					add(m.User.Email)
				}
			}
		default:
			add(r)
		}
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	slices.Sort(out)
	return out, nil
}

// workspaceAudience reads workspace:<id>:admins or workspace:<id>:managers.
func workspaceAudience(r string) (wsID string, role domain.Role, ok bool) {
	rest := strings.TrimPrefix(r, audienceWorkspace)
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", "", false
	}
	switch rest[i+1:] {
	case "admins":
		return rest[:i], domain.RoleAdmin, true
	case "managers":
		return rest[:i], domain.RoleManager, true
	}
	return "", "", false
}

// WebhooksFor lists, by id, the webhooks that n is delivered to (domain.Webhook.Matches).
func (q Queries) WebhooksFor(ctx context.Context, n domain.Notification) ([]domain.Webhook, error) {
	return all(ctx, q.Docs, domain.WebhookPrefix, func(w *domain.Webhook) bool { return w.Matches(n) },
		func(a, b *domain.Webhook) bool { return a.ID < b.ID })
}

// WebhookFilter selects webhooks in a list.
type WebhookFilter struct {
	OrganisationID string
	Statuses       map[string]bool
	// Scope is "organisation" (the organisation's own webhooks only), "workspace"
	// (workspaces' webhooks only) or "" for both.
	Scope string
	// WorkspaceIDs keeps the workspace webhooks of these workspaces, and then no organisation
	// webhook; nil: every webhook.
	WorkspaceIDs map[string]bool
}

func (f WebhookFilter) keep(w *domain.Webhook) bool {
	if w.OrganisationID != f.OrganisationID || !f.Statuses[w.Status] {
		return false
	}
	switch {
	case w.WorkspaceID == "":
		return f.Scope != "workspace" && f.WorkspaceIDs == nil
	case f.Scope == "organisation":
		return false
	}
	return f.WorkspaceIDs == nil || f.WorkspaceIDs[w.WorkspaceID]
}

// Webhooks lists the webhooks that f selects, newest first.
func (q Queries) Webhooks(ctx context.Context, f WebhookFilter) ([]domain.Webhook, error) {
	return all(ctx, q.Docs, domain.WebhookPrefix, f.keep,
		newestFirst(func(w *domain.Webhook) (time.Time, string) { return w.CreatedAt, w.ID }))
}

// Webhook returns a webhook of the organisation by its id, deleted or not.
func (q Queries) Webhook(ctx context.Context, orgID, id string) (domain.Webhook, bool, error) {
	w, ok, err := get[domain.Webhook](ctx, q.Docs, domain.WebhookPrefix, id)
	return w, ok && w.OrganisationID == orgID, err
}
