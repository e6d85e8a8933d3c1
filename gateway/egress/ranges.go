package egress

import "net/netip"

type rangeRule struct {
	prefix netip.Prefix
	reason string
}

// ipv4Refused is every IPv4 special-purpose range that is not a public destination (IANA's
// IPv4 Special-Purpose Address Registry, RFC 6890), most specific first so that the reason
// names the narrowest match. 169.254.169.254 (AWS, GCP, Azure, Oracle) and 100.100.100.200
// (Alibaba) are cloud metadata services inside ranges refused anyway; naming them helps
// whoever reads the refusal.
var ipv4Refused = []rangeRule{
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata address"},
	{netip.MustParsePrefix("100.100.100.200/32"), "cloud metadata address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved address"},
}

// ipv6Refused is the IPv6 side (IANA's IPv6 Special-Purpose Address Registry). Ranges that
// embed an IPv4 address (mapped, NAT64, 6to4) are handled in refusedReason, not here.
var ipv6Refused = []rangeRule{
	{netip.MustParsePrefix("::/128"), "unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback address"},
	// IPv4-compatible addresses are deprecated (RFC 4291 2.5.5.1) and routed by no one; some
	// stacks still turn them into IPv4 connections, so none is a safe destination.
	{netip.MustParsePrefix("::/96"), "deprecated IPv4-compatible address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "discard-only address"},
	// IETF protocol assignments: Teredo (whose addresses embed an IPv4 server and client),
	// ORCHID, benchmarking and the like; none is a model provider.
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignment"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation address"},
	{netip.MustParsePrefix("3fff::/20"), "documentation address"},
	// AWS's IPv6 instance metadata endpoint, inside the unique-local range.
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata address"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local (private) address"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
}

var (
	ipv4Mapped    = netip.MustParsePrefix("::ffff:0:0/96")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// refusedReason says why a is not a destination for a custom host, or "" when it may be
// dialled. IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, ISATAP) are refused
// when the IPv4 address inside them is; IPv6 outside global unicast (2000::/3) is reserved.
func refusedReason(a netip.Addr) string {
	a = a.WithZone("")
	if ipv4Mapped.Contains(a) {
		if r := refusedReason(a.Unmap()); r != "" {
			return "IPv4-mapped " + r
		}
		return ""
	}
	if a.Is4() {
		for _, r := range ipv4Refused {
			if r.prefix.Contains(a) {
				return r.reason
			}
		}
		return ""
	}
	b := a.As16()
	if nat64.Contains(a) {
		return embedded("NAT64", b[12:16])
	}
	if sixToFour.Contains(a) {
		return embedded("6to4", b[2:6])
	}
	for _, r := range ipv6Refused {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	if !globalUnicast.Contains(a) {
		return "reserved IPv6 address"
	}
	// ISATAP interface identifiers (RFC 5214) carry an IPv4 address in their last 32 bits
	// behind 0000:5efe or 0200:5efe.
	if (b[8] == 0 || b[8] == 2) && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		return embedded("ISATAP", b[12:16])
	}
	return ""
}

func embedded(kind string, v4 []byte) string {
	r := refusedReason(netip.AddrFrom4([4]byte(v4)))
	if r == "" {
		return ""
	}
	return kind + " address embedding an IPv4 " + r
}
