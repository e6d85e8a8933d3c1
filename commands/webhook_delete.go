package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// DeleteWebhook is DELETE on a webhook: nothing is posted to it after it. Deliveries planned
// to it and not yet made are recorded failed when their turn comes.
type DeleteWebhook struct {
	WebhookID string
}

type deleteWebhookHandler struct{ d Deps }

// NewDeleteWebhookHandler refuses missing dependencies.
func NewDeleteWebhookHandler(d Deps) (deleteWebhookHandler, error) {
	return deleteWebhookHandler{d}, d.check()
}

func (h deleteWebhookHandler) Handle(ctx context.Context, c DeleteWebhook) (Result, error) {
	if _, err := loadWebhookFor(ctx, h.d, c.WebhookID, webhookDeleteScope); err != nil {
		return Result{}, err
	}
	by, now := actorName(RequestFrom(ctx).Actor), h.d.Now()
	res, err := execute(ctx, h.d, domain.Stream(domain.WebhookPrefix, c.WebhookID), newWebhook,
		func(w *domain.Webhook) ([]domain.Event, error) { return w.Delete(by, now) })
	res.ID = c.WebhookID
	return res, err
}
