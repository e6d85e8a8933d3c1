package domain

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A webhook is an endpoint that notifications are posted to, signed as Standard Webhooks
// (https://www.standardwebhooks.com) says: an organisation's webhook hears the notifications
// of the whole organisation, a workspace's only those of that workspace; Kinds narrows them
// to some kinds (empty: every kind). Its signing secret is sealed before it enters an event;
// the aggregate keeps the sealed value out of its JSON, so that no read model, answer or
// audit record holds it.

// WebhookPrefix names the streams of webhooks.
const WebhookPrefix = "webhook"

// Bounds of a webhook.
const (
	// MaxWebhookURLLength bounds a webhook's URL, in bytes.
	MaxWebhookURLLength = 2048
)

// MaxWebhookKinds bounds the kinds filter of a webhook: each kind at most once.
func MaxWebhookKinds() int { return len(NotificationKinds()) }

// Webhook is an endpoint notifications are delivered to.
type Webhook struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	// WorkspaceID is "" for an organisation webhook.
	WorkspaceID string   `json:"workspace_id"`
	Name        string   `json:"name"`
	URL         string   `json:"url"`
	Kinds       []string `json:"kinds"`
	Disabled    bool     `json:"disabled"`
	Status      string   `json:"status"` // active, or archived once deleted
	// SealedSecret is the signing secret, sealed (commands.Sealer, bound to the stream and the
	// field "secret"); it never leaves the write side and the delivery worker.
	SealedSecret    string    `json:"-"`
	SecretRotatedAt time.Time `json:"secret_rotated_at"`
	CreatedBy       string    `json:"created_by"`
	UpdatedBy       string    `json:"updated_by"`
	CreatedAt       time.Time `json:"created_at"`
	LastUpdatedAt   time.Time `json:"last_updated_at"`
}

type WebhookCreated struct {
	WebhookID      string    `json:"webhook_id"`
	OrganisationID string    `json:"organisation_id"`
	WorkspaceID    string    `json:"workspace_id,omitempty"`
	Name           string    `json:"name"`
	URL            string    `json:"url"`
	Kinds          []string  `json:"kinds"`
	Disabled       bool      `json:"disabled"`
	SealedSecret   string    `json:"sealed_secret"`
	By             string    `json:"by"`
	At             time.Time `json:"at"`
}

