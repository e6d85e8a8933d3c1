package httpapi

import "github.com/gorilla/mux"

// registerAnalytics adds the analytics and logs routes (issue 6, in progress).
func (a *Admin) registerAnalytics(r *mux.Router) {}
