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
// The body must be a JSON object; with no overrides it is returned as is.
func WithOverrides(body []byte, overrides map[string]any) ([]byte, error) {
	if len(overrides) == 0 {
		return body, nil
	}
	values := make(map[string][]byte, len(overrides))
	grow := 0
	for key, val := range overrides {
		b, err := marshal(val)
		if err != nil {
			return nil, &domain.Error{Code: domain.CodeInvalid, Param: "override_params." + key,
				Message: "override_params." + key + " cannot be encoded as JSON", Err: err}
		}
		values[key] = b
		grow += len(key) + len(b) + 4
	}

	if kindOf(body) != kindObject || !json.Valid(body) {
		return nil, domain.Invalid("", "the request body must be a JSON object")
	}
	ms := members(body)
	// Appended members go after the last member, or just inside the opening brace.
	insertAt := bytes.IndexByte(body, '{') + 1
	if len(ms) > 0 {
		last := ms[len(ms)-1]
		insertAt = last.at + len(last.val)
	}
	seen := make(map[string]bool, len(values))
	out := make([]byte, 0, len(body)+grow)
	last := 0
	for _, m := range ms {
		val, ok := values[string(m.key)]
		if !ok {
			continue
		}
		seen[string(m.key)] = true
		out = append(out, body[last:m.at]...)
		out = append(out, val...)
		last = m.at + len(m.val)
	}
	out = append(out, body[last:insertAt]...)
	hasMembers := len(ms) > 0
	for _, key := range slices.Sorted(maps.Keys(values)) {
		if seen[key] {
			continue
		}
		if hasMembers {
			out = append(out, ',')
		}
		hasMembers = true
		k, err := marshal(key)
		if err != nil {
			return nil, err
		}
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, values[key]...)
	}
	return append(out, body[insertAt:]...), nil
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
