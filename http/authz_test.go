package httpapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// The authorisation tables of the specification (5.2) as one table: each role and key kind
// against each operation. Organisation keys act as organisation admins; a workspace key acts
// within its one workspace, with its user's role there (or manager, for a service key), and
// never reaches organisation settings, users or another workspace.
func TestAuthorisationTables(t *testing.T) {
	api := newTestAPI(t)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	member := api.seedUser("member@example.com", domain.RoleMember)
	orgAdminUser := api.seedUser("admin@example.com", domain.RoleAdmin)
	wsA := api.seedWorkspace("team-a", map[string]domain.Role{manager: domain.RoleManager, member: domain.RoleMember, orgAdminUser: domain.RoleMember})
	wsB := api.seedWorkspace("team-b", nil)

	wsScopes := domain.WorkspaceScopes()
	newKey := func(path string, body map[string]any) string {
		body["scopes"] = wsScopes
		if path == "/api-keys/organisation/service" {
			body["scopes"] = domain.AllScopes()
		}
		r := api.Admin(http.MethodPost, path, body)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Str("key")
	}
	keys := map[string]string{
		"owner (bootstrap admin key)": api.AdminKey,
		"admin key":                   newKey("/api-keys/organisation/service", map[string]any{"name": "admin"}),
		"workspace service key":       newKey("/api-keys/workspace/service", map[string]any{"name": "svc", "workspace_id": wsA}),
		"workspace manager":           newKey("/api-keys/workspace/user", map[string]any{"name": "mgr", "workspace_id": wsA, "user_id": manager}),
		"workspace member":            newKey("/api-keys/workspace/user", map[string]any{"name": "mem", "workspace_id": wsA, "user_id": member}),
		"org admin's workspace key":   newKey("/api-keys/workspace/user", map[string]any{"name": "oa", "workspace_id": wsA, "user_id": orgAdminUser}),
	}

	policy := func(ws string) map[string]any {
		return map[string]any{"workspace_id": ws, "type": "requests", "unit": "rpm", "value": 5,
			"conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}}
	}
	n := 0
	unique := func(prefix string) string { n++; return fmt.Sprintf("%s-%d", prefix, n) }
	type op struct {
		name   string
		method string
		path   string
		body   func() any
	}
	ops := []op{
		{"create admin key", http.MethodPost, "/api-keys/organisation/service", func() any {
			return map[string]any{"name": unique("k"), "scopes": []string{"logs.view"}}
		}},
		{"create workspace key, own workspace", http.MethodPost, "/api-keys/workspace/service", func() any {
			return map[string]any{"name": unique("k"), "workspace_id": wsA, "scopes": []string{"logs.view"}}
		}},
		{"create workspace key, other workspace", http.MethodPost, "/api-keys/workspace/service", func() any {
			return map[string]any{"name": unique("k"), "workspace_id": wsB, "scopes": []string{"logs.view"}}
		}},
		{"policy in own workspace", http.MethodPost, "/policies/rate-limits", func() any { return policy(wsA) }},
		{"policy in other workspace", http.MethodPost, "/policies/rate-limits", func() any { return policy(wsB) }},
		{"read the audit log", http.MethodGet, "/audit-logs", nil},
		{"create a workspace", http.MethodPost, "/workspaces", func() any { return map[string]any{"name": unique("ws")} }},
		{"organisation settings", http.MethodPut, "/organisation/settings", func() any {
			return map[string]any{"security_settings": map[string]bool{"membersViewAnalytics": true}}
		}},
		{"invite to the organisation as admin", http.MethodPost, "/users/invites", func() any {
			return map[string]any{"email": unique("x") + "@example.com", "role": "admin", "workspaces": []any{}}
		}},
	}
	const Y, N = http.StatusOK, http.StatusForbidden
	want := map[string][]int{
		//                              admin key  ws own  ws other  policy own  policy other  audit  workspace  settings  invite admin
		"owner (bootstrap admin key)": {Y, Y, Y, Y, Y, Y, Y, Y, Y},
		"admin key":                   {Y, Y, Y, Y, Y, Y, Y, Y, Y},
		"workspace service key":       {N, Y, N, Y, N, N, N, N, N},
		"workspace manager":           {N, Y, N, Y, N, N, N, N, N},
		"workspace member":            {N, N, N, N, N, N, N, N, N},
		"org admin's workspace key":   {N, Y, N, Y, N, N, N, N, N},
	}
	for actor, key := range keys {
		for i, o := range ops {
			t.Run(actor+"/"+o.name, func(t *testing.T) {
				var body any
				if o.body != nil {
					body = o.body()
				}
				r := api.Do(o.method, o.path, key, body)
				got := r.Status
				if got == http.StatusCreated {
					got = http.StatusOK
				}
				assert.Equal(t, want[actor][i], got, string(r.Raw))
			})
		}
	}
}
