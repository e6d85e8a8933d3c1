package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// smtpStandIn is an SMTP server standing in for the outside world's: it takes mail only after
// AUTH PLAIN with its user and password, and keeps every message.
type smtpStandIn struct {
	ln         net.Listener
	user, pass string
	mu         sync.Mutex
	mails      []receivedMail
	logins     int
}

type receivedMail struct {
	From   string
	To     []string
	Header mail.Header
	Body   string
}

func newSMTPStandIn(t *testing.T, user, pass string) *smtpStandIn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &smtpStandIn{ln: ln, user: user, pass: pass}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &standInSession{s: s}, nil }))
	srv.Domain, srv.AllowInsecureAuth = "smtp.test", true
	srv.ErrorLog = nopLogger{}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

func (s *smtpStandIn) port() string {
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return port
}

// env is what points Causeway at the stand-in.
func (s *smtpStandIn) env() map[string]string {
	return map[string]string{"SMTP_HOST": "127.0.0.1", "SMTP_PORT": s.port(), "SMTP_TLS": "off", "SMTP_USERNAME": s.user,
		"SMTP_PASSWORD": s.pass, "SMTP_FROM": "Causeway <alerts@causeway.test>"}
}

// of returns the mails of a notification, by the header that names it.
func (s *smtpStandIn) of(id string) []receivedMail {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []receivedMail
	for _, m := range s.mails {
		if m.Header.Get("X-Causeway-Notification-Id") == id {
			out = append(out, m)
		}
	}
	return out
}

type standInSession struct {
	s      *smtpStandIn
	authed bool
	from   string
	to     []string
}

func (x *standInSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *standInSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != x.s.user || pass != x.s.pass {
			return errors.New("invalid credentials")
		}
		x.authed = true
		x.s.mu.Lock()
		x.s.logins++
		x.s.mu.Unlock()
		return nil
	}), nil
}

func (x *standInSession) Mail(from string, _ *smtp.MailOptions) error {
	if !x.authed {
		return smtp.ErrAuthRequired
	}
	x.from = from
	return nil
}

func (x *standInSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *standInSession) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	var text io.Reader = msg.Body
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		text = quotedprintable.NewReader(msg.Body)
	}
	body, err := io.ReadAll(text)
	if err != nil {
		return err
	}
	x.s.mu.Lock()
	x.s.mails = append(x.s.mails, receivedMail{From: x.from, To: x.to, Header: msg.Header, Body: string(body)})
	x.s.mu.Unlock()
	return nil
}

func (x *standInSession) Reset()        { x.from, x.to = "", nil }
func (x *standInSession) Logout() error { return nil }

// receiver is a webhook receiver standing in for the outside world's: it verifies every
// call's signature as Standard Webhooks says, with the secret the webhook's create answered,
// and fails the first calls it is told to.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	secret   string
	failNext int
	calls    []webhookCall
}

type webhookCall struct {
	ID, Timestamp string
	Body          []byte
	Valid         bool
	Answered      int
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		c := webhookCall{ID: r.Header.Get("webhook-id"), Timestamp: r.Header.Get("webhook-timestamp"), Body: body,
			Valid:    r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" && verifyStandardWebhook(rc.secret, r.Header, body),
			Answered: http.StatusNoContent}
		if rc.failNext > 0 {
			rc.failNext--
			c.Answered = http.StatusServiceUnavailable
		}
		rc.calls = append(rc.calls, c)
		w.WriteHeader(c.Answered)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) set(secret string, failNext int) {
	rc.mu.Lock()
	rc.secret, rc.failNext = secret, failNext
	rc.mu.Unlock()
}

// of returns the calls about a notification.
func (rc *receiver) of(id string) []webhookCall {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []webhookCall
	for _, c := range rc.calls {
		if c.ID == id {
			out = append(out, c)
		}
	}
	return out
}

// accepted counts the calls about a notification that were answered 2xx.
func (rc *receiver) accepted(id string) int {
	n := 0
	for _, c := range rc.of(id) {
		if c.Answered < 300 {
			n++
		}
	}
	return n
}

