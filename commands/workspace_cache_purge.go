package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CachePurger deletes the answer cache's entries of a workspace's namespace (cache.Store).
type CachePurger interface {
	Purge(ctx context.Context, workspaceID, namespace string) (int64, error)
}

// PurgeCache deletes the cached answers of one of a workspace's cache namespaces ("" is the
// default one).
type PurgeCache struct {
	WorkspaceID string
	Namespace   string
}

// PurgedCache is what a purge deleted.
type PurgedCache struct {
	Result
	Deleted int64
}

type purgeCacheHandler struct {
	d     Deps
	cache CachePurger
}

// NewPurgeCacheHandler refuses missing dependencies. Organisation admins and the
// workspace's managers purge (withWorkspaceRole), with configs.update: who decides how a
// workspace caches may empty its cache. A nil cache (caching off) purges nothing and still
// records the request.
func NewPurgeCacheHandler(d Deps, cache CachePurger) (Handler[PurgeCache, PurgedCache], error) {
	return withWorkspaceRole(domain.RoleManager, "configs.update", purgeCacheHandler{d, cache}), d.check()
}

func (c PurgeCache) workspace() string { return c.WorkspaceID }

// Handle records the purge before it deletes anything, so that no purge goes unaudited: a
// purge that fails after its event is answered as an error and is retried as a new purge.
func (h purgeCacheHandler) Handle(ctx context.Context, c PurgeCache) (PurgedCache, error) {
	res, err := executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.PurgeCache(c.Namespace, h.d.Now())
	})
	out := PurgedCache{Result: res}
	if err != nil || h.cache == nil {
		return out, err
	}
	n, err := h.cache.Purge(ctx, c.WorkspaceID, c.Namespace)
	if err != nil {
		// The store's own error stays in the server's log: it may name a host.
		return out, domain.Errorf(domain.CodeUnavailable, "the purge was recorded but the cache store did not answer; purge again")
	}
	out.Deleted = n
	return out, nil
}
