package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// fakeDNS answers from a fixed table and says "no such host" to every other name, so that no
// test ever asks a real resolver.
type fakeDNS map[string][]string

func (f fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, 0, len(ips))
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// rebindingDNS gives a different answer on each lookup (the last one repeats), the way a
// rebinding attacker's name server answers the check and then the connection.
type rebindingDNS struct {
	mu      sync.Mutex
	answers [][]string
	calls   int
}

func (r *rebindingDNS) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	i := min(r.calls, len(r.answers)-1)
	r.calls++
	r.mu.Unlock()
	return fakeDNS{host: r.answers[i]}.LookupIPAddr(ctx, host)
}

// dialHook stands in for the network at the dial stage: it connects only to the one
// address a test allows (a local httptest server) and counts every other attempt, which the
// tests require to stay at zero.
type dialHook struct {
	allowed string
	mu      sync.Mutex
	reached []string
	others  atomic.Int64
}

func (d *dialHook) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr != d.allowed {
		d.others.Add(1)
		return nil, errors.New("test dialer: no connection may be attempted to " + addr)
	}
	d.mu.Lock()
	d.reached = append(d.reached, addr)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

func (d *dialHook) reachedAddrs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.reached...)
}

// testDNS is the world the refused-hosts table sees.
var testDNS = fakeDNS{
	"first-hop.test":          {"127.0.0.1"},
	"public.example.com":      {"93.184.215.14"},
	"internal.example.com":    {"10.0.0.5"},
	"loopback.example.com":    {"127.0.0.1"},
	"metadata.example.com":    {"169.254.169.254"},
	"cgnat.example.com":       {"100.64.1.1"},
	"alibaba-meta.example":    {"100.100.100.200"},
	"mapped.example.com":      {"::ffff:127.0.0.1"},
	"mapped-meta.example.com": {"::ffff:a9fe:a9fe"},
	"mixed.example.com":       {"93.184.215.14", "10.0.0.1"},
	"mixed6.example.com":      {"2606:4700::6810:84e5", "fd00::1"},
	"nat64.example.com":       {"64:ff9b::7f00:1"},
	"sixtofour.example.com":   {"2002:c0a8:101::1"},
	"linklocal6.example.com":  {"fe80::1"},
	"loopback6.example.com":   {"::1"},
	"empty.example.com":       {},
}

// redirector answers /redirect?to=U with a 302 to U, and anything else with 200.
func redirector() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			w.Header().Set("Location", r.URL.Query().Get("to"))
			w.WriteHeader(http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "ok from "+r.Host)
	})
}