// WebhookUpdated changes the fields it carries; the others stay.
type WebhookUpdated struct {
	WebhookID string    `json:"webhook_id"`
	Name      *string   `json:"name,omitempty"`
	URL       *string   `json:"url,omitempty"`
	Kinds     *[]string `json:"kinds,omitempty"`
	Disabled  *bool     `json:"disabled,omitempty"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

// WebhookSecretRotated replaces the signing secret; the old one signs nothing after it.
type WebhookSecretRotated struct {
	WebhookID    string    `json:"webhook_id"`
	SealedSecret string    `json:"sealed_secret"`
	By           string    `json:"by"`
	At           time.Time `json:"at"`
}

// WebhookDeleted is DELETE: nothing is delivered to the webhook after it.
type WebhookDeleted struct {
	WebhookID string    `json:"webhook_id"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

func (WebhookCreated) EventType() string       { return "WebhookCreated" }
func (WebhookUpdated) EventType() string       { return "WebhookUpdated" }
func (WebhookSecretRotated) EventType() string { return "WebhookSecretRotated" }
func (WebhookDeleted) EventType() string       { return "WebhookDeleted" }

func webhookModule() module {
	return module{prefix: WebhookPrefix, aggregate: func() Aggregate { return &Webhook{} },
		events: []Event{WebhookCreated{}, WebhookUpdated{}, WebhookSecretRotated{}, WebhookDeleted{}}}
}

func (w *Webhook) Apply(e Event) {
	switch e := e.(type) {
	case WebhookCreated:
		*w = Webhook{ID: e.WebhookID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Name: e.Name,
			URL: e.URL, Kinds: e.Kinds, Disabled: e.Disabled, Status: StatusActive, SealedSecret: e.SealedSecret,
			SecretRotatedAt: e.At, CreatedBy: e.By, UpdatedBy: e.By, CreatedAt: e.At, LastUpdatedAt: e.At}
	case WebhookUpdated:
		if e.Name != nil {
			w.Name = *e.Name
		}
		if e.URL != nil {
			w.URL = *e.URL
		}
		if e.Kinds != nil {
			w.Kinds = *e.Kinds
		}
		if e.Disabled != nil {
			w.Disabled = *e.Disabled
		}
		w.UpdatedBy, w.LastUpdatedAt = e.By, e.At
	case WebhookSecretRotated:
		w.SealedSecret, w.SecretRotatedAt, w.UpdatedBy, w.LastUpdatedAt = e.SealedSecret, e.At, e.By, e.At
	case WebhookDeleted:
		w.Status, w.UpdatedBy, w.LastUpdatedAt = StatusArchived, e.By, e.At
	}
}

// Exists reports whether the webhook was created and not deleted.
func (w *Webhook) Exists() bool { return w.ID != "" && w.Status != StatusArchived }

// Matches reports whether n is delivered to the webhook: it is live and enabled, of n's
// organisation, for the whole organisation or n's workspace, and for n's kind.
func (w *Webhook) Matches(n Notification) bool {
	return w.Exists() && !w.Disabled && w.OrganisationID == n.OrganisationID &&
		(w.WorkspaceID == "" || w.WorkspaceID == n.WorkspaceID) &&
		(len(w.Kinds) == 0 || slices.Contains(w.Kinds, n.Kind))
}

// CreateWebhook is the create command's input; SealedSecret is the new signing secret, sealed.
type CreateWebhook struct {
	WebhookID      string
	OrganisationID string
	WorkspaceID    string
	Name           string
	URL            string
	Kinds          []string
	Disabled       bool
	SealedSecret   string
	By             string
}

// Create decides the creation of a webhook.
func (w *Webhook) Create(in CreateWebhook, now time.Time) ([]Event, error) {
	if w.ID != "" {
		return nil, Errorf(CodeConflict, "webhook %s exists already", in.WebhookID)
	}
	if err := ValidateName("name", in.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateWebhookURL("url", in.URL); err != nil {
		return nil, err
	}
	kinds, err := ValidateWebhookKinds("kinds", in.Kinds)
	if err != nil {
		return nil, err
	}
	if in.SealedSecret == "" {
		return nil, Errorf(CodeInternal, "a webhook needs a sealed signing secret")
	}
	return []Event{WebhookCreated{WebhookID: in.WebhookID, OrganisationID: in.OrganisationID, WorkspaceID: in.WorkspaceID,
		Name: in.Name, URL: in.URL, Kinds: kinds, Disabled: in.Disabled, SealedSecret: in.SealedSecret, By: in.By, At: now}}, nil
}

// UpdateWebhook changes the fields given; nil ones stay.
type UpdateWebhook struct {
	Name     *string
	URL      *string
	Kinds    *[]string
	Disabled *bool
	By       string
}

// Update decides a change of the webhook.
func (w *Webhook) Update(in UpdateWebhook, now time.Time) ([]Event, error) {
	if !w.Exists() {
		return nil, Errorf(CodeNotFound, "webhook not found")
	}
	if in.Name == nil && in.URL == nil && in.Kinds == nil && in.Disabled == nil {
		return nil, Invalid("", "nothing to update: give name, url, kinds or disabled")
	}
	if in.Name != nil {
		if err := ValidateName("name", *in.Name, true); err != nil {
			return nil, err
		}
	}
	if in.URL != nil {
		if err := ValidateWebhookURL("url", *in.URL); err != nil {
			return nil, err
		}
	}
	e := WebhookUpdated{WebhookID: w.ID, Name: in.Name, URL: in.URL, Disabled: in.Disabled, By: in.By, At: now}
	if in.Kinds != nil {
		kinds, err := ValidateWebhookKinds("kinds", *in.Kinds)
		if err != nil {
			return nil, err
		}
		e.Kinds = &kinds
	}
	return []Event{e}, nil
}

// RotateSecret decides a new signing secret (sealed).
func (w *Webhook) RotateSecret(sealed, by string, now time.Time) ([]Event, error) {
	if !w.Exists() {
		return nil, Errorf(CodeNotFound, "webhook not found")
	}
	if sealed == "" {
		return nil, Errorf(CodeInternal, "a webhook needs a sealed signing secret")
	}
	return []Event{WebhookSecretRotated{WebhookID: w.ID, SealedSecret: sealed, By: by, At: now}}, nil
}

// Delete decides the deletion of a webhook.
func (w *Webhook) Delete(by string, now time.Time) ([]Event, error) {
	if !w.Exists() {
		return nil, Errorf(CodeNotFound, "webhook not found")
	}
	return []Event{WebhookDeleted{WebhookID: w.ID, By: by, At: now}}, nil
}

// ValidateWebhookURL checks the form of a webhook's URL: http or https, a host, no user
// information (credentials would be sent, and shown, with it) and no fragment, at most
// MaxWebhookURLLength bytes. A query is allowed. Where it points is checked by the command
// layer's host check, and again on every connection.
func ValidateWebhookURL(param, raw string) error {
	if strings.TrimSpace(raw) == "" {
		return Invalid(param, "%s is required: the http or https URL notifications are posted to", param)
	}
	if n := len(raw); n > MaxWebhookURLLength {
		return Invalid(param, "%s must be at most %d characters (got %d)", param, MaxWebhookURLLength, n)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return Invalid(param, "%s must be an http or https URL with a host", param)
	}
	if u.User != nil {
		return Invalid(param, "%s must not carry user information: webhooks are authenticated by their signature", param)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return Invalid(param, "%s must not carry a fragment", param)
	}
	if hasControl(raw) || !utf8.ValidString(raw) {
		return Invalid(param, "%s must not hold control characters", param)
	}
	return nil
}

// ValidateWebhookKinds checks a kinds filter: at most one of each notification kind; it
// answers them sorted. Empty means every kind.
func ValidateWebhookKinds(param string, kinds []string) ([]string, error) {
	known := NotificationKinds()
	if len(kinds) > len(known) {
		return nil, Invalid(param, "%s must hold at most %d kinds, each once (got %d)", param, len(known), len(kinds))
	}
	out := make([]string, 0, len(kinds))
	for i, k := range kinds {
		p := fmt.Sprintf("%s[%d]", param, i)
		if !slices.Contains(known, k) {
			return nil, Invalid(p, "%s must be one of %s (got %q)", p, strings.Join(known, ", "), truncate(k, 64))
		}
		if slices.Contains(out, k) {
			return nil, Invalid(p, "%s repeats %s: name each kind once", p, k)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}
