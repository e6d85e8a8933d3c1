package workers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
)

// RateLimitAlerts raises rate_limit.exceeded notifications from the gateway's request logs:
// it is an analytics.LogSink placed before the log pipeline, which passes every record on and,
// when a rate-limit policy refused the request, hands the refusal to a goroutine
// (commands.RecordRateLimitAlert). The request path never waits for it: a refusal finds a
// place in a small buffer or is dropped (the alert needs one refusal per window, and a flood
// of them brings many more). The goroutine asks for each policy and hour once, however many
// refusals it hears; the command records one notification per policy and window.
type RateLimitAlerts struct {
	next    analytics.LogSink
	record  commands.Handler[commands.RecordRateLimitAlert, commands.Result]
	pending chan refusal
	dropped atomic.Int64
	// OnError hears the refusals whose alert could not be recorded; the next refusal of the
	// same policy and hour asks again.
	OnError func(error)
	// Recorded, when set (tests), hears each alert recorded, with the notification's id and
	// the position to wait for.
	Recorded func(commands.Result)
}

// refusal is what an alert needs of a refused request.
type refusal struct {
	org, policy string
	at          time.Time
}

// rateLimitPolicy is the kind of decider a rate-limit policy's refusal names.
const rateLimitPolicy = "rate_limit_policy"

// DefaultRateLimitAlertBuffer is how many refusals wait for the goroutine at most.
const DefaultRateLimitAlertBuffer = 256

// NewRateLimitAlerts passes records on to next, and keeps up to buffer refusals waiting.
func NewRateLimitAlerts(d commands.Deps, next analytics.LogSink, buffer int) (*RateLimitAlerts, error) {
	if next == nil {
		return nil, errors.New("workers: rate-limit alerts need the log sink to pass records on to")
	}
	record, err := commands.NewRecordRateLimitAlertHandler(d)
	if err != nil {
		return nil, err
	}
	if buffer <= 0 {
		buffer = DefaultRateLimitAlertBuffer
	}
	return &RateLimitAlerts{next: next, record: record, pending: make(chan refusal, buffer)}, nil
}

var _ analytics.LogSink = (*RateLimitAlerts)(nil)

// Log passes rec on, then notes a rate-limit policy's refusal without waiting.
func (a *RateLimitAlerts) Log(rec analytics.LogRecord) {
	a.next.Log(rec)
	p := rec.Provenance
	if p == nil || p.RefusedBy == nil || p.RefusedBy.Kind != rateLimitPolicy {
		return
	}
	select {
	case a.pending <- refusal{org: rec.OrganisationID, policy: p.RefusedBy.ID, at: rec.StartedAt}:
	default:
		a.dropped.Add(1)
	}
}

// Dropped is how many refusals found the buffer full.
func (a *RateLimitAlerts) Dropped() int64 { return a.dropped.Load() }

// Run records the alerts of the refusals handed over, until ctx ends.
func (a *RateLimitAlerts) Run(ctx context.Context) {
	asked := map[string]time.Time{} // policy and hour → when the hour ends
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-a.pending:
			hour := r.at.UTC().Truncate(time.Hour)
			key := r.policy + "\x00" + hour.Format(time.RFC3339)
			if _, ok := asked[key]; ok {
				continue
			}
			ctx := commands.WithRequest(ctx, commands.Request{Actor: domain.System(r.org), RequestID: "rate-limit-alert-" + r.policy})
			res, err := a.record.Handle(ctx, commands.RecordRateLimitAlert{PolicyID: r.policy, At: r.at})
			if err != nil {
				if a.OnError != nil && ctx.Err() == nil {
					a.OnError(fmt.Errorf("rate-limit alert of policy %s: %w", r.policy, err))
				}
				continue
			}
			asked[key] = hour.Add(time.Hour)
			for k, end := range asked {
				if r.at.Sub(end) > time.Hour {
					delete(asked, k)
				}
			}
			if a.Recorded != nil {
				a.Recorded(res)
			}
		}
	}
}
