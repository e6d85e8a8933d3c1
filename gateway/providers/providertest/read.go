package providertest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The helpers below read what an adapter answered, for every family's tests: the chunks of a
// stream, the fields of an error body, a value deep in decoded JSON. They take the standard
// library's types (a stream is anything with Next), so that this package needs nothing of the
// adapters it serves.

// Served is adapters[name] (a default set of adapters), failing the test when there is none.
func Served[P any](t testing.TB, adapters map[string]P, name string) P {
	t.Helper()
	p, ok := adapters[name]
	require.True(t, ok, "Default() serves %s", name)
	return p
}

// Rewrite sends every request to a stand-in and remembers the URL it was meant for, so that a
// test can check a provider's default base URL without leaving 127.0.0.1.
type Rewrite struct {
	To   *url.URL
	mu   sync.Mutex
	urls []string
}

// RoundTrip records r's URL and sends r to To's scheme and host.
func (rw *Rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	rw.mu.Lock()
	rw.urls = append(rw.urls, r.URL.String())
	rw.mu.Unlock()
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host = rw.To.Scheme, rw.To.Host
	return http.DefaultTransport.RoundTrip(out)
}

// Last is the URL the last request was meant for.
func (rw *Rewrite) Last() string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.urls[len(rw.urls)-1]
}

// ErrorFields decodes an error body, checking that it has OpenAI's four fields, and returns
// its error object.
func ErrorFields(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var e struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	for _, field := range []string{"message", "type", "param", "code"} {
		assert.Contains(t, e.Error, field, "OpenAI's error shape has %s", field)
	}
	return e.Error
}

// NoSecret fails when err's message shows secret, or the body (read by body) of an error of
// type E in its chain does.
func NoSecret[E error](t testing.TB, err error, secret string, body func(E) []byte) {
	t.Helper()
	if err != nil {
		assert.NotContains(t, err.Error(), secret, "an error must never show the credential")
		var e E
		if errors.As(err, &e) {
			assert.NotContains(t, string(body(e)), secret, "an error body must never show the credential")
		}
	}
}

// Dig walks a decoded JSON value by keys and indexes; nil when the path does not exist.
func Dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// Decode decodes a JSON object.
func Decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	return m
}

// Drain reads a stream (an adapter's: Next until an error) to its end: the decoded chunks, and
// the error that ended it (nil for io.EOF).
func Drain(t testing.TB, st interface{ Next() ([]byte, error) }) ([]map[string]any, error) {
	t.Helper()
	var chunks []map[string]any
	for {
		b, err := st.Next()
		if errors.Is(err, io.EOF) {
			return chunks, nil
		}
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, Decode(t, b))
	}
}

// Content joins the chunks' first choice's delta.content.
func Content(chunks []map[string]any) string {
	var b strings.Builder
	for _, c := range chunks {
		if s, ok := Dig(c, "choices", 0, "delta", "content").(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}
