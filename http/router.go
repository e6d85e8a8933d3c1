// Package httpapi is Causeway's HTTP surface under the base path /v1: admin routes and, in
// later issues, the gateway's. It turns requests into calls on the application and errors
// into answers, in one place (WriteError). It does not import database drivers or event store
// backends: what it needs is declared here as small interfaces and wired by cmd/.
//
// The directory is http/ as the design card names it; the package is httpapi so that its
// files can use net/http without renaming it.
package httpapi

import (
	"log/slog"
	"net/http"

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

	root.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, log, domain.Errorf(domain.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	root.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, log, domain.Errorf(domain.CodeNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path))
	})
	return withTraceID(withRecover(log, root))
}
