package workers

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
)

// NotificationReads is what the delivery worker reads of the read model
// (projections.Queries answers each).
type NotificationReads interface {
	// PendingDeliveries lists the notifications with deliveries still to make; those not yet
	// planned only when recorded at notBefore or later.
	PendingDeliveries(ctx context.Context, notBefore time.Time) ([]domain.Notification, error)
	// NotificationAddresses resolves recipients (audiences and addresses) to addresses now.
	NotificationAddresses(ctx context.Context, orgID string, recipients []string) ([]string, error)
	// WebhooksFor lists the live, enabled webhooks that n is delivered to.
	WebhooksFor(ctx context.Context, n domain.Notification) ([]domain.Webhook, error)
}

// WebhookEndpoints opens a webhook as it is now, with its signing key
// (commands.WebhookEndpoints); commands.ErrNoWebhook when it does not exist.
type WebhookEndpoints interface {
	Endpoint(ctx context.Context, id string) (domain.Webhook, []byte, error)
}

// HTTPDoer posts webhooks: cmd wires the egress guard's client, whose dialer checks every
// address it connects to.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// RetryPolicy says when a failed delivery is tried again: after Schedule[n-1] (the last entry
// repeating) following its n-th failure, give or take a fifth (jitter, so that receivers that
// failed together are not called again together), until MaxAttempts attempts were made.
type RetryPolicy struct {
	Schedule    []time.Duration
	MaxAttempts int
}

// DefaultRetryPolicy retries for about a day: after 5s, 30s, 2m, 10m, 1h, 3h, 6h, 12h.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Schedule: []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute,
		time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour}, MaxAttempts: 9}
}

