package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// PlanNotificationDeliveries settles where a notification goes: the delivery worker resolves
// its audiences to addresses and picks the webhooks that match it, then records them here,
// once (a plan made already stands, whoever made it). Only the system actor plans.
type PlanNotificationDeliveries struct {
	NotificationID string
	Deliveries     []domain.DeliveryTarget
}

type planNotificationDeliveriesHandler struct{ d Deps }

// NewPlanNotificationDeliveriesHandler refuses missing dependencies.
func NewPlanNotificationDeliveriesHandler(d Deps) (Handler[PlanNotificationDeliveries, Result], error) {
	return authorised(systemOnly("only the delivery worker plans deliveries"),
		Handler[PlanNotificationDeliveries, Result](planNotificationDeliveriesHandler{d})), d.check()
}

func (h planNotificationDeliveriesHandler) Handle(ctx context.Context, c PlanNotificationDeliveries) (Result, error) {
	now := h.d.Now()
	return onNotification(ctx, h.d, c.NotificationID, func(n *domain.Notification) ([]domain.Event, error) {
		return n.PlanDeliveries(c.Deliveries, now)
	})
}

func newNotification() *domain.Notification { return &domain.Notification{} }

// onNotification decides on a notification of the system actor's organisation.
func onNotification(ctx context.Context, d Deps, id string, decide func(*domain.Notification) ([]domain.Event, error)) (Result, error) {
	res, err := executeForSystem(ctx, d, domain.Stream(domain.NotificationPrefix, id), "notification "+id, newNotification,
		func(n *domain.Notification) string { return n.OrganisationID }, decide)
	res.ID = id
	return res, err
}
