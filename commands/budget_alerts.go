package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// Budget kinds: what RecordBudgetUsage and ResetBudgetUsageIfDue act on, and what their Sub
// names within it.
const (
	BudgetAPIKey               = "api_key"               // an API key's usage_limits; no Sub
	BudgetWorkspace            = "workspace"             // a workspace's usage_limits; Sub: the limit type, cost or tokens
	BudgetProvider             = "provider"              // a managed provider's (virtual key's) usage_limits; no Sub
	BudgetIntegrationWorkspace = "integration_workspace" // an integration's limit in one workspace; Sub: the workspace id
	BudgetUsageLimitPolicy     = "usage_limit_policy"    // an entity of a usage-limit policy; Sub: its value key
)

// budgetAlert is a threshold or exhaustion alert of a budget: what its notification says.
type budgetAlert struct {
	kind      string // domain.NotifyUsageThreshold or domain.NotifyUsageExhausted
	sub       string
	limitType string
	usage     float64
	limit     float64 // the alert threshold or the credit limit reached
	at        time.Time
}

// budgetNotificationID derives the id of an alert's notification from what it is about: the
// kind, the budget, its sub-budget, the usage period and the limit reached. A report repeated
// (a retry, another process) finds its notification recorded even without an idempotency
// key; an alert that comes again in the same period at another limit (raised, or lowered) is
// a notification of its own.
func budgetNotificationID(kind, resourceType, resourceID, sub, period string, limit float64) string {
	name := strings.Join([]string{"budget-notification", kind, resourceType, resourceID, sub, period, usageNum(limit)}, "\x00")
	return uuid.NewSHA1(idempotencyNamespace, []byte(name)).String()
}

// budgetRecipients are the audiences of a budget's alerts (6): the organisation's admins, and
// the admins and managers of the workspace it belongs to, if any; then the extra addresses.
func budgetRecipients(workspaceID string, extra ...string) []string {
	out := []string{"organisation:admins"}
	if workspaceID != "" {
		out = domain.UsageAlertRecipients(workspaceID)
	}
	return append(out, extra...)
}

// budgetNotification is the notification of alert a about the budget resourceType/resourceID
// in period, named label in its subject.
func budgetNotification(a budgetAlert, orgID, workspaceID, resourceType, resourceID, label, period string,
	recipients []string, data map[string]string) domain.NotificationRecorded {
	subject := fmt.Sprintf("%s reached its alert threshold (%s of %s)", label, usageFigure(a.usage), usageNum(a.limit))
	limitField := "alert_threshold"
	if a.kind == domain.NotifyUsageExhausted {
		subject = fmt.Sprintf("%s is exhausted (%s of %s)", label, usageFigure(a.usage), usageNum(a.limit))
		limitField = "credit_limit"
	}
	if data == nil {
		data = map[string]string{}
	}
	data["current_usage"], data[limitField], data["period"] = usageFigure(a.usage), usageNum(a.limit), period
	if a.limitType != "" {
		data["type"] = a.limitType
	}
	return domain.NotificationRecorded{
		NotificationID: budgetNotificationID(a.kind, resourceType, resourceID, a.sub, period, a.limit),
		OrganisationID: orgID, WorkspaceID: workspaceID, Kind: a.kind, Recipients: recipients, Subject: subject,
		ResourceType: resourceType, ResourceID: resourceID, Data: data, At: a.at}
}

// recordNotifications records each notification once (notify), and moves res to the last
// one's position, so that a client reading after the write sees them.
func recordNotifications(ctx context.Context, d Deps, notes []domain.NotificationRecorded, res *Result) error {
	var errs []error
	for _, n := range notes {
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

// trailingAlertScan bounds how far back trailingAlerts looks.
const trailingAlertScan = 16

// trailingAlerts returns, oldest first, the alerts about sub among the alert events that end
// stream (alert tells them apart: an alert of the budget, of whichever sub). They are the
// alerts of the current period that the report which decided them may have failed to notify:
// a reset, a change of limits, anything else ends the run, so an alert already followed by
// something is never recovered twice over a limit that moved.
func trailingAlerts(ctx context.Context, d Deps, stream, sub string, alert func(domain.Event) (budgetAlert, bool)) ([]budgetAlert, error) {
	recs, err := d.Store.ReadStream(ctx, stream, eventstore.Backwards, eventstore.StreamEnd, trailingAlertScan)
	if errors.Is(err, eventstore.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []budgetAlert
	for _, rec := range recs {
		ev, err := d.Registry.Decode(rec.Type, rec.Data)
		if err != nil {
			return nil, err
		}
		a, ok := alert(ev)
		if !ok {
			break
		}
		if a.sub == sub {
			out = append(out, a)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// executeForSystem runs a decision of the gateway's usage accounting or of the scheduler: the
// system actor only, on a resource of its own organisation (like loadUsageLimitPolicyAsSystem,
// but in the one load that execute makes).
func executeForSystem[A domain.Aggregate](ctx context.Context, d Deps, stream, what string, newAgg func() A,
	org func(A) string, decide func(A) ([]domain.Event, error)) (Result, error) {
	actor := RequestFrom(ctx).Actor
	if actor.Kind != domain.ActorSystem {
		return Result{}, forbidden("only the gateway's usage accounting and the scheduler may do this")
	}
	return execute(ctx, d, stream, newAgg, func(a A) ([]domain.Event, error) {
		if org(a) != actor.OrganisationID {
			return nil, domain.Errorf(domain.CodeNotFound, "%s not found", what)
		}
		return decide(a)
	})
}
