package providers_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// testKey is the provider credential of every Target; no error may ever show it.
const testKey = "sk-test-SECRET-9f8e7d6c5b4a"

const chatBody = `{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello to the gateway"}]}`

func adapter(t *testing.T, name string) providers.Provider {
	t.Helper()
	p, ok := all.Default()[name]
	require.True(t, ok, "Default() serves %s", name)
	return p
}

func chatCall(body string) providers.Call {
	return providers.Call{Endpoint: providers.EndpointChat, Model: "gpt-4o", Body: json.RawMessage(body)}
}

// closedPort is an address on which nothing listens: a port that was just listened on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// Each class of failure is told apart on real sockets, and its words quote nothing of the
// transport's error: no resolver address, no dialled address beyond the host given.
func TestClassifyFailure(t *testing.T) {
	tlsServer := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsServer.Close)
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)

	cases := []struct {
		name    string
		url     string
		timeout time.Duration
		class   providers.Failure
		says    string
	}{
		{name: "connection refused on a closed port", url: "http://" + closedPort(t) + "/v1", class: providers.FailureRefused, says: "connection refused"},
		{name: "a name that does not resolve", url: "http://causeway-test.invalid/v1", class: providers.FailureDNS, says: "DNS"},
		{name: "a certificate nobody trusts", url: tlsServer.URL + "/v1", class: providers.FailureTLS, says: "unknown authority"},
		{name: "TLS spoken to a plain HTTP server", url: strings.Replace(plain.URL, "http://", "https://", 1), class: providers.FailureTLS, says: "did not answer in TLS"},
		{name: "a server that never answers", url: "http://" + providertest.SilentServer(t, false, false) + "/v1", timeout: 200 * time.Millisecond,
			class: providers.FailureTimeout, says: "no answer in time"},
		{name: "a server that hangs up", url: "http://" + providertest.SilentServer(t, true, false) + "/v1", class: providers.FailureReset, says: "reset or closed"},
		{name: "a server that resets the connection", url: "http://" + providertest.SilentServer(t, true, true) + "/v1", class: providers.FailureReset, says: "reset or closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := &http.Client{Timeout: tc.timeout}
			if tc.timeout == 0 {
				client.Timeout = 5 * time.Second
			}
			resp, err := client.Get(tc.url)
			if resp != nil {
				_ = resp.Body.Close()
			}
			require.Error(t, err)
			class, says := providers.ClassifyFailure(err)
			assert.Equal(t, tc.class, class, "%v", err)
			assert.Contains(t, says, tc.says)
			assert.NotContains(t, says, "127.0.0.1", "the words quote no address")
			assert.NotContains(t, says, ":53", "nor a resolver's")
		})
	}

	t.Run("a context deadline is a timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+providertest.SilentServer(t, false, false)+"/", nil)
		require.NoError(t, err)
		_, err = http.DefaultClient.Do(req)
		require.Error(t, err)
		class, _ := providers.ClassifyFailure(err)
		assert.Equal(t, providers.FailureTimeout, class)
	})
}

// An adapter's ConnectionError names the provider, the host it was given and the class, and
// never the address a name resolved to nor the URL's query.
func TestConnectionErrorDescribesItself(t *testing.T) {
	addr := closedPort(t)
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct{ base, host string }{
		{"http://" + addr + "/v1?key=" + testKey, addr},
		{"http://localhost:" + port + "/v1", "localhost:" + port},
	} {
		_, err := adapter(t, "openai").Chat(context.Background(), providers.Target{Provider: "openai", BaseURL: tc.base, APIKey: testKey}, chatCall(chatBody))
		var ce *providers.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, tc.host, ce.Host)
		class, _ := ce.Class()
		assert.Equal(t, providers.FailureRefused, class)
		msg := ce.Describe()
		assert.Equal(t, "the provider openai could not be reached at "+tc.host+": connection refused (nothing listens on that port)", msg)
		assert.NotContains(t, msg, testKey)
		if strings.HasPrefix(tc.host, "localhost") {
			assert.NotContains(t, msg, "127.0.0.1", "the resolved address stays out")
			assert.NotContains(t, msg, "[::1]")
		}
	}
}
