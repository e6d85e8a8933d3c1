package egress

import (
	"context"
	"hash/fnv"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// oracleV4 and oracleV6 are issue 5's refused ranges, written out again independently of
// ranges.go, so the fuzz test checks the guard against the requirement and not against itself.
var (
	oracleV4 = parseCIDRs("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32")
	oracleV6 = parseCIDRs("::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
		"2001:db8::/32", "100::/64")
	// IPv6 ranges whose last 32 bits, or (6to4) bits 16 to 48, are an IPv4 address.
	oracleCompat = parseCIDRs("::/96")
	oracleNAT64  = parseCIDRs("64:ff9b::/96")
	oracle6to4   = parseCIDRs("2002::/16")
	oracleNames  = []string{"metadata.google.internal", "metadata", "instance-data", "localhost"}
)

func parseCIDRs(cidrs ...string) []*net.IPNet {
	out := make([]*net.IPNet, 0, len(cidrs))
	for _, c := range cidrs {
		_, n, err := net.ParseCIDR(c)
		if err != nil {
			panic(err)
		}
		out = append(out, n)
	}
	return out
}

func inAny(ip net.IP, nets []*net.IPNet) bool {
	for _, n := range nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// oracleRefused says whether issue 5 refuses ip, IPv4 inside IPv6 included.
func oracleRefused(ip net.IP) bool {
	if v4 := ip.To4(); v4 != nil { // also the IPv4-mapped form
		return inAny(v4, oracleV4)
	}
	if inAny(ip, oracleV6) {
		return true
	}
	switch {
	case inAny(ip, oracleCompat), inAny(ip, oracleNAT64):
		return inAny(net.IP(ip[12:16]), oracleV4)
	case inAny(ip, oracle6to4):
		return inAny(net.IP(ip[2:6]), oracleV4)
	}
	return false
}

// atonOracle is a second, plainer reading of inet_aton notation, through strconv.
func atonOracle(s string) (net.IP, bool) {
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return nil, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" || strings.ContainsAny(digits, "+-_") {
			return nil, false
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return nil, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return nil, false
		}
		n |= v << (24 - 8*uint(i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-uint(len(vals)))) {
		return nil, false
	}
	n |= last
	return net.IPv4(byte(n>>24), byte(n>>16), byte(n>>8), byte(n)), true
}

// fuzzDNS answers every name with one or two addresses picked by a hash of the name, from a
// pool that mixes public and refused ones, so that names reach the address check.
type fuzzDNS struct{}

var fuzzPool = []string{
	"93.184.215.14", "2606:4700::6810:84e5", "8.8.8.8",
	"10.0.0.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "::ffff:10.0.0.1", "::1",
	"64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "fd00::1", "fe80::1", "::ffff:169.254.169.254",
}

func (fuzzDNS) answer(name string) []string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	x := h.Sum64()
	out := []string{fuzzPool[x%uint64(len(fuzzPool))]}
	if x&(1<<40) != 0 {
		out = append(out, fuzzPool[(x>>20)%uint64(len(fuzzPool))])
	}
	return out
}

func (d fuzzDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	var out []net.IPAddr
	for _, s := range d.answer(host) {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

const fuzzSecret = "Zq9-FUZZ-SECRET-xK2"

// FuzzCheckURL: CheckURL never panics, refuses only with *RefusedError, never repeats a
// credential, and whatever it accepts is, by every reading of its host (this package's
// parser, netip, net.ParseIP, a second inet_aton reading, and the names' DNS answers), not in
// a refused range.
func FuzzCheckURL(f *testing.F) {
	g, err := New(nil)
	require.NoError(f, err)
	g.Resolver = fuzzDNS{}

	f.Fuzz(func(t *testing.T, raw string) {
		if i := strings.Index(raw, "://"); i >= 0 && !strings.Contains(raw, fuzzSecret) {
			withCreds := raw[:i+3] + "fuzz:" + fuzzSecret + "@" + raw[i+3:]
			err := g.CheckURL(withCreds)
			if err != nil {
				require.NotContains(t, err.Error(), fuzzSecret)
			} else if u, perr := url.Parse(withCreds); perr == nil && u.User != nil {
				t.Fatalf("accepted credentials in %q", withCreds)
			}
		}

		err := g.CheckURL(raw)
		if err != nil {
			var refused *RefusedError
			require.ErrorAs(t, err, &refused)
			require.NotEmpty(t, refused.Reason)
			return
		}

		u, err := url.Parse(raw)
		require.NoError(t, err)
		require.Contains(t, []string{"http", "https"}, u.Scheme)
		require.Nil(t, u.User)
		host := u.Hostname()
		require.NotEmpty(t, host)
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			require.NoError(t, err)
			require.True(t, n >= 1 && n <= 65535, "port %s", p)
		}

		trimmed := strings.TrimSuffix(host, ".")
		if a, err := netip.ParseAddr(host); err == nil {
			require.False(t, oracleRefused(net.IP(a.WithZone("").AsSlice())), "netip reads %q as %s", host, a)
		}
		if ip := net.ParseIP(trimmed); ip != nil {
			require.False(t, oracleRefused(ip), "net.ParseIP reads %q as %s", host, ip)
		}
		if ip, ok := atonOracle(trimmed); ok {
			require.False(t, oracleRefused(ip), "inet_aton reads %q as %s", host, ip)
		}
		tg, err := parseHost(host, strings.HasPrefix(u.Host, "["))
		require.NoError(t, err)
		if tg.isIP() {
			require.False(t, oracleRefused(net.IP(tg.addr.WithZone("").AsSlice())), "parseHost reads %q as %s", host, tg.addr)
			return
		}
		require.NotContains(t, oracleNames, tg.name)
		require.False(t, strings.HasSuffix(tg.name, ".localhost"))
		for _, s := range (fuzzDNS{}).answer(tg.name) {
			require.False(t, oracleRefused(net.ParseIP(s)), "%q resolves to %s", host, s)
		}
	})
}
