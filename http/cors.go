package httpapi

import (
	"net/http"
	"strings"

	"github.com/rs/cors"

	"github.com/causeway/causeway/gateway"
)

// corsMaxAge is how long, in seconds, a browser may keep a preflight's answer.
const corsMaxAge = 3600

// corsExposed are the answer headers a browser script may read: the trace id, what routed or
// refused a request, the rate-limit state, and whether a write was replayed.
var corsExposed = []string{
	TraceIDHeader, gateway.HeaderTarget, gateway.HeaderRetries, gateway.HeaderDecidedBy, PositionHeader,
	"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "Retry-After", "Idempotent-Replayed",
}

// withCORS lets browsers on origins call /v1 (origins "*" lets any): a preflight from an
// allowed origin is answered with the methods, the headers it asks for (Content-Type,
// Authorization, the x-gateway- headers, Idempotency-Key, or any other), and how long to
// keep the answer; answers to allowed origins name the headers scripts may read. A preflight
// from another origin gets no CORS headers, so the browser refuses the call. Paths outside
// /v1 are left alone.
func withCORS(origins []string, next http.Handler) http.Handler {
	c := cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		AllowedHeaders: []string{"*"},
		ExposedHeaders: corsExposed,
		MaxAge:         corsMaxAge,
	}).Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == BasePath || strings.HasPrefix(r.URL.Path, BasePath+"/") {
			c.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
