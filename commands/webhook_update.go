package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateWebhook changes a webhook's name, URL, kinds or disabled flag; nil fields stay. A
// webhook stays in the workspace (or organisation) it was created in.
type UpdateWebhook struct {
	WebhookID string
	Name      *string
	URL       *string
	Kinds     *[]string
	Disabled  *bool
}

type updateWebhookHandler struct {
	d Deps
	u URLChecker
}

// NewUpdateWebhookHandler refuses missing dependencies.
func NewUpdateWebhookHandler(d Deps, u URLChecker) (updateWebhookHandler, error) {
	return updateWebhookHandler{d, u}, checkURLDeps(d, u)
}

func (h updateWebhookHandler) Handle(ctx context.Context, c UpdateWebhook) (Result, error) {
	if _, err := loadWebhookFor(ctx, h.d, c.WebhookID, webhookUpdateScope); err != nil {
		return Result{}, err
	}
	in := domain.UpdateWebhook{Name: c.Name, URL: c.URL, Kinds: c.Kinds, Disabled: c.Disabled, By: actorName(RequestFrom(ctx).Actor)}
	now := h.d.Now()
	if c.URL != nil {
		if err := checkWebhookURL(h.u, *c.URL); err != nil {
			return Result{}, err
		}
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.WebhookPrefix, c.WebhookID), newWebhook,
		func(w *domain.Webhook) ([]domain.Event, error) { return w.Update(in, now) })
	res.ID = c.WebhookID
	return res, err
}
