package commands

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAESSealer(t *testing.T) {
	s, err := NewAESSealer(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	plain := []byte("sk-live-0123456789")
	sealed, err := s.Seal(plain, "provider-1#key")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(sealed, "v1:"), "the output names its format")
	assert.NotContains(t, sealed, string(plain))

	back, err := s.Open(sealed, "provider-1#key")
	require.NoError(t, err)
	assert.Equal(t, plain, back, "round trip")

	again, err := s.Seal(plain, "provider-1#key")
	require.NoError(t, err)
	assert.NotEqual(t, sealed, again, "a fresh nonce every time")

	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	require.NoError(t, err)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return "v1:" + base64.StdEncoding.EncodeToString(b)
	}
	other, err := NewAESSealer(bytes.Repeat([]byte{8}, 32))
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		sealer Sealer
		sealed string
		aad    string
	}{
		{"another resource", s, sealed, "provider-2#key"},
		{"another field", s, sealed, "provider-1#configurations.custom_headers"},
		{"another key", other, sealed, "provider-1#key"},
		{"a flipped nonce bit", s, flip(0), "provider-1#key"},
		{"a flipped ciphertext bit", s, flip(len(raw) / 2), "provider-1#key"},
		{"a flipped tag bit", s, flip(len(raw) - 1), "provider-1#key"},
		{"truncated", s, "v1:" + base64.StdEncoding.EncodeToString(raw[:20]), "provider-1#key"},
		{"no version", s, strings.TrimPrefix(sealed, "v1:"), "provider-1#key"},
		{"another version", s, "v2:" + strings.TrimPrefix(sealed, "v1:"), "provider-1#key"},
		{"not base64", s, "v1:!!!", "provider-1#key"},
		{"empty", s, "", "provider-1#key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.sealer.Open(c.sealed, c.aad)
			assert.ErrorIs(t, err, ErrSealedCorrupt)
			assert.Nil(t, out)
		})
	}
}

func TestSealerKeys(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		_, err := NewAESSealer(make([]byte, n))
		assert.Error(t, err, "a %d-byte key", n)
	}
	_, err := NewAESSealer(make([]byte, 32))
	assert.NoError(t, err)

	_, err = NewSealerFromSecret(make([]byte, 31))
	assert.Error(t, err, "a server secret under 32 bytes")
	secret := []byte("a-server-secret-of-at-least-32-bytes")
	a, err := NewSealerFromSecret(secret)
	require.NoError(t, err)
	b, err := NewSealerFromSecret(secret)
	require.NoError(t, err)
	sealed, err := a.Seal([]byte("k"), "x")
	require.NoError(t, err)
	plain, err := b.Open(sealed, "x")
	require.NoError(t, err, "the admin API and the gateway derive the same key from the secret")
	assert.Equal(t, []byte("k"), plain)
	c, err := NewSealerFromSecret([]byte("another-server-secret-of-32-bytes!!"))
	require.NoError(t, err)
	_, err = c.Open(sealed, "x")
	assert.ErrorIs(t, err, ErrSealedCorrupt)
	direct, err := NewAESSealer(secret[:32])
	require.NoError(t, err)
	_, err = direct.Open(sealed, "x")
	assert.ErrorIs(t, err, ErrSealedCorrupt, "the secret is stretched, not used as the key")
}
