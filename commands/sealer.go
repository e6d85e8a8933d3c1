package commands

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/causeway/causeway/domain"
)

// Sealer encrypts the secrets of integrations and providers before they enter an event, and
// decrypts them where they are used (the gateway, at routing time). aad binds a ciphertext to
// where it belongs (domain.CredentialAAD: the resource's stream and the field), so a sealed
// value copied to another resource or field does not open.
type Sealer interface {
	Seal(plaintext []byte, aad string) (string, error)
	Open(sealed, aad string) ([]byte, error)
}

// sealedVersion prefixes every sealed value: the format (AES-256-GCM, 12-byte random nonce,
// then ciphertext and tag, in standard base64), so that a later format can be told apart.
const sealedVersion = "v1:"

// ErrSealedCorrupt is the answer of Open to anything that does not open: a wrong key, a wrong
// aad, a tampered or truncated value. It says no more, on purpose.
var ErrSealedCorrupt = errors.New("commands: sealed value does not open")

type aesSealer struct{ aead cipher.AEAD }

// NewAESSealer returns a Sealer under a 32-byte key (AES-256-GCM).
func NewAESSealer(key []byte) (Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("commands: a sealing key must be 32 bytes (got %d)", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("commands: sealing key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("commands: sealing key: %w", err)
	}
	return aesSealer{aead}, nil
}

// sealingKeyInfo names what the server secret is stretched into, so the sealing key differs
// from every other key derived from the same secret.
const sealingKeyInfo = "causeway/credentials/aes-256-gcm/v1"

// NewSealerFromSecret returns the Sealer keyed by the server secret (CAUSEWAY_SECRET_KEY, or
// the one generated into the data directory): its key is HKDF-SHA-256 of the secret. The
// admin API seals with it and the gateway opens with it.
func NewSealerFromSecret(secret []byte) (Sealer, error) {
	if len(secret) < 32 {
		return nil, fmt.Errorf("commands: the server secret must be at least 32 bytes (got %d)", len(secret))
	}
	key, err := hkdf.Key(sha256.New, secret, nil, sealingKeyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("commands: derive the sealing key: %w", err)
	}
	return NewAESSealer(key)
}

func (s aesSealer) Seal(plaintext []byte, aad string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("commands: nonce: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, plaintext, []byte(aad))
	return sealedVersion + base64.StdEncoding.EncodeToString(out), nil
}

func (s aesSealer) Open(sealed, aad string) ([]byte, error) {
	body, ok := strings.CutPrefix(sealed, sealedVersion)
	if !ok {
		return nil, ErrSealedCorrupt
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return nil, ErrSealedCorrupt
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(aad))
	if err != nil {
		return nil, ErrSealedCorrupt
	}
	return plain, nil
}

// sealFor is the domain's SealFunc for the resource of stream: each secret is bound to the
// stream and its field.
func sealFor(s Sealer, stream string) domain.SealFunc {
	return func(plaintext []byte, field string) (string, error) {
		return s.Seal(plaintext, domain.CredentialAAD(stream, field))
	}
}
