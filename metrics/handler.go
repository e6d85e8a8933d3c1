package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the registry in Prometheus' exposition formats. With a token, a scrape must
// carry it as Authorization: Bearer <token>; any other is answered 401 in the API's error
// shape. A collector that fails (the projections' lag, when its store does not answer) is
// logged and left out; the scrape serves the rest.
func (m *Metrics) Handler(token string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	h := promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
		// A scrape reads the projections' checkpoints and the event store: a few at once at
		// most, the others answered 503 rather than queued.
		MaxRequestsInFlight: 4,
	}))
	if token == "" {
		return h
	}
	// Compared as digests, in constant time, so that neither the token's bytes nor its
	// length leak through timing.
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"/metrics needs Authorization: Bearer <token> with the token of CAUSEWAY_METRICS_TOKEN","type":"authentication_error","param":"Authorization","code":"unauthorized"}}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}