// after is the wait before the attempt that follows failed attempt n (from 1).
func (p RetryPolicy) after(n int) time.Duration {
	if len(p.Schedule) == 0 {
		return time.Minute
	}
	d := p.Schedule[min(max(n, 1), len(p.Schedule))-1]
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Defaults of the delivery worker.
const (
	// DefaultNotificationMaxAge: a notification not yet planned when it is older than this is
	// left undelivered, so that the first start of a deployment does not mail its history.
	DefaultNotificationMaxAge = 24 * time.Hour
	// webhookTimeout bounds one webhook call; mailTimeout one e-mail.
	webhookTimeout = 10 * time.Second
	mailTimeout    = 30 * time.Second
	// deliveryClaimTTL is how long a claim on one delivery lasts: longer than an attempt and
	// its record take, so that only a dead instance's claims lapse.
	deliveryClaimTTL = 2 * time.Minute
	// maxReceiverBody bounds what is read of a receiver's answer (to reuse the connection).
	maxReceiverBody = 64 << 10
)

// NotificationWorker delivers recorded notifications: by e-mail to the addresses their
// audiences resolve to, and to the webhooks that match them. It follows the pending ones in the
// read model; plans each once (commands.PlanNotificationDeliveries: targets settled when it
// is first taken up); makes each due delivery and records it delivered, or failed with the
// next attempt's time, or failed for good (commands.RecordNotificationDelivered,
// RecordNotificationDeliveryFailed).
//
// Deliveries are at least once and deduplicated by notification id: before sending, the
// worker reads the notification's stream and sends only a delivery still pending and due;
// with several instances, each delivery is sent by the instance that claims it (Claims); a
// restart finds the pending ones again in the read model and counts attempts from the
// failures recorded. A crash between a send and its record sends it again: the e-mail keeps
// its Message-ID, the webhook its webhook-id, for receivers to drop the repeat.
type NotificationWorker struct {
	d         commands.Deps
	reads     NotificationReads
	plan      commands.Handler[commands.PlanNotificationDeliveries, commands.Result]
	delivered commands.Handler[commands.RecordNotificationDelivered, commands.Result]
	failed    commands.Handler[commands.RecordNotificationDeliveryFailed, commands.Result]

	// Mail sends e-mail; nil: e-mail is off (no SMTP_HOST), and no e-mail is planned.
	Mail Mailer
	// Endpoints and Client deliver webhooks; either nil: webhooks are off.
	Endpoints WebhookEndpoints
	Client    HTTPDoer
	// Retry is when failed deliveries are tried again; zero: DefaultRetryPolicy.
	Retry RetryPolicy
	// MaxAge: older notifications not yet planned are left alone; 0:
	// DefaultNotificationMaxAge.
	MaxAge time.Duration
	// Concurrency bounds the deliveries made at once; 0: 8.
	Concurrency int
	// ResourceName is the name the admin API gives a resource type (projections.AuditResourceType),
	// for e-mails and webhook payloads; nil: the type as recorded.
	ResourceName func(string) string
	// UserAgent is sent with webhooks.
	UserAgent string
	// Claims, with several instances on one database, hands each delivery to one of them
	// (cluster.Claims), under Holder (the instance id); nil: this worker is the only one.
	Claims Claims
	Holder string
	// OnError hears what went wrong in passes and deliveries (never a secret).
	OnError func(error)
	// Observe hears how each attempt ended, by channel (email, webhook) and outcome
	// (delivered, retried, failed: the last attempt), for the metrics; nil: nobody.
	Observe func(channel, outcome string)

	mu       sync.Mutex
	inflight map[string]bool
	slots    chan struct{}
	wg       sync.WaitGroup
}

// NewNotificationWorker needs the read model's pending deliveries.
func NewNotificationWorker(d commands.Deps, reads NotificationReads) (*NotificationWorker, error) {
	if reads == nil {
		return nil, errors.New("workers: the notification worker needs the read model's pending deliveries")
	}
	plan, err := commands.NewPlanNotificationDeliveriesHandler(d)
	if err != nil {
		return nil, err
	}
	delivered, err := commands.NewRecordNotificationDeliveredHandler(d)
	if err != nil {
		return nil, err
	}
	failed, err := commands.NewRecordNotificationDeliveryFailedHandler(d)
	if err != nil {
		return nil, err
	}
	return &NotificationWorker{d: d, reads: reads, plan: plan, delivered: delivered, failed: failed, inflight: map[string]bool{}}, nil
}

// Run makes a pass at once and then every interval until ctx ends, then waits for the
// deliveries in flight. A delivery cut short by the end is made again by the next start.
func (w *NotificationWorker) Run(ctx context.Context, every time.Duration) error {
	err := commands.RunEvery(ctx, "notification worker", every, w.Tick, w.OnError)
	w.Wait()
	return err
}

// Wait returns once no delivery is in flight.
func (w *NotificationWorker) Wait() { w.wg.Wait() }

func (w *NotificationWorker) webhooksOn() bool { return w.Endpoints != nil && w.Client != nil }

// Tick makes one pass: it plans the pending notifications not yet planned and starts their
// due deliveries, which go on in the background under ctx.
func (w *NotificationWorker) Tick(ctx context.Context) error {
	now := w.d.Now()
	maxAge := w.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultNotificationMaxAge
	}
	// Every notification not yet planned, however old: one older than maxAge is planned with
	// nothing to deliver (skipped), so that no status stays pending for good and a first start
	// does not mail the history.
	pending, err := w.reads.PendingDeliveries(ctx, time.Time{})
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range pending {
		if ctx.Err() != nil {
			break
		}
		if !n.Planned() && n.CreatedAt.Before(now.Add(-maxAge)) {
			if _, err := w.plan.Handle(asWorker(ctx, n, "notification-plan-"+n.ID),
				commands.PlanNotificationDeliveries{NotificationID: n.ID}); err != nil {
				errs = append(errs, fmt.Errorf("notification %s: skip: %w", n.ID, err))
			}
			continue
		}
		if !n.Planned() {
			planned, err := w.planned(ctx, n)
			if err != nil {
				errs = append(errs, fmt.Errorf("notification %s: plan: %w", n.ID, err))
				continue
			}
			n = planned
		}
		for _, d := range n.DueDeliveries(now) {
			if err := w.start(ctx, n, d.DeliveryTarget); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// asWorker is the request of one of the worker's records about n, named by its idempotency key.
func asWorker(ctx context.Context, n domain.Notification, key string) context.Context {
	return commands.WithRequest(ctx, commands.Request{Actor: domain.System(n.OrganisationID), RequestID: key, IdempotencyKey: key})
}

// planned settles n's targets (once, whoever does it first) and answers n as its stream has
// it then.
func (w *NotificationWorker) planned(ctx context.Context, n domain.Notification) (domain.Notification, error) {
	var targets []domain.DeliveryTarget
	if w.Mail != nil {
		addrs, err := w.reads.NotificationAddresses(ctx, n.OrganisationID, n.Recipients)
		if err != nil {
			return n, err
		}
		for _, a := range addrs {
			targets = append(targets, domain.DeliveryTarget{Channel: domain.ChannelEmail, Target: a})
		}
	}
	if w.webhooksOn() {
		hooks, err := w.reads.WebhooksFor(ctx, n)
		if err != nil {
			return n, err
		}
		for _, h := range hooks {
			targets = append(targets, domain.DeliveryTarget{Channel: domain.ChannelWebhook, Target: h.ID})
		}
	}
	if _, err := w.plan.Handle(asWorker(ctx, n, "notification-plan-"+n.ID),
		commands.PlanNotificationDeliveries{NotificationID: n.ID, Deliveries: targets}); err != nil {
		return n, err
	}
	cur, err := w.load(ctx, n.ID)
	if err != nil {
		return n, err
	}
	return *cur, nil
}

func (w *NotificationWorker) load(ctx context.Context, id string) (*domain.Notification, error) {
	return commands.Load(ctx, w.d, domain.Stream(domain.NotificationPrefix, id), func() *domain.Notification { return &domain.Notification{} })
}

func deliveryItem(id string, t domain.DeliveryTarget) string {
	return "notification:" + id + ":" + t.Channel + ":" + t.Target
}

// start makes one delivery in the background, unless it is in flight here already, all
// slots are busy (the next pass takes it up), or another instance holds its claim.
func (w *NotificationWorker) start(ctx context.Context, n domain.Notification, t domain.DeliveryTarget) error {
	item := deliveryItem(n.ID, t)
	w.mu.Lock()
	if w.slots == nil {
		size := w.Concurrency
		if size <= 0 {
			size = 8
		}
		w.slots = make(chan struct{}, size)
	}
	if w.inflight[item] {
		w.mu.Unlock()
		return nil
	}
	select {
	case w.slots <- struct{}{}:
	default:
		w.mu.Unlock()
		return nil
	}
	w.inflight[item] = true
	w.mu.Unlock()
	done := func() {
		w.mu.Lock()
		delete(w.inflight, item)
		w.mu.Unlock()
		<-w.slots
	}
	if w.Claims != nil {
		held, err := w.Claims.Claim(ctx, item, w.Holder, deliveryClaimTTL)
		if err != nil || !held {
			done()
			if err != nil {
				return fmt.Errorf("notification %s: claim: %w", n.ID, err)
			}
			return nil // another instance delivers it
		}
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer done()
		if w.Claims != nil {
			defer func() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_ = w.Claims.Release(rctx, item, w.Holder)
			}()
		}
		if err := w.deliver(ctx, n.ID, t); err != nil && w.OnError != nil && ctx.Err() == nil {
			w.OnError(fmt.Errorf("notification %s: %s delivery to %s: %w", n.ID, t.Channel, t.Target, err))
		}
	}()
	return nil
}

// deliver makes one attempt of a delivery that the stream says is pending and due, and
// records how it went.
func (w *NotificationWorker) deliver(ctx context.Context, id string, t domain.DeliveryTarget) error {
	n, err := w.load(ctx, id)
	if err != nil {
		return err
	}
	d, ok := n.Delivery(t.Channel, t.Target)
	now := w.d.Now()
	if !ok || d.Status != domain.DeliveryPending || (d.NextAttemptAt != nil && now.Before(*d.NextAttemptAt)) {
		return nil // made, settled or put off since the read model was read
	}
	attempt := d.Attempts + 1
	var sendErr error
	switch t.Channel {
	case domain.ChannelEmail:
		sendErr = w.email(ctx, *n, t.Target)
	case domain.ChannelWebhook:
		sendErr = w.webhook(ctx, *n, t.Target)
	default:
		sendErr = permanent(fmt.Errorf("unknown channel %q", t.Channel))
	}
	if ctx.Err() != nil {
		return nil // shut down mid-way: the next start tries again, as the same attempt
	}
	base := "notification-" + id + "-" + t.Channel + "-" + t.Target
	if sendErr == nil {
		w.observe(t.Channel, "delivered")
		_, err := w.delivered.Handle(asWorker(ctx, *n, base+"-delivered"),
			commands.RecordNotificationDelivered{NotificationID: id, Channel: t.Channel, Target: t.Target})
		return err
	}
	retry := w.Retry
	if retry.MaxAttempts <= 0 {
		retry = DefaultRetryPolicy()
	}
	var perm *permanentError
	final := errors.As(sendErr, &perm) || attempt >= retry.MaxAttempts
	if final {
		w.observe(t.Channel, "failed")
	} else {
		w.observe(t.Channel, "retried")
	}
	_, err = w.failed.Handle(asWorker(ctx, *n, base+"-failed-"+strconv.Itoa(attempt)), commands.RecordNotificationDeliveryFailed{
		NotificationID: id, DeliveryFailure: domain.DeliveryFailure{Channel: t.Channel, Target: t.Target, Attempt: attempt,
			Error: sendErr.Error(), NextAttemptAt: now.Add(retry.after(attempt)), Final: final}})
	return errors.Join(fmt.Errorf("attempt %d: %w", attempt, sendErr), err)
}

func (w *NotificationWorker) observe(channel, outcome string) {
	if w.Observe != nil {
		w.Observe(channel, outcome)
	}
}

// permanentError is a failure that another attempt cannot mend (the webhook was deleted,
// e-mail is off): the delivery fails for good at once.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return &permanentError{err} }

// email sends n to one address.
func (w *NotificationWorker) email(ctx context.Context, n domain.Notification, to string) error {
	if w.Mail == nil {
		return permanent(errors.New("e-mail is not configured here (SMTP_HOST is unset)"))
	}
	ctx, cancel := context.WithTimeout(ctx, mailTimeout)
	defer cancel()
	return w.Mail.Send(ctx, Mail{To: to, Subject: "[Causeway] " + n.Subject, Body: w.MailBody(n), NotificationID: n.ID})
}

// kindSentences say in words what each kind of notification means.
var kindSentences = map[string]string{
	domain.NotifyInvite:            "You are invited to join an organisation on Causeway.",
	domain.NotifyKeyRotationSoon:   "An API key will be rotated soon.",
	domain.NotifyKeyRotated:        "An API key was rotated; the previous key works until the transition ends.",
	domain.NotifyKeyExpirySoon:     "An API key expires soon.",
	domain.NotifyKeyExpired:        "An API key has expired and no longer works.",
	domain.NotifyUsageThreshold:    "A budget reached its alert threshold.",
	domain.NotifyUsageExhausted:    "A budget is exhausted: requests it governs are refused until it is reset or raised.",
	domain.NotifyRateLimitExceeded: "A rate-limit policy refused requests: its limit was reached in the window below.",
}

func (w *NotificationWorker) resourceName(typ string) string {
	if w.ResourceName != nil {
		return w.ResourceName(typ)
	}
	return typ
}

// MailBody is the plain text of n's e-mail: what happened, the resource, and its figures.
func (w *NotificationWorker) MailBody(n domain.Notification) string {
	var b strings.Builder
	b.WriteString(n.Subject + "\n\n")
	if s, ok := kindSentences[n.Kind]; ok {
		b.WriteString(s + "\n\n")
	}
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-14s %s\n", k+":", v)
		}
	}
	line("Kind", n.Kind)
	if n.ResourceType != "" || n.ResourceID != "" {
		line("Resource", strings.TrimSpace(w.resourceName(n.ResourceType)+" "+n.ResourceID))
	}
	line("Workspace", n.WorkspaceID)
	line("Organisation", n.OrganisationID)
	if len(n.Data) > 0 {
		b.WriteString("\n")
		keys := make([]string, 0, len(n.Data))
		for k := range n.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			line(k, n.Data[k])
		}
	}
	fmt.Fprintf(&b, "\nRecorded at %s as notification %s.\n", n.CreatedAt.UTC().Format(time.RFC3339), n.ID)
	b.WriteString("-- \nCauseway\n")
	return b.String()
}

