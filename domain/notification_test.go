package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var recorded = NotificationRecorded{NotificationID: "n-1", OrganisationID: "org-1", WorkspaceID: "ws-1",
	Kind: NotifyUsageThreshold, Recipients: []string{"organisation:admins"}, Subject: "s", At: t0}

func mailTo(addr string) DeliveryTarget { return DeliveryTarget{Channel: ChannelEmail, Target: addr} }
func hook(id string) DeliveryTarget     { return DeliveryTarget{Channel: ChannelWebhook, Target: id} }

func TestNotificationDeliveryDecisions(t *testing.T) {
	later := t0.Add(time.Minute)
	retry := later.Add(5 * time.Second)
	planned := NotificationDeliveriesPlanned{NotificationID: "n-1", Deliveries: []DeliveryTarget{mailTo("a@example.com"), hook("wh-1")}, At: t0}
	failedOnce := NotificationDeliveryFailed{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempt: 1,
		Error: "HTTP 500", NextAttemptAt: &retry, At: t0}
	runScenarios(t, func() *Notification { return &Notification{} }, []scenario[*Notification]{
		{name: "a plan is sorted and without repeats",
			given: []Event{recorded},
			when: func(n *Notification) ([]Event, error) {
				return n.PlanDeliveries([]DeliveryTarget{hook("wh-1"), mailTo("a@example.com"), hook("wh-1")}, t0)
			},
			then: []Event{planned}},
		{name: "an empty plan", given: []Event{recorded},
			when: func(n *Notification) ([]Event, error) { return n.PlanDeliveries(nil, t0) },
			then: []Event{NotificationDeliveriesPlanned{NotificationID: "n-1", Deliveries: []DeliveryTarget{}, At: t0}}},
		{name: "a plan stands", given: []Event{recorded, planned},
			when: func(n *Notification) ([]Event, error) { return n.PlanDeliveries([]DeliveryTarget{hook("wh-2")}, later) }},
		{name: "no notification", when: func(n *Notification) ([]Event, error) { return n.PlanDeliveries(nil, t0) },
			wantCode: CodeNotFound},
		{name: "an unknown channel", given: []Event{recorded},
			when: func(n *Notification) ([]Event, error) {
				return n.PlanDeliveries([]DeliveryTarget{{Channel: "sms", Target: "x"}}, t0)
			},
			wantCode: CodeInvalid, wantParam: "deliveries[0].channel"},
		{name: "delivered at the first attempt", given: []Event{recorded, planned},
			when: func(n *Notification) ([]Event, error) { return n.RecordDelivered(ChannelEmail, "a@example.com", later) },
			then: []Event{NotificationDelivered{NotificationID: "n-1", Channel: ChannelEmail, Target: "a@example.com", Attempts: 1, At: later}}},
		{name: "delivered after a failure counts both attempts", given: []Event{recorded, planned, failedOnce},
			when: func(n *Notification) ([]Event, error) { return n.RecordDelivered(ChannelWebhook, "wh-1", later) },
			then: []Event{NotificationDelivered{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempts: 2, At: later}}},
		{name: "delivered twice is recorded once",
			given: []Event{recorded, planned, NotificationDelivered{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempts: 1, At: t0}},
			when:  func(n *Notification) ([]Event, error) { return n.RecordDelivered(ChannelWebhook, "wh-1", later) }},
		{name: "a target not planned", given: []Event{recorded, planned},
			when:     func(n *Notification) ([]Event, error) { return n.RecordDelivered(ChannelWebhook, "wh-9", later) },
			wantCode: CodeNotFound},
		{name: "a failure", given: []Event{recorded, planned},
			when: func(n *Notification) ([]Event, error) {
				return n.RecordFailure(DeliveryFailure{Channel: ChannelWebhook, Target: "wh-1", Attempt: 1, Error: " HTTP 500 ", NextAttemptAt: retry}, t0)
			},
			then: []Event{failedOnce}},
		{name: "a failure recorded already", given: []Event{recorded, planned, failedOnce},
			when: func(n *Notification) ([]Event, error) {
				return n.RecordFailure(DeliveryFailure{Channel: ChannelWebhook, Target: "wh-1", Attempt: 1, Error: "again", NextAttemptAt: retry}, later)
			}},
		{name: "a failure that skips an attempt", given: []Event{recorded, planned},
			when: func(n *Notification) ([]Event, error) {
				return n.RecordFailure(DeliveryFailure{Channel: ChannelWebhook, Target: "wh-1", Attempt: 3, Error: "x"}, later)
			},
			wantCode: CodeConflict},
		{name: "the last failure is final and waits for nothing", given: []Event{recorded, planned, failedOnce},
			when: func(n *Notification) ([]Event, error) {
				return n.RecordFailure(DeliveryFailure{Channel: ChannelWebhook, Target: "wh-1", Attempt: 2, Error: "HTTP 503", NextAttemptAt: retry, Final: true}, later)
			},
			then: []Event{NotificationDeliveryFailed{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempt: 2,
				Error: "HTTP 503", Final: true, At: later}}},
	})
}