// TestRefusedHosts is issue 5's table: every input is refused by CheckURL, by the client when
// sent directly, and by the client when an allowed host redirects to it; no connection but
// those to the allowed first hop reaches the dial stage.
func TestRefusedHosts(t *testing.T) {
	srv := httptest.NewServer(redirector())
	t.Cleanup(srv.Close)
	srvAddr := srv.Listener.Addr().String()
	_, port, err := net.SplitHostPort(srvAddr)
	require.NoError(t, err)
	firstHop := "http://first-hop.test:" + port

	g, err := New([]string{"first-hop.test"})
	require.NoError(t, err)
	g.Resolver = testDNS
	hook := &dialHook{allowed: srvAddr}
	g.Dialer = hook.dial
	client := g.Client(5 * time.Second)

	cases := []struct {
		name string
		url  string
		// noRedirect: as a Location this is a relative reference that resolves to something
		// else, so only the direct forms apply.
		noRedirect bool
		// unresolvable: the dialer reports the resolver's failure (a connection error, 502)
		// rather than a refusal; CheckURL and the redirect check refuse it.
		unresolvable bool
	}{
		// Loopback, in every notation.
		{name: "loopback dotted", url: "http://127.0.0.1/"},
		{name: "loopback with port", url: "http://127.0.0.1:" + port + "/"},
		{name: "loopback elsewhere in 127/8", url: "http://127.255.255.254:8080/"},
		{name: "loopback short 127.1", url: "http://127.1/"},
		{name: "loopback short 127.0.1", url: "http://127.0.1/"},
		{name: "loopback decimal", url: "http://2130706433/"},
		{name: "loopback octal dotted", url: "http://0177.0.0.1/"},
		{name: "loopback octal whole", url: "http://017700000001/"},
		{name: "loopback octal short", url: "http://0177.1/"},
		{name: "loopback zero-padded octal", url: "http://127.000.000.001/"},
		{name: "loopback hex dotted", url: "http://0x7f.0.0.1/"},
		{name: "loopback hex every part", url: "https://0x7f.0x0.0x0.0x1/"},
		{name: "loopback hex whole", url: "http://0x7f000001/"},
		{name: "loopback hex upper case", url: "http://0X7F.1/"},
		{name: "loopback trailing dot", url: "http://127.0.0.1./"},
		{name: "loopback ipv6", url: "http://[::1]/"},
		{name: "loopback ipv6 long form", url: "http://[0:0:0:0:0:0:0:1]/"},
		{name: "loopback ipv6 with zone", url: "http://[::1%25lo]/"},
		{name: "loopback ipv4-mapped dotted", url: "http://[::ffff:127.0.0.1]/"},
		{name: "loopback ipv4-mapped hex", url: "http://[::ffff:7f00:1]:" + port + "/"},
		{name: "loopback ipv4-mapped long form", url: "http://[0:0:0:0:0:ffff:127.0.0.1]/"},
		{name: "loopback ipv4-compatible", url: "http://[::127.0.0.1]/"},
		{name: "loopback nat64", url: "http://[64:ff9b::7f00:1]/"},
		{name: "loopback 6to4", url: "http://[2002:7f00:1::1]/"},
		{name: "localhost", url: "http://localhost/"},
		{name: "localhost upper case trailing dot", url: "http://LOCALHOST./"},
		{name: "localhost subdomain", url: "http://api.localhost:8080/"},
		{name: "this network zero", url: "http://0/"},
		{name: "this network dotted", url: "http://0.0.0.0:" + port + "/"},
		{name: "unspecified ipv6", url: "http://[::]/"},

		// Cloud metadata.
		{name: "metadata dotted", url: "http://169.254.169.254/latest/meta-data/"},
		{name: "metadata decimal", url: "http://2852039166/"},
		{name: "metadata hex", url: "http://0xa9fea9fe/"},
		{name: "metadata octal", url: "http://0251.0376.0251.0376/"},
		{name: "metadata short form", url: "http://169.254.43518/"},
		{name: "metadata ipv4-mapped hex", url: "http://[::ffff:a9fe:a9fe]/"},
		{name: "metadata ipv4-mapped dotted", url: "http://[::ffff:169.254.169.254]/"},
		{name: "metadata nat64", url: "http://[64:ff9b::a9fe:a9fe]/"},
		{name: "metadata 6to4", url: "http://[2002:a9fe:a9fe::1]/"},
		{name: "metadata isatap", url: "http://[2001:470::5efe:a9fe:a9fe]/"},
		{name: "metadata google name", url: "http://metadata.google.internal/computeMetadata/v1/"},
		{name: "metadata google name upper case trailing dot", url: "http://METADATA.GOOGLE.INTERNAL./"},
		{name: "metadata short name", url: "http://metadata/"},
		{name: "metadata aws name", url: "http://instance-data/latest/"},
		{name: "metadata aws ipv6", url: "http://[fd00:ec2::254]/"},
		{name: "metadata alibaba", url: "http://100.100.100.200/latest/meta-data/"},

		// Private, CGNAT, link-local.
		{name: "private 10/8", url: "http://10.0.0.1/"},
		{name: "private 10/8 short", url: "http://10.1/"},
		{name: "private 172.16/12", url: "http://172.16.0.1/"},
		{name: "private 172.16/12 top", url: "https://172.31.255.255/"},
		{name: "private 192.168/16", url: "http://192.168.1.1/"},
		{name: "private 192.168/16 decimal", url: "http://3232235777/"},
		{name: "private ipv4-mapped", url: "http://[::ffff:10.0.0.1]/"},
		{name: "private ipv6 fc00::/7", url: "http://[fc00::1]/"},
		{name: "private ipv6 fd", url: "http://[fd12:3456::1]/"},
		{name: "cgnat", url: "http://100.64.0.1/"},
		{name: "cgnat top", url: "http://100.127.255.255/"},
		{name: "link-local", url: "http://169.254.1.1/"},
		{name: "link-local ipv6", url: "http://[fe80::1]/"},
		{name: "link-local ipv6 with zone", url: "http://[fe80::1%25eth0]:8080/"},
		{name: "site-local ipv6", url: "http://[fec0::1]/"},

		// Multicast, reserved, documentation and the other special ranges.
		{name: "multicast", url: "http://224.0.0.1/"},
		{name: "multicast ssdp", url: "http://239.255.255.250:1900/"},
		{name: "reserved 240/4", url: "http://240.0.0.1/"},
		{name: "broadcast", url: "http://255.255.255.255/"},
		{name: "broadcast decimal", url: "http://4294967295/"},
		{name: "multicast ipv6", url: "http://[ff02::1]/"},
		{name: "ietf protocol assignments", url: "http://192.0.0.8/"},
		{name: "documentation 192.0.2", url: "http://192.0.2.1/"},
		{name: "documentation 198.51.100", url: "http://198.51.100.1/"},
		{name: "documentation 203.0.113", url: "http://203.0.113.1/"},
		{name: "6to4 relay anycast", url: "http://192.88.99.1/"},
		{name: "benchmarking", url: "http://198.18.0.1/"},
		{name: "documentation ipv6", url: "http://[2001:db8::1]/"},
		{name: "discard ipv6", url: "http://[100::1]/"},
		{name: "teredo ipv6", url: "http://[2001::1]/"},
		{name: "unallocated ipv6", url: "http://[4000::1]/"},

		// Names that resolve to refused addresses.
		{name: "name resolving to private", url: "http://internal.example.com/v1"},
		{name: "name resolving to loopback", url: "https://loopback.example.com/"},
		{name: "name resolving to metadata", url: "http://metadata.example.com/latest/meta-data/"},
		{name: "name resolving to cgnat", url: "http://cgnat.example.com/"},
		{name: "name resolving to alibaba metadata", url: "http://alibaba-meta.example/"},
		{name: "name resolving to mapped loopback", url: "http://mapped.example.com/"},
		{name: "name resolving to mapped metadata", url: "http://mapped-meta.example.com/"},
		{name: "name resolving to public and private", url: "http://mixed.example.com/"},
		{name: "name resolving to public and private ipv6", url: "http://mixed6.example.com/"},
		{name: "name resolving to nat64 loopback", url: "http://nat64.example.com/"},
		{name: "name resolving to 6to4 private", url: "http://sixtofour.example.com/"},
		{name: "name resolving to link-local ipv6", url: "http://linklocal6.example.com/"},
		{name: "name resolving to ipv6 loopback", url: "http://loopback6.example.com/"},
		{name: "name upper case resolving to private", url: "http://INTERNAL.Example.COM./"},
		{name: "name that does not resolve", url: "http://nxdomain.example.com/", unresolvable: true},
		{name: "name with no addresses", url: "http://empty.example.com/", unresolvable: true},

		// Credentials in the URL.
		{name: "userinfo with password", url: "http://user:s3cr3t-pa55@public.example.com/"},
		{name: "userinfo user only", url: "http://s3cr3t-token@public.example.com/"},
		{name: "userinfo empty", url: "http://@public.example.com/"},
		{name: "userinfo hiding a loopback host", url: "http://public.example.com:80@127.0.0.1/"},
		{name: "userinfo on the allowed host", url: "http://user:s3cr3t-pa55@first-hop.test:" + port + "/"},
		{name: "userinfo in an unparseable url", url: "http://user:s3cr3t-pa55@public.example.com:bad/"},

		// Schemes.
		{name: "file scheme", url: "file:///etc/passwd"},
		{name: "gopher scheme", url: "gopher://127.0.0.1:70/_GET"},
		{name: "ftp scheme", url: "ftp://public.example.com/"},
		{name: "dict scheme", url: "dict://127.0.0.1:11211/"},
		{name: "websocket scheme", url: "ws://public.example.com/"},
		{name: "javascript scheme", url: "javascript:alert(1)"},
		{name: "no scheme", url: "//public.example.com/", noRedirect: true},
		{name: "bare host", url: "public.example.com", noRedirect: true},

		// Ports.
		{name: "port zero", url: "http://public.example.com:0/"},
		{name: "port above 65535", url: "http://public.example.com:65536/"},
		{name: "port far above 65535", url: "http://public.example.com:99999999999/"},
		{name: "port negative", url: "http://public.example.com:-1/"},

		// Empty and malformed hosts.
		{name: "empty host", url: "http:///path"},
		{name: "empty host with port", url: "http://:80/"},
		{name: "scheme only", url: "https://"},
		{name: "opaque", url: "http:public.example.com"},
		{name: "five parts", url: "http://1.2.3.4.5/"},
		{name: "part above 255", url: "http://256.0.0.1/"},
		{name: "number above 32 bits", url: "http://0x100000000/"},
		{name: "invalid octal digit", url: "http://08.0.0.1/"},
		{name: "numeric last label", url: "http://foo.127/"},
		{name: "two trailing dots", url: "http://127.0.0.1../"},
		{name: "empty label", url: "http://public..example.com/"},
		{name: "unclosed bracket", url: "http://[::ffff:127.0.0.1/"},
		{name: "ipv4 in brackets", url: "http://[127.0.0.1]/"},
		{name: "space in host", url: "http://exa mple.com/"},
		{name: "percent-encoded digits", url: "http://%31%32%37.0.0.1/"},
		{name: "fullwidth digits", url: "http://１２７.0.0.1/"},
		{name: "circled digits escaped", url: "http://%E2%91%A0%E2%91%A1%E2%91%A6.0.0.1/"},
	}
	require.GreaterOrEqual(t, len(cases), 60)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, parseErr := url.Parse(tc.url)

			err := g.CheckURL(tc.url)
			var refused *RefusedError
			require.ErrorAs(t, err, &refused)
			assert.NotEmpty(t, refused.Reason)
			assert.NotContains(t, err.Error(), "s3cr3t")
			assert.Equal(t, domain.CodeInvalid, domain.ErrorCode(err), "a refusal is a 400")

			resp, err := client.Get(tc.url)
			if resp != nil {
				_ = resp.Body.Close()
			}
			require.Error(t, err, "sent directly")
			if parseErr == nil && !tc.unresolvable {
				require.ErrorAs(t, err, &refused, "sent directly")
				assert.NotContains(t, refused.Error(), "s3cr3t")
			}

			if !tc.noRedirect {
				resp, err = client.Get(firstHop + "/redirect?to=" + url.QueryEscape(tc.url))
				if resp != nil {
					_ = resp.Body.Close()
				}
				require.Error(t, err, "reached by a redirect")
				if parseErr == nil {
					require.ErrorAs(t, err, &refused, "reached by a redirect")
					assert.NotContains(t, refused.Error(), "s3cr3t")
				}
			}

			assert.Zero(t, hook.others.Load(), "a refused host reached the dialer")
		})
	}

	assert.Zero(t, hook.others.Load())
	reached := hook.reachedAddrs()
	require.NotEmpty(t, reached, "the allowed first hop must have been dialled, so the redirects were refused by the check")
	for _, a := range reached {
		assert.Equal(t, srvAddr, a)
	}
}

