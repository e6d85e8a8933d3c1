package main

import (
	"fmt"
	"net"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/cluster"
	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/gateway/egress"
	httpapi "github.com/causeway/causeway/http"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/workers"
)

// NotifyConfig is how notifications are delivered: e-mail over SMTP (off without SMTP_HOST)
// and the delivery worker's pace and retries. Webhooks need no configuration here: they are
// a resource of the admin API (/v1/webhooks).
type NotifyConfig struct {
	SMTPHost     string // SMTP_HOST; empty: e-mail is not sent
	SMTPPort     int    // SMTP_PORT; 0: 587 with starttls, 465 with tls, 25 with off
	SMTPUsername string // SMTP_USERNAME
	SMTPPassword string // SMTP_PASSWORD
	SMTPFrom     string // SMTP_FROM: the sender address, "Name <addr>" or addr
	SMTPTLS      string // SMTP_TLS: off, starttls (the default) or tls
	// RetrySchedule (CAUSEWAY_NOTIFY_RETRY_SCHEDULE, durations separated by commas) is the
	// wait after each failed attempt, the last repeating; MaxAttempts
	// (CAUSEWAY_NOTIFY_MAX_ATTEMPTS) ends the retries.
	RetrySchedule []time.Duration
	MaxAttempts   int
	// Interval (CAUSEWAY_NOTIFY_INTERVAL) is how often the worker looks for deliveries due.
	Interval time.Duration
	// MaxAge (CAUSEWAY_NOTIFY_MAX_AGE): a notification older than this when the worker first
	// sees it is not delivered (a first start does not mail the history).
	MaxAge time.Duration
}

// loadNotifyConfig reads the notification settings; problems are the values it cannot read.
func loadNotifyConfig(getenv func(string) string) (NotifyConfig, []error) {
	def := workers.DefaultRetryPolicy()
	c := NotifyConfig{
		SMTPHost: strings.TrimSpace(getenv("SMTP_HOST")), SMTPUsername: getenv("SMTP_USERNAME"), SMTPPassword: getenv("SMTP_PASSWORD"),
		SMTPFrom: strings.TrimSpace(getenv("SMTP_FROM")), SMTPTLS: strings.ToLower(envOr(getenv, "SMTP_TLS", workers.SMTPTLSStartTLS)),
		RetrySchedule: def.Schedule, MaxAttempts: def.MaxAttempts, Interval: time.Second, MaxAge: workers.DefaultNotificationMaxAge,
	}
	var problems []error
	if v := strings.TrimSpace(getenv("SMTP_PORT")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			problems = append(problems, fmt.Errorf("SMTP_PORT=%q: must be a port number from 1 to 65535", v))
		} else {
			c.SMTPPort = n
		}
	}
	if v := strings.TrimSpace(getenv("CAUSEWAY_NOTIFY_RETRY_SCHEDULE")); v != "" {
		c.RetrySchedule = nil
		for _, part := range strings.Split(v, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(part))
			if err != nil || d <= 0 {
				problems = append(problems, fmt.Errorf("CAUSEWAY_NOTIFY_RETRY_SCHEDULE=%q: must be positive durations separated by commas, such as 5s,30s,2m,10m,1h", v))
				c.RetrySchedule = def.Schedule
				break
			}
			c.RetrySchedule = append(c.RetrySchedule, d)
		}
	}
	if v := strings.TrimSpace(getenv("CAUSEWAY_NOTIFY_MAX_ATTEMPTS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			problems = append(problems, fmt.Errorf("CAUSEWAY_NOTIFY_MAX_ATTEMPTS=%q: must be a whole number from 1 to 100", v))
		} else {
			c.MaxAttempts = n
		}
	}
	for name, dst := range map[string]*time.Duration{"CAUSEWAY_NOTIFY_INTERVAL": &c.Interval, "CAUSEWAY_NOTIFY_MAX_AGE": &c.MaxAge} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				problems = append(problems, fmt.Errorf("%s=%q: must be a positive duration such as 1s", name, v))
				continue
			}
			*dst = d
		}
	}
	return c, problems
}

// validate reports every problem of the notification settings.
func (c NotifyConfig) validate() []error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	switch c.SMTPTLS {
	case "", workers.SMTPTLSOff, workers.SMTPTLSStartTLS, workers.SMTPTLSImplicit:
	default:
		bad("SMTP_TLS=%q: must be off, starttls or tls", c.SMTPTLS)
	}
	if c.SMTPHost == "" {
		for name, v := range map[string]string{"SMTP_USERNAME": c.SMTPUsername, "SMTP_PASSWORD": c.SMTPPassword, "SMTP_FROM": c.SMTPFrom} {
			if v != "" {
				bad("%s is set but SMTP_HOST is not: set SMTP_HOST to send e-mail, or unset %s", name, name)
			}
		}
		return problems
	}
	if strings.ContainsAny(c.SMTPHost, "/:@ ") && net.ParseIP(c.SMTPHost) == nil {
		bad("SMTP_HOST=%q: must be a host name or address, without scheme or port (SMTP_PORT sets the port)", c.SMTPHost)
	}
	if c.SMTPFrom == "" {
		bad("SMTP_FROM: must be set with SMTP_HOST: the address notifications are sent from")
	} else if _, err := mail.ParseAddress(c.SMTPFrom); err != nil {
		bad("SMTP_FROM=%q: must be an e-mail address, such as Causeway <alerts@example.com>", c.SMTPFrom)
	}
	if (c.SMTPUsername == "") != (c.SMTPPassword == "") {
		bad("SMTP_USERNAME and SMTP_PASSWORD: set both or neither")
	}
	if c.SMTPUsername != "" && c.SMTPTLS == workers.SMTPTLSOff && !loopbackHost(c.SMTPHost) {
		bad("SMTP_TLS=off with SMTP_USERNAME: the password would cross the network unencrypted; use starttls or tls (off is for a relay on this machine)")
	}
	return problems
}