// WebhookPayload is the body posted to webhooks, as Standard Webhooks shapes it: the event's
// type (the notification's kind), its id (the notification's, also the webhook-id header),
// when it was sent, and the notification itself.
type WebhookPayload struct {
	Type      string              `json:"type"`
	ID        string              `json:"id"`
	Timestamp time.Time           `json:"timestamp"`
	Data      WebhookNotification `json:"data"`
}

// WebhookNotification is a notification as webhooks receive it. Its recipients (addresses of
// people) are left out.
type WebhookNotification struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Kind           string            `json:"kind"`
	Subject        string            `json:"subject"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    string            `json:"workspace_id,omitempty"`
	ResourceType   string            `json:"resource_type,omitempty"`
	ResourceID     string            `json:"resource_id,omitempty"`
	Data           map[string]string `json:"data,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
}

// WebhookSignature is the webhook-signature header's value for a message: "v1," and the
// base64 of the HMAC-SHA256, under key, of id.timestamp.body.
func WebhookSignature(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// webhook posts n to the webhook id as it is now.
func (w *NotificationWorker) webhook(ctx context.Context, n domain.Notification, id string) error {
	if !w.webhooksOn() {
		return permanent(errors.New("webhooks are not delivered by this worker"))
	}
	hook, key, err := w.Endpoints.Endpoint(ctx, id)
	switch {
	case errors.Is(err, commands.ErrNoWebhook):
		return permanent(errors.New("the webhook does not exist"))
	case err != nil:
		return fmt.Errorf("the webhook could not be read: %w", err)
	case !hook.Exists():
		return permanent(errors.New("the webhook was deleted"))
	case hook.Disabled:
		return permanent(errors.New("the webhook is disabled"))
	}
	// The wall clock, not the control plane's: receivers check the timestamp against theirs.
	now := time.Now().UTC()
	body, err := json.Marshal(WebhookPayload{Type: n.Kind, ID: n.ID, Timestamp: now, Data: WebhookNotification{ID: n.ID,
		Object: "notification", Kind: n.Kind, Subject: n.Subject, OrganisationID: n.OrganisationID, WorkspaceID: n.WorkspaceID,
		ResourceType: w.resourceName(n.ResourceType), ResourceID: n.ResourceID, Data: n.Data, CreatedAt: n.CreatedAt.UTC()}})
	if err != nil {
		return permanent(err)
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return permanent(errors.New("the webhook's URL is not valid"))
	}
	ts := now.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", n.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", WebhookSignature(key, n.ID, ts, body))
	if w.UserAgent != "" {
		req.Header.Set("User-Agent", w.UserAgent)
	}
	resp, err := w.Client.Do(req)
	if err != nil {
		return callError(ctx, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxReceiverBody))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the webhook answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// callError says why a call failed without the URL: url.Error quotes it whole, with its path
// and query, which may hold a token of the receiver's.
func callError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the webhook did not answer within %s", webhookTimeout)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("the webhook could not be reached: %v", err)
}