// TestRedirectToMetadataRefused is the named case on its own: an allowed host that
// redirects to the metadata address, in its dotted and its IPv4-mapped IPv6 spelling.
func TestRedirectToMetadataRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v4":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/v6":
			http.Redirect(w, r, "http://[::ffff:a9fe:a9fe]/", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)

	g, err := New([]string{"127.0.0.1"})
	require.NoError(t, err)
	hook := &dialHook{allowed: srv.Listener.Addr().String()}
	g.Dialer = hook.dial
	client := g.Client(5 * time.Second)

	for _, path := range []string{"/v4", "/v6"} {
		t.Run(path, func(t *testing.T) {
			resp, err := client.Get(srv.URL + path)
			if resp != nil {
				_ = resp.Body.Close()
			}
			var refused *RefusedError
			require.ErrorAs(t, err, &refused)
			assert.Contains(t, refused.Reason, "metadata")
			assert.Zero(t, hook.others.Load())
			assert.NotEmpty(t, hook.reachedAddrs())
		})
	}
}

func TestTooManyRedirects(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/again", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	g, err := New([]string{"127.0.0.1"})
	require.NoError(t, err)

	resp, err := g.Client(5 * time.Second).Get(srv.URL)
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.ErrorIs(t, err, ErrTooManyRedirects)
	assert.Equal(t, int64(MaxRedirects), hits.Load(), "the first request and nine redirects are answered, the tenth redirect is refused")
}

