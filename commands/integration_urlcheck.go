package commands

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"

	"github.com/causeway/causeway/domain"
)

// URLChecker decides whether the gateway may call a base URL that an admin sets (an
// integration's or provider's custom_host or base_url, a saved config's custom_host). The
// gateway's egress guard implements it with the address checks it applies at dial time and
// the CAUSEWAY_ALLOWED_HOSTS allow-list.
type URLChecker interface {
	CheckURL(string) error
}

// StaticURLCheck is the URLChecker that needs no resolver and no configuration: it refuses a
// host written as an address in a refused range (loopback, private, link-local, CGNAT,
// multicast, reserved, unspecified; IPv4-mapped IPv6 included), a numeric host in another
// notation, and localhost names. Names are left to the dial-time check, which sees what they
// resolve to; so is the allow-list, which this check does not know.
type StaticURLCheck struct{}

var refusedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4", "::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001:db8::/32",
		"fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

func (StaticURLCheck) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return errors.New("it is not a URL with a host")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		addr = addr.Unmap()
		for _, p := range refusedPrefixes {
			if p.Contains(addr.WithZone("")) {
				return errors.New("its address is in a private or reserved range")
			}
		}
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || host == "metadata.google.internal" {
		return errors.New("it names this machine or a metadata service")
	}
	if numericHost(host) {
		return errors.New("its host is a number in a non-standard notation")
	}
	return nil
}

// numericHost reports whether every label of host is a number (decimal, octal or 0x hex):
// resolvers read such names as addresses ("2130706433", "0x7f.1" are 127.0.0.1).
func numericHost(host string) bool {
	for _, label := range strings.Split(host, ".") {
		digits := strings.TrimPrefix(label, "0x")
		hex := digits != label
		if digits == "" && !hex {
			return false
		}
		for _, c := range digits {
			if !(c >= '0' && c <= '9') && !(hex && c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// checkURLs runs the host check on the URL fields of configurations; a refusal names the
// field.
func checkURLs(u URLChecker, configs map[string]any) error {
	for _, f := range domain.URLConfigurationFields {
		s, ok := configs[f].(string)
		if !ok {
			continue
		}
		p := "configurations." + f
		if err := domain.ValidateBaseURL(p, s); err != nil {
			return err
		}
		if err := u.CheckURL(s); err != nil {
			return domain.Invalid(p, "%s is refused: %v", p, err)
		}
	}
	return nil
}
