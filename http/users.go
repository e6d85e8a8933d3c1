package httpapi

import "github.com/gorilla/mux"

func (a *Admin) registerUsers(r *mux.Router) {}
