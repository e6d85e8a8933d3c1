package metrics

import (
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// Other is the value of a label that is past its bound: a model, provider or workspace
	// first seen after the first N, or a label set past the cap.
	Other = "other"
	// Unknown is the value of a label the record does not have (a request refused before its
	// key or its model was known).
	Unknown = "unknown"
	// MaxLabelLength bounds a label value, in bytes: longer values are cut at a character's
	// boundary.
	MaxLabelLength = 128
)

// normalize makes v a label value: Unknown when empty, valid UTF-8, at most MaxLabelLength
// bytes. same reports that v was already one, so that a caller may key a cache by v itself.
func normalize(v string) (label string, same bool) {
	if v == "" {
		return Unknown, false
	}
	if len(v) <= MaxLabelLength && utf8.ValidString(v) {
		return v, true
	}
	v = strings.ToValidUTF8(v, "\uFFFD")
	if len(v) > MaxLabelLength {
		cut := MaxLabelLength
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	return v, false
}

// bounded admits the first max distinct values of one label; every later one is Other.
// Admitted values stay admitted for the life of the process, so a series never changes its
// labels: the bound is what a scrape can ever see, not a window.
type bounded struct {
	max int

	mu   sync.RWMutex
	seen map[string]struct{}
}

func newBounded(max int) *bounded {
	return &bounded{max: max, seen: make(map[string]struct{}, min(max, 1024))}
}

// value is v's label: v when admitted (now or before), Other past the bound. v must be
// normalized already.
func (b *bounded) value(v string) (label string, admitted bool) {
	if v == Unknown || v == Other {
		return v, true
	}
	b.mu.RLock()
	_, ok := b.seen[v]
	full := len(b.seen) >= b.max
	b.mu.RUnlock()
	if ok {
		return v, true
	}
	if full {
		return Other, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v, true
	}
	if len(b.seen) >= b.max {
		return Other, false
	}
	// A copy: v may share memory with a record's much larger strings.
	b.seen[strings.Clone(v)] = struct{}{}
	return v, true
}

// len is how many values are admitted.
func (b *bounded) len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.seen)
}

// Operation names (gen_ai_operation_name) by the record's Endpoint: the GenAI conventions'
// names where they have one.
var operations = map[string]string{
	"chatComplete":  "chat",
	"complete":      "text_completion",
	"embed":         "embeddings",
	"rerank":        "rerank",
	"imageGenerate": "image_generation",
	"proxy":         "proxy",
}

func operation(endpoint string) string {
	if op, ok := operations[endpoint]; ok {
		return op
	}
	if endpoint == "" {
		return Unknown
	}
	return Other
}

// statusClasses are the values of status_class, by the status's hundreds.
var statusClasses = [...]string{Other, "1xx", "2xx", "3xx", "4xx", "5xx"}

func statusClass(code int) uint8 {
	if c := code / 100; c >= 1 && c <= 5 {
		return uint8(c)
	}
	return 0
}