func TestDialContextRefuses(t *testing.T) {
	g, err := New(nil)
	require.NoError(t, err)
	g.Resolver = testDNS
	hook := &dialHook{}
	g.Dialer = hook.dial

	cases := []struct {
		name, network, addr string
	}{
		{"metadata", "tcp", "169.254.169.254:80"},
		{"loopback hex short", "tcp", "0x7f.1:80"},
		{"loopback decimal", "tcp4", "2130706433:443"},
		{"mapped loopback", "tcp", "[::ffff:127.0.0.1]:80"},
		{"mapped metadata hex", "tcp6", "[::ffff:a9fe:a9fe]:80"},
		{"link-local with zone", "tcp", "[fe80::1%eth0]:80"},
		{"localhost", "tcp", "localhost:80"},
		{"metadata name", "tcp", "metadata.google.internal:80"},
		{"name resolving to private", "tcp", "internal.example.com:443"},
		{"name resolving to public and private", "tcp", "mixed.example.com:443"},
		{"udp", "udp", "public.example.com:53"},
		{"unix", "unix", "/var/run/docker.sock"},
		{"port zero", "tcp", "public.example.com:0"},
		{"no port", "tcp", "public.example.com"},
		{"malformed", "tcp", "256.1.1.1:80"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := g.DialContext(context.Background(), tc.network, tc.addr)
			if c != nil {
				_ = c.Close()
			}
			var refused *RefusedError
			require.ErrorAs(t, err, &refused)
			assert.Zero(t, hook.others.Load())
		})
	}
}

