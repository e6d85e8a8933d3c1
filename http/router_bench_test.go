package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkRouterConsole is what mounting the web console costs the routes under /v1. Its
// routes come after /v1's: a route of the API matches before them; a miss (the gateway's
// pass-through is reached as one) tries them too before it is answered.
func BenchmarkRouterConsole(b *testing.B) {
	for _, c := range []struct {
		name    string
		console http.Handler
	}{{"without", nil}, {"with", http.NotFoundHandler()}} {
		h := NewRouter(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Health: &Health{Version: "bench", Started: time.Now()},
			Console: c.console})
		for _, path := range []string{"/v1/health", "/v1/no/such/route"} {
			b.Run(c.name+path, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				}
			})
		}
	}
}
