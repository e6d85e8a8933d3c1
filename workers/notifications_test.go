package workers

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	eventsqlite "github.com/causeway/causeway/eventstore/sqlite"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
)

var _ NotificationReads = (*memory.Model)(nil)
var _ WebhookEndpoints = (*commands.WebhookEndpoints)(nil)

// The signature is Standard Webhooks': the reference libraries' test vector.
func TestWebhookSignatureFollowsStandardWebhooks(t *testing.T) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", commands.WebhookSecretPrefix))
	require.NoError(t, err)
	assert.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		WebhookSignature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`)))
}

func TestRetryPolicyBacksOffWithJitter(t *testing.T) {
	p := RetryPolicy{Schedule: []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute}, MaxAttempts: 5}
	for n, base := range map[int]time.Duration{1: 5 * time.Second, 2: 30 * time.Second, 3: 2 * time.Minute, 4: 2 * time.Minute, 9: 2 * time.Minute} {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := p.after(n)
			assert.GreaterOrEqual(t, d, base*8/10, "after failure %d", n)
			assert.LessOrEqual(t, d, base*12/10, "after failure %d", n)
			seen[d] = true
		}
		assert.Greater(t, len(seen), 1, "jittered")
	}
	def := DefaultRetryPolicy()
	assert.Len(t, def.Schedule, def.MaxAttempts-1, "one wait between each two attempts")
}

func TestMailBodyAndMessageID(t *testing.T) {
	w := &NotificationWorker{ResourceName: func(s string) string { return map[string]string{"usagelimitpolicy": "usage_limit_policy"}[s] }}
	body := w.MailBody(domain.Notification{ID: "n-1", OrganisationID: "org-1", WorkspaceID: "ws-1", Kind: domain.NotifyUsageExhausted,
		Subject: "Usage limit policy x is exhausted (10 of 10)", ResourceType: "usagelimitpolicy", ResourceID: "p-1",
		Data: map[string]string{"credit_limit": "10", "current_usage": "10", "value_key": "k-1"}, CreatedAt: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)})
	assert.Equal(t, `Usage limit policy x is exhausted (10 of 10)

A budget is exhausted: requests it governs are refused until it is reset or raised.

Kind:          usage.exhausted
Resource:      usage_limit_policy p-1
Workspace:     ws-1
Organisation:  org-1

credit_limit:  10
current_usage: 10
value_key:     k-1