func TestDialContextResolverFailureIsNotARefusal(t *testing.T) {
	g, err := New(nil)
	require.NoError(t, err)
	g.Resolver = testDNS
	hook := &dialHook{}
	g.Dialer = hook.dial

	_, err = g.DialContext(context.Background(), "tcp", "nxdomain.example.com:443")
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr, "a lookup failure is a connection error (502), not the client's fault")
	var refused *RefusedError
	assert.False(t, errors.As(err, &refused))
	assert.Zero(t, hook.others.Load())
}

// TestDNSRebinding: the name resolves to a public address when checked and to loopback
// (where a live server listens) when the client connects; the dialer checks what it dials.
func TestDNSRebinding(t *testing.T) {
	srv := httptest.NewServer(redirector())
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)

	cases := []struct {
		name    string
		answers [][]string
	}{
		{"public then loopback", [][]string{{"93.184.215.14"}, {"127.0.0.1"}}},
		{"public then mapped loopback", [][]string{{"2606:4700::6810:84e5"}, {"::ffff:127.0.0.1"}}},
		{"public then public and loopback", [][]string{{"93.184.215.14"}, {"93.184.215.14", "127.0.0.1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dns := &rebindingDNS{answers: tc.answers}
			g, err := New(nil)
			require.NoError(t, err)
			g.Resolver = dns
			hook := &dialHook{allowed: srv.Listener.Addr().String()}
			g.Dialer = hook.dial
			u := "http://rebind.example.com:" + port + "/"

			require.NoError(t, g.CheckURL(u), "the first answer is public")

			resp, err := g.Client(5 * time.Second).Get(u)
			if resp != nil {
				_ = resp.Body.Close()
			}
			var refused *RefusedError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, "resolves to a loopback address", refused.Reason)
			assert.Empty(t, hook.reachedAddrs(), "the server behind the rebound address was not reached")
			assert.Zero(t, hook.others.Load())
			assert.Equal(t, 2, dns.calls, "checked once, resolved again at dial time")
		})
	}
}

