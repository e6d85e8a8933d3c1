package workers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Mail is one e-mail of a notification, to one address.
type Mail struct {
	To             string
	Subject        string
	Body           string // plain text
	NotificationID string
}

// Mailer sends e-mail; SMTPMailer is the one cmd wires.
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}

// SMTP security modes (SMTP_TLS).
const (
	SMTPTLSOff      = "off"      // plain SMTP: only for a relay on this machine or a trusted network
	SMTPTLSStartTLS = "starttls" // STARTTLS required (port 587 by default)
	SMTPTLSImplicit = "tls"      // TLS from the first byte (port 465 by default)
)

// SMTPMailer sends each e-mail over its own SMTP connection with go-mail. The password goes
// to the server only, in the AUTH exchange (PLAIN, refused by go-mail over a connection that
// is neither encrypted nor to this machine); it is in no error it answers.
type SMTPMailer struct {
	Host     string
	Port     int // 0: 25, 587 or 465 by TLS
	Username string
	Password string
	From     string
	TLS      string // SMTPTLSOff, SMTPTLSStartTLS (the default) or SMTPTLSImplicit
	// Timeout bounds a connection and each exchange; 0: 15 seconds.
	Timeout time.Duration
}

var _ Mailer = (*SMTPMailer)(nil)

// Port is the port m connects to.
func (m *SMTPMailer) port() int {
	switch {
	case m.Port > 0:
		return m.Port
	case m.TLS == SMTPTLSImplicit:
		return gomail.DefaultPortSSL
	case m.TLS == SMTPTLSOff:
		return gomail.DefaultPort
	}
	return gomail.DefaultPortTLS
}

// Send sends mail: from m.From to mail.To, with the notification's id in the
// X-Causeway-Notification-Id header and as the base of its Message-ID, so that a resend of
// the same notification to the same address has the same Message-ID.
func (m *SMTPMailer) Send(ctx context.Context, ml Mail) error {
	msg := gomail.NewMsg()
	if err := msg.From(m.From); err != nil {
		return fmt.Errorf("the sender address SMTP_FROM is not valid: %w", err)
	}
	if err := msg.To(ml.To); err != nil {
		return permanent(fmt.Errorf("the recipient address is not valid"))
	}
	msg.Subject(ml.Subject)
	msg.SetGenHeader("X-Causeway-Notification-Id", ml.NotificationID)
	msg.SetMessageIDWithValue(MessageID(ml.NotificationID, ml.To, m.From))
	msg.SetDate()
	msg.SetBulk()
	msg.SetBodyString(gomail.TypeTextPlain, ml.Body)

	timeout := m.Timeout
	if timeout <= 0 {
		timeout = gomail.DefaultTimeout
	}
	opts := []gomail.Option{gomail.WithPort(m.port()), gomail.WithTimeout(timeout)}
	switch m.TLS {
	case SMTPTLSOff:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	case SMTPTLSImplicit:
		opts = append(opts, gomail.WithSSL())
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if m.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain), gomail.WithUsername(m.Username), gomail.WithPassword(m.Password))
	}
	c, err := gomail.NewClient(m.Host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return m.scrub(err)
	}
	return nil
}

// scrub keeps the password out of an error, whatever a server echoed back.
func (m *SMTPMailer) scrub(err error) error {
	msg := err.Error()
	if m.Password != "" && strings.Contains(msg, m.Password) {
		return errors.New(strings.ReplaceAll(msg, m.Password, "xxxxx"))
	}
	return err
}

// MessageID is the Message-ID of a notification's e-mail to an address, without its angle
// brackets: the notification id, a short digest of the address, at the sender's domain.
func MessageID(notificationID, to, from string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(to)))
	domain := "causeway.local"
	if a, err := mail.ParseAddress(from); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok && d != "" {
			domain = d
		}
	}
	return notificationID + "." + hex.EncodeToString(sum[:4]) + "@" + domain
}
