package commands

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

func systemCtx(orgID, idempotencyKey string) context.Context {
	return WithRequest(context.Background(), Request{Actor: domain.System(orgID), RequestID: "worker-" + idempotencyKey, IdempotencyKey: idempotencyKey})
}

// Only the system actor plans and records deliveries, on notifications of its own
// organisation; each record, repeated (a retried pass, another instance), is written once.
func TestNotificationDeliveriesAreRecordedOnceBySystemOnly(t *testing.T) {
	d := testDeps(t)
	require.NoError(t, notify(systemCtx("org-1", ""), d, domain.NotificationRecorded{NotificationID: "n-1", OrganisationID: "org-1",
		Kind: domain.NotifyInvite, Recipients: []string{"a@example.com"}, Subject: "s"}))
	plan, err := NewPlanNotificationDeliveriesHandler(d)
	require.NoError(t, err)
	delivered, err := NewRecordNotificationDeliveredHandler(d)
	require.NoError(t, err)
	failed, err := NewRecordNotificationDeliveryFailedHandler(d)
	require.NoError(t, err)

	targets := []domain.DeliveryTarget{{Channel: domain.ChannelEmail, Target: "a@example.com"}, {Channel: domain.ChannelWebhook, Target: "wh-1"}}
	_, err = plan.Handle(adminCtx("org-1"), PlanNotificationDeliveries{NotificationID: "n-1", Deliveries: targets})
	assert.Equal(t, domain.CodeForbidden, codeOf(err), "an admin does not plan deliveries")
	_, err = plan.Handle(systemCtx("org-2", ""), PlanNotificationDeliveries{NotificationID: "n-1", Deliveries: targets})
	assert.Equal(t, domain.CodeNotFound, codeOf(err), "another organisation's notification")

	for range 2 {
		_, err = plan.Handle(systemCtx("org-1", "plan-n-1"), PlanNotificationDeliveries{NotificationID: "n-1", Deliveries: targets})
		require.NoError(t, err)
	}
	_, err = plan.Handle(systemCtx("org-1", ""), PlanNotificationDeliveries{NotificationID: "n-1", Deliveries: targets[:1]})
	require.NoError(t, err, "another plan finds the first standing")
	fail := domain.DeliveryFailure{Channel: domain.ChannelWebhook, Target: "wh-1", Attempt: 1, Error: "HTTP 500", NextAttemptAt: d.Now().Add(time.Second)}
	for range 2 {
		_, err = failed.Handle(systemCtx("org-1", "fail-1"), RecordNotificationDeliveryFailed{NotificationID: "n-1", DeliveryFailure: fail})
		require.NoError(t, err)
		_, err = failed.Handle(systemCtx("org-1", ""), RecordNotificationDeliveryFailed{NotificationID: "n-1", DeliveryFailure: fail})
		require.NoError(t, err)
		_, err = delivered.Handle(systemCtx("org-1", "delivered-email"), RecordNotificationDelivered{NotificationID: "n-1",
			Channel: domain.ChannelEmail, Target: "a@example.com"})
		require.NoError(t, err)
	}
	_, err = delivered.Handle(systemCtx("org-1", ""), RecordNotificationDelivered{NotificationID: "n-1", Channel: domain.ChannelWebhook, Target: "wh-1"})
	require.NoError(t, err)
	types := eventTypes(t, d)
	assert.Equal(t, 1, types["NotificationDeliveriesPlanned"])
	assert.Equal(t, 1, types["NotificationDeliveryFailed"])
	assert.Equal(t, 2, types["NotificationDelivered"])

	n, err := Load(context.Background(), d, domain.Stream(domain.NotificationPrefix, "n-1"), newNotification)
	require.NoError(t, err)
	assert.Equal(t, domain.DeliveryDelivered, n.Status)
	hook, _ := n.Delivery(domain.ChannelWebhook, "wh-1")
	assert.Equal(t, 2, hook.Attempts, "the failure and the success")
	for name, err := range map[string]error{
		"plan":      second(NewPlanNotificationDeliveriesHandler(Deps{})),
		"delivered": second(NewRecordNotificationDeliveredHandler(Deps{})),
		"failed":    second(NewRecordNotificationDeliveryFailedHandler(Deps{})),
		"rate":      second(NewRecordRateLimitAlertHandler(Deps{})),
	} {
		assert.Error(t, err, name)
	}
}

// A rate-limit policy's refusals raise one rate_limit.exceeded notification per window, to
// the usage alert audiences of its workspace, whichever refusal reports it and however often.
func TestRateLimitAlertIsRecordedOncePerWindow(t *testing.T) {
	d := testDeps(t)
	name := "Per key"
	ctx := WithRequest(context.Background(), Request{Actor: domain.System("org-1")})
	_, err := appendEvents(ctx, d, domain.Stream(domain.RateLimitPolicyPrefix, "rl-1"), eventstore.NoStream, []domain.Event{
		domain.RateLimitPolicyCreated{PolicyID: "rl-1", OrganisationID: "org-1", WorkspaceID: "ws-1", Name: &name,
			Type: domain.LimitRequests, Unit: "rpm", Value: 3, At: d.Now()}})
	require.NoError(t, err)
	h, err := NewRecordRateLimitAlertHandler(d)
	require.NoError(t, err)
	at := time.Date(2026, 11, 20, 12, 5, 0, 0, time.UTC)
	first, err := h.Handle(ctx, RecordRateLimitAlert{PolicyID: "rl-1", At: at})
	require.NoError(t, err)
	again, err := h.Handle(ctx, RecordRateLimitAlert{PolicyID: "rl-1", At: at.Add(40 * time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID, "the same hour: the same notification")
	next, err := h.Handle(ctx, RecordRateLimitAlert{PolicyID: "rl-1", At: at.Add(time.Hour)})
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, next.ID)
	assert.Equal(t, 2, eventTypes(t, d)["NotificationRecorded"])

	n, err := Load(context.Background(), d, domain.Stream(domain.NotificationPrefix, first.ID), newNotification)
	require.NoError(t, err)
	assert.Equal(t, domain.NotifyRateLimitExceeded, n.Kind)
	assert.Equal(t, domain.UsageAlertRecipients("ws-1"), n.Recipients)
	assert.Equal(t, `Rate limit policy "Per key" refused requests: its limit of 3 requests per minute was reached`, n.Subject)
	assert.Equal(t, "2026-11-20T12:00:00Z", n.Data["window_start"])
	assert.Equal(t, "3", n.Data["limit"])
	assert.Equal(t, "rl-1", n.ResourceID)
	assert.Positive(t, first.Position)

	_, err = h.Handle(adminCtx("org-1"), RecordRateLimitAlert{PolicyID: "rl-1", At: at})
	assert.Equal(t, domain.CodeForbidden, codeOf(err))
	_, err = h.Handle(WithRequest(context.Background(), Request{Actor: domain.System("org-2")}), RecordRateLimitAlert{PolicyID: "rl-1", At: at})
	assert.Equal(t, domain.CodeNotFound, codeOf(err))
}
