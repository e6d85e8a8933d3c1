package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

func TestNotificationsListAndGet(t *testing.T) {
	api := newTestAPI(t)
	var tokens invTokens
	wsA := api.seedWorkspace("team-a", nil)
	wsB := api.seedWorkspace("team-b", nil)
	member := api.seedUser("member@example.com", domain.RoleMember)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, wsA),
		domain.WorkspaceMemberAdded{WorkspaceID: wsA, UserID: member, Role: domain.RoleMember, At: api.Now()})
	memberKey := invWorkspaceKey(t, api, wsA, member, []string{"logs.view"})

	first, _ := tokens.invite(t, api, api.AdminKey, map[string]any{"email": "one@example.com", "role": "member"})
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	api.Advance(time.Minute)
	second, _ := tokens.invite(t, api, api.AdminKey, map[string]any{"email": "two@example.com", "role": "admin"})
	require.Equal(t, http.StatusOK, second.Status, string(second.Raw))
	api.Advance(time.Minute)
	inA, inB := uuid.NewString(), uuid.NewString()
	for id, ws := range map[string]string{inA: wsA, inB: wsB} {
		api.seedEvents(domain.Stream(domain.NotificationPrefix, id), domain.NotificationRecorded{NotificationID: id,
			OrganisationID: api.OrgID, WorkspaceID: ws, Kind: domain.NotifyUsageThreshold, Recipients: []string{"ops@example.com"},
			Subject: "Usage threshold reached", At: api.Now()})
	}

	all := api.Admin(http.MethodGet, "/notifications", nil)
	require.Equal(t, http.StatusOK, all.Status, string(all.Raw))
	assert.Equal(t, "list", all.Str("object"))
	require.Len(t, all.Data(), 4, "an organisation admin sees every notification")
	invites := api.Admin(http.MethodGet, "/notifications?kind=invite", nil).Data()
	require.Len(t, invites, 2)
	assert.Equal(t, second.Str("id"), invites[0]["resource_id"], "newest first")
	assert.Equal(t, first.Str("id"), invites[1]["resource_id"])
	assert.Equal(t, "notification", invites[0]["object"])
	assert.Equal(t, "invite", invites[0]["kind"])
	assert.Len(t, api.Admin(http.MethodGet, "/notifications?kind="+domain.NotifyUsageThreshold, nil).Data(), 2)
	assert.Empty(t, api.Admin(http.MethodGet, "/notifications?kind=api_key.expired", nil).Data())
	assert.Len(t, api.Admin(http.MethodGet, "/admin/notifications?page_size=1&current_page=1", nil).Data(), 1, "paginated")

	one := api.Admin(http.MethodGet, "/notifications/"+invites[0]["id"].(string), nil)
	require.Equal(t, http.StatusOK, one.Status)
	assert.Equal(t, []any{"two@example.com"}, one.Body["recipients"])
	assert.Equal(t, "invite", one.Body["resource_type"])

	mine := api.Do(http.MethodGet, "/notifications", memberKey, nil)
	require.Equal(t, http.StatusOK, mine.Status, string(mine.Raw))
	require.Len(t, mine.Data(), 1, "others see only their workspaces' notifications")
	assert.Equal(t, inA, mine.Data()[0]["id"])
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/notifications/"+inA, memberKey, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Do(http.MethodGet, "/notifications/"+inB, memberKey, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Do(http.MethodGet, "/notifications/"+invites[0]["id"].(string), memberKey, nil).Status)

	bad := api.Admin(http.MethodGet, "/notifications/not-a-uuid", nil)
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, "notificationId", bad.ErrorParam())
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, "/notifications?page_size=-1", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/notifications/"+uuid.NewString(), nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/notifications", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/notifications/"+inA, "cw-wrong", nil).Status)
	assert.Equal(t, http.StatusMethodNotAllowed, api.Admin(http.MethodPost, "/notifications", map[string]any{}).Status)

	tokens.neverStored(t, api)
}
