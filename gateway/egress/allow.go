package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// allowList is the configured exception to the refused ranges (CAUSEWAY_ALLOWED_HOSTS): for
// self-hosted models on a private network.
type allowList struct {
	names    map[string]bool // exact host names
	suffixes []string        // ".example.com" for the entry "*.example.com"
	prefixes []netip.Prefix  // IPs (as /32 or /128) and CIDR ranges
}

// ParseAllowList splits the value of CAUSEWAY_ALLOWED_HOSTS: a comma-separated list of host
// names, IP addresses and CIDR ranges. Spaces around entries and empty entries (a trailing
// comma) are ignored. It returns the entries normalised (names lower-cased without a
// trailing dot, IPs and ranges in canonical form), or an error naming every invalid entry.
//
//   - A host name matches exactly, case-insensitively: "vllm.internal".
//   - "*.example.com" matches any name under example.com, at any depth, but not example.com
//     itself (list both to allow both).
//   - An IP address ("10.1.2.3", "fd00::5") allows that address; written the standard way,
//     without brackets, port or zone.
//   - A CIDR range ("10.0.0.0/8", "fd00::/8") allows every address in it; host bits are
//     cleared ("10.1.2.3/8" is 10.0.0.0/8). An IPv4 range also covers the IPv4-mapped IPv6
//     spelling of its addresses.
//
// A name on the list is trusted whatever it resolves to; an IP or range allows that address
// however the host that led to it was spelled or resolved.
func ParseAllowList(s string) ([]string, error) {
	var out []string
	var errs []error
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		n, err := normaliseAllowEntry(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, n)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// AllowEntryError is an invalid allow-list entry.
type AllowEntryError struct {
	Entry  string
	Reason string
}

func (e *AllowEntryError) Error() string {
	return fmt.Sprintf("allowed hosts: entry %q: %s", e.Entry, e.Reason)
}

func newAllowList(entries []string) (allowList, error) {
	l := allowList{names: map[string]bool{}}
	var errs []error
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		n, err := normaliseAllowEntry(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case strings.HasPrefix(n, "*."):
			l.suffixes = append(l.suffixes, n[1:])
		case strings.Contains(n, "/"):
			l.prefixes = append(l.prefixes, netip.MustParsePrefix(n))
		default:
			if a, err := netip.ParseAddr(n); err == nil {
				l.prefixes = append(l.prefixes, netip.PrefixFrom(a, a.BitLen()))
			} else {
				l.names[n] = true
			}
		}
	}
	return l, errors.Join(errs...)
}

// normaliseAllowEntry checks one trimmed entry and returns its canonical spelling.
func normaliseAllowEntry(e string) (string, error) {
	bad := func(reason string) (string, error) { return "", &AllowEntryError{Entry: e, Reason: reason} }
	switch {
	case e == "":
		return bad("empty entry")
	case strings.Contains(e, "://"), strings.ContainsAny(e, "?#@"):
		return bad("write a host name, IP address or CIDR range, not a URL")
	case strings.HasPrefix(e, "["):
		return bad("write IPv6 addresses without brackets")
	case strings.Contains(e, "%"):
		return bad("IPv6 zones are not allowed")
	case strings.Contains(e, "/"):
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return bad("not a valid CIDR range")
		}
		p = p.Masked()
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			// An IPv4-mapped range is the IPv4 range it maps, which is how addresses are compared.
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.String(), nil
	case strings.Contains(e, ":"):
		a, err := netip.ParseAddr(e)
		if err != nil {
			return bad("not a valid IPv6 address (a port is not allowed)")
		}
		return a.Unmap().String(), nil
	}
	wildcard := strings.HasPrefix(e, "*.")
	rest := strings.TrimPrefix(e, "*.")
	if strings.Contains(rest, "*") {
		return bad("only a leading \"*.\" wildcard is allowed")
	}
	name, err := normaliseName(rest)
	if err != nil {
		return bad(err.Error())
	}
	if endsInNumber(name) {
		if wildcard {
			return bad("a wildcard needs a domain name after \"*.\"")
		}
		a, err := netip.ParseAddr(name)
		if err != nil || !a.Is4() {
			return bad("not a valid IPv4 address in dotted-decimal form")
		}
		return a.String(), nil
	}
	if wildcard {
		return "*." + name, nil
	}
	return name, nil
}

func (l *allowList) allowsName(name string) bool {
	if l.names[name] {
		return true
	}
	for _, s := range l.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

func (l *allowList) allowsAddr(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	for _, p := range l.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
