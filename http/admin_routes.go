package httpapi

import (
	"regexp"

	"github.com/gorilla/mux"
)

// Register adds every admin route under the /v1 router. Each area registers its own. The
// write routes call the handlers of a.Commands, which cmd assembles at start.
func (a *Admin) Register(r *mux.Router) {
	if a.Commands == nil {
		panic("httpapi: Admin.Commands is nil: assemble the write side with commands.NewApp")
	}
	r.Use(a.pastReads) // ?as_of= on lists
	a.registerRateLimitPolicies(r)
	a.registerAPIKeys(r)
	a.registerAuditLogs(r)
	a.registerWorkspaces(r)
	a.registerUsers(r)
	a.registerUsageLimitPolicies(r)
	a.registerGatewayResources(r)
	a.registerPromptResources(r)
	a.registerAnalytics(r)
	a.registerLogExports(r)
	a.registerPricing(r)
	a.registerInstances(r)
	a.registerCache(r)
	a.registerWebhooks(r)
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidPattern.MatchString(s) }
