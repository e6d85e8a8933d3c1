package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// A purge is allowed to an organisation admin and to the workspace's managers (with
// configs.update), refused to its members and to other workspaces' keys; a retried purge with
// its Idempotency-Key answers again without a second event; a bad namespace names its bound.
func TestCachePurgeAccess(t *testing.T) {
	api := newTestAPI(t)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	member := api.seedUser("member@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{manager: domain.RoleManager, member: domain.RoleMember})
	other := api.seedWorkspace("team-b", nil)
	key := func(wsID, user string, scopes ...string) string {
		body := map[string]any{"name": "k", "workspace_id": wsID, "scopes": scopes}
		path := "/api-keys/workspace/service"
		if user != "" {
			body["user_id"], path = user, "/api-keys/workspace/user"
		}
		r := api.Admin(http.MethodPost, path, body)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
		return r.Str("key")
	}
	managerKey := key(ws, manager, "configs.update")
	memberKey := key(ws, member, "configs.update")
	otherKey := key(other, "", "configs.update")
	unscoped := key(ws, manager, "configs.read")

	purge := func(k, query string, headers ...string) response {
		return api.Do(http.MethodDelete, "/workspaces/"+ws+"/cache"+query, k, nil, headers...)
	}
	r := api.Admin(http.MethodDelete, "/workspaces/"+ws+"/cache?namespace=team", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, "cache-purge", r.Str("object"))
	assert.Equal(t, "team", r.Str("namespace"))
	assert.EqualValues(t, 0, r.Body["deleted"], "no cache is wired in this API: nothing to delete, the purge still recorded")

	assert.Equal(t, http.StatusOK, purge(managerKey, "").Status, "the workspace's manager")
	assert.Equal(t, http.StatusForbidden, purge(memberKey, "").Status, "a member")
	assert.Equal(t, http.StatusForbidden, purge(unscoped, "").Status, "without configs.update")
	assert.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, purge(otherKey, "").Status, "another workspace's key")

	bad := purge(managerKey, "?namespace="+strings.Repeat("n", domain.MaxCacheNamespaceLength+1))
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, "namespace", bad.ErrorParam())
	assert.Contains(t, bad.ErrorMessage(), "128")
	assert.Equal(t, http.StatusBadRequest, purge(managerKey, "?namespace=a&namespace=b").Status)

	first := purge(managerKey, "?namespace=x", "Idempotency-Key", "purge-1")
	again := purge(managerKey, "?namespace=x", "Idempotency-Key", "purge-1")
	require.Equal(t, http.StatusOK, again.Status, "%s", again.Raw)
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, first.Str("namespace"), again.Str("namespace"))

	audit := api.Admin(http.MethodGet, "/audit-logs?resource_id="+ws, nil)
	purges := 0
	for _, rec := range audit.Data() {
		if rec["action"] == "WorkspaceCachePurged" {
			purges++
		}
	}
	assert.Equal(t, 3, purges, "the admin's, the manager's, and the idempotent one once")
}