// TestDialsTheCheckedAddress: the dialer is handed the address that was checked, never the
// name, so nothing can resolve the name a second time.
func TestDialsTheCheckedAddress(t *testing.T) {
	srv := httptest.NewServer(redirector())
	t.Cleanup(srv.Close)
	srvAddr := srv.Listener.Addr().String()
	_, port, err := net.SplitHostPort(srvAddr)
	require.NoError(t, err)

	g, err := New([]string{"127.0.0.1/32"})
	require.NoError(t, err)
	g.Resolver = fakeDNS{"models.example.com": {"127.0.0.1"}}
	hook := &dialHook{allowed: srvAddr}
	g.Dialer = hook.dial

	resp, err := g.Client(5 * time.Second).Get("http://models.example.com:" + port + "/v1/models")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, "ok from models.example.com:"+port, string(body), "the Host header keeps the name")
	assert.Equal(t, []string{srvAddr}, hook.reachedAddrs())
}

func TestAllowedHosts(t *testing.T) {
	g, err := New([]string{"vllm.internal", "*.corp.example", "10.1.2.3", "192.168.0.0/16", "fd00::/8"})
	require.NoError(t, err)
	g.Resolver = fakeDNS{
		"api.openai.com":         {"104.18.6.192", "2606:4700::6812:6c0"},
		"api.anthropic.com":      {"160.79.104.10"},
		"vllm.internal":          {"10.9.9.9"},
		"gpu1.corp.example":      {"10.0.0.7"},
		"a.b.corp.example":       {"172.16.5.5"},
		"ollama.lan":             {"192.168.1.20"},
		"ollama6.lan":            {"fd00::20"},
		"corp.example":           {"10.0.0.8"},
		"evilcorp.example":       {"10.0.0.9"},
		"public-and-lan.example": {"93.184.215.14", "192.168.1.30"},
		"lan-and-private.example": {
			"192.168.1.30", "10.0.0.30",
		},
	}
	hook := &dialHook{}
	g.Dialer = hook.dial

	allowed := []string{
		// Public addresses: checked, never dialled.
		"https://api.openai.com/v1",
		"https://API.OpenAI.com./v1",
		"https://api.anthropic.com:443/v1/messages",
		"http://8.8.8.8/",
		"http://134744072/", // 8.8.8.8 in decimal: an odd spelling of a public address is still public
		"http://[2606:4700:4700::1111]/",
		"http://[::ffff:8.8.8.8]/",
		"http://[64:ff9b::808:808]/",
		"http://[2002:808:808::1]/",
		"https://1.1.1.1:8443/path?q=1#frag",
		// The allow-list: names, wildcards, IPs and ranges.
		"http://vllm.internal:8000/v1",
		"http://VLLM.INTERNAL./v1",
		"http://gpu1.corp.example/v1",
		"http://a.b.corp.example/",
		"http://10.1.2.3:8000/",
		"http://192.168.5.5/",
		"http://0xc0a80505/",
		"http://[::ffff:192.168.1.1]/",
		"http://ollama.lan:11434/",
		"http://ollama6.lan/",
		"http://[fd00::5]/",
		"http://public-and-lan.example/",
	}
	for _, u := range allowed {
		t.Run("allowed "+u, func(t *testing.T) {
			require.NoError(t, g.CheckURL(u))
		})
	}

	stillRefused := []string{
		"http://corp.example/",            // a wildcard does not match its own apex
		"http://evilcorp.example/",        // nor a name that merely ends the same way
		"http://10.1.2.4/",                // one IP does not open its neighbours
		"http://169.254.169.254/",         // the allow-list opens only what it names
		"http://[fe80::1]/",               // fd00::/8 is not fe80::/10
		"http://lan-and-private.example/", // one allowed address does not excuse another
		"http://user:pw@vllm.internal/",   // credentials stay refused on allowed hosts
		"ftp://vllm.internal/",
	}
	for _, u := range stillRefused {
		t.Run("refused "+u, func(t *testing.T) {
			var refused *RefusedError
			require.ErrorAs(t, g.CheckURL(u), &refused)
		})
	}
	assert.Zero(t, hook.others.Load())
	assert.Empty(t, hook.reachedAddrs())
}

