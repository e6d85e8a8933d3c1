package commands

import (
	"context"
	"strings"

	"github.com/causeway/causeway/domain"
)

// CreateWebhook creates a webhook: a workspace webhook of WorkspaceID, which hears that
// workspace's notifications, or without one (an organisation key only) an organisation
// webhook, which hears them all. A workspace key creates webhooks of its own workspace.
type CreateWebhook struct {
	WorkspaceID string
	Name        string
	URL         string
	Kinds       []string
	Disabled    bool
}

// CreatedWebhook answers a create with the signing secret, shown this once.
type CreatedWebhook struct {
	Result
	Secret string
}

type createWebhookHandler struct {
	d      Deps
	s      Sealer
	u      URLChecker
	secret []byte
}

// NewCreateWebhookHandler refuses missing dependencies.
func NewCreateWebhookHandler(d Deps, s Sealer, u URLChecker, serverSecret []byte) (createWebhookHandler, error) {
	return createWebhookHandler{d, s, u, serverSecret}, checkSecretDeps(d, s, u)
}

func (h createWebhookHandler) Handle(ctx context.Context, c CreateWebhook) (CreatedWebhook, error) {
	actor := RequestFrom(ctx).Actor
	wsID := strings.TrimSpace(c.WorkspaceID)
	if actor.Kind == domain.ActorAPIKey && actor.KeyType != domain.KeyOrganisationService {
		var err error
		if wsID, err = targetWorkspace(actor, wsID); err != nil {
			return CreatedWebhook{}, err
		}
	}
	if err := integrationWriter(ctx, h.d, wsID, webhookCreateScope); err != nil {
		return CreatedWebhook{}, err
	}
	if wsID != "" {
		if _, err := activeWorkspace(ctx, h.d, actor.OrganisationID, wsID); err != nil {
			return CreatedWebhook{}, err
		}
	}
	id := NewID(ctx, "webhook")
	stream := domain.Stream(domain.WebhookPrefix, id)
	spec := domain.CreateWebhook{WebhookID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID, Name: c.Name,
		URL: c.URL, Kinds: c.Kinds, Disabled: c.Disabled, By: actorName(actor)}
	// The form first, so that a bad field is named before the host is looked up and before a
	// secret is made (the trial decision holds a stand-in for it).
	now := h.d.Now()
	trial := spec
	trial.SealedSecret = "trial"
	if _, err := (&domain.Webhook{}).Create(trial, now); err != nil {
		return CreatedWebhook{}, err
	}
	if err := checkWebhookURL(h.u, c.URL); err != nil {
		return CreatedWebhook{}, err
	}
	secret, err := newWebhookSecret(ctx, h.secret, "create")
	if err != nil {
		return CreatedWebhook{}, err
	}
	if spec.SealedSecret, err = sealWebhookSecret(h.s, stream, secret); err != nil {
		return CreatedWebhook{}, err
	}
	res, err := execute(ctx, h.d, stream, newWebhook,
		func(w *domain.Webhook) ([]domain.Event, error) { return w.Create(spec, now) })
	if err != nil {
		return CreatedWebhook{}, err
	}
	res.ID = id
	return CreatedWebhook{Result: res, Secret: secret}, nil
}
