package httpapi

import (
	"net/http"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
)

// The write routes' plumbing, once. Every POST, PUT and DELETE of the admin API takes the same
// steps: find what the path names, read the body, make the command, handle it, let the answer
// wait until the read model holds the command's events, and answer. A route names only what
// differs: where it acts, its body, its command, its handler and its answer.

// outcome is a command's answer: a commands.Result, or one that embeds it.
type outcome interface {
	AsResult() commands.Result
}

// noBody is the body of a write that reads none (a delete, a start, a restore).
type noBody struct{}

// bodyReader is a body that reads itself, where decode's strict JSON object is not the whole
// story: absent fields told from null ones, or a body that may be left out.
type bodyReader interface {
	readBody(r *http.Request) error
}

// optionalBody is a JSON body that may be left out (no content: the zero V).
type optionalBody[V any] struct{ V V }

func (b *optionalBody[V]) readBody(r *http.Request) error {
	if r.ContentLength == 0 {
		return nil
	}
	return decode(r, &b.V)
}

// readBody reads the request's body into b as its type says: not at all (noBody), by itself
// (bodyReader), or as one strict JSON value (decode).
func readBody[B any](r *http.Request, b *B) error {
	switch v := any(b).(type) {
	case *noBody:
		return nil
	case bodyReader:
		return v.readBody(r)
	}
	return decode(r, b)
}

// nowhere is where a write whose path names no resource acts (a create).
func nowhere(*http.Request) (struct{}, error) { return struct{}{}, nil }

// ownOrganisationID refuses a body's organisation_id that is not the actor's organisation (it
// may be left out).
func ownOrganisationID(r *http.Request, given string) error {
	if given != "" && given != actorFrom(r.Context()).OrganisationID {
		return domain.Invalid("organisation_id", "organisation_id must be your own organisation's id")
	}
	return nil
}

// scoped is a lookup of what a path names, with the scope a write needs of it.
func scoped[T any](find func(r *http.Request, scope string) (T, error), scope string) func(*http.Request) (T, error) {
	return func(r *http.Request) (T, error) { return find(r, scope) }
}

// write adapts a command handler to a write route. In order:
//   - at finds what the path names, so that a resource out of reach is refused before the
//     body is read;
//   - the body is read into B (readBody);
//   - command makes the command of the request, refusing what only the HTTP shape forbids;
//   - h handles it;
//   - written lets the answer wait until the read model has the command's events, and says
//     their position (and a replayed Idempotency-Key) in headers;
//   - answer makes the answer, reading what was written.
//
// The first error ends the request; route answers it (status, error body, a refusal recorded
// in the audit log), as it does the idempotency check before any step runs.
func write[T, B, C any, R outcome](a *Admin, h commands.Handler[C, R],
	at func(r *http.Request) (T, error),
	command func(r *http.Request, at T, b B) (C, error),
	answer func(r *http.Request, at T, c C, res R) (int, any, error),
) handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		target, err := at(r)
		if err != nil {
			return 0, nil, err
		}
		var b B
		if err := readBody(r, &b); err != nil {
			return 0, nil, err
		}
		c, err := command(r, target, b)
		if err != nil {
			return 0, nil, err
		}
		res, err := h.Handle(r.Context(), c)
		if err := a.written(w, r, res.AsResult(), err); err != nil {
			return 0, nil, err
		}
		return answer(r, target, c, res)
	}
}

// pathWrite is a write that its path says all of: no body, the command made from what the path
// names, and an answer from it too (an archive, a delete, a start).
func pathWrite[T, C any, R outcome](a *Admin, h commands.Handler[C, R], at func(r *http.Request) (T, error),
	command func(at T) C, answer func(at T) any,
) handler {
	return write(a, h, at,
		func(_ *http.Request, t T, _ noBody) (C, error) { return command(t), nil },
		func(_ *http.Request, t T, _ C, _ R) (int, any, error) { return http.StatusOK, answer(t), nil })
}