// verifyStandardWebhook checks a call as a Standard Webhooks receiver does: the secret is
// whsec_ and the base64 of the key; webhook-signature holds space-separated v1,<base64> of the
// HMAC-SHA256 of id.timestamp.body; the timestamp is recent.
func verifyStandardWebhook(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return false
	}
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)))
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, b64, ok := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if ok && v == "v1" && err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// notifyEnv is a Causeway whose worker looks for deliveries often and retries soon.
func notifyEnv(extra ...map[string]string) map[string]string {
	vars := map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1",
		"CAUSEWAY_BOOTSTRAP_OWNER_EMAIL": "owner@example.com", "CAUSEWAY_NOTIFY_INTERVAL": "25ms",
		"CAUSEWAY_NOTIFY_RETRY_SCHEDULE": "50ms,100ms", "CAUSEWAY_NOTIFY_MAX_ATTEMPTS": "6"}
	for _, e := range extra {
		for k, v := range e {
			vars[k] = v
		}
	}
	return vars
}

// member invites email to the organisation (role), with a role in the governed workspace if
// wsRole is set, and accepts the invite.
func (g *governed) member(email, role, wsRole string) {
	g.t.Helper()
	body := map[string]any{"email": email, "role": role}
	if wsRole != "" {
		body["workspaces"] = []map[string]string{{"id": g.ws, "role": wsRole}}
	}
	link, err := url.Parse(g.admin(http.MethodPost, "/users/invites", body)["invite_link"].(string))
	require.NoError(g.t, err)
	raw, _ := json.Marshal(map[string]string{"token": link.Query().Get("token"), "first_name": "A", "last_name": "B"})
	resp, err := http.Post(g.m.URL()+"/users/invites/accept", "application/json", bytes.NewReader(raw))
	require.NoError(g.t, err)
	resp.Body.Close()
	require.Equal(g.t, http.StatusOK, resp.StatusCode)
}

