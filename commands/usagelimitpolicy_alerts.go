package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// usageDecision keeps what a usage-limit decision saw and decided, for the notifications
// that follow the append. execute may decide more than once on a conflict; the last one is
// what was appended.
type usageDecision struct {
	policy domain.UsageLimitPolicy
	events []domain.Event
}

func (u *usageDecision) keep(p *domain.UsageLimitPolicy) func([]domain.Event, error) ([]domain.Event, error) {
	return func(events []domain.Event, err error) ([]domain.Event, error) {
		u.policy, u.events = *p, events
		return events, err
	}
}

// notifyUsageAlerts records a notification for each alert decided. A command run again
// decides no alert twice (the policy remembers what it sent), and with an idempotency key
// each notification's id is derived from the key, so a retried request records it once.
// res moves to the last notification's position, so that a client reading after the write
// sees them.
func notifyUsageAlerts(ctx context.Context, d Deps, u usageDecision, res *Result) error {
	// The policy as the alerts leave it, so that a rename in the same update is used.
	p := u.policy
	for _, ev := range u.events {
		p.Apply(ev)
	}
	var errs []error
	for _, ev := range u.events {
		var n domain.NotificationRecorded
		switch e := ev.(type) {
		case domain.UsageLimitPolicyThresholdReached:
			n = usageNotification(ctx, p, domain.NotifyUsageThreshold, e.ValueKey, e.Usage, e.At)
			n.Subject = fmt.Sprintf("Usage limit policy %s: %s reached its alert threshold (%s of %s)",
				usagePolicyLabel(p), e.ValueKey, usageNum(e.Usage), usageNum(e.AlertThreshold))
			n.Data["alert_threshold"] = usageNum(e.AlertThreshold)
		case domain.UsageLimitPolicyEntityExhausted:
			n = usageNotification(ctx, p, domain.NotifyUsageExhausted, e.ValueKey, e.Usage, e.At)
			n.Subject = fmt.Sprintf("Usage limit policy %s: %s is exhausted (%s of %s)",
				usagePolicyLabel(p), e.ValueKey, usageNum(e.Usage), usageNum(e.CreditLimit))
			n.Data["credit_limit"] = usageNum(e.CreditLimit)
		default:
			continue
		}
		if err := notify(ctx, d, n); err != nil {
			errs = append(errs, err)
			continue
		}
		recs, err := d.Store.ReadStream(ctx, domain.Stream(domain.NotificationPrefix, n.NotificationID), eventstore.Backwards, eventstore.StreamEnd, 1)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(recs) == 1 && recs[0].Position > res.Position {
			res.Position = recs[0].Position
		}
	}
	return errors.Join(errs...)
}

func usageNotification(ctx context.Context, p domain.UsageLimitPolicy, kind, valueKey string, usage float64, at time.Time) domain.NotificationRecorded {
	id := NewID(ctx, "notification:"+kind+":"+p.ID+":"+valueKey)
	return domain.NotificationRecorded{NotificationID: id, OrganisationID: p.OrganisationID,
		WorkspaceID: p.WorkspaceID, Kind: kind, Recipients: domain.UsageAlertRecipients(p.WorkspaceID),
		ResourceType: domain.UsageLimitPolicyPrefix, ResourceID: p.ID,
		Data: map[string]string{"policy_id": p.ID, "value_key": valueKey, "current_usage": usageNum(usage), "type": p.Type},
		At:   at}
}

func usagePolicyLabel(p domain.UsageLimitPolicy) string {
	if p.Name != nil && *p.Name != "" {
		return strconv.Quote(*p.Name)
	}
	return p.ID
}

func usageNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
