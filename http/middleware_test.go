package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The request's trace id: the client's x-gateway-trace-id, else its traceparent's trace id,
// else a new one; the handler sees the one the answer carries.
func TestWithTraceIDHonoursTraceparent(t *testing.T) {
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string // empty: a new id of 32 hex digits
	}{
		{"the client's id", map[string]string{TraceIDHeader: "checkout-42", "traceparent": parent}, "checkout-42"},
		{"the traceparent's trace", map[string]string{"traceparent": parent}, "0af7651916cd43dd8448eb211c80319c"},
		{"an id too long gives way to the traceparent", map[string]string{TraceIDHeader: strings.Repeat("x", maxTraceID+1), "traceparent": parent},
			"0af7651916cd43dd8448eb211c80319c"},
		{"a malformed traceparent", map[string]string{"traceparent": "00-nothex-b7ad6b7169203331-01"}, ""},
		{"an all-zero trace", map[string]string{"traceparent": "00-00000000000000000000000000000000-b7ad6b7169203331-01"}, ""},
		{"nothing", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen string
			h := withTraceID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = TraceID(r.Context()) }))
			req := httptest.NewRequest(http.MethodGet, "/v1/health", nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := rec.Header().Get(TraceIDHeader)
			assert.Equal(t, got, seen)
			if tc.want != "" {
				assert.Equal(t, tc.want, got)
				return
			}
			assert.Len(t, got, 32)
			assert.NotEqual(t, "00000000000000000000000000000000", got)
		})
	}
}
