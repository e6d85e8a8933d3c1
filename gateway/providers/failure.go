package providers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
)

// Failure is the class of a failure to reach a provider, as the gateway's answer names it.
type Failure string

// The classes of failure ClassifyFailure tells apart.
const (
	FailureDNS     Failure = "dns"        // the host name does not resolve
	FailureRefused Failure = "refused"    // nothing accepts connections on the port
	FailureTLS     Failure = "tls"        // the certificate or the handshake was refused
	FailureTimeout Failure = "timeout"    // connecting, or the answer, took too long
	FailureReset   Failure = "reset"      // the connection was reset or closed mid-way
	FailureOther   Failure = "connection" // anything else
)

// ClassifyFailure tells what kind of failure err is, from the error types of net, net/url,
// crypto/tls and crypto/x509, and says it in words of its own: it quotes nothing of err, so
// a resolver's address, the address a name resolved to, or a URL's query never reach a client.
func ClassifyFailure(err error) (Failure, string) {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		switch {
		case dnsErr.IsNotFound:
			return FailureDNS, "the host name does not resolve (DNS: no such host)"
		case dnsErr.IsTimeout:
			return FailureDNS, "the host name could not be resolved in time (DNS timeout)"
		}
		return FailureDNS, "the host name could not be resolved (DNS failure)"
	}
	if reason, ok := tlsFailure(err); ok {
		return FailureTLS, reason
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return FailureRefused, "connection refused (nothing listens on that port)"
	}
	if isTimeout(err) {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return FailureTimeout, "connecting timed out"
		}
		if strings.Contains(err.Error(), "TLS handshake timeout") {
			return FailureTimeout, "the TLS handshake timed out"
		}
		return FailureTimeout, "no answer in time"
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return FailureReset, "the connection was reset or closed before the answer was complete"
	}
	return FailureOther, "the connection failed"
}

// tlsFailure recognises a refused certificate or handshake.
func tlsFailure(err error) (string, bool) {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		op        *net.OpError
	)
	switch {
	case errors.As(err, &unknownCA):
		return "TLS: the certificate is signed by an unknown authority", true
	case errors.As(err, &hostname):
		return "TLS: the certificate is not valid for this host name", true
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return "TLS: the certificate has expired or is not yet valid", true
		}
		return "TLS: the certificate is not valid", true
	case errors.As(err, &verify):
		return "TLS: the certificate could not be verified", true
	case errors.As(err, &record):
		return "TLS: the server did not answer in TLS (is it an http:// host?)", true
	case errors.As(err, &alert), errors.As(err, &op) && op.Op == "remote error":
		return "TLS: the server refused the handshake", true
	}
	// Some handshake failures are plain errors whose text alone says so; net/http turns a
	// RecordHeaderError that starts like "HTTP/" into one of them.
	switch msg := err.Error(); {
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return "TLS: the server did not answer in TLS (is it an http:// host?)", true
	case strings.Contains(msg, "tls: "):
		return "TLS: the handshake failed", true
	}
	return "", false
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// hostOf is the host (and port) of the URL a url.Error names: the one the request was sent to.
func hostOf(err error) string {
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		return ""
	}
	u, perr := url.Parse(uerr.URL)
	if perr != nil {
		return ""
	}
	return u.Host
}