func loopbackHost(h string) bool {
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback()
	}
	return strings.EqualFold(h, "localhost")
}

// mailer is the SMTP mailer of the configuration; nil without SMTP_HOST.
func (c NotifyConfig) mailer() workers.Mailer {
	if c.SMTPHost == "" {
		return nil
	}
	return &workers.SMTPMailer{Host: c.SMTPHost, Port: c.SMTPPort, Username: c.SMTPUsername, Password: c.SMTPPassword,
		From: c.SMTPFrom, TLS: c.SMTPTLS}
}

// withRateLimitAlerts puts the rate-limit alerts before the log pipeline: every record goes
// on to it, and refusals by rate-limit policies become rate_limit.exceeded notifications off
// the request path (workers.RateLimitAlerts).
func (m *Main) withRateLimitAlerts(sink analytics.LogSink, admin *httpapi.Admin) (analytics.LogSink, error) {
	alerts, err := workers.NewRateLimitAlerts(admin.Deps, sink, workers.DefaultRateLimitAlertBuffer)
	if err != nil {
		return nil, err
	}
	alerts.OnError = func(err error) { m.Logger.Warn("rate-limit alert not recorded", "error", err) }
	m.rateLimitAlerts = alerts
	go alerts.Run(m.bg)
	return alerts, nil
}

// startNotifications runs the delivery worker until background work ends: e-mail when
// SMTP_HOST is set, webhooks always (through the egress guard's client, which checks every
// address it connects to and follows no redirect). On servers every instance runs it, and
// each delivery is made by the instance that claims it.
func (m *Main) startNotifications(admin *httpapi.Admin, guard *egress.Guard) error {
	cfg := m.Config.Notify
	w, err := workers.NewNotificationWorker(admin.Deps, m.Read)
	if err != nil {
		return err
	}
	if w.Endpoints, err = commands.NewWebhookEndpoints(admin.Deps, admin.Secret); err != nil {
		return err
	}
	client := guard.Client(0)
	// A receiver's redirect is its answer (a failure), not a second address to post to.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	w.Client = client
	w.Mail = cfg.mailer()
	if len(cfg.RetrySchedule) > 0 && cfg.MaxAttempts > 0 {
		w.Retry = workers.RetryPolicy{Schedule: cfg.RetrySchedule, MaxAttempts: cfg.MaxAttempts}
	}
	w.MaxAge = cfg.MaxAge
	w.UserAgent = "Causeway-Webhooks/" + m.Version
	w.ResourceName = func(typ string) string {
		if name, ok := projections.AuditResourceType(typ); ok {
			return name
		}
		return typ
	}
	w.OnError = func(err error) { m.Logger.Warn("notification delivery", "error", err) }
	if m.Metrics != nil {
		w.Observe = m.Metrics.Delivery
	}
	if claims, ok := m.Cluster.(cluster.Claims); ok {
		w.Claims, w.Holder = claims, m.Instance.ID
	}
	if w.Mail == nil {
		m.Logger.Info("notifications: e-mail is off (SMTP_HOST is unset): notifications are recorded and sent to webhooks, no e-mail is sent or kept pending")
	}
	every := cfg.Interval
	if every <= 0 {
		every = time.Second
	}
	go func() { _ = w.Run(m.bg, every) }()
	m.closers = append(m.closers, func() error { w.Wait(); return nil })
	return nil
}

// notificationStats is what health says of notifications: whether e-mail is on, and the
// refusals the rate-limit alerts dropped.
func (m *Main) notificationStats() any {
	cfg := m.Config.Notify
	email := "off (SMTP_HOST is unset)"
	if cfg.SMTPHost != "" {
		port := "default port"
		if cfg.SMTPPort > 0 {
			port = "port " + strconv.Itoa(cfg.SMTPPort)
		}
		email = fmt.Sprintf("smtp %s, %s, tls %s", cfg.SMTPHost, port, cfg.SMTPTLS)
	}
	out := map[string]any{"email": email, "webhooks": "on"}
	if m.rateLimitAlerts != nil {
		out["rate_limit_alerts_dropped"] = m.rateLimitAlerts.Dropped()
	}
	return out
}
