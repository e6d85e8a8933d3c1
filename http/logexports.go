package httpapi

import "github.com/gorilla/mux"

// registerLogExports adds the log export routes (issue 6, in progress).
func (a *Admin) registerLogExports(r *mux.Router) {}
