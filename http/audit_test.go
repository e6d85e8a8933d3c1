package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// After a scripted run of 50 admin actions of every kind, the event store holds at least one
// event for each action, each carrying its actor, and the audit log lists them all in order.
func TestFiftyAdminActionsAreAllInTheEventStoreAndTheAuditLog(t *testing.T) {
	api := newTestAPI(t)
	adminKeyID := api.Admin(http.MethodGet, "/api-keys", nil).Data()[0]["id"].(string)
	user := api.seedUser("person@example.com", domain.RoleMember)

	type action struct {
		method, path string
		body         any
	}
	var actions []action
	add := func(method, path string, body any) { actions = append(actions, action{method, path, body}) }
	do := func(a action) response {
		r := api.Admin(a.method, a.path, a.body)
		require.Less(t, r.Status, 300, "%s %s: %s", a.method, a.path, r.Raw)
		return r
	}

	// The first five actions create the workspaces the others act in.
	var (
		workspaces []string
		positions  []eventstore.Position
	)
	for i := 0; i < 5; i++ {
		r := do(action{http.MethodPost, "/workspaces", map[string]any{"name": fmt.Sprintf("Team %d", i)}})
		workspaces = append(workspaces, r.Str("id"))
		p, ok := positionOf(r)
		require.True(t, ok)
		positions = append(positions, p)
	}
	for i, ws := range workspaces {
		add(http.MethodPut, "/workspaces/"+ws, map[string]any{"description": fmt.Sprintf("updated %d", i)})
		add(http.MethodPost, "/workspaces/"+ws+"/users", map[string]any{"users": []map[string]string{{"id": user, "role": "member"}}})
		add(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": ws, "type": "requests", "unit": "rpm",
			"value": 10 + i, "conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}})
		add(http.MethodPost, "/policies/usage-limits", map[string]any{"workspace_id": ws, "type": "cost", "credit_limit": 100,
			"conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}})
		add(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": fmt.Sprintf("svc %d", i), "workspace_id": ws, "scopes": []string{"logs.view"}})
		add(http.MethodPost, "/users/invites", map[string]any{"email": fmt.Sprintf("invitee%d@example.com", i), "role": "member",
			"workspaces": []map[string]string{{"id": ws, "role": "member"}}})
	}
	for i := 0; i < 10; i++ {
		add(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": fmt.Sprintf("org key %d", i), "scopes": []string{"logs.view"}})
	}
	add(http.MethodPut, "/organisation/settings", map[string]any{"security_settings": map[string]bool{"membersViewAnalytics": false}})
	add(http.MethodDelete, "/workspaces/"+workspaces[4], nil)
	add(http.MethodPost, "/workspaces/"+workspaces[4]+"/restore", nil)
	for len(actions) < 45 {
		add(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": fmt.Sprintf("extra %d", len(actions)), "scopes": []string{"logs.list"}})
	}
	require.Len(t, actions, 45, "with the 5 workspace creations: 50 actions")

	for _, a := range actions {
		r := do(a)
		p, ok := positionOf(r)
		require.True(t, ok, "%s %s answered without a position", a.method, a.path)
		positions = append(positions, p)
	}

	// Every action's last event is in the store, carries the actor and comes after the one before.
	all, err := api.Store.ReadAll(context.Background(), eventstore.Start, 10_000)
	require.NoError(t, err)
	byPosition := map[eventstore.Position]eventstore.RecordedEvent{}
	for _, ev := range all {
		byPosition[ev.Position] = ev
	}
	for i, p := range positions {
		ev, ok := byPosition[p]
		require.True(t, ok, "action %d's event at position %d is stored", i, p)
		assert.Equal(t, adminKeyID, ev.Metadata.ActorID, "action %d (%s) carries its actor", i, ev.Type)
		assert.Equal(t, eventstore.ActorAPIKey, ev.Metadata.ActorKind)
		assert.NotEmpty(t, ev.Metadata.RequestID)
		if i > 0 {
			assert.Greater(t, p, positions[i-1])
		}
	}

	// The audit log lists every one of them, in order (oldest first, as asked).
	audit := api.Admin(http.MethodGet, "/audit-logs?page_size=1000&order=asc", nil)
	require.Equal(t, http.StatusOK, audit.Status)
	var listed []uint64
	for _, rec := range audit.Data() {
		listed = append(listed, uint64(rec["position"].(float64)))
	}
	for i := 1; i < len(listed); i++ {
		require.Less(t, listed[i-1], listed[i], "the audit log is in order")
	}
	for i, p := range positions {
		assert.Contains(t, listed, uint64(p), "action %d is in the audit log", i)
	}
	require.Len(t, positions, 50)
	assert.GreaterOrEqual(t, len(listed), 50)

	// A record shows the state before and after its change.
	put := api.Admin(http.MethodGet, "/audit-logs?resource_type=workspace&action=WorkspaceUpdated&page_size=1", nil)
	require.NotEmpty(t, put.Data())
	rec := put.Data()[0]
	assert.NotNil(t, rec["before"])
	assert.NotNil(t, rec["after"])
	assert.NotEqual(t, rec["before"], rec["after"])
}

func positionOf(r response) (eventstore.Position, bool) {
	var p uint64
	_, err := fmt.Sscan(r.Header.Get(PositionHeader), &p)
	return eventstore.Position(p), err == nil && p > 0
}
