package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// An idempotency key names one request. The first request's events carry its fingerprint in
// their metadata; a retry with the same key and fingerprint replays that request's result,
// and one with another method, path, query or body is refused (ErrKeyReused) before it
// writes anything.

// Metadata keys under Extra that carry a request's idempotency key and fingerprint.
const (
	MetaIdempotencyKey         = "idempotency_key"
	MetaIdempotencyFingerprint = "idempotency_fingerprint"
)

// Fingerprint is the SHA-256, in hex, of a request's method, path, query (sorted) and body in
// canonical form: a JSON body re-encoded with sorted keys and no insignificant space, any
// other body as sent. Two requests that mean the same thing have the same fingerprint.
func Fingerprint(method, path string, query url.Values, body []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(method), []byte(path), []byte(query.Encode()), canonicalBody(body)} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalBody re-encodes a JSON value with its object keys sorted; numbers keep their
// literal. Anything that is not exactly one JSON value is taken as it is.
func canonicalBody(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// ErrKeyReused refuses a request whose idempotency key an earlier request of the same actor
// used, for firstMethod firstPath, with another fingerprint. It names the first request by
// its method and path, never its body.
func ErrKeyReused(key, firstMethod, firstPath, method, path string) *domain.Error {
	first := firstMethod + " " + firstPath
	if first == " " {
		first = "another request"
	}
	what := "with a different body or query"
	if firstMethod != method || firstPath != path {
		what = "not for " + method + " " + path
	}
	return &domain.Error{Code: domain.CodeUnprocessable, Param: "Idempotency-Key", Detail: "idempotency_key_reused",
		Message: "the Idempotency-Key " + quote(key) + " was first used for " + first + ", " + what +
			"; nothing was written: send a new key for a new request"}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sameRequest checks a retry against the first request's metadata: events written before
// fingerprints were recorded, and requests without one (workers), are taken as the same.
func sameRequest(r Request, first eventstore.Metadata) error {
	stored := first.Extra[MetaIdempotencyFingerprint]
	if stored == "" || r.Fingerprint == "" || stored == r.Fingerprint {
		return nil
	}
	return ErrKeyReused(r.IdempotencyKey, first.Extra["method"], first.Extra["path"], r.Method, r.Path)
}
