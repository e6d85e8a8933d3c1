package egress

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHostNotations(t *testing.T) {
	cases := []struct {
		in        string
		bracketed bool
		wantAddr  string // the address it is, when it is one
		wantName  string // the normalised name, when it is one
		wantErr   error
	}{
		{in: "127.0.0.1", wantAddr: "127.0.0.1"},
		{in: "127.1", wantAddr: "127.0.0.1"},
		{in: "127.0.1", wantAddr: "127.0.0.1"},
		{in: "2130706433", wantAddr: "127.0.0.1"},
		{in: "017700000001", wantAddr: "127.0.0.1"},
		{in: "0177.0.0.1", wantAddr: "127.0.0.1"},
		{in: "0x7f.0.0.1", wantAddr: "127.0.0.1"},
		{in: "0X7F.1", wantAddr: "127.0.0.1"},
		{in: "0x7f000001", wantAddr: "127.0.0.1"},
		{in: "127.000.000.001", wantAddr: "127.0.0.1"},
		{in: "127.0.0.1.", wantAddr: "127.0.0.1"},
		{in: "0", wantAddr: "0.0.0.0"},
		{in: "0x", wantAddr: "0.0.0.0"},
		{in: "0x.0x.0x.0x", wantAddr: "0.0.0.0"},
		{in: "169.254.43518", wantAddr: "169.254.169.254"},
		{in: "0251.0376.0251.0376", wantAddr: "169.254.169.254"},
		{in: "10.0xffffff", wantAddr: "10.255.255.255"},
		{in: "4294967295", wantAddr: "255.255.255.255"},
		{in: "::1", bracketed: true, wantAddr: "::1"},
		{in: "::ffff:127.0.0.1", bracketed: true, wantAddr: "::ffff:127.0.0.1"},
		{in: "fe80::1%eth0", bracketed: true, wantAddr: "fe80::1%eth0"},
		{in: "fe80::1%eth0", wantAddr: "fe80::1%eth0"}, // from a dial address, brackets already gone
		{in: "api.openai.com", wantName: "api.openai.com"},
		{in: "API.OpenAI.COM.", wantName: "api.openai.com"},
		{in: "my_host-1.internal", wantName: "my_host-1.internal"},
		{in: "1.2.3.4a", wantName: "1.2.3.4a"}, // does not end in a number: a name
		{in: "0x7f.0x1g", wantName: "0x7f.0x1g"},
		{in: "", wantErr: errEmptyHost},
		{in: ".", wantErr: errEmptyLabel},
		{in: "a..b", wantErr: errEmptyLabel},
		{in: "127.0.0.1..", wantErr: errEmptyLabel},
		{in: "1.2.3.4.5", wantErr: errBadIPv4},
		{in: "256.0.0.1", wantErr: errBadIPv4},
		{in: "1.2.3.256", wantErr: errBadIPv4},
		{in: "1.2.65536", wantErr: errBadIPv4},
		{in: "1.16777216", wantErr: errBadIPv4},
		{in: "4294967296", wantErr: errBadIPv4},
		{in: "0x100000000", wantErr: errBadIPv4},
		{in: "99999999999999999999999999", wantErr: errBadIPv4},
		{in: "08.0.0.1", wantErr: errBadIPv4},
		{in: "foo.127", wantErr: errBadIPv4},
		{in: "1..1", wantErr: errEmptyLabel},
		{in: "１２７.0.0.1", wantErr: errHostChars},
		{in: "exa mple.com", wantErr: errHostChars},
		{in: "a%2e", wantErr: errHostChars},
		{in: "127.0.0.1", bracketed: true, wantAddr: "127.0.0.1"},
		{in: "::ffff:127.1", bracketed: true, wantErr: errBadIPv6},
		{in: "v1.x", bracketed: true, wantErr: errBadIPv6},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseHost(tc.in, tc.bracketed)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.wantAddr != "" {
				assert.Equal(t, netip.MustParseAddr(tc.wantAddr), got.addr)
				return
			}
			assert.False(t, got.isIP())
			assert.Equal(t, tc.wantName, got.name)
		})
	}
}

