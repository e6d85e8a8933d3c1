package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CancelInvite is DELETE on an invite: its link stops working, and its e-mail may be invited
// again. The invite stays readable with status cancelled.
type CancelInvite struct{ InviteID string }

type cancelInviteHandler struct{ d Deps }

func NewCancelInviteHandler(d Deps) (cancelInviteHandler, error) {
	return cancelInviteHandler{d}, d.check()
}

func (h cancelInviteHandler) Handle(ctx context.Context, c CancelInvite) (Result, error) {
	inv, err := loadInviteFor(ctx, h.d, c.InviteID, "delete")
	if err != nil {
		return Result{}, err
	}
	by := RequestFrom(ctx).Actor.ID
	res, err := execute(ctx, h.d, domain.Stream(domain.InvitePrefix, inv.ID), newInvite,
		func(i *domain.Invite) ([]domain.Event, error) { return i.Cancel(by, h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	res.ID = inv.ID
	return res, releaseEmail(ctx, h.d, InviteEmailReservation, inv.Email, inv.ID)
}
