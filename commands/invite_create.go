package commands

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
)

// CreateInvite invites an e-mail into the organisation with a role, optionally into
// workspaces, optionally with a workspace API key for each when accepted.
type CreateInvite struct {
	Email      string
	Role       string
	Workspaces []domain.InviteWorkspace
	KeyDetails *domain.InviteKeyDetails
}

// CreatedInvite is the only answer, with ResentInvite, that carries the invite's token.
type CreatedInvite struct {
	Result
	Token     string
	ExpiresAt time.Time
}

type createInviteHandler struct {
	d      Deps
	secret []byte
}

// NewCreateInviteHandler needs the server secret from which retried creates derive their token.
// Only an actor that may invite at all goes further (authoriseInviter); what it may grant is
// the decision's.
func NewCreateInviteHandler(d Deps, secret []byte) (Handler[CreateInvite, CreatedInvite], error) {
	if len(secret) < 32 {
		return createInviteHandler{}, domain.Errorf(domain.CodeInternal, "commands: the server secret must be at least 32 bytes")
	}
	return authorised(needs(authoriseInviter, "create"), createInviteHandler{d, secret}), d.check()
}

func (h createInviteHandler) Handle(ctx context.Context, c CreateInvite) (CreatedInvite, error) {
	req := RequestFrom(ctx)
	actor := req.Actor
	id := NewID(ctx, "invite")
	token := domain.NewInviteToken(id)
	if req.IdempotencyKey != "" {
		token = domain.DeriveInviteToken(h.secret, id, actor.ID+"\x00"+req.IdempotencyKey)
	}
	now := h.d.Now()
	in := domain.CreateInvite{InviteID: id, OrganisationID: actor.OrganisationID, Email: c.Email, Role: c.Role,
		Workspaces: c.Workspaces, KeyDetails: c.KeyDetails, Token: token, InvitedBy: actor.ID}
	valid, err := domain.NewInvite(in, now)
	if err != nil {
		return CreatedInvite{}, err
	}
	if err := authoriseInviteGrant(actor, valid.Role, valid.Workspaces); err != nil {
		return CreatedInvite{}, err
	}
	if err := keyScopesHeld(actor, valid.WorkspaceAPIKeyDetails); err != nil {
		return CreatedInvite{}, err
	}
	if err := invitedWorkspaces(ctx, h.d, actor.OrganisationID, valid.Workspaces); err != nil {
		return CreatedInvite{}, err
	}
	if in.Member, _, err = emailHolder(ctx, h.d, actor.OrganisationID, valid.Email); err != nil {
		return CreatedInvite{}, err
	}
	pending, stale, err := otherInvite(ctx, h.d, valid.Email, id)
	if err != nil {
		return CreatedInvite{}, err
	}
	in.PendingInviteID = pending
	// Decide once before writing anything, so that a refusal leaves no reservation behind.
	if _, err := (&domain.Invite{}).Create(in, now); err != nil {
		return CreatedInvite{}, err
	}
	if err := holdInviteEmail(ctx, h.d, valid.Email, id, stale); err != nil {
		return CreatedInvite{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.InvitePrefix, id), newInvite,
		func(i *domain.Invite) ([]domain.Event, error) { return i.Create(in, now) })
	if err != nil {
		return CreatedInvite{}, err
	}
	res.ID = id
	if !res.Replayed {
		inv, err := Load(ctx, h.d, domain.Stream(domain.InvitePrefix, id), newInvite)
		if err != nil {
			return CreatedInvite{}, err
		}
		pos, err := notifyInvite(ctx, h.d, *inv, "invite")
		if err != nil {
			return CreatedInvite{}, err
		}
		res.Position = max(res.Position, pos)
	}
	return CreatedInvite{Result: res, Token: token, ExpiresAt: valid.ExpiresAt}, nil
}
