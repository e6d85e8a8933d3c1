package httpapi

import "github.com/gorilla/mux"

func (a *Admin) registerWorkspaces(r *mux.Router) {}