// notification waits for the one notification of kind about resourceID and returns its id.
func (g *governed) notification(kind, resourceID string) string {
	g.t.Helper()
	var id string
	require.Eventually(g.t, func() bool {
		for _, n := range g.admin(http.MethodGet, "/notifications?kind="+kind, nil)["data"].([]any) {
			if n := n.(map[string]any); n["resource_id"] == resourceID {
				id = n["id"].(string)
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "no %s notification about %s in %v", kind, resourceID,
		g.admin(http.MethodGet, "/notifications", nil)["data"])
	return id
}

// settled waits until the notification's deliveries are all settled, and returns it.
func (g *governed) settled(id string) map[string]any {
	g.t.Helper()
	var n map[string]any
	require.Eventually(g.t, func() bool {
		n = g.admin(http.MethodGet, "/notifications/"+id, nil)
		return n["status"] != domain.DeliveryPending
	}, 15*time.Second, 20*time.Millisecond, "notification %s is still pending", id)
	return n
}

// deliveries are a notification's deliveries by target.
func deliveries(n map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range n["deliveries"].([]any) {
		d := d.(map[string]any)
		out[d["target"].(string)] = d
	}
	return out
}

func addressesOf(mails []receivedMail) []string {
	var out []string
	for _, m := range mails {
		out = append(out, m.To...)
	}
	slices.Sort(out)
	return out
}

// A budget's threshold alert is e-mailed to the organisation's owners and admins and to the
// workspace's admins and managers (its ordinary members hear nothing), and to the key's alert
// e-mails; a key's rotation to its alert e-mails alone. Each e-mail goes to one address, from
// SMTP_FROM, after AUTH with SMTP_USERNAME and SMTP_PASSWORD, names the notification in a
// header and in its Message-ID, and says what happened, about what, with its figures.
func TestNotificationsAreEmailedToTheirAudiences(t *testing.T) {
	mailer := newSMTPStandIn(t, "causeway", "smtp-pass-0123")
	m := startMain(t, notifyEnv(mailer.env()))
	g := newGoverned(t, m)
	g.member("admin@example.com", "admin", "")
	g.member("wsadmin@example.com", "member", "admin")
	g.member("manager@example.com", "member", "manager")
	g.member("member@example.com", "member", "member")

	keyID, key := g.key(map[string]any{"alert_emails": []string{"keyowner@example.com"},
		"usage_limits": map[string]any{"type": "cost", "credit_limit": 2, "alert_threshold": 1}})
	for range 11 {
		resp, _ := g.chat(key, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	threshold := g.notification(domain.NotifyUsageThreshold, keyID)
	n := g.settled(threshold)
	assert.Equal(t, domain.DeliveryDelivered, n["status"])
	want := []string{"admin@example.com", "keyowner@example.com", "manager@example.com", "owner@example.com", "wsadmin@example.com"}
	ds := deliveries(n)
	require.Len(t, ds, len(want), "%v", n["deliveries"])
	for _, addr := range want {
		require.Contains(t, ds, addr)
		assert.Equal(t, "email", ds[addr]["channel"])
		assert.Equal(t, "delivered", ds[addr]["status"])
		assert.EqualValues(t, 1, ds[addr]["attempts"])
	}
	mails := mailer.of(threshold)
	assert.Equal(t, want, addressesOf(mails), "one e-mail to each, and none to the workspace's ordinary member")
	for _, ml := range mails {
		assert.Equal(t, "alerts@causeway.test", ml.From)
		assert.Len(t, ml.To, 1)
		assert.Equal(t, ml.To[0], strings.Trim(ml.Header.Get("To"), "<>"))
		assert.Contains(t, ml.Header.Get("From"), "alerts@causeway.test")
		subject, err := new(mime.WordDecoder).DecodeHeader(ml.Header.Get("Subject"))
		require.NoError(t, err)
		assert.Equal(t, `[Causeway] API key "app" reached its alert threshold (1 of 1)`, subject)
		assert.True(t, strings.HasPrefix(ml.Header.Get("Message-Id"), "<"+threshold+"."), ml.Header.Get("Message-Id"))
		body := ml.Body
		for _, s := range []string{"A budget reached its alert threshold.", "Resource:      api_key " + keyID,
			"alert_threshold: 1", "current_usage:", "Workspace:     " + g.ws, "notification " + threshold} {
			assert.Contains(t, body, s)
		}
	}
	mailer.mu.Lock()
	assert.GreaterOrEqual(t, mailer.logins, len(want), "every e-mail logged in with SMTP_USERNAME and SMTP_PASSWORD")
	mailer.mu.Unlock()

	g.admin(http.MethodPost, "/api-keys/"+keyID+"/rotate", map[string]any{})
	rotated := g.notification(domain.NotifyKeyRotated, keyID)
	assert.Equal(t, domain.DeliveryDelivered, g.settled(rotated)["status"])
	mails = mailer.of(rotated)
	require.Len(t, mails, 1, "a rotation is told to the key's alert e-mails only")
	assert.Equal(t, []string{"keyowner@example.com"}, mails[0].To)
	assert.Equal(t, "[Causeway] API key app was rotated", mails[0].Header.Get("Subject"))
	assert.Contains(t, mails[0].Body, "An API key was rotated")
	assert.Contains(t, mails[0].Body, "previous_key_valid_until:")

	h := getHealth(t, m)
	assert.Equal(t, "ok", h.Status)
	raw, err := json.Marshal(h)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "smtp-pass-0123", "never the password")
}

// Without SMTP_HOST, no e-mail is planned: a notification to addresses is recorded and
// settled as having nothing to deliver to, and health says e-mail is off.
func TestWithoutSMTPNoEmailIsPending(t *testing.T) {
	m := startMain(t, notifyEnv())
	g := newGoverned(t, m)
	keyID, _ := g.key(map[string]any{"alert_emails": []string{"keyowner@example.com"}})
	g.admin(http.MethodPost, "/api-keys/"+keyID+"/rotate", map[string]any{})
	n := g.settled(g.notification(domain.NotifyKeyRotated, keyID))
	assert.Equal(t, domain.DeliverySkipped, n["status"])
	assert.Empty(t, n["deliveries"])

	resp, err := http.Get(m.URL() + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Stats map[string]map[string]any `json:"stats"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "off (SMTP_HOST is unset)", body.Stats["notifications"]["email"])
}

// createWebhook creates a webhook to url and answers its id and secret.
func (g *governed) createWebhook(body map[string]any) (string, string) {
	g.t.Helper()
	out := g.admin(http.MethodPost, "/webhooks", body)
	return out["id"].(string), out["secret"].(string)
}

// A webhook receives the notifications it asked for, signed with the secret its create
// answered; one that fails three times and then succeeds gets each once, the notification
// showing it delivered after 4 attempts, the failures' reasons named.
func TestWebhooksAreSignedAndRetried(t *testing.T) {
	rc := newReceiver(t)
	m := startMain(t, notifyEnv())
	g := newGoverned(t, m)
	hook, secret := g.createWebhook(map[string]any{"name": "Ops", "url": rc.srv.URL + "/hooks?team=ops", "kinds": []string{domain.NotifyKeyRotated}})
	rc.set(secret, 3)
	other, otherSecret := g.createWebhook(map[string]any{"name": "Budgets only", "url": rc.srv.URL + "/budgets",
		"kinds": []string{domain.NotifyUsageExhausted}})
	require.NotEqual(t, secret, otherSecret)

	keyID, _ := g.key(nil)
	g.admin(http.MethodPost, "/api-keys/"+keyID+"/rotate", map[string]any{})
	id := g.notification(domain.NotifyKeyRotated, keyID)
	n := g.settled(id)
	assert.Equal(t, domain.DeliveryDelivered, n["status"])
	ds := deliveries(n)
	require.Contains(t, ds, hook)
	assert.NotContains(t, ds, other, "a webhook for other kinds hears nothing of it")
	assert.Equal(t, "webhook", ds[hook]["channel"])
	assert.EqualValues(t, 4, ds[hook]["attempts"])
	assert.Equal(t, "the webhook answered HTTP 503", ds[hook]["last_error"])

	calls := rc.of(id)
	require.Len(t, calls, 4)
	assert.Equal(t, 1, rc.accepted(id), "received once")
	for _, c := range calls {
		assert.True(t, c.Valid, "every call is signed with the secret answered at create")
	}
	var payload struct {
		Type      string    `json:"type"`
		ID        string    `json:"id"`
		Timestamp time.Time `json:"timestamp"`
		Data      struct {
			ID           string            `json:"id"`
			Subject      string            `json:"subject"`
			ResourceType string            `json:"resource_type"`
			ResourceID   string            `json:"resource_id"`
			Data         map[string]string `json:"data"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(calls[3].Body, &payload))
	assert.Equal(t, domain.NotifyKeyRotated, payload.Type)
	assert.Equal(t, id, payload.ID)
	assert.WithinDuration(t, time.Now(), payload.Timestamp, time.Minute)
	assert.Equal(t, id, payload.Data.ID)
	assert.Equal(t, keyID, payload.Data.ResourceID)
	assert.Equal(t, "api_key", payload.Data.ResourceType)
	assert.Equal(t, "API key app was rotated", payload.Data.Subject)
	assert.NotEmpty(t, payload.Data.Data["previous_key_valid_until"])

	// A receiver that never answers 2xx: the delivery fails for good after the last attempt.
	rc.set(secret, 100)
	keyID2, _ := g.key(nil)
	g.admin(http.MethodPost, "/api-keys/"+keyID2+"/rotate", map[string]any{})
	failed := g.notification(domain.NotifyKeyRotated, keyID2)
	n = g.settled(failed)
	assert.Equal(t, domain.DeliveryFailed, n["status"])
	d := deliveries(n)[hook]
	assert.Equal(t, "failed", d["status"])
	assert.EqualValues(t, 6, d["attempts"], "CAUSEWAY_NOTIFY_MAX_ATTEMPTS")
	assert.Nil(t, d["next_attempt_at"])
	assert.Len(t, rc.of(failed), 6)
	s := scrape(t, m.MetricsURL(), "")
	for outcome, want := range map[string]float64{"delivered": 1, "retried": 3 + 5, "failed": 1} {
		assert.Equal(t, want, s.value("causeway_notification_deliveries_total", map[string]string{"channel": "webhook", "outcome": outcome}),
			"the metrics count each attempt's outcome: %s", outcome)
	}
	history := g.admin(http.MethodGet, "/audit/resources/notification/"+failed+"/history", nil)["data"].([]any)
	var actions []string
	for _, e := range history {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	assert.Equal(t, []string{"NotificationRecorded", "NotificationDeliveriesPlanned", "NotificationDeliveryFailed", "NotificationDeliveryFailed",
		"NotificationDeliveryFailed", "NotificationDeliveryFailed", "NotificationDeliveryFailed", "NotificationDeliveryFailed"}, actions)
	raw, _ := json.Marshal(history)
	assert.NotContains(t, string(raw), "team=ops", "no URL in a delivery's record")
	assert.NotContains(t, string(raw), strings.TrimPrefix(secret, "whsec_"))
}

// A restart in the middle: what was delivered is not delivered again, and what was pending
// (a failed attempt waiting for its retry) is delivered by the next start, its attempts
// counted on from the failures recorded.
func TestNotificationDeliverySurvivesARestart(t *testing.T) {
	rc := newReceiver(t)
	mailer := newSMTPStandIn(t, "causeway", "smtp-pass-0123")
	vars := notifyEnv(mailer.env(), map[string]string{"CAUSEWAY_DATA_DIR": t.TempDir(), "CAUSEWAY_NOTIFY_RETRY_SCHEDULE": "2s"})
	m := startMainOnce(t, vars)
	g := newGoverned(t, m)
	hook, secret := g.createWebhook(map[string]any{"name": "Ops", "url": rc.srv.URL})
	rc.set(secret, 0)
	first, _ := g.key(map[string]any{"alert_emails": []string{"keyowner@example.com"}})
	g.admin(http.MethodPost, "/api-keys/"+first+"/rotate", map[string]any{})
	delivered := g.notification(domain.NotifyKeyRotated, first)
	require.Equal(t, domain.DeliveryDelivered, g.settled(delivered)["status"])

	rc.set(secret, 1)
	second, _ := g.key(nil)
	g.admin(http.MethodPost, "/api-keys/"+second+"/rotate", map[string]any{})
	pending := g.notification(domain.NotifyKeyRotated, second)
	require.Eventually(t, func() bool {
		d := deliveries(g.admin(http.MethodGet, "/notifications/"+pending, nil))[hook]
		return d != nil && d["attempts"] == 1.0
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, m.Close())
	require.Len(t, rc.of(pending), 1, "stopped before the retry")

	g.m = startMainOnce(t, vars)
	defer func() { require.NoError(t, g.m.Close()) }()
	n := g.settled(pending)
	assert.Equal(t, domain.DeliveryDelivered, n["status"])
	assert.EqualValues(t, 2, deliveries(n)[hook]["attempts"], "the failure before the restart counts")
	assert.Equal(t, 1, rc.accepted(pending))
	time.Sleep(300 * time.Millisecond) // a dozen passes of the worker after the restart
	assert.Len(t, rc.of(delivered), 1, "what was delivered is not delivered again")
	assert.Len(t, mailer.of(delivered), 1)
}

// With several instances on one database, each delivery is made by one of them.
func TestEachDeliveryIsMadeByOneInstance(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	rc := newReceiver(t)
	var ms []*Main
	for range 2 {
		vars := serverEnv(pg)
		for k, v := range notifyEnv(map[string]string{"CAUSEWAY_NOTIFY_INTERVAL": "10ms"}) {
			vars[k] = v
		}
		ms = append(ms, startMain(t, vars))
	}
	g := newGoverned(t, ms[0])
	_, secret := g.createWebhook(map[string]any{"name": "Ops", "url": rc.srv.URL})
	rc.set(secret, 0)
	var ids []string
	for range 6 {
		keyID, _ := g.key(nil)
		g.admin(http.MethodPost, "/api-keys/"+keyID+"/rotate", map[string]any{})
		ids = append(ids, g.notification(domain.NotifyKeyRotated, keyID))
	}
	for _, id := range ids {
		assert.Equal(t, domain.DeliveryDelivered, g.settled(id)["status"])
	}
	time.Sleep(200 * time.Millisecond)
	for _, id := range ids {
		assert.Len(t, rc.of(id), 1, "notification %s was posted once", id)
	}
}

// The webhook resource: its secret answered on create and rotate only; reads, updates,
// deletion; its history, as_of reads and audit records with before and after; fields
// refused by name; private URLs refused unless allowed.
func TestWebhookResource(t *testing.T) {
	m := startMain(t, notifyEnv())
	g := newGoverned(t, m)
	status := func(method, path string, body any, headers ...string) (int, map[string]any, string) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, err := http.NewRequest(method, m.URL()+path, bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("x-gateway-api-key", gatewayKey)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		var v map[string]any
		_ = json.Unmarshal(out, &v)
		return resp.StatusCode, v, string(out)
	}
	body := map[string]any{"name": "Ops", "url": "https://93.184.216.34/in?team=ops", "workspace_id": g.ws,
		"kinds": []string{domain.NotifyUsageThreshold, domain.NotifyUsageExhausted}}
	code, created, _ := status(http.MethodPost, "/webhooks", body, "Idempotency-Key", "create-ops")
	require.Equal(t, http.StatusOK, code, "%v", created)
	id, secret := created["id"].(string), created["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"))
	assert.Equal(t, "webhook", created["object"])
	assert.Equal(t, g.ws, created["workspace_id"])
	assert.Equal(t, []any{domain.NotifyUsageExhausted, domain.NotifyUsageThreshold}, created["kinds"])
	code, again, _ := status(http.MethodPost, "/webhooks", body, "Idempotency-Key", "create-ops")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, id, again["id"], "a retried create")
	assert.Equal(t, secret, again["secret"], "answers the secret it made")

	for _, path := range []string{"/webhooks/" + id, "/webhooks", "/webhooks?workspace_id=" + g.ws} {
		code, _, raw := status(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, code, raw)
		assert.Contains(t, raw, id)
		assert.NotContains(t, raw, strings.TrimPrefix(secret, "whsec_"), "%s never shows the secret", path)
		assert.NotContains(t, raw, `"secret"`)
	}
	beforeUpdate := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	code, updated, _ := status(http.MethodPut, "/webhooks/"+id, map[string]any{"name": "Ops team", "disabled": true, "kinds": []string{}})
	require.Equal(t, http.StatusOK, code, "%v", updated)
	assert.Equal(t, "Ops team", updated["name"])
	assert.Equal(t, true, updated["disabled"])
	assert.Equal(t, []any{}, updated["kinds"], "every kind")
	assert.Nil(t, updated["secret"])
	code, rotated, _ := status(http.MethodPost, "/webhooks/"+id+"/rotate-secret", nil)
	require.Equal(t, http.StatusOK, code, "%v", rotated)
	newSecret := rotated["secret"].(string)
	assert.True(t, strings.HasPrefix(newSecret, "whsec_"))
	assert.NotEqual(t, secret, newSecret)

	code, past, _ := status(http.MethodGet, "/webhooks/"+id+"?as_of="+beforeUpdate.Format(time.RFC3339Nano), nil)
	require.Equal(t, http.StatusOK, code, "%v", past)
	assert.Equal(t, "Ops", past["name"], "as it was before the update")
	assert.Equal(t, false, past["disabled"])

	code, deleted, _ := status(http.MethodDelete, "/webhooks/"+id, nil)
	require.Equal(t, http.StatusOK, code, "%v", deleted)
	code, _, _ = status(http.MethodGet, "/webhooks/"+id, nil)
	assert.Equal(t, http.StatusNotFound, code)
	code, gone, _ := status(http.MethodGet, "/webhooks/"+id+"?status=archived", nil)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "archived", gone["status"])

	code, history, raw := status(http.MethodGet, "/audit/resources/webhook/"+id+"/history", nil)
	require.Equal(t, http.StatusOK, code, raw)
	var actions []string
	for _, e := range history["data"].([]any) {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	assert.Equal(t, []string{"WebhookCreated", "WebhookUpdated", "WebhookSecretRotated", "WebhookDeleted"}, actions)
	assert.NotContains(t, raw, "v1:", "no sealed secret in the history")
	assert.NotContains(t, raw, strings.TrimPrefix(newSecret, "whsec_"))
	code, audit, raw := status(http.MethodGet, "/audit-logs?resource_type=webhook&resource_id="+id, nil)
	require.Equal(t, http.StatusOK, code, raw)
	var update map[string]any
	for _, r := range audit["data"].([]any) {
		if r := r.(map[string]any); r["action"] == "WebhookUpdated" {
			update = r
		}
	}
	require.NotNil(t, update, raw)
	assert.Equal(t, "Ops", update["before"].(map[string]any)["name"])
	assert.Equal(t, "Ops team", update["after"].(map[string]any)["name"])
	assert.NotContains(t, raw, "v1:")

	for _, tc := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"url": "https://93.184.216.34"}, "name"},
		{map[string]any{"name": strings.Repeat("n", 256), "url": "https://93.184.216.34"}, "name"},
		{map[string]any{"name": "x"}, "url"},
		{map[string]any{"name": "x", "url": "https://93.184.216.34/" + strings.Repeat("p", 2048)}, "url"},
		{map[string]any{"name": "x", "url": "https://user:pw@hooks.example.com"}, "url"},
		{map[string]any{"name": "x", "url": "https://93.184.216.34", "kinds": []string{"usage.nope"}}, "kinds[0]"},
		{map[string]any{"name": "x", "url": "https://93.184.216.34", "kinds": append(domain.NotificationKinds(), domain.NotifyInvite)}, "kinds"},
		{map[string]any{"name": "x", "url": "http://10.1.2.3/hook"}, "url"},
		{map[string]any{"name": "x", "url": "http://127.0.0.2:9/hook"}, "url"},
		{map[string]any{"name": "x", "url": "https://93.184.216.34", "workspace_id": "no-such"}, "workspace_id"},
	} {
		code, out, raw := status(http.MethodPost, "/webhooks", tc.body)
		assert.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, code, raw)
		if assert.NotNil(t, out["error"], raw) {
			assert.Equal(t, tc.param, out["error"].(map[string]any)["param"], raw)
		}
	}
	code, _, raw = status(http.MethodPost, "/webhooks", map[string]any{"name": "Local", "url": "http://127.0.0.1:9/hook"})
	assert.Equal(t, http.StatusOK, code, "CAUSEWAY_ALLOWED_HOSTS allows the loopback address: %s", raw)
}

