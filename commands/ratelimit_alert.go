package commands

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/causeway/causeway/domain"
)

// RecordRateLimitAlert records that a rate-limit policy refused a request at At: one
// rate_limit.exceeded notification per policy and window (domain.RateLimitAlertWindow: the
// hour, or the policy's day or week), to the usage alert audiences of the policy's workspace.
// The notification's id is derived from the policy and the window's start, so refusals
// reported again, by any instance, record it once. Only the system actor (the gateway's
// refusals, through workers.RateLimitAlerts) records it.
type RecordRateLimitAlert struct {
	PolicyID string
	At       time.Time
}

type recordRateLimitAlertHandler struct{ d Deps }

// NewRecordRateLimitAlertHandler refuses missing dependencies.
func NewRecordRateLimitAlertHandler(d Deps) (Handler[RecordRateLimitAlert, Result], error) {
	return authorised(systemOnly("only the gateway's rate limiting raises rate-limit alerts"),
		Handler[RecordRateLimitAlert, Result](recordRateLimitAlertHandler{d})), d.check()
}

// rateLimitUnitWords names a rate limit's window.
var rateLimitUnitWords = map[string]string{"rpm": "minute", "rph": "hour", "rpd": "day", "rpw": "week"}

func (h recordRateLimitAlertHandler) Handle(ctx context.Context, c RecordRateLimitAlert) (Result, error) {
	actor := RequestFrom(ctx).Actor
	p, err := Load(ctx, h.d, domain.Stream(domain.RateLimitPolicyPrefix, c.PolicyID), func() *domain.RateLimitPolicy { return &domain.RateLimitPolicy{} })
	if err != nil {
		return Result{}, err
	}
	if p.ID == "" || p.OrganisationID != actor.OrganisationID {
		return Result{}, domain.Errorf(domain.CodeNotFound, "rate limit policy %s not found", c.PolicyID)
	}
	start, end := domain.RateLimitAlertWindow(p.Unit, c.At)
	id := uuid.NewSHA1(idempotencyNamespace, []byte("rate-limit-notification\x00"+p.ID+"\x00"+stamp(start))).String()
	label := p.ID
	if p.Name != nil && *p.Name != "" {
		label = strconv.Quote(*p.Name)
	}
	what := "requests"
	if p.Type == domain.LimitTokens {
		what = "tokens"
	}
	limit := fmt.Sprintf("%s %s per %s", usageNum(p.Value), what, rateLimitUnitWords[p.Unit])
	res := Result{ID: id}
	err = recordNotifications(ctx, h.d, []domain.NotificationRecorded{{NotificationID: id, OrganisationID: p.OrganisationID,
		WorkspaceID: p.WorkspaceID, Kind: domain.NotifyRateLimitExceeded, Recipients: budgetRecipients(p.WorkspaceID),
		Subject:      fmt.Sprintf("Rate limit policy %s refused requests: its limit of %s was reached", label, limit),
		ResourceType: domain.RateLimitPolicyPrefix, ResourceID: p.ID,
		Data: map[string]string{"policy_id": p.ID, "type": p.Type, "unit": p.Unit, "limit": usageNum(p.Value),
			"window_start": stamp(start), "window_end": stamp(end), "first_refused_at": stamp(c.At)},
		At: h.d.Now()}}, &res)
	return res, err
}
