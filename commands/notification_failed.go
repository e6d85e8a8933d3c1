package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// RecordNotificationDeliveryFailed records a failed attempt of one delivery: its error (which
// the worker makes free of secrets and URLs), and when it is tried again, or that it is not.
// An attempt recorded already is recorded once.
type RecordNotificationDeliveryFailed struct {
	NotificationID string
	domain.DeliveryFailure
}

type recordNotificationDeliveryFailedHandler struct{ d Deps }

// NewRecordNotificationDeliveryFailedHandler refuses missing dependencies.
func NewRecordNotificationDeliveryFailedHandler(d Deps) (Handler[RecordNotificationDeliveryFailed, Result], error) {
	return authorised(systemOnly("only the delivery worker records deliveries"),
		Handler[RecordNotificationDeliveryFailed, Result](recordNotificationDeliveryFailedHandler{d})), d.check()
}

func (h recordNotificationDeliveryFailedHandler) Handle(ctx context.Context, c RecordNotificationDeliveryFailed) (Result, error) {
	now := h.d.Now()
	return onNotification(ctx, h.d, c.NotificationID, func(n *domain.Notification) ([]domain.Event, error) {
		return n.RecordFailure(c.DeliveryFailure, now)
	})
}