// The notification's status and each delivery's follow the events: pending until planned
// and while a delivery is to be made; then delivered, failed (one failed for good) or skipped
// (nothing to deliver to).
func TestNotificationStatusFollowsItsDeliveries(t *testing.T) {
	retry := t0.Add(time.Minute)
	fold := func(evs ...Event) *Notification {
		n := &Notification{}
		for _, e := range append([]Event{recorded}, evs...) {
			n.Apply(e)
		}
		return n
	}
	planned := NotificationDeliveriesPlanned{NotificationID: "n-1", Deliveries: []DeliveryTarget{mailTo("a@example.com"), hook("wh-1")}, At: t0}
	mailed := NotificationDelivered{NotificationID: "n-1", Channel: ChannelEmail, Target: "a@example.com", Attempts: 1, At: t0}
	failed := NotificationDeliveryFailed{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempt: 1, Error: "HTTP 500", NextAttemptAt: &retry, At: t0}

	assert.Equal(t, DeliveryPending, fold().Status)
	assert.False(t, fold().Planned())
	assert.Equal(t, DeliverySkipped, fold(NotificationDeliveriesPlanned{NotificationID: "n-1", At: t0}).Status)
	n := fold(planned, mailed, failed)
	assert.Equal(t, DeliveryPending, n.Status)
	hookDelivery, ok := n.Delivery(ChannelWebhook, "wh-1")
	require.True(t, ok)
	assert.Equal(t, 1, hookDelivery.Attempts)
	assert.Equal(t, "HTTP 500", hookDelivery.LastError)
	assert.Empty(t, n.DueDeliveries(t0), "the failed one waits for its retry")
	due := n.DueDeliveries(retry)
	require.Len(t, due, 1)
	assert.Equal(t, hook("wh-1"), due[0].DeliveryTarget)

	n = fold(planned, mailed, failed, NotificationDelivered{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempts: 2, At: retry})
	assert.Equal(t, DeliveryDelivered, n.Status)
	d, _ := n.Delivery(ChannelWebhook, "wh-1")
	assert.Equal(t, 2, d.Attempts)
	assert.Nil(t, d.NextAttemptAt)
	assert.Equal(t, retry, *d.DeliveredAt)

	n = fold(planned, mailed, NotificationDeliveryFailed{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempt: 1, Error: "gone", Final: true, At: t0})
	assert.Equal(t, DeliveryFailed, n.Status)
	assert.Empty(t, n.DueDeliveries(retry.Add(time.Hour)))
}

// A fold changes a copy of the deliveries, never the list a copy handed out earlier shares.
func TestNotificationDeliveriesAreCopiedOnWrite(t *testing.T) {
	n := &Notification{}
	n.Apply(recorded)
	n.Apply(NotificationDeliveriesPlanned{NotificationID: "n-1", Deliveries: []DeliveryTarget{hook("wh-1")}, At: t0})
	handedOut := *n
	n.Apply(NotificationDelivered{NotificationID: "n-1", Channel: ChannelWebhook, Target: "wh-1", Attempts: 1, At: t0})
	assert.Equal(t, DeliveryPending, handedOut.Deliveries[0].Status)
	assert.Equal(t, DeliveryDelivered, n.Deliveries[0].Status)
}

func TestDeliveryErrorsAreBounded(t *testing.T) {
	n := &Notification{}
	n.Apply(recorded)
	n.Apply(NotificationDeliveriesPlanned{NotificationID: "n-1", Deliveries: []DeliveryTarget{hook("wh-1")}, At: t0})
	evs, err := n.RecordFailure(DeliveryFailure{Channel: ChannelWebhook, Target: "wh-1", Attempt: 1, Error: strings.Repeat("é", 2000), Final: true}, t0)
	require.NoError(t, err)
	msg := evs[0].(NotificationDeliveryFailed).Error
	assert.Equal(t, MaxDeliveryError, len([]rune(msg)))
	assert.True(t, strings.HasSuffix(msg, "..."))
	evs, err = n.RecordFailure(DeliveryFailure{Channel: ChannelWebhook, Target: "wh-1", Attempt: 1, Final: true}, t0)
	require.NoError(t, err)
	assert.Equal(t, "the delivery failed", evs[0].(NotificationDeliveryFailed).Error, "never an empty reason")
}

func TestRateLimitAlertWindows(t *testing.T) {
	at := time.Date(2026, 11, 20, 15, 42, 7, 0, time.FixedZone("CET", 3600)) // a Friday, 14:42 UTC
	for unit, want := range map[string][2]time.Time{
		"rpm": {time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)},
		"rph": {time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)},
		"rpd": {time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
		"rpw": {time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
	} {
		start, end := RateLimitAlertWindow(unit, at)
		assert.Equal(t, want[0], start, unit)
		assert.Equal(t, want[1], end, unit)
	}
}
