package egress

import (
	"errors"
	"net/netip"
	"strings"
)

// target is a host as a resolver would read it: either an IP address (in whatever notation
// it was written) or a normalised host name.
type target struct {
	addr netip.Addr // valid when the host is an IP literal
	name string     // lower case, no trailing dot; set when the host is a name
}

func (t target) isIP() bool { return t.addr.IsValid() }

// Reasons a host cannot be read safely. They are refusal reasons shown to clients.
var (
	errEmptyHost     = errors.New("the URL has no host")
	errBadIPv6       = errors.New("malformed IPv6 address")
	errBadIPv4       = errors.New("host ends in a number but is not a valid IPv4 address")
	errHostChars     = errors.New("host names may use only ASCII letters, digits, '-', '_' and '.' (write internationalised names in punycode)")
	errEmptyLabel    = errors.New("host name has an empty label")
	errLongHostLabel = errors.New("host name is too long")
)

// parseHost reads a URL or dial host the way the resolvers behind a connection would, so that
// no spelling of an address is treated as a name. bracketed says the host was written as an
// IP-literal ("[...]" in a URL); a host containing ':' is an IPv6 literal in any case.
//
// Names whose last label is a number ("ends in a number", as the WHATWG URL standard puts
// it) are IPv4 addresses in inet_aton notation: decimal, octal (leading 0) or hex (0x) parts,
// one to four of them, the last filling the remaining bytes, so 2130706433, 0177.0.0.1,
// 0x7f.1 and 127.1 are all 127.0.0.1. If such a host is not a valid address it is refused
// rather than handed to a resolver that might read it some other way. Non-ASCII hosts are
// refused too: HTTP stacks map them through IDNA, which turns fullwidth digits into ASCII
// ones after any check made on the original string.
func parseHost(s string, bracketed bool) (target, error) {
	if s == "" {
		return target{}, errEmptyHost
	}
	if bracketed || strings.Contains(s, ":") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return target{}, errBadIPv6
		}
		return target{addr: a}, nil
	}
	name, err := normaliseName(s)
	if err != nil {
		return target{}, err
	}
	if endsInNumber(name) {
		a, ok := parseIPv4Loose(name)
		if !ok {
			return target{}, errBadIPv4
		}
		return target{addr: a}, nil
	}
	return target{name: name}, nil
}

// normaliseName lower-cases a host name, drops one trailing dot (the root label, which
// resolvers accept), and checks its characters and label lengths.
func normaliseName(s string) (string, error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", errEmptyLabel
	}
	if len(s) > 253 {
		return "", errLongHostLabel
	}
	b := []byte(s)
	labelLen := 0
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		case c == '.':
			if labelLen == 0 {
				return "", errEmptyLabel
			}
			labelLen = 0
			continue
		default:
			return "", errHostChars
		}
		labelLen++
		if labelLen > 63 {
			return "", errLongHostLabel
		}
	}
	if labelLen == 0 {
		return "", errEmptyLabel
	}
	return string(b), nil
}

// endsInNumber reports whether the last label of a normalised name is all decimal digits or
// a 0x-prefixed run of hex digits (possibly empty), which makes the whole host an IPv4
// address attempt for browsers and inet_aton alike.
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if strings.HasPrefix(last, "0x") {
		return strings.Trim(last[2:], "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// parseIPv4Loose parses inet_aton notation. Input is lower case.
func parseIPv4Loose(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals [4]uint64
	for i, p := range parts {
		v, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	var ip uint64
	for i := 0; i < n-1; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		ip |= vals[i] << (24 - 8*i)
	}
	// The last part fills the bytes the others left: 32 bits alone, 24 after one part, and so on.
	if vals[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	ip |= vals[n-1]
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// parseIPv4Part reads one inet_aton part: 0x… hex ("0x" alone is 0, as browsers read it),
// 0… octal, otherwise decimal. Values beyond 32 bits are refused, however many digits.
func parseIPv4Part(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case strings.HasPrefix(p, "0x"):
		base, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		c := p[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}