// TestClientReachesAllowedServer makes real requests through Client to an allow-listed
// local server, by IP and by an allow-listed name.
func TestClientReachesAllowedServer(t *testing.T) {
	srv := httptest.NewServer(redirector())
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)

	cases := []struct {
		name    string
		allowed []string
		url     string
	}{
		{"allowed ip", []string{"127.0.0.1"}, srv.URL + "/v1/models"},
		{"allowed range", []string{"127.0.0.0/8"}, srv.URL + "/v1/models"},
		{"allowed name", []string{"models.internal"}, "http://models.internal:" + port + "/v1/models"},
		{"allowed wildcard", []string{"*.internal"}, "http://gpu.models.internal:" + port + "/v1/models"},
		{"allowed name redirecting to itself", []string{"models.internal"},
			"http://models.internal:" + port + "/redirect?to=" + url.QueryEscape("/v1/models")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(tc.allowed)
			require.NoError(t, err)
			g.Resolver = fakeDNS{"models.internal": {"127.0.0.1"}, "gpu.models.internal": {"127.0.0.1"}}

			require.NoError(t, g.CheckURL(tc.url))
			resp, err := g.Client(5 * time.Second).Get(tc.url)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Contains(t, string(body), "ok from")
		})
	}
}

// TestClientIgnoresEnvironmentProxy: a proxy would resolve and connect on the guard's behalf,
// so the client never uses one, whatever the environment says.
func TestClientIgnoresEnvironmentProxy(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	srv := httptest.NewServer(redirector())
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)

	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	g, err := New([]string{"models.internal"})
	require.NoError(t, err)
	g.Resolver = fakeDNS{"models.internal": {"127.0.0.1"}}
	resp, err := g.Client(5 * time.Second).Get("http://models.internal:" + port + "/")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Zero(t, proxied.Load())
}

func TestRefusedErrorMessage(t *testing.T) {
	g, err := New(nil)
	require.NoError(t, err)
	g.Resolver = testDNS

	cases := []struct {
		url, want string
	}{
		{"http://0x7f.1/", `host "0x7f.1" not allowed: loopback address; set CAUSEWAY_ALLOWED_HOSTS to allow it`},
		{"http://localhost:8080/", `host "localhost" not allowed: loopback host name; set CAUSEWAY_ALLOWED_HOSTS to allow it`},
		{"http://[::ffff:a9fe:a9fe]/", `host "::ffff:a9fe:a9fe" not allowed: IPv4-mapped cloud metadata address`},
		{"http://[64:ff9b::a9fe:a9fe]/", `host "64:ff9b::a9fe:a9fe" not allowed: NAT64 address embedding an IPv4 cloud metadata address`},
		{"http://internal.example.com/", `host "internal.example.com" not allowed: resolves to a private address; set CAUSEWAY_ALLOWED_HOSTS to allow it`},
		{"http://u:s3cr3t-pa55@public.example.com/", `host "public.example.com" not allowed: credentials in the URL are not allowed`},
		{"http://u:s3cr3t-pa55@public.example.com:bad/", `URL not allowed: not a valid URL`},
		{"file:///etc/passwd", `URL not allowed: only http and https URLs are allowed`},
		{"http://nxdomain.example.com/", `host "nxdomain.example.com" not allowed: host name does not resolve`},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			err := g.CheckURL(tc.url)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())

			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, domain.CodeInvalid, de.Code)
			assert.Equal(t, tc.want, de.Message)
		})
	}
}
