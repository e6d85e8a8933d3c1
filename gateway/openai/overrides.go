package openai

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/causeway/causeway/domain"
)

// WithOverrides returns body with the top-level members named in overrides (a config's
// override_params) set to their values. Only the overridden values change: every other byte of
// the body, key order and whitespace included, stays as the client sent it, so provider-specific
// fields reach the provider untouched. A key the body repeats is overridden at every occurrence,
// so that no parser, whichever occurrence it keeps, sees the client's value. Keys the body lacks
// are appended after its last member, in sorted order. Values replace whole members: an object
// override is not merged into the client's object.
//
// The body must be a JSON object; with no overrides it is returned as is. A parsed request
// overrides itself with its own WithOverrides method, which also updates its fields.
func WithOverrides(body []byte, overrides map[string]any) ([]byte, error) {
	if len(overrides) == 0 {
		return body, nil
	}
	values, err := encodeOverrides(overrides)
	if err != nil {
		return nil, err
	}
	if kindOf(body) != kindObject || !json.Valid(body) {
		return nil, domain.Invalid("", "the request body must be a JSON object")
	}
	out, _ := splice(body, members(body), values, false)
	return out, nil
}

// encodeOverrides encodes each override's value as JSON.
func encodeOverrides(overrides map[string]any) (map[string][]byte, error) {
	values := make(map[string][]byte, len(overrides))
	for key, val := range overrides {
		b, err := marshal(val)
		if err != nil {
			return nil, &domain.Error{Code: domain.CodeInvalid, Param: "override_params." + key,
				Message: "override_params." + key + " cannot be encoded as JSON", Err: err}
		}
		values[key] = b
	}
	return values, nil
}

// splice builds the overridden body from body, split into ms, and, when split is set, its
// members, each value a slice of the new body, as members() would split it.
func splice(body []byte, ms []member, values map[string][]byte, split bool) ([]byte, []member) {
	grow := 0
	for key, b := range values {
		grow += len(key) + len(b) + 4
	}
	// Appended members go after the last member, or just inside the opening brace.
	insertAt := bytes.IndexByte(body, '{') + 1
	if len(ms) > 0 {
		last := ms[len(ms)-1]
		insertAt = last.at + len(last.val)
	}
	// Values are placed by offset, and sliced once out stops growing.
	type span struct{ at, n int }
	var (
		spans      []span
		outMembers []member
	)
	if split {
		spans = make([]span, 0, len(ms)+len(values))
		outMembers = make([]member, 0, len(ms)+len(values))
	}
	out := make([]byte, 0, len(body)+grow)
	seen := make(map[string]bool, len(values))
	prev := 0
	for _, m := range ms {
		val, ok := values[string(m.key)]
		if !ok {
			val = m.val
		} else {
			seen[string(m.key)] = true
		}
		out = append(out, body[prev:m.at]...)
		if split {
			spans = append(spans, span{len(out), len(val)})
			outMembers = append(outMembers, member{key: m.key})
		}
		out = append(out, val...)
		prev = m.at + len(m.val)
	}
	out = append(out, body[prev:insertAt]...)
	hasMembers := len(ms) > 0
	for _, key := range slices.Sorted(maps.Keys(values)) {
		if seen[key] {
			continue
		}
		if hasMembers {
			out = append(out, ',')
		}
		hasMembers = true
		k, _ := marshal(key) // a string always encodes
		out = append(out, k...)
		out = append(out, ':')
		if split {
			spans = append(spans, span{len(out), len(values[key])})
			outMembers = append(outMembers, member{key: []byte(key)})
		}
		out = append(out, values[key]...)
	}
	out = append(out, body[insertAt:]...)
	for i, s := range spans {
		outMembers[i].val, outMembers[i].at = out[s.at:s.at+s.n], s.at
	}
	return out, outMembers
}

// marshal encodes v without escaping <, > and &, which a provider would read back the same but
// which would change bytes for no reason.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
