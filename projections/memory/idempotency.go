package memory

import "github.com/causeway/causeway/eventstore"

// IdempotentRequest is the first request an actor made with an idempotency key: what it
// asked (method, path and fingerprint, never its body), from its events' metadata.
type IdempotentRequest struct {
	Method      string
	Path        string
	Fingerprint string
}

// idempotency metadata keys, as commands writes them (commands.MetaIdempotencyKey and
// commands.MetaIdempotencyFingerprint; projections does not import commands).
const (
	metaIdempotencyKey         = "idempotency_key"
	metaIdempotencyFingerprint = "idempotency_fingerprint"
)

// IdempotentRequest returns the first request actorID made with key, across every stream, so
// that a key reused for another resource is refused before it writes. Only requests whose
// events carry a fingerprint are indexed; the in-memory model alone keeps this index (every
// process has one: the routing tables).
func (m *Model) IdempotentRequest(actorID, key string) (IdempotentRequest, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.idempotency[actorID+"\x00"+key]
	return r, ok
}

// indexIdempotency records the first request of an idempotency key; the caller holds the lock.
func (m *Model) indexIdempotency(md eventstore.Metadata) {
	key, fp := md.Extra[metaIdempotencyKey], md.Extra[metaIdempotencyFingerprint]
	if key == "" || fp == "" {
		return
	}
	k := md.ActorID + "\x00" + key
	if _, seen := m.idempotency[k]; seen {
		return
	}
	if m.idempotency == nil {
		m.idempotency = map[string]IdempotentRequest{}
	}
	m.idempotency[k] = IdempotentRequest{Method: md.Extra["method"], Path: md.Extra["path"], Fingerprint: fp}
}
