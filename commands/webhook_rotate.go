package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// RotateWebhookSecret gives a webhook a new signing secret, shown once; deliveries are signed
// with it from then on.
type RotateWebhookSecret struct {
	WebhookID string
}

type rotateWebhookSecretHandler struct {
	d      Deps
	s      Sealer
	secret []byte
}

// NewRotateWebhookSecretHandler refuses missing dependencies.
func NewRotateWebhookSecretHandler(d Deps, s Sealer, serverSecret []byte) (rotateWebhookSecretHandler, error) {
	return rotateWebhookSecretHandler{d, s, serverSecret}, checkSealerDeps(d, s)
}

func (h rotateWebhookSecretHandler) Handle(ctx context.Context, c RotateWebhookSecret) (CreatedWebhook, error) {
	if _, err := loadWebhookFor(ctx, h.d, c.WebhookID, webhookUpdateScope); err != nil {
		return CreatedWebhook{}, err
	}
	stream := domain.Stream(domain.WebhookPrefix, c.WebhookID)
	secret, err := newWebhookSecret(ctx, h.secret, "rotate:"+c.WebhookID)
	if err != nil {
		return CreatedWebhook{}, err
	}
	sealed, err := sealWebhookSecret(h.s, stream, secret)
	if err != nil {
		return CreatedWebhook{}, err
	}
	by, now := actorName(RequestFrom(ctx).Actor), h.d.Now()
	res, err := execute(ctx, h.d, stream, newWebhook,
		func(w *domain.Webhook) ([]domain.Event, error) { return w.RotateSecret(sealed, by, now) })
	if err != nil {
		return CreatedWebhook{}, err
	}
	res.ID = c.WebhookID
	return CreatedWebhook{Result: res, Secret: secret}, nil
}
