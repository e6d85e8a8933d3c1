package queries

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// APIKeys lists the keys of the actor's organisation that it may read (KeyReadable), of one
// workspace when workspaceID is set (which the actor must see), newest first.
func (q *Queries) APIKeys(ctx context.Context, actor domain.Actor, workspaceID string) ([]domain.APIKey, error) {
	if workspaceID != "" && !CanSee(actor, workspaceID) {
		return nil, domain.Errorf(domain.CodeForbidden, "this API key has no access to workspace %s", workspaceID)
	}
	return q.Read.APIKeys(ctx, projections.KeyFilter{OrganisationID: actor.OrganisationID, WorkspaceID: workspaceID,
		Visible: func(k domain.APIKey) bool { return KeyReadable(actor, k) == nil }})
}

// APIKey is one key the actor may read: not found when deleted or out of its reach,
// forbidden when in reach without the read scope.
func (q *Queries) APIKey(ctx context.Context, actor domain.Actor, id string) (domain.APIKey, error) {
	k, ok, err := q.Read.APIKey(ctx, actor.OrganisationID, id)
	if err != nil {
		return domain.APIKey{}, err
	}
	if !ok {
		return domain.APIKey{}, domain.Errorf(domain.CodeNotFound, "api key %s not found", id)
	}
	if err := KeyReadable(actor, k); err != nil {
		return domain.APIKey{}, err
	}
	return k, nil
}
