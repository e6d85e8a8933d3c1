package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ResendInvite sends an invite again with a new token (the old link stops working) and a new
// seven-day expiry.
type ResendInvite struct{ InviteID string }

type resendInviteHandler struct {
	d      Deps
	secret []byte
}

// NewResendInviteHandler needs the server secret from which retried resends derive their token.
func NewResendInviteHandler(d Deps, secret []byte) (resendInviteHandler, error) {
	if len(secret) < 32 {
		return resendInviteHandler{}, domain.Errorf(domain.CodeInternal, "commands: the server secret must be at least 32 bytes")
	}
	return resendInviteHandler{d, secret}, d.check()
}

func (h resendInviteHandler) Handle(ctx context.Context, c ResendInvite) (CreatedInvite, error) {
	req := RequestFrom(ctx)
	inv, err := loadInviteFor(ctx, h.d, c.InviteID, "create")
	if err != nil {
		return CreatedInvite{}, err
	}
	token := domain.NewInviteToken(inv.ID)
	if req.IdempotencyKey != "" {
		token = domain.DeriveInviteToken(h.secret, inv.ID, "resend\x00"+req.Actor.ID+"\x00"+req.IdempotencyKey)
	}
	now := h.d.Now()
	// Decide once before writing anything: an accepted or cancelled invite is refused here.
	if _, err := inv.Resend(token, req.Actor.ID, now); err != nil {
		return CreatedInvite{}, err
	}
	// An expired invite revived by a resend must not stand beside a newer pending one.
	pending, stale, err := otherInvite(ctx, h.d, inv.Email, inv.ID)
	if err != nil {
		return CreatedInvite{}, err
	}
	if pending != "" {
		return CreatedInvite{}, domain.InvitePending(inv.Email, pending)
	}
	if err := holdInviteEmail(ctx, h.d, inv.Email, inv.ID, stale); err != nil {
		return CreatedInvite{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.InvitePrefix, inv.ID), newInvite,
		func(i *domain.Invite) ([]domain.Event, error) { return i.Resend(token, req.Actor.ID, now) })
	if err != nil {
		return CreatedInvite{}, err
	}
	res.ID = inv.ID
	resent, err := Load(ctx, h.d, domain.Stream(domain.InvitePrefix, inv.ID), newInvite)
	if err != nil {
		return CreatedInvite{}, err
	}
	if !res.Replayed {
		pos, err := notifyInvite(ctx, h.d, *resent, "invite-resend")
		if err != nil {
			return CreatedInvite{}, err
		}
		res.Position = max(res.Position, pos)
	}
	return CreatedInvite{Result: res, Token: token, ExpiresAt: resent.ExpiresAt}, nil
}
