package commands

import (
	"context"
	"fmt"
	"strconv"

	"github.com/causeway/causeway/domain"
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
// decides no alert twice (the policy remembers what it sent), and each notification's id is
// derived from the alert (budgetNotificationID), so a retried request, or the usage ledger
// reporting the same alert (RecordBudgetUsage), records it once. res moves to the last
// notification's position, so that a client reading after the write sees them.
func notifyUsageAlerts(ctx context.Context, d Deps, u usageDecision, res *Result) error {
	// The policy as the alerts leave it, so that a rename in the same update is used.
	p := u.policy
	for _, ev := range u.events {
		p.Apply(ev)
	}
	var notes []domain.NotificationRecorded
	for _, ev := range u.events {
		if a, ok := policyAlert(ev); ok {
			notes = append(notes, policyNotification(&p, a))
		}
	}
	return recordNotifications(ctx, d, notes, res)
}

// policyAlert is the alert that an event of a usage-limit policy is, if it is one; its sub is
// the entity's value key.
func policyAlert(ev domain.Event) (budgetAlert, bool) {
	switch e := ev.(type) {
	case domain.UsageLimitPolicyThresholdReached:
		return budgetAlert{kind: domain.NotifyUsageThreshold, sub: e.ValueKey, usage: e.Usage, limit: e.AlertThreshold, at: e.At}, true
	case domain.UsageLimitPolicyEntityExhausted:
		return budgetAlert{kind: domain.NotifyUsageExhausted, sub: e.ValueKey, usage: e.Usage, limit: e.CreditLimit, at: e.At}, true
	}
	return budgetAlert{}, false
}

// policyNotification is the notification of alert a of policy p, as the alert left p.
func policyNotification(p *domain.UsageLimitPolicy, a budgetAlert) domain.NotificationRecorded {
	period := p.EntityPeriod(a.sub)
	n := domain.NotificationRecorded{
		NotificationID: budgetNotificationID(a.kind, domain.UsageLimitPolicyPrefix, p.ID, a.sub, period, a.limit),
		OrganisationID: p.OrganisationID, WorkspaceID: p.WorkspaceID, Kind: a.kind,
		Recipients: budgetRecipients(p.WorkspaceID), ResourceType: domain.UsageLimitPolicyPrefix, ResourceID: p.ID,
		Data: map[string]string{"policy_id": p.ID, "value_key": a.sub, "current_usage": usageFigure(a.usage), "type": p.Type,
			"period": period},
		At: a.at}
	if a.kind == domain.NotifyUsageThreshold {
		n.Subject = fmt.Sprintf("Usage limit policy %s: %s reached its alert threshold (%s of %s)",
			usagePolicyLabel(*p), a.sub, usageFigure(a.usage), usageNum(a.limit))
		n.Data["alert_threshold"] = usageNum(a.limit)
	} else {
		n.Subject = fmt.Sprintf("Usage limit policy %s: %s is exhausted (%s of %s)",
			usagePolicyLabel(*p), a.sub, usageFigure(a.usage), usageNum(a.limit))
		n.Data["credit_limit"] = usageNum(a.limit)
	}
	return n
}

func usagePolicyLabel(p domain.UsageLimitPolicy) string {
	if p.Name != nil && *p.Name != "" {
		return strconv.Quote(*p.Name)
	}
	return p.ID
}

func usageNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// usageFigure is a usage as notifications tell it: without the noise that summing charges in
// binary floating point leaves (0.9999999999999999 is 1), as the admin API answers money.
func usageFigure(v float64) string { return usageNum(domain.RoundMoney(v)) }