// A rate-limit policy's refusals raise one rate_limit.exceeded notification per window, to the
// usage alert audiences of its workspace, e-mailed to them.
func TestRateLimitAlertsAreRecordedOncePerWindow(t *testing.T) {
	mailer := newSMTPStandIn(t, "causeway", "smtp-pass-0123")
	m := startMain(t, notifyEnv(mailer.env()))
	g := newGoverned(t, m)
	g.member("manager@example.com", "member", "manager")
	_, key := g.key(nil)
	freshMinute(t)
	policy := g.admin(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": g.ws, "type": "requests", "unit": "rpm", "value": 1,
		"name": "One a minute", "conditions": []map[string]string{{"key": "workspace_id", "value": g.ws}},
		"group_by": []map[string]string{{"key": "api_key"}}})["id"].(string)
	resp, _ := g.chat(key, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for range 5 {
		resp, _ := g.chat(key, nil)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	}
	id := g.notification(domain.NotifyRateLimitExceeded, policy)
	n := g.settled(id)
	assert.Equal(t, domain.DeliveryDelivered, n["status"])
	assert.Equal(t, []any{"organisation:admins", "workspace:" + g.ws + ":admins", "workspace:" + g.ws + ":managers"}, n["recipients"])
	assert.Equal(t, "rate_limit_policy", n["resource_type"])
	data := n["data"].(map[string]any)
	assert.Equal(t, "1", data["limit"])
	assert.Equal(t, "rpm", data["unit"])
	refused, err := time.Parse(time.RFC3339Nano, data["first_refused_at"].(string))
	require.NoError(t, err)
	assert.Equal(t, refused.UTC().Truncate(time.Hour).Format(time.RFC3339), data["window_start"])
	assert.Equal(t, []string{"manager@example.com", "owner@example.com"}, addressesOf(mailer.of(id)))
	subject := mailer.of(id)[0].Header.Get("Subject")
	assert.Contains(t, subject, "One a minute")

	for range 3 {
		resp, _ := g.chat(key, nil)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	}
	time.Sleep(300 * time.Millisecond)
	notes := g.admin(http.MethodGet, "/notifications?kind="+domain.NotifyRateLimitExceeded, nil)["data"].([]any)
	assert.Len(t, notes, 1, "once per window, however many refusals")
}

