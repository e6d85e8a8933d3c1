package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// Webhooks: an organisation webhook hears the whole organisation, so only organisation admins
// see it; a workspace webhook is seen by those who see its workspace.

// CanSeeWebhook reports whether the actor may read the webhook.
func CanSeeWebhook(actor domain.Actor, w domain.Webhook) bool {
	if w.WorkspaceID == "" {
		return VisibleWorkspaces(actor) == nil
	}
	return CanSee(actor, w.WorkspaceID)
}

// WebhookList selects the webhooks a list shows: of a status in Statuses; a workspace's own
// when WorkspaceID is set (the actor must see it), else the organisation's own when
// Organisation is set, else every webhook the actor sees.
type WebhookList struct {
	Statuses     map[string]bool
	WorkspaceID  string
	Organisation bool
}

// Webhooks lists the webhooks of the actor's organisation that l selects and the actor sees,
// newest first.
func (q *Queries) Webhooks(ctx context.Context, actor domain.Actor, l WebhookList) ([]domain.Webhook, error) {
	f := projections.WebhookFilter{OrganisationID: actor.OrganisationID, Statuses: l.Statuses, WorkspaceIDs: VisibleWorkspaces(actor)}
	switch {
	case l.WorkspaceID != "":
		ws, err := WorkspaceScope(actor, l.WorkspaceID)
		if err != nil {
			return nil, err
		}
		f.Scope, f.WorkspaceIDs = "workspace", ws
	case l.Organisation:
		if f.WorkspaceIDs != nil {
			return nil, domain.Errorf(domain.CodeForbidden, "only organisation owners and admins may read organisation webhooks")
		}
		f.Scope = "organisation"
	}
	return q.Read.Webhooks(ctx, f)
}

// VisibleWebhook is the webhook id, of a status in statuses, if the actor sees it; not found
// otherwise.
func (q *Queries) VisibleWebhook(ctx context.Context, actor domain.Actor, id string, statuses map[string]bool) (domain.Webhook, error) {
	w, ok, err := q.Read.Webhook(ctx, actor.OrganisationID, id)
	if err != nil {
		return domain.Webhook{}, err
	}
	if !ok || !statuses[w.Status] || !CanSeeWebhook(actor, w) {
		return domain.Webhook{}, domain.Errorf(domain.CodeNotFound, "webhook %s not found", id)
	}
	return w, nil
}