func TestRefusedReason(t *testing.T) {
	cases := []struct {
		addr string
		want string // "" means allowed
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"93.184.215.14", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"192.0.1.1", ""},
		{"198.17.255.255", ""},
		{"198.20.0.0", ""},
		{"223.255.255.255", ""},
		{"0.0.0.0", `"this network" address`},
		{"0.255.255.255", `"this network" address`},
		{"10.255.255.255", "private address"},
		{"100.64.0.0", "shared (CGNAT) address"},
		{"100.100.100.200", "cloud metadata address"},
		{"127.0.0.1", "loopback address"},
		{"169.254.169.254", "cloud metadata address"},
		{"169.254.0.1", "link-local address"},
		{"172.16.0.0", "private address"},
		{"172.31.255.255", "private address"},
		{"192.0.0.170", "IETF protocol assignment"},
		{"192.0.2.255", "documentation address"},
		{"192.88.99.2", "6to4 relay anycast address"},
		{"192.168.255.255", "private address"},
		{"198.18.0.0", "benchmarking address"},
		{"198.19.255.255", "benchmarking address"},
		{"198.51.100.7", "documentation address"},
		{"203.0.113.9", "documentation address"},
		{"224.0.0.251", "multicast address"},
		{"239.255.255.255", "multicast address"},
		{"240.0.0.0", "reserved address"},
		{"255.255.255.254", "reserved address"},
		{"255.255.255.255", "broadcast address"},

		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001:82b::200e", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
		{"2002:808:808::1", ""},
		{"2001:470::5efe:808:808", ""},
		{"::", "unspecified address"},
		{"::1", "loopback address"},
		{"::1%lo", "loopback address"},
		{"::ffff:127.0.0.1", "IPv4-mapped loopback address"},
		{"::ffff:a9fe:a9fe", "IPv4-mapped cloud metadata address"},
		{"::ffff:0.0.0.0", `IPv4-mapped "this network" address`},
		{"::127.0.0.1", "deprecated IPv4-compatible address"},
		{"::8.8.8.8", "deprecated IPv4-compatible address"},
		{"64:ff9b::7f00:1", "NAT64 address embedding an IPv4 loopback address"},
		{"64:ff9b::a00:1", "NAT64 address embedding an IPv4 private address"},
		{"64:ff9b:1::1", "local-use NAT64 address"},
		{"100::1", "discard-only address"},
		{"2001::1", "IETF protocol assignment"},
		{"2001:db8::1", "documentation address"},
		{"3fff::1", "documentation address"},
		{"2002:7f00:1::", "6to4 address embedding an IPv4 loopback address"},
		{"2002:a9fe:a9fe::1", "6to4 address embedding an IPv4 cloud metadata address"},
		{"2001:470::5efe:a9fe:a9fe", "ISATAP address embedding an IPv4 cloud metadata address"},
		{"2001:470::200:5efe:a00:1", "ISATAP address embedding an IPv4 private address"},
		{"fd00:ec2::254", "cloud metadata address"},
		{"fc00::1", "unique-local (private) address"},
		{"fdff:ffff::1", "unique-local (private) address"},
		{"fe80::1", "link-local address"},
		{"fe80::1%eth0", "link-local address"},
		{"febf::1", "link-local address"},
		{"fec0::1", "site-local address"},
		{"ff02::1", "multicast address"},
		{"4000::1", "reserved IPv6 address"},
		{"5f00::1", "reserved IPv6 address"},
		{"1::1", "reserved IPv6 address"},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			assert.Equal(t, tc.want, refusedReason(netip.MustParseAddr(tc.addr)))
		})
	}
}

func TestParseAllowList(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    []string
		wantErr []string // entries the error must name
	}{
		{name: "empty", in: "", want: nil},
		{name: "spaces and empty entries", in: " a.example , ,b.example,", want: []string{"a.example", "b.example"}},
		{
			name: "every kind",
			in:   "VLLM.Internal.,*.Corp.Example,10.1.2.3,192.168.0.0/16,fd00::/8,fd00::5,::ffff:10.0.0.1,10.1.2.3/8,::ffff:10.0.0.0/104",
			want: []string{"vllm.internal", "*.corp.example", "10.1.2.3", "192.168.0.0/16", "fd00::/8", "fd00::5", "10.0.0.1", "10.0.0.0/8", "10.0.0.0/8"},
		},
		{
			name: "invalid entries are all named",
			in: "ok.example,http://x.example,10.0.0.0/33,*,*.,*.*.example,a*b.example,[::1],fe80::1%eth0," +
				"host.example:8080,0x7f.1,010.0.0.1,1.2.3.4.5,exa mple,*.10.0.0.1,user@host",
			wantErr: []string{
				`"http://x.example"`, `"10.0.0.0/33"`, `"*"`, `"*."`, `"*.*.example"`, `"a*b.example"`, `"[::1]"`,
				`"fe80::1%eth0"`, `"host.example:8080"`, `"0x7f.1"`, `"010.0.0.1"`, `"1.2.3.4.5"`, `"exa mple"`,
				`"*.10.0.0.1"`, `"user@host"`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAllowList(tc.in)
			if tc.wantErr != nil {
				require.Error(t, err)
				for _, e := range tc.wantErr {
					assert.Contains(t, err.Error(), e)
				}
				assert.NotContains(t, err.Error(), "ok.example")
				_, newErr := New([]string{"ok.example", "*.*.example"})
				var entryErr *AllowEntryError
				require.ErrorAs(t, newErr, &entryErr)
				assert.Equal(t, "*.*.example", entryErr.Entry)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			_, err = New(got)
			require.NoError(t, err, "New accepts what ParseAllowList returns")
		})
	}
}

func TestAllowListMatching(t *testing.T) {
	l, err := newAllowList([]string{"vllm.internal", "*.corp.example", "10.1.2.3", "192.168.0.0/16", "fd00::/8"})
	require.NoError(t, err)

	names := map[string]bool{
		"vllm.internal":      true,
		"x.vllm.internal":    false,
		"gpu.corp.example":   true,
		"a.b.corp.example":   true,
		"corp.example":       false,
		"evilcorp.example":   false,
		"corp.example.evil":  false,
		"vllm.internal.evil": false,
	}
	for n, want := range names {
		assert.Equal(t, want, l.allowsName(n), n)
	}
	addrs := map[string]bool{
		"10.1.2.3":           true,
		"::ffff:10.1.2.3":    true,
		"10.1.2.4":           false,
		"192.168.200.1":      true,
		"::ffff:192.168.0.1": true,
		"192.169.0.1":        false,
		"fd00::1%eth0":       true,
		"fe80::1":            false,
	}
	for a, want := range addrs {
		assert.Equal(t, want, l.allowsAddr(netip.MustParseAddr(a)), a)
	}
}
