package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// notify records a notification as an event in a stream of its own. With an idempotency key
// (a retried request, or a worker's deterministic key) it is recorded once.
func notify(ctx context.Context, d Deps, n domain.NotificationRecorded) error {
	if n.NotificationID == "" {
		n.NotificationID = NewID(ctx, "notification:"+n.Kind+":"+n.ResourceID)
	}
	if n.At.IsZero() {
		n.At = d.Now()
	}
	_, err := execute(ctx, d, domain.Stream(domain.NotificationPrefix, n.NotificationID),
		func() *domain.Notification { return &domain.Notification{} },
		func(existing *domain.Notification) ([]domain.Event, error) {
			if existing.ID != "" {
				return nil, nil
			}
			return []domain.Event{n}, nil
		})
	return err
}
