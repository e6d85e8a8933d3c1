package providers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

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
		{name: "connection refused on a closed port", url: "http://" + providertest.ClosedPort(t) + "/v1", class: providers.FailureRefused, says: "connection refused"},
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
