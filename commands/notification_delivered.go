package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// RecordNotificationDelivered records that one delivery of a notification was made. A
// delivery recorded already stays as it is, so a worker that sent twice (at least once, as a
// crash between the send and this record allows) records it once.
type RecordNotificationDelivered struct {
	NotificationID string
	Channel        string
	Target         string
}

type recordNotificationDeliveredHandler struct{ d Deps }

// NewRecordNotificationDeliveredHandler refuses missing dependencies.
func NewRecordNotificationDeliveredHandler(d Deps) (Handler[RecordNotificationDelivered, Result], error) {
	return authorised(systemOnly("only the delivery worker records deliveries"),
		Handler[RecordNotificationDelivered, Result](recordNotificationDeliveredHandler{d})), d.check()
}

func (h recordNotificationDeliveredHandler) Handle(ctx context.Context, c RecordNotificationDelivered) (Result, error) {
	now := h.d.Now()
	return onNotification(ctx, h.d, c.NotificationID, func(n *domain.Notification) ([]domain.Event, error) {
		return n.RecordDelivered(c.Channel, c.Target, now)
	})
}
