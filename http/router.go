// Package httpapi is Causeway's HTTP surface under the base path /v1: the admin routes and
// the gateway's. It turns requests into calls on the application and errors into answers, in
// one place (WriteError). A handler file holds its routes and views: every write route goes
// through one adapter (write.go: the path's target, the body, the command, the handler of
// Admin.Commands, read-your-writes, the answer), and route (admin.go) authenticates, records
// refusals and honours Idempotency-Key around it. Admin reads go through queries/ (read
// authorisation and reads of the past included) and render views; a read model that cannot
// answer is a 503 (read_model_unavailable), never a 404.
//
// It never builds the application: command handlers come assembled (commands.App, built by
// cmd/ with commands.NewApp), and what else it needs is declared here as small interfaces and
// wired by cmd/. It must never import a database driver or an event store backend
// (eventstore/sqlite, postgres, esdb, open), and never calls a commands.New*Handler.
//
// The directory is http/ as the design card names it; the package is httpapi so that its
// files can use net/http without renaming it.
package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"
)

// BasePath is where every route lives.
const BasePath = "/v1"

// Deps is what the router needs from the rest of the application.
type Deps struct {
	Logger  *slog.Logger
	Health  *Health
	Version string
	Admin   *Admin   // nil: no admin API (tests of the bare router)
	Gateway *Gateway // nil: no data plane
	// CORSOrigins are the browser origins allowed to call /v1 (CAUSEWAY_CORS_ORIGINS); "*"
	// allows any. Empty: CORS is off, and no answer carries its headers.
	CORSOrigins []string
	// Metrics, when set, is served at GET /metrics, outside the base path as Prometheus
	// expects; nil when the metrics are off or served on their own address.
	Metrics http.Handler
	// Console serves the web console at /console/ and / (package console); nil: no console.
	// Its routes come after /v1's, so a request of the API never reaches it.
	Console http.Handler
}

// NewRouter builds the handler for every route under /v1. Unknown paths and methods answer
// in the error shape, never with a bare text page.
func NewRouter(d Deps) http.Handler {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	root := mux.NewRouter()
	miss := &misses{log: log, root: root}
	if d.Metrics != nil {
		root.Handle("/metrics", d.Metrics).Methods(http.MethodGet, http.MethodHead)
	}
	v1 := root.PathPrefix(BasePath).Subrouter()
	v1.Handle("/health", d.Health).Methods(http.MethodGet, http.MethodHead)
	if d.Gateway != nil {
		d.Gateway.Register(v1)
		miss.passThrough = d.Gateway.PassThrough()
	}
	if d.Admin != nil {
		d.Admin.Register(v1)
		v1.PathPrefix("/admin").Handler(http.StripPrefix(aliasPrefix, miss.alias(v1)))
	}
	if d.Console != nil {
		read := []string{http.MethodGet, http.MethodHead} // other methods: 405 in the error shape
		root.Path("/").Methods(read...).Handler(d.Console)
		root.Path("/console").Methods(read...).Handler(d.Console)
		root.PathPrefix("/console/").Methods(read...).Handler(d.Console)
	}
	miss.collect()
	root.NotFoundHandler = miss
	root.MethodNotAllowedHandler = http.HandlerFunc(miss.notAllowed)
	var h http.Handler = root
	if len(d.CORSOrigins) > 0 {
		h = withCORS(d.CORSOrigins, h)
	}
	return withTraceID(withBodyDrain(withRecover(log, h)))
}
