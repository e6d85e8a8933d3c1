package httpapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections/memory"
)

// IdempotencyHeader names a write so that a retry of it writes nothing twice.
const IdempotencyHeader = "Idempotency-Key"

// IdempotencyIndex finds the first request an actor made with an idempotency key, on any
// resource (the in-memory model, memory.Model, keeps it).
type IdempotencyIndex interface {
	IdempotentRequest(actorID, key string) (memory.IdempotentRequest, bool)
}

var _ IdempotencyIndex = (*memory.Model)(nil)

// idempotent fingerprints a write that carries an idempotency key and refuses it, before it
// can write anything, when the actor's earlier request with that key asked something else.
// The body is read here (within the admin bound) and put back for the handler.
func (a *Admin) idempotent(r *http.Request, req *commands.Request) error {
	if req.IdempotencyKey == "" {
		return nil
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
		if err != nil {
			return domain.Invalid("", "the request body could not be read")
		}
		if len(body) > maxAdminBody {
			return tooLargeAdminBody()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	req.Fingerprint = commands.Fingerprint(r.Method, r.URL.Path, r.URL.Query(), body)
	if a.Idempotency == nil {
		return nil
	}
	first, ok := a.Idempotency.IdempotentRequest(req.Actor.ID, req.IdempotencyKey)
	if !ok || first.Fingerprint == req.Fingerprint {
		return nil
	}
	return commands.ErrKeyReused(req.IdempotencyKey, first.Method, first.Path, r.Method, r.URL.Path)
}
