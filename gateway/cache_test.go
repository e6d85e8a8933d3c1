package gateway

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
)

func TestDecodeEmbedding(t *testing.T) {
	want := []float32{0.5, -0.25, 1}
	raw := make([]byte, 12)
	for i, f := range want {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	enc := base64.StdEncoding.EncodeToString(raw)
	for name, body := range map[string]string{
		"numbers":            `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25,1]}]}`,
		"base64":             `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"` + enc + `"}]}`,
		"base64, spaced out": `{"data": [{"embedding": "` + enc + `"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeEmbedding([]byte(body))
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	for name, body := range map[string]string{
		"no data":         `{"data":[]}`,
		"not JSON":        `embedding`,
		"bad base64":      `{"data":[{"embedding":"!!!"}]}`,
		"not whole words": `{"data":[{"embedding":"AAA="}]}`,
		"empty vector":    `{"data":[{"embedding":[]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeEmbedding([]byte(body))
			assert.Error(t, err)
		})
	}
}

func TestDigestSeparatesParts(t *testing.T) {
	assert.NotEqual(t, digest("ab", "c"), digest("a", "bc"), "parts are length-prefixed")
	assert.Equal(t, digest("a", "b"), digest("a", "b"))
	assert.Len(t, digest("x"), 64)
}

func TestCacheHeaders(t *testing.T) {
	h := http.Header{}
	ns, refresh, err := cacheHeaders(h)
	require.NoError(t, err)
	assert.Equal(t, "", ns)
	assert.False(t, refresh)

	h.Set(HeaderCacheNamespace, "team-a")
	h.Set(HeaderCacheForceRefresh, "TRUE")
	ns, refresh, err = cacheHeaders(h)
	require.NoError(t, err)
	assert.Equal(t, "team-a", ns)
	assert.True(t, refresh)

	h.Set("cache_force_refresh", "false") // an SDK spelling is read too, after the header
	h.Del(HeaderCacheForceRefresh)
	_, refresh, err = cacheHeaders(h)
	require.NoError(t, err)
	assert.False(t, refresh)

	for name, hdr := range map[string]http.Header{
		HeaderCacheForceRefresh: {http.CanonicalHeaderKey(HeaderCacheForceRefresh): {"yes"}},
		HeaderCacheNamespace:    {http.CanonicalHeaderKey(HeaderCacheNamespace): {string(make([]byte, 129))}},
	} {
		_, _, err := cacheHeaders(hdr)
		var appErr *domain.Error
		require.ErrorAs(t, err, &appErr, name)
		assert.Equal(t, name, appErr.Param)
	}
}

func TestCacheableAndSemanticEligible(t *testing.T) {
	chat := func(body string) providers.Call {
		c, err := openai.ParseChat([]byte(body))
		require.NoError(t, err)
		return providers.Call{Endpoint: providers.EndpointChat, Chat: c, Body: []byte(body)}
	}
	plain := &domain.Cache{Mode: domain.CacheSemantic}
	opted := &domain.Cache{Mode: domain.CacheSemantic, Sampled: true, SemanticToolsAndTurns: true}
	one := chat(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	hot := chat(`{"model":"m","temperature":0.7,"messages":[{"role":"user","content":"hi"}]}`)
	cold := chat(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]}`)
	many := chat(`{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`)
	turns := chat(`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"and?"}]}`)
	tools := chat(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`)

	assert.True(t, cacheable(plain, one))
	assert.True(t, cacheable(plain, cold), "temperature 0 answers the same")
	assert.False(t, cacheable(plain, hot), "a temperature above 0 varies")
	assert.False(t, cacheable(plain, many), "several choices vary")
	assert.True(t, cacheable(opted, hot))
	assert.True(t, cacheable(opted, many))
	assert.False(t, cacheable(plain, providers.Call{Endpoint: providers.EndpointPassThrough}), "pass-through is not cached")

	assert.True(t, semanticEligible(plain, one))
	assert.False(t, semanticEligible(plain, turns), "several user turns are exact-only")
	assert.False(t, semanticEligible(plain, tools), "tools are exact-only")
	assert.True(t, semanticEligible(opted, turns))
	assert.True(t, semanticEligible(opted, tools))
	assert.Equal(t, "and?", promptText(turns))
}
