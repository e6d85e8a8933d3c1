// Package egress guards the gateway's connections to hosts that a caller or an admin chose: a
// custom host (x-gateway-custom-host) and the base URL set on an integration or provider. It
// refuses loopback, private, link-local, CGNAT, metadata, multicast and reserved addresses in
// every notation, unless the configured allow-list (CAUSEWAY_ALLOWED_HOSTS) says otherwise.
//
// A URL is checked when it is given (CheckURL), and again on every connection and every
// redirect: the Guard's dialer resolves the host, checks each address and connects to the
// checked address itself, so a DNS answer that changes between check and connect
// (rebinding) reaches nothing it should not.
//
// It imports only the standard library and domain/.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

const (
	// MaxRedirects is how many redirects a Guard's client follows before giving up.
	MaxRedirects = 10
	// lookupTimeout bounds the resolution CheckURL makes without a caller's context.
	lookupTimeout = 5 * time.Second
)

// ErrTooManyRedirects ends a chain of more than MaxRedirects redirects.
var ErrTooManyRedirects = fmt.Errorf("egress: stopped after %d redirects", MaxRedirects)

// Resolver looks up host names; *net.Resolver is one, and tests supply their own.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

var _ Resolver = (*net.Resolver)(nil)

// Guard checks outbound URLs and connections against the refused ranges and the allow-list.
// Set Resolver and Dialer, if at all, before first use; a Guard is then safe for concurrent
// use.
type Guard struct {
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dialer makes the connection once the address is checked; it always receives an IP
	// address and port, never a name. Nil means a net.Dialer with a 10 s connect timeout.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

	allow allowList
}

// New returns a Guard that allows, beyond public addresses, the given host names, IP
// addresses and CIDR ranges (see ParseAllowList for their forms). An invalid entry is an
// error naming it.
func New(allowed []string) (*Guard, error) {
	l, err := newAllowList(allowed)
	if err != nil {
		return nil, err
	}
	return &Guard{allow: l}, nil
}

// RefusedError is a URL or connection the guard will not allow. Its message is safe to show
// to the client: it names the host but never the URL's credentials, path or query. Through
// errors.As it is also a *domain.Error with code invalid (a 400).
type RefusedError struct {
	Host   string // the host as written, without userinfo or port; empty when there is none
	Reason string
	// Allowable: the host is refused for its address or name (not for the URL's form), which
	// the allow-list can allow; the message then says how.
	Allowable bool
	err       error // the resolver's error, for logs, when the host did not resolve
}

// AllowVariable is the setting that allows refused hosts, named in a refusal's message.
const AllowVariable = "CAUSEWAY_ALLOWED_HOSTS"

func (e *RefusedError) Error() string {
	if e.Host == "" {
		return "URL not allowed: " + e.Reason
	}
	h := e.Host
	if len(h) > 255 {
		h = h[:255] + "..."
	}
	msg := fmt.Sprintf("host %q not allowed: %s", h, e.Reason)
	if e.Allowable {
		msg += "; set " + AllowVariable + " to allow it"
	}
	return msg
}

func (e *RefusedError) Unwrap() error { return e.err }

// As lets the gateway's single error mapping answer a refusal with 400 without knowing this
// package; the caller wraps it with the param (header or field) it came from, if it wants to.
func (e *RefusedError) As(target any) bool {
	if p, ok := target.(**domain.Error); ok {
		*p = &domain.Error{Code: domain.CodeInvalid, Message: e.Error()}
		return true
	}
	return false
}

// CheckURL checks a custom host or base URL: http or https, a host, no credentials, a port
// from 1 to 65535, and a host that is (or resolves only to) allowed addresses. A host name
// is refused if ANY of its addresses is. It returns nil or a *RefusedError.
func (g *Guard) CheckURL(raw string) error {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	return g.CheckURLContext(ctx, raw)
}

// CheckURLContext is CheckURL with the caller's context bounding the resolution.
func (g *Guard) CheckURLContext(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's message quotes the whole URL, credentials included, so it is dropped.
		return &RefusedError{Reason: "not a valid URL"}
	}
	return g.checkURL(ctx, u, true)
}

// checkURL checks u's form and host; with resolve false a host name is checked only by name,
// which is enough where the dialer checks the addresses it connects to.
func (g *Guard) checkURL(ctx context.Context, u *url.URL, resolve bool) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return &RefusedError{Host: u.Hostname(), Reason: "only http and https URLs are allowed"}
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return &RefusedError{Reason: "the URL has no host"}
	case u.User != nil:
		return &RefusedError{Host: u.Hostname(), Reason: "credentials in the URL are not allowed"}
	}
	if p := u.Port(); p != "" {
		if _, ok := parsePort(p); !ok {
			return &RefusedError{Host: u.Hostname(), Reason: "port must be from 1 to 65535"}
		}
	}
	_, err := g.vet(ctx, u.Hostname(), strings.HasPrefix(u.Host, "["), resolve)
	var refused *RefusedError
	if err != nil && !errors.As(err, &refused) {
		return &RefusedError{Host: u.Hostname(), Reason: "host name does not resolve", err: err}
	}
	return err
}

