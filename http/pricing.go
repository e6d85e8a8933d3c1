package httpapi

import "github.com/gorilla/mux"

// PricingReader answers model prices (issue 6, in progress).
type PricingReader interface{}

// registerPricing adds the model pricing routes (issue 6, in progress).
func (a *Admin) registerPricing(r *mux.Router) {}
