// Package httpapi is Causeway's HTTP surface under the base path /v1: the admin routes and
// the gateway's. It turns requests into calls on the application and errors into answers, in one place (WriteError). It does not import database drivers or event store
// backends: what it needs is declared here as small interfaces and wired by cmd/.
//
// The directory is http/ as the design card names it; the package is httpapi so that its
// files can use net/http without renaming it.
package httpapi

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/domain"
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
}

// NewRouter builds the handler for every route under /v1. Unknown paths and methods answer
// in the error shape, never with a bare text page.
func NewRouter(d Deps) http.Handler {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	root := mux.NewRouter()
	v1 := root.PathPrefix(BasePath).Subrouter()
	v1.Handle("/health", d.Health).Methods(http.MethodGet, http.MethodHead)
	if d.Gateway != nil {
		d.Gateway.Register(v1)
	}
	if d.Admin != nil {
		d.Admin.Register(v1)
		v1.PathPrefix("/admin").Handler(http.StripPrefix(BasePath+"/admin", aliasTo(v1)))
	}

	var passThrough http.Handler
	if d.Gateway != nil {
		passThrough = d.Gateway.PassThrough()
	}
	notAllowed := func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, log, domain.Errorf(domain.CodeNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path))
	}
	// mux v1.8.1 loses "wrong method" behind some later routes, so a miss is checked here:
	// if the path answers another method, the answer is 405, not 404.
	root.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			var match mux.RouteMatch
			if root.Match(probe, &match) && match.MatchErr == nil {
				notAllowed(w, r)
				return
			}
		}
		if d.Gateway != nil && strings.HasPrefix(r.URL.Path, BasePath+"/") {
			passThrough.ServeHTTP(w, r)
			return
		}
		WriteError(w, r, log, domain.Errorf(domain.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	root.MethodNotAllowedHandler = http.HandlerFunc(notAllowed)
	return withTraceID(withRecover(log, root))
}

// aliasTo serves the reference's /v1/admin/... paths with the specification's routes.
func aliasTo(v1 *mux.Router) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = BasePath + r.URL.Path
		v1.ServeHTTP(w, r2)
	})
}
