package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
)

// registerCache adds the answer cache's purge: DELETE /workspaces/{id}/cache?namespace=, by
// an organisation admin or the workspace's manager, recorded as the workspace's event
// WorkspaceCachePurged. A missing namespace is the default one (requests that send no
// x-gateway-cache-namespace).
func (a *Admin) registerCache(r *mux.Router) {
	on := func(h handler) http.Handler { return a.route("workspace_cache", h) }
	r.Handle("/workspaces/{id}/cache", on(write(a, a.Commands.PurgeCache, a.pathWorkspace,
		func(r *http.Request, ws domain.Workspace, _ noBody) (commands.PurgeCache, error) {
			q := r.URL.Query()
			if len(q["namespace"]) > 1 {
				return commands.PurgeCache{}, domain.Invalid("namespace", "namespace must be given at most once")
			}
			ns := q.Get("namespace")
			if err := domain.ValidateCacheNamespace("namespace", ns); err != nil {
				return commands.PurgeCache{}, err
			}
			return commands.PurgeCache{WorkspaceID: ws.ID, Namespace: ns}, nil
		},
		func(_ *http.Request, ws domain.Workspace, c commands.PurgeCache, res commands.PurgedCache) (int, any, error) {
			return http.StatusOK, cachePurgeAnswer{Object: "cache-purge", WorkspaceID: ws.ID, Namespace: c.Namespace,
				Deleted: res.Deleted}, nil
		}))).Methods(http.MethodDelete)
}

type cachePurgeAnswer struct {
	Object      string `json:"object"`
	WorkspaceID string `json:"workspace_id"`
	Namespace   string `json:"namespace"`
	Deleted     int64  `json:"deleted"`
}
