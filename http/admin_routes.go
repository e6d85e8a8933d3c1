package httpapi

import (
	"regexp"

	"github.com/gorilla/mux"
)

// Register adds every admin route under the /v1 router. Each area registers its own.
func (a *Admin) Register(r *mux.Router) {
	r.Use(a.pastReads) // ?as_of= on lists
	a.registerRateLimitPolicies(r)
	a.registerAPIKeys(r)
	a.registerAuditLogs(r)
	a.registerWorkspaces(r)
	a.registerUsers(r)
	a.registerUsageLimitPolicies(r)
	a.registerGatewayResources(r)
	a.registerAnalytics(r)
	a.registerLogExports(r)
	a.registerPricing(r)
}

// must unwraps a handler constructor at start-up: a missing dependency is a wiring bug.
func must[H any](h H, err error) H {
	if err != nil {
		panic(err)
	}
	return h
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidPattern.MatchString(s) }
