package httpapi

import "github.com/gorilla/mux"

func (a *Admin) registerUsageLimitPolicies(r *mux.Router) {}