Recorded at 2026-11-20T12:00:00Z as notification n-1.
-- 
Causeway
`, body)
	id := MessageID("n-1", "Ann@Example.com", "Causeway <alerts@causeway.test>")
	assert.True(t, strings.HasPrefix(id, "n-1."))
	assert.True(t, strings.HasSuffix(id, "@causeway.test"))
	assert.Equal(t, id, MessageID("n-1", "ann@example.com", "alerts@causeway.test"), "the same for the same address")
	assert.NotEqual(t, id, MessageID("n-1", "bob@example.com", "alerts@causeway.test"))
}

// deliveryWorld is an event store, its read model, and a webhook receiver.
type deliveryWorld struct {
	t    *testing.T
	d    commands.Deps
	read *memory.Model
	app  *commands.App
	rcv  *httptest.Server
	hits atomic.Int64
}

func newDeliveryWorld(t *testing.T, answer http.HandlerFunc) *deliveryWorld {
	t.Helper()
	d := testDeps(t)
	d.Now = time.Now // retries come due
	read := memory.New(d.Registry)
	app, err := commands.NewApp(commands.AppDeps{Deps: d, Secret: []byte(strings.Repeat("s", 32)), Memberships: noMemberships{},
		Collections: read, URLCheck: allowAll{}})
	require.NoError(t, err)
	w := &deliveryWorld{t: t, d: d, read: read, app: app}
	w.rcv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.hits.Add(1)
		answer(rw, r)
	}))
	t.Cleanup(w.rcv.Close)
	return w
}

type noMemberships struct{}

func (noMemberships) MemberWorkspaceIDs(context.Context, string, string) ([]string, error) {
	return nil, nil
}

// allowAll stands in for the egress guard, which the tests' loopback receiver would not pass.
type allowAll struct{}

func (allowAll) CheckURL(string) error { return nil }

func (w *deliveryWorld) fold() {
	w.t.Helper()
	evs, err := w.d.Store.(eventstore.Store).ReadAll(context.Background(), w.read.Position(), 10_000)
	require.NoError(w.t, err)
	for _, ev := range evs {
		require.NoError(w.t, w.read.Apply(ev))
	}
}

func (w *deliveryWorld) admin() context.Context {
	return commands.WithRequest(context.Background(), commands.Request{Actor: domain.Actor{Kind: domain.ActorAPIKey, ID: "k-1",
		OrganisationID: exportOrg, KeyType: domain.KeyOrganisationService, OrgRole: domain.RoleAdmin, Scopes: domain.AllScopes()}})
}

func (w *deliveryWorld) worker() *NotificationWorker {
	w.t.Helper()
	wk, err := NewNotificationWorker(w.d, w.read)
	require.NoError(w.t, err)
	wk.Endpoints, err = commands.NewWebhookEndpoints(w.d, []byte(strings.Repeat("s", 32)))
	require.NoError(w.t, err)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	wk.Client = client
	wk.Retry = RetryPolicy{Schedule: []time.Duration{time.Millisecond}, MaxAttempts: 2}
	return wk
}

// record appends a notification of kind, and folds it.
func (w *deliveryWorld) record(id string) {
	w.t.Helper()
	appendEvent(w.t, w.d, domain.Stream(domain.NotificationPrefix, id), domain.NotificationRecorded{NotificationID: id,
		OrganisationID: exportOrg, Kind: domain.NotifyKeyRotated, Subject: "s", At: w.d.Now()})
	w.fold()
}

// pass runs the worker's passes until the notification is settled.
func (w *deliveryWorld) settle(wk *NotificationWorker, id string) domain.Notification {
	w.t.Helper()
	var n *domain.Notification
	require.Eventually(w.t, func() bool {
		require.NoError(w.t, wk.Tick(context.Background()))
		wk.Wait()
		w.fold()
		var err error
		n, err = commands.Load(context.Background(), w.d, domain.Stream(domain.NotificationPrefix, id), func() *domain.Notification { return &domain.Notification{} })
		require.NoError(w.t, err)
		return n.Status != domain.DeliveryPending
	}, 10*time.Second, time.Millisecond)
	return *n
}

// A receiver's redirect is its answer, not an address to follow; its reason is recorded
// without the URL (whose query holds the receiver's token), and the last attempt is final.
func TestWebhookRedirectsFailAndReasonsHoldNoURL(t *testing.T) {
	w := newDeliveryWorld(t, func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "http://elsewhere.test/", http.StatusFound)
	})
	created, err := w.app.CreateWebhook.Handle(w.admin(), commands.CreateWebhook{Name: "x", URL: w.rcv.URL + "/in?token=receiver-secret"})
	require.NoError(t, err)
	w.fold()
	w.record("n-1")
	var mu sync.Mutex
	var errs []string
	wk := w.worker()
	wk.OnError = func(err error) { mu.Lock(); errs = append(errs, err.Error()); mu.Unlock() }
	n := w.settle(wk, "n-1")
	assert.Equal(t, domain.DeliveryFailed, n.Status)
	d, _ := n.Delivery(domain.ChannelWebhook, created.ID)
	assert.Equal(t, 2, d.Attempts)
	assert.Equal(t, "the webhook answered HTTP 302", d.LastError)
	assert.EqualValues(t, 2, w.hits.Load(), "never followed")

	w.rcv.Close() // now unreachable: the reason names the failure, not the URL
	w.record("n-2")
	n = w.settle(wk, "n-2")
	d, _ = n.Delivery(domain.ChannelWebhook, created.ID)
	assert.Contains(t, d.LastError, "the webhook could not be reached")
	assert.NotContains(t, d.LastError, "receiver-secret")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, errs)
	for _, e := range errs {
		assert.NotContains(t, e, "receiver-secret", "nor in the logs")
	}
}

// A delivery planned to a webhook that is deleted, or disabled, before its turn fails for
// good at once, without a call.
func TestDeliveriesToDeletedOrDisabledWebhooksFailAtOnce(t *testing.T) {
	w := newDeliveryWorld(t, func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusNoContent) })
	gone, err := w.app.CreateWebhook.Handle(w.admin(), commands.CreateWebhook{Name: "gone", URL: w.rcv.URL})
	require.NoError(t, err)
	off, err := w.app.CreateWebhook.Handle(w.admin(), commands.CreateWebhook{Name: "off", URL: w.rcv.URL})
	require.NoError(t, err)
	w.fold()
	w.record("n-1")
	wk := w.worker()
	wk.Endpoints = nil // plan only, while webhooks are "off" for sending
	n, err := wk.planned(context.Background(), mustNotification(t, w, "n-1"))
	require.NoError(t, err)
	require.Len(t, n.Deliveries, 0, "a worker that cannot post webhooks plans none")

	w.record("n-2")
	wk = w.worker()
	n, err = wk.planned(context.Background(), mustNotification(t, w, "n-2"))
	require.NoError(t, err)
	require.Len(t, n.Deliveries, 2)
	_, err = w.app.DeleteWebhook.Handle(w.admin(), commands.DeleteWebhook{WebhookID: gone.ID})
	require.NoError(t, err)
	disabled := true
	_, err = w.app.UpdateWebhook.Handle(w.admin(), commands.UpdateWebhook{WebhookID: off.ID, Disabled: &disabled})
	require.NoError(t, err)
	w.fold()
	n = w.settle(wk, "n-2")
	assert.Equal(t, domain.DeliveryFailed, n.Status)
	for id, reason := range map[string]string{gone.ID: "the webhook was deleted", off.ID: "the webhook is disabled"} {
		d, _ := n.Delivery(domain.ChannelWebhook, id)
		assert.Equal(t, 1, d.Attempts)
		assert.Equal(t, reason, d.LastError)
	}
	assert.Zero(t, w.hits.Load())
}

func mustNotification(t *testing.T, w *deliveryWorld, id string) domain.Notification {
	t.Helper()
	n, ok, err := w.read.Notification(context.Background(), projections.NotificationFilter{OrganisationID: exportOrg}, id)
	require.NoError(t, err)
	require.True(t, ok)
	return n
}

// countingSink stands in for the log pipeline behind the tee: it counts what it is handed.
type countingSink struct{ n atomic.Int64 }

func (c *countingSink) Log(analytics.LogRecord) { c.n.Add(1) }

func refusedBy(policy string, at time.Time) analytics.LogRecord {
	return analytics.LogRecord{ID: "r", OrganisationID: exportOrg, WorkspaceID: exportWS, StatusCode: http.StatusTooManyRequests, StartedAt: at,
		Provenance: &analytics.Provenance{RefusedBy: &analytics.Decider{Kind: "rate_limit_policy", ID: policy, Version: 1, Limit: 3}}}
}

// The tee passes every record on and never waits: refusals beyond its buffer are dropped and
// counted. What it keeps raises one notification per policy and window.
func TestRateLimitAlertsPassEveryRecordOnAndNeverWait(t *testing.T) {
	d := testDeps(t)
	appendEvent(t, d, domain.Stream(domain.RateLimitPolicyPrefix, "rl-1"), domain.RateLimitPolicyCreated{PolicyID: "rl-1",
		OrganisationID: exportOrg, WorkspaceID: exportWS, Type: domain.LimitRequests, Unit: "rpm", Value: 3, At: d.Now()})
	next := &countingSink{}
	a, err := NewRateLimitAlerts(d, next, 2)
	require.NoError(t, err)
	at := time.Date(2026, 11, 20, 12, 5, 0, 0, time.UTC)
	for range 5 {
		a.Log(refusedBy("rl-1", at))
	}
	a.Log(analytics.LogRecord{ID: "ok", StatusCode: 200})
	assert.EqualValues(t, 6, next.n.Load(), "every record goes on")
	assert.EqualValues(t, 3, a.Dropped(), "two waited, three found the buffer full")

	a.OnError = func(err error) { t.Log(err) }
	var recorded []commands.Result
	var mu sync.Mutex
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(recorded) }
	a.Recorded = func(r commands.Result) { mu.Lock(); recorded = append(recorded, r); mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	require.Eventually(t, func() bool { return count() == 1 && len(a.pending) == 0 }, 5*time.Second, 5*time.Millisecond)
	a.Log(refusedBy("rl-1", at.Add(time.Hour)))
	require.Eventually(t, func() bool { return count() == 2 }, 5*time.Second, 5*time.Millisecond)
	cancel()
	<-done
	assert.Equal(t, 2, eventTypes(t, d)["NotificationRecorded"], "one notification per policy and window")
	assert.NotEqual(t, recorded[0].ID, recorded[1].ID)
}

// The tee's cost on the request path: a served request's record, and a refusal's.
func BenchmarkRateLimitAlertsLog(b *testing.B) {
	store, err := eventsqlite.Open(context.Background(), filepath.Join(b.TempDir(), "events.db"))
	require.NoError(b, err)
	defer store.Close()
	d := commands.Deps{Store: store, Registry: domain.NewRegistry(), Now: time.Now}
	a, err := NewRateLimitAlerts(d, discardSink{}, DefaultRateLimitAlertBuffer)
	require.NoError(b, err)
	served := analytics.LogRecord{ID: "ok", StatusCode: 200, Provenance: &analytics.Provenance{}}
	refused := refusedBy("rl-1", time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go drain(ctx, a)
	b.Run("served", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a.Log(served)
		}
	})
	b.Run("refused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a.Log(refused)
		}
	})
}

type discardSink struct{}

func (discardSink) Log(analytics.LogRecord) {}

// drain empties the tee's buffer as Run would, without recording anything.
func drain(ctx context.Context, a *RateLimitAlerts) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.pending:
		}
	}
}

// A notification older than the maximum age when the worker first sees it (a first start over
// a long history) is not delivered, and is settled as skipped, not left pending for good; a
// recent one beside it is delivered.
func TestNotificationsTooOldAreSkippedNotLeftPending(t *testing.T) {
	w := newDeliveryWorld(t, func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusNoContent) })
	_, err := w.app.CreateWebhook.Handle(w.admin(), commands.CreateWebhook{Name: "all", URL: w.rcv.URL})
	require.NoError(t, err)
	w.fold()
	appendEvent(t, w.d, domain.Stream(domain.NotificationPrefix, "n-old"), domain.NotificationRecorded{NotificationID: "n-old",
		OrganisationID: exportOrg, Kind: domain.NotifyKeyRotated, Subject: "s", At: w.d.Now().Add(-48 * time.Hour)})
	w.record("n-new")
	wk := w.worker()
	wk.MaxAge = 24 * time.Hour
	assert.Equal(t, domain.DeliveryDelivered, w.settle(wk, "n-new").Status)
	old := w.settle(wk, "n-old")
	assert.Equal(t, domain.DeliverySkipped, old.Status)
	assert.Empty(t, old.Deliveries)
	assert.EqualValues(t, 1, w.hits.Load(), "only the recent one was sent")
}
