package commands

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/causeway/causeway/domain"
)

// The specification names no scopes and no security setting for webhooks. They are
// outbound integrations: written and read with the integrations scopes (integrations.create,
// .read, .list, .update, .delete), an organisation webhook by organisation admins, a
// workspace webhook also by the workspace's managers unless managersWriteWsIntegrations is
// off, as workspace integrations are (integrationWriter).
const (
	webhookCreateScope = "integrations.create"
	webhookUpdateScope = "integrations.update"
	webhookDeleteScope = "integrations.delete"
)

// WebhookSecretPrefix starts every signing secret, as Standard Webhooks writes them: the rest
// is the base64 of the key's bytes.
const WebhookSecretPrefix = "whsec_"

// webhookSecretField names the sealed secret within its stream (domain.CredentialAAD).
const webhookSecretField = "secret"

func newWebhook() *domain.Webhook { return &domain.Webhook{} }

// loadWebhookFor loads a live webhook of the actor's organisation that the actor may change
// with scope.
func loadWebhookFor(ctx context.Context, d Deps, id, scope string) (*domain.Webhook, error) {
	actor := RequestFrom(ctx).Actor
	w, err := Load(ctx, d, domain.Stream(domain.WebhookPrefix, id), newWebhook)
	if err != nil {
		return nil, err
	}
	if !w.Exists() || w.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "webhook %s not found", id)
	}
	if err := integrationWriter(ctx, d, w.WorkspaceID, scope); err != nil {
		return nil, err
	}
	return w, nil
}

// newWebhookSecret makes a signing secret: 32 random bytes, or with an idempotency key 32
// bytes derived from the server secret, the actor, the key and purpose, so that a retried
// create or rotation answers the secret it sealed the first time.
func newWebhookSecret(ctx context.Context, serverSecret []byte, purpose string) (string, error) {
	key := make([]byte, 32)
	req := RequestFrom(ctx)
	if req.IdempotencyKey == "" {
		if _, err := rand.Read(key); err != nil {
			return "", err
		}
	} else {
		mac := hmac.New(sha256.New, serverSecret)
		mac.Write([]byte("webhook-secret\x00" + req.Actor.ID + "\x00" + req.IdempotencyKey + "\x00" + purpose))
		key = mac.Sum(nil)
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// sealWebhookSecret seals a signing secret for the webhook of stream.
func sealWebhookSecret(s Sealer, stream, secret string) (string, error) {
	return sealFor(s, stream)([]byte(secret), webhookSecretField)
}

// checkWebhookURL runs the host check on a webhook's URL; a refusal names the field.
func checkWebhookURL(u URLChecker, raw string) error {
	if err := domain.ValidateWebhookURL("url", raw); err != nil {
		return err
	}
	if err := u.CheckURL(raw); err != nil {
		return domain.Invalid("url", "url is refused: %v", err)
	}
	return nil
}

// WebhookEndpoints are the webhooks as the delivery worker posts to them: read from their
// streams (never behind, unlike a read model) with their signing keys opened.
type WebhookEndpoints struct {
	d Deps
	s Sealer
}

// NewWebhookEndpoints opens signing secrets with the sealer of the server secret.
func NewWebhookEndpoints(d Deps, serverSecret []byte) (*WebhookEndpoints, error) {
	s, err := NewSealerFromSecret(serverSecret)
	if err != nil {
		return nil, err
	}
	return &WebhookEndpoints{d: d, s: s}, d.check()
}

// ErrNoWebhook is a webhook that does not exist, or no longer does.
var ErrNoWebhook = errors.New("commands: the webhook does not exist")

// Endpoint returns the webhook id as it is now and its signing key (the secret's bytes).
func (e *WebhookEndpoints) Endpoint(ctx context.Context, id string) (domain.Webhook, []byte, error) {
	stream := domain.Stream(domain.WebhookPrefix, id)
	w, err := Load(ctx, e.d, stream, newWebhook)
	if err != nil {
		return domain.Webhook{}, nil, err
	}
	if w.ID == "" {
		return domain.Webhook{}, nil, ErrNoWebhook
	}
	plain, err := e.s.Open(w.SealedSecret, domain.CredentialAAD(stream, webhookSecretField))
	if err != nil {
		return domain.Webhook{}, nil, err
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(plain), WebhookSecretPrefix))
	if err != nil {
		return domain.Webhook{}, nil, ErrSealedCorrupt
	}
	return *w, key, nil
}