// The SMTP and delivery settings are read and checked with the rest: every problem at once,
// each naming its variable, and never the password.
func TestNotificationSettingsAreValidated(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{"SMTP_HOST": "smtp.example.com", "SMTP_FROM": "Causeway <alerts@example.com>",
		"SMTP_USERNAME": "u", "SMTP_PASSWORD": "p", "CAUSEWAY_NOTIFY_RETRY_SCHEDULE": "1s, 1m", "CAUSEWAY_NOTIFY_MAX_ATTEMPTS": "3"}))
	require.NoError(t, err)
	assert.Equal(t, "starttls", c.Notify.SMTPTLS)
	assert.Equal(t, []time.Duration{time.Second, time.Minute}, c.Notify.RetrySchedule)
	assert.Equal(t, 3, c.Notify.MaxAttempts)
	assert.Equal(t, 24*time.Hour, c.Notify.MaxAge)

	_, err = LoadConfig(env(map[string]string{"SMTP_HOST": "smtp.example.com", "SMTP_PORT": "70000", "SMTP_TLS": "maybe",
		"SMTP_FROM": "not an address", "SMTP_USERNAME": "u", "CAUSEWAY_NOTIFY_RETRY_SCHEDULE": "5s,soon",
		"CAUSEWAY_NOTIFY_MAX_ATTEMPTS": "0", "CAUSEWAY_NOTIFY_INTERVAL": "-1s"}))
	require.Error(t, err)
	for _, name := range []string{"SMTP_PORT", "SMTP_TLS", "SMTP_FROM", "SMTP_USERNAME and SMTP_PASSWORD",
		"CAUSEWAY_NOTIFY_RETRY_SCHEDULE", "CAUSEWAY_NOTIFY_MAX_ATTEMPTS", "CAUSEWAY_NOTIFY_INTERVAL"} {
		assert.Contains(t, err.Error(), name)
	}

	_, err = LoadConfig(env(map[string]string{"SMTP_HOST": "smtp.example.com", "SMTP_FROM": "a@example.com", "SMTP_TLS": "off",
		"SMTP_USERNAME": "u", "SMTP_PASSWORD": "hunter2-secret"}))
	require.Error(t, err, "a password in clear across the network")
	assert.Contains(t, err.Error(), "SMTP_TLS=off with SMTP_USERNAME")
	assert.NotContains(t, err.Error(), "hunter2-secret")
	_, err = LoadConfig(env(map[string]string{"SMTP_HOST": "127.0.0.1", "SMTP_FROM": "a@example.com", "SMTP_TLS": "off",
		"SMTP_USERNAME": "u", "SMTP_PASSWORD": "p"}))
	assert.NoError(t, err, "to a relay on this machine")

	_, err = LoadConfig(env(map[string]string{"SMTP_FROM": "a@example.com"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SMTP_FROM is set but SMTP_HOST is not")
	_, err = LoadConfig(env(map[string]string{"SMTP_HOST": "smtp://smtp.example.com:25", "SMTP_FROM": "a@example.com"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SMTP_HOST")
}
