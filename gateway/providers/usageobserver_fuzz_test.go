package providers

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzUsageObserver: however an answer is cut into writes, the observer finds the same usage and
// the same delivered text; it never panics and never fails a write. For a JSON object whose
// only usage is its top-level usage, it finds what encoding/json reads there. Its seed corpus
// is in testdata/fuzz.
func FuzzUsageObserver(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, sse bool, cut uint16) {
		contentType := "application/json"
		if sse {
			contentType = "text/event-stream"
		}
		observe := func(pieces ...[]byte) *UsageObserver {
			o := NewUsageObserver(contentType)
			for _, p := range pieces {
				n, err := o.Write(p)
				require.NoError(t, err)
				require.Equal(t, len(p), n)
			}
			return o
		}
		whole := observe(body)
		at := int(cut) % (len(body) + 1)
		split := observe(body[:at], body[at:])
		var bytewise [][]byte
		for i := range body {
			bytewise = append(bytewise, body[i:i+1])
		}
		one := observe(bytewise...)
		for _, o := range []*UsageObserver{split, one} {
			wu, wf := whole.Usage()
			u, found := o.Usage()
			require.Equal(t, wf, found)
			require.Equal(t, wu, u)
			require.Equal(t, whole.DeliveredText(), o.DeliveredText())
		}
		if !sse {
			require.Zero(t, whole.DeliveredText(), "only streams deliver text")
			want, ok := topLevelUsage(body)
			if ok {
				u, found := whole.Usage()
				wu, wf := want.Usage()
				require.Equal(t, wf, found)
				require.Equal(t, wu, u)
			}
		}
	})
}

// topLevelUsage reads a JSON object's usage with encoding/json, when that is its only usage
// (no other usage path, no repeated key at the top).
func topLevelUsage(body []byte) (*UsageObserver, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	seen := map[string]bool{}
	var usage json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key := k.(string)
		if seen[key] {
			return nil, false
		}
		seen[key] = true
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		switch key {
		case "usage":
			usage = v
		case "response", "message", "usageMetadata", "x_groq":
			return nil, false
		}
	}
	ref := NewUsageObserver("application/json")
	if len(usage) > 0 && usage[0] == '{' && len(usage) <= maxUsageObject {
		ref.record(usage)
	}
	return ref, true
}
