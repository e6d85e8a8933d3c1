package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// NotificationPrefix names notification streams. A notification is recorded as an event and
// listed by the admin API; the delivery worker (workers.NotificationWorker) then plans its
// deliveries (an e-mail to each address its audiences resolve to, a call to each webhook that
// matches it) and records how each went, on the notification's own stream.
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

// NotificationKinds lists every kind a notification can be of, sorted.
func NotificationKinds() []string {
	return []string{NotifyInvite, NotifyKeyExpired, NotifyKeyExpirySoon, NotifyKeyRotated, NotifyKeyRotationSoon,
		NotifyRateLimitExceeded, NotifyUsageExhausted, NotifyUsageThreshold}
}

// IsNotificationKind reports whether kind is one of NotificationKinds.
func IsNotificationKind(kind string) bool { return slices.Contains(NotificationKinds(), kind) }

// Delivery channels.
const (
	ChannelEmail   = "email"
	ChannelWebhook = "webhook"
)

// Statuses of a delivery, and of a notification as its deliveries leave it.
const (
	DeliveryPending   = "pending"   // not yet planned, or a delivery is still to be made (or retried)
	DeliveryDelivered = "delivered" // every delivery made
	DeliveryFailed    = "failed"    // every delivery settled, and one at least failed for good
	// DeliverySkipped: the notification had nothing to be delivered to (no e-mail server
	// configured, no address resolved, no webhook matched when it was planned).
	DeliverySkipped = "skipped"
)

// MaxDeliveryError bounds the error a failed delivery records, in characters.
const MaxDeliveryError = 512

// Notification is one message for people: what happened, to whom it goes, about what; and
// how its deliveries went.
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
	// Status sums the deliveries up: pending, delivered, failed or skipped.
	Status string `json:"status"`
	// DeliveriesPlannedAt is when the targets were settled (nil: not yet).
	DeliveriesPlannedAt *time.Time             `json:"deliveries_planned_at,omitempty"`
	Deliveries          []NotificationDelivery `json:"deliveries"`
}

// DeliveryTarget is where one delivery goes: an e-mail address, or a webhook by its id.
type DeliveryTarget struct {
	Channel string `json:"channel"`
	Target  string `json:"target"`
}