// vet checks one host and returns the addresses it may connect to (none for a name when
// resolve is false). A resolver failure is returned as it is, not as a refusal.
func (g *Guard) vet(ctx context.Context, host string, bracketed, resolve bool) ([]netip.Addr, error) {
	t, err := parseHost(host, bracketed)
	if err != nil {
		return nil, &RefusedError{Host: host, Reason: err.Error()}
	}
	if t.isIP() {
		if !g.allow.allowsAddr(t.addr) {
			if r := refusedReason(t.addr); r != "" {
				return nil, &RefusedError{Host: host, Reason: r, Allowable: allowable(r)}
			}
		}
		return []netip.Addr{unmap(t.addr)}, nil
	}
	byName := g.allow.allowsName(t.name)
	if !byName {
		if r := refusedName(t.name); r != "" {
			return nil, &RefusedError{Host: host, Reason: r, Allowable: allowable(r)}
		}
	}
	if !resolve {
		return nil, nil
	}
	addrs, err := g.lookup(ctx, t.name)
	if err != nil {
		return nil, err
	}
	if !byName {
		for _, a := range addrs {
			if g.allow.allowsAddr(a) {
				continue
			}
			// The address itself is left out: it would tell a client what internal names resolve to.
			if r := refusedReason(a); r != "" {
				return nil, &RefusedError{Host: host, Reason: "resolves to a " + r, Allowable: allowable(r)}
			}
		}
	}
	return addrs, nil
}

// allowable: a refusal for this reason may be lifted by the allow-list, and the message says
// so; for a cloud metadata address it does not, since allowing one is seldom what anyone means.
func allowable(reason string) bool { return !strings.Contains(reason, "metadata") }

// refusedName refuses, before any lookup, the names that always mean this machine or the
// cloud's metadata service.
func refusedName(name string) string {
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return "loopback host name"
	case name == "metadata.google.internal", name == "metadata", name == "instance-data",
		name == "instance-data.ec2.internal":
		return "cloud metadata host name"
	}
	return ""
}

func (g *Guard) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupIPAddr(ctx, name)
	if err != nil {
		return nil, err
	}
	addrs := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip.IP)
		if !ok {
			continue
		}
		a = unmap(a)
		if a.Is6() && ip.Zone != "" {
			a = a.WithZone(ip.Zone)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: name, IsNotFound: true}
	}
	return addrs, nil
}

// unmap turns an IPv4-mapped IPv6 address into the IPv4 address it is, which is what the
// kernel connects to.
func unmap(a netip.Addr) netip.Addr {
	if a.Is4In6() {
		return a.Unmap()
	}
	return a
}

func parsePort(s string) (uint16, bool) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n < 1 || n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// DialContext is an http.Transport dialer: it resolves addr's host, checks every address,
// and connects to a checked address (not the name), trying them in order. A refused host is
// a *RefusedError; a resolver or connection failure is returned as it is.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, &RefusedError{Reason: "only TCP connections are allowed"}
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &RefusedError{Reason: "not a host:port address"}
	}
	port, ok := parsePort(portStr)
	if !ok {
		return nil, &RefusedError{Host: host, Reason: "port must be from 1 to 65535"}
	}
	addrs, err := g.vet(ctx, host, strings.Contains(host, ":"), true)
	if err != nil {
		return nil, err
	}
	dial := g.Dialer
	if dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	var first error
	for _, a := range addrs {
		if (network == "tcp4" && !a.Is4()) || (network == "tcp6" && !a.Is6()) {
			continue
		}
		c, err := dial(ctx, network, netip.AddrPortFrom(a, port).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = &net.AddrError{Err: "no suitable address for " + network, Addr: host}
	}
	return nil, first
}

// Client returns an HTTP client for custom hosts: its transport connects only through
// DialContext and never through a proxy from the environment (a proxy would do the
// resolving, out of the guard's sight); every request's URL is checked before it is sent,
// and every redirect target is checked in full, at most MaxRedirects of them. timeout is
// http.Client.Timeout (0: none, leaving it to the request's context). Each call builds a
// new connection pool: build one client and share it.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	base := &http.Transport{
		Proxy:             nil,
		DialContext:       g.DialContext,
		ForceAttemptHTTP2: true,
		// A gateway holds many concurrent calls to few hosts: keep their connections (Go's
		// default of 2 idle per host makes every burst dial anew).
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: &transport{guard: g, base: base},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= MaxRedirects {
				return ErrTooManyRedirects
			}
			return g.checkURL(req.Context(), req.URL, true)
		},
	}
}

// transport refuses a request whose URL is not allowed before the HTTP transport sees it:
// the dialer cannot see a URL's scheme or credentials.
type transport struct {
	guard *Guard
	base  *http.Transport
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.guard.checkURL(req.Context(), req.URL, false); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

func (t *transport) CloseIdleConnections() { t.base.CloseIdleConnections() }
