package openaicompat_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// An adapter's ConnectionError names the provider, the host it was given and the class, and
// never the address a name resolved to nor the URL's query.
func TestConnectionErrorDescribesItself(t *testing.T) {
	addr := providertest.ClosedPort(t)
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