// NotificationDelivery is one delivery of a notification and how it went.
type NotificationDelivery struct {
	DeliveryTarget
	Status        string     `json:"status"` // pending, delivered or failed
	Attempts      int        `json:"attempts"`
	LastError     string     `json:"last_error,omitempty"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	DeliveredAt   *time.Time `json:"delivered_at,omitempty"`
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

// NotificationDeliveriesPlanned settles where a notification goes, once, when the worker
// first takes it up: audiences are resolved to addresses then, so that membership changes
// made between the event and its delivery count, and a restart delivers to the same targets.
type NotificationDeliveriesPlanned struct {
	NotificationID string           `json:"notification_id"`
	Deliveries     []DeliveryTarget `json:"deliveries"`
	At             time.Time        `json:"at"`
}

// NotificationDelivered: one delivery was made (a 2xx from the webhook, the SMTP server took
// the message), after Attempts attempts in all.
type NotificationDelivered struct {
	NotificationID string    `json:"notification_id"`
	Channel        string    `json:"channel"`
	Target         string    `json:"target"`
	Attempts       int       `json:"attempts"`
	At             time.Time `json:"at"`
}

// NotificationDeliveryFailed: attempt number Attempt of one delivery failed, for Error (never
// a secret nor a URL); it is tried again at NextAttemptAt, unless Final.
type NotificationDeliveryFailed struct {
	NotificationID string     `json:"notification_id"`
	Channel        string     `json:"channel"`
	Target         string     `json:"target"`
	Attempt        int        `json:"attempt"`
	Error          string     `json:"error"`
	NextAttemptAt  *time.Time `json:"next_attempt_at,omitempty"`
	Final          bool       `json:"final"`
	At             time.Time  `json:"at"`
}

func (NotificationRecorded) EventType() string          { return "NotificationRecorded" }
func (NotificationDeliveriesPlanned) EventType() string { return "NotificationDeliveriesPlanned" }
func (NotificationDelivered) EventType() string         { return "NotificationDelivered" }
func (NotificationDeliveryFailed) EventType() string    { return "NotificationDeliveryFailed" }

func notificationModule() module {
	return module{prefix: NotificationPrefix, aggregate: func() Aggregate { return &Notification{} },
		events: []Event{NotificationRecorded{}, NotificationDeliveriesPlanned{}, NotificationDelivered{}, NotificationDeliveryFailed{}}}
}

func (n *Notification) Apply(e Event) {
	switch e := e.(type) {
	case NotificationRecorded:
		*n = Notification{ID: e.NotificationID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID,
			Kind: e.Kind, Recipients: e.Recipients, Subject: e.Subject, ResourceType: e.ResourceType,
			ResourceID: e.ResourceID, Data: e.Data, CreatedAt: e.At, Status: DeliveryPending}
	case NotificationDeliveriesPlanned:
		at := e.At
		n.DeliveriesPlannedAt = &at
		n.Deliveries = make([]NotificationDelivery, len(e.Deliveries))
		for i, t := range e.Deliveries {
			n.Deliveries[i] = NotificationDelivery{DeliveryTarget: t, Status: DeliveryPending}
		}
	case NotificationDelivered:
		n.changeDelivery(e.Channel, e.Target, func(d *NotificationDelivery) {
			at := e.At
			d.Status, d.Attempts, d.DeliveredAt, d.NextAttemptAt = DeliveryDelivered, e.Attempts, &at, nil
		})
	case NotificationDeliveryFailed:
		n.changeDelivery(e.Channel, e.Target, func(d *NotificationDelivery) {
			d.Attempts, d.LastError, d.NextAttemptAt = e.Attempt, e.Error, e.NextAttemptAt
			if e.Final {
				d.Status, d.NextAttemptAt = DeliveryFailed, nil
			}
		})
	}
	if n.ID != "" {
		n.Status = n.summary()
	}
}

// changeDelivery changes one delivery on a copy of the list: read models hand out copies of
// the notification that share it.
func (n *Notification) changeDelivery(channel, target string, change func(*NotificationDelivery)) {
	i := n.deliveryIndex(channel, target)
	if i < 0 {
		return
	}
	n.Deliveries = slices.Clone(n.Deliveries)
	change(&n.Deliveries[i])
}

func (n *Notification) deliveryIndex(channel, target string) int {
	return slices.IndexFunc(n.Deliveries, func(d NotificationDelivery) bool { return d.Channel == channel && d.Target == target })
}

// summary is the notification's status as its deliveries leave it.
func (n *Notification) summary() string {
	if n.DeliveriesPlannedAt == nil {
		return DeliveryPending
	}
	if len(n.Deliveries) == 0 {
		return DeliverySkipped
	}
	failed := false
	for _, d := range n.Deliveries {
		switch d.Status {
		case DeliveryPending:
			return DeliveryPending
		case DeliveryFailed:
			failed = true
		}
	}
	if failed {
		return DeliveryFailed
	}
	return DeliveryDelivered
}

// Delivery returns the delivery to channel and target, if the plan holds one.
func (n *Notification) Delivery(channel, target string) (NotificationDelivery, bool) {
	i := n.deliveryIndex(channel, target)
	if i < 0 {
		return NotificationDelivery{}, false
	}
	return n.Deliveries[i], true
}

// Planned reports whether the deliveries' targets are settled.
func (n *Notification) Planned() bool { return n.DeliveriesPlannedAt != nil }

// DueDeliveries are the deliveries to make at now: pending, and not waiting for a retry.
func (n *Notification) DueDeliveries(now time.Time) []NotificationDelivery {
	var out []NotificationDelivery
	for _, d := range n.Deliveries {
		if d.Status == DeliveryPending && (d.NextAttemptAt == nil || !now.Before(*d.NextAttemptAt)) {
			out = append(out, d)
		}
	}
	return out
}

// PlanDeliveries settles the notification's targets. A plan made already stands: planning
// again (another worker, a retried pass) decides nothing.
func (n *Notification) PlanDeliveries(targets []DeliveryTarget, now time.Time) ([]Event, error) {
	if n.ID == "" {
		return nil, Errorf(CodeNotFound, "notification not found")
	}
	if n.Planned() {
		return nil, nil
	}
	seen := map[DeliveryTarget]bool{}
	plan := []DeliveryTarget{}
	for i, t := range targets {
		if t.Channel != ChannelEmail && t.Channel != ChannelWebhook {
			return nil, Invalid(fmt.Sprintf("deliveries[%d].channel", i), "a delivery's channel must be %s or %s (got %q)", ChannelEmail, ChannelWebhook, truncate(t.Channel, 32))
		}
		if strings.TrimSpace(t.Target) == "" {
			return nil, Invalid(fmt.Sprintf("deliveries[%d].target", i), "a delivery needs a target: an address or a webhook id")
		}
		if !seen[t] {
			seen[t] = true
			plan = append(plan, t)
		}
	}
	slices.SortFunc(plan, func(a, b DeliveryTarget) int {
		if c := strings.Compare(a.Channel, b.Channel); c != 0 {
			return c
		}
		return strings.Compare(a.Target, b.Target)
	})
	return []Event{NotificationDeliveriesPlanned{NotificationID: n.ID, Deliveries: plan, At: now}}, nil
}

// pendingDelivery finds a delivery that may still be made; ok false with a nil error: it is
// settled already, and recording it again decides nothing.
func (n *Notification) pendingDelivery(channel, target string) (NotificationDelivery, bool, error) {
	if n.ID == "" {
		return NotificationDelivery{}, false, Errorf(CodeNotFound, "notification not found")
	}
	d, ok := n.Delivery(channel, target)
	if !ok {
		return d, false, Errorf(CodeNotFound, "notification %s has no %s delivery to %s", n.ID, channel, target)
	}
	return d, d.Status == DeliveryPending, nil
}

// RecordDelivered decides that the delivery to channel and target was made. A delivery
// already settled stays as it is.
func (n *Notification) RecordDelivered(channel, target string, now time.Time) ([]Event, error) {
	d, pending, err := n.pendingDelivery(channel, target)
	if err != nil || !pending {
		return nil, err
	}
	return []Event{NotificationDelivered{NotificationID: n.ID, Channel: channel, Target: target, Attempts: d.Attempts + 1, At: now}}, nil
}

// DeliveryFailure is one failed attempt of a delivery, as the worker saw it.
type DeliveryFailure struct {
	Channel, Target string
	// Attempt is the attempt's number, from 1: one more than the attempts recorded when it
	// began. An attempt recorded already decides nothing.
	Attempt int
	Error   string
	// NextAttemptAt is when to try again; Final: never again.
	NextAttemptAt time.Time
	Final         bool
}

// RecordFailure decides that an attempt of a delivery failed.
func (n *Notification) RecordFailure(f DeliveryFailure, now time.Time) ([]Event, error) {
	d, pending, err := n.pendingDelivery(f.Channel, f.Target)
	if err != nil || !pending || f.Attempt <= d.Attempts {
		return nil, err
	}
	if f.Attempt != d.Attempts+1 {
		return nil, Errorf(CodeConflict, "attempt %d of the %s delivery to %s follows attempt %d", f.Attempt, f.Channel, f.Target, d.Attempts)
	}
	msg := strings.ToValidUTF8(strings.TrimSpace(f.Error), "?")
	if msg == "" {
		msg = "the delivery failed"
	}
	if utf8.RuneCountInString(msg) > MaxDeliveryError {
		msg = string([]rune(msg)[:MaxDeliveryError-3]) + "..."
	}
	e := NotificationDeliveryFailed{NotificationID: n.ID, Channel: f.Channel, Target: f.Target, Attempt: f.Attempt,
		Error: msg, Final: f.Final, At: now}
	if !f.Final {
		next := f.NextAttemptAt
		e.NextAttemptAt = &next
	}
	return []Event{e}, nil
}

// RateLimitAlertWindow is the window a rate-limit alert is raised once in: the hour of at,
// or the policy's own window when it is longer (the day of a per-day limit, the week from
// Monday of a per-week one), in UTC, as the gateway counts them.
func RateLimitAlertWindow(unit string, at time.Time) (start, end time.Time) {
	at = at.UTC()
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	switch unit {
	case "rpd":
		return day, day.AddDate(0, 0, 1)
	case "rpw":
		monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		return monday, monday.AddDate(0, 0, 7)
	}
	start = at.Truncate(time.Hour)
	return start, start.Add(time.Hour)
}
