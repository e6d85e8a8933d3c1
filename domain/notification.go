package domain

import "time"

// NotificationPrefix names notification streams. Delivering e-mail is out of scope: a
// notification is recorded as an event, listed by the admin API, and a mailer can follow the
// stream later.
const NotificationPrefix = "notification"

// Notification kinds (part 6).
const (
	NotifyInvite            = "invite"
	NotifyKeyRotationSoon   = "api_key.rotation_upcoming"
	NotifyKeyRotated        = "api_key.rotated"
	NotifyKeyExpirySoon     = "api_key.expiry_warning"
	NotifyKeyExpired        = "api_key.expired"
	NotifyUsageThreshold    = "usage.threshold_reached"
	NotifyUsageExhausted    = "usage.exhausted"
	NotifyRateLimitExceeded = "rate_limit.exceeded"
)

// Notification is one message for people: what happened, to whom it goes, about what.
type Notification struct {
	ID             string            `json:"id"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    string            `json:"workspace_id,omitempty"`
	Kind           string            `json:"kind"`
	Recipients     []string          `json:"recipients"`
	Subject        string            `json:"subject"`
	ResourceType   string            `json:"resource_type,omitempty"`
	ResourceID     string            `json:"resource_id,omitempty"`
	Data           map[string]string `json:"data,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
}

type NotificationRecorded struct {
	NotificationID string            `json:"notification_id"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    string            `json:"workspace_id,omitempty"`
	Kind           string            `json:"kind"`
	Recipients     []string          `json:"recipients"`
	Subject        string            `json:"subject"`
	ResourceType   string            `json:"resource_type,omitempty"`
	ResourceID     string            `json:"resource_id,omitempty"`
	Data           map[string]string `json:"data,omitempty"`
	At             time.Time         `json:"at"`
}

func (NotificationRecorded) EventType() string { return "NotificationRecorded" }

func notificationModule() module {
	return module{prefix: NotificationPrefix, aggregate: func() Aggregate { return &Notification{} },
		events: []Event{NotificationRecorded{}}}
}

func (n *Notification) Apply(e Event) {
	if e, ok := e.(NotificationRecorded); ok {
		*n = Notification{ID: e.NotificationID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID,
			Kind: e.Kind, Recipients: e.Recipients, Subject: e.Subject, ResourceType: e.ResourceType,
			ResourceID: e.ResourceID, Data: e.Data, CreatedAt: e.At}
	}
}
