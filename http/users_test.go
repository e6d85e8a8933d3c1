package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
)

// invTokens collects every invite token a test saw, for the check that none was stored.
type invTokens []string

// invite creates an invite as key and returns the answer; the token is taken from its link.
func (ts *invTokens) invite(t *testing.T, api *testAPI, key string, body any) (response, string) {
	t.Helper()
	r := api.Do(http.MethodPost, "/users/invites", key, body)
	if r.Status != http.StatusOK {
		return r, ""
	}
	return r, ts.tokenOf(t, r.Str("invite_link"))
}

func (ts *invTokens) tokenOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	assert.Equal(t, "/v1/users/invites/accept", u.Path)
	tok := u.Query().Get("token")
	require.NotEmpty(t, tok, link)
	*ts = append(*ts, tok)
	return tok
}

// neverStored asserts that no event's data or metadata holds any of the tokens.
func (ts invTokens) neverStored(t *testing.T, api *testAPI) {
	t.Helper()
	require.NotEmpty(t, ts)
	from, n := eventstore.Start, 0
	for {
		recs, err := api.Store.ReadAll(context.Background(), from, 500)
		require.NoError(t, err)
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			n++
			md := strings.Join([]string{rec.Metadata.ActorID, rec.Metadata.RequestID, rec.Metadata.UserAgent,
				rec.Metadata.CorrelationID, rec.Metadata.CausationID, rec.Metadata.ClientIP}, " ")
			for k, v := range rec.Metadata.Extra {
				md += " " + k + "=" + v
			}
			for _, tok := range ts {
				secret := tok[strings.Index(tok, ".")+1:]
				assert.NotContains(t, string(rec.Data), secret, "event %s (%s) holds an invite token", rec.ID, rec.Type)
				assert.NotContains(t, md, secret, "the metadata of event %s (%s) holds an invite token", rec.ID, rec.Type)
			}
		}
		from = recs[len(recs)-1].Position
	}
	assert.Greater(t, n, 0)
}

func invErrorCode(r response) string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func invAccept(api *testAPI, token string, extra ...string) response {
	body := map[string]any{"token": token}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i]] = extra[i+1]
	}
	return api.Do(http.MethodPost, "/users/invites/accept", "", body)
}

// invWorkspaceKey creates a workspace-user key for userID in ws with scopes.
func invWorkspaceKey(t *testing.T, api *testAPI, ws, userID string, scopes []string) string {
	t.Helper()
	r := api.Admin(http.MethodPost, "/api-keys/workspace/user", map[string]any{"name": "k", "workspace_id": ws,
		"user_id": userID, "scopes": scopes})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("key")
}

func TestInviteAcceptAndManageUser(t *testing.T) {
	api := newTestAPI(t)
	var tokens invTokens
	wsA := api.seedWorkspace("team-a", nil)
	wsB := api.seedWorkspace("team-b", nil)

	created, token := tokens.invite(t, api, api.AdminKey, map[string]any{"email": " Ann@Example.com", "role": "MEMBER",
		"workspaces":                []map[string]string{{"id": "team-a", "role": "Manager"}, {"id": wsB, "role": "member"}},
		"workspace_api_key_details": map[string]any{"scopes": []string{"logs.view", "completions.write"}}})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	id := created.Str("id")
	require.True(t, isUUID(id))
	assert.NotEmpty(t, created.Header.Get(PositionHeader))
	assert.True(t, strings.HasPrefix(token, id+"."), "the token names its invite")

	got := api.Admin(http.MethodGet, "/users/invites/"+id, nil)
	require.Equal(t, http.StatusOK, got.Status, "read your write at once")
	assert.Equal(t, "invite", got.Str("object"))
	assert.Equal(t, "ann@example.com", got.Str("email"), "e-mails are stored lower case")
	assert.Equal(t, "member", got.Str("role"), "roles are stored lower case")
	assert.Equal(t, "pending", got.Str("status"))
	assert.Equal(t, api.Now().Add(domain.InviteTTL).Format(time.RFC3339), got.Str("expires_at"))
	assert.Equal(t, []any{map[string]any{"workspace_id": wsA, "role": "manager"}, map[string]any{"workspace_id": wsB, "role": "member"}},
		got.Body["workspaces"], "a slug is resolved to the workspace's id")
	assert.NotContains(t, string(got.Raw), token[len(id)+1:])
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/admin/users/invites/"+id, nil).Status, "the reference's path")

	for query, n := range map[string]int{"": 1, "?status=pending": 1, "?status=accepted,cancelled": 0, "?email=ANN@example.com": 1,
		"?email=bob@example.com": 0, "?role=Member": 1, "?role=admin": 0} {
		list := api.Admin(http.MethodGet, "/users/invites"+query, nil)
		require.Equal(t, http.StatusOK, list.Status, query)
		assert.Len(t, list.Data(), n, query)
	}

	notes := api.Admin(http.MethodGet, "/notifications?kind=invite", nil)
	require.Equal(t, http.StatusOK, notes.Status)
	require.Len(t, notes.Data(), 1, "the invite is recorded as a notification")
	note := notes.Data()[0]
	assert.Equal(t, []any{"ann@example.com"}, note["recipients"])
	assert.Equal(t, id, note["resource_id"])
	assert.Equal(t, id, note["data"].(map[string]any)["invite_id"])
	assert.NotContains(t, string(notes.Raw), token[len(id)+1:])

	joined := invAccept(api, token, "first_name", "Ann", "last_name", strings.Repeat("L", 255))
	require.Equal(t, http.StatusOK, joined.Status, string(joined.Raw))
	userID := joined.Str("id")
	require.True(t, isUUID(userID))
	assert.Equal(t, "ann@example.com", joined.Str("email"))
	assert.Equal(t, "member", joined.Str("role"))
	assert.ElementsMatch(t, []any{wsA, wsB}, joined.Body["workspace_ids"])
	keys, _ := joined.Body["api_keys"].([]any)
	require.Len(t, keys, 2, "one workspace-user key per invited workspace")
	annKey := keys[0].(map[string]any)["key"].(string)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/notifications", annKey, nil).Status, "the new key works")

	again := invAccept(api, token, "first_name", "Ann")
	assert.Equal(t, http.StatusConflict, again.Status, "the second use of an invite is refused")
	assert.Equal(t, "invite_accepted", invErrorCode(again))

	inv := api.Admin(http.MethodGet, "/users/invites/"+id, nil)
	assert.Equal(t, "accepted", inv.Str("status"))
	assert.NotNil(t, inv.Body["accepted_at"])
	assert.Equal(t, userID, inv.Str("user_id"))

	user := api.Admin(http.MethodGet, "/users/"+userID, nil)
	require.Equal(t, http.StatusOK, user.Status)
	assert.Equal(t, "user", user.Str("object"))
	assert.Equal(t, "Ann", user.Str("first_name"))
	assert.ElementsMatch(t, []any{wsA, wsB}, user.Body["workspace_ids"])
	ws, _, err := api.Read.Workspace(context.Background(), api.OrgID, wsA)
	require.NoError(t, err)
	assert.Equal(t, domain.RoleManager, ws.Members[userID])
	users := api.Admin(http.MethodGet, "/users", nil)
	require.Equal(t, http.StatusOK, users.Status)
	assert.Len(t, users.Data(), 2, "the owner and Ann")
	assert.Len(t, api.Admin(http.MethodGet, "/users?email=ANN@example.com", nil).Data(), 1)
	assert.Len(t, api.Admin(http.MethodGet, "/users?role=owner", nil).Data(), 1)
	assert.Len(t, api.Admin(http.MethodGet, "/admin/users?role=MEMBER", nil).Data(), 1)

	member := api.Admin(http.MethodPost, "/users/invites", map[string]any{"email": "ANN@example.com", "role": "admin"})
	assert.Equal(t, http.StatusConflict, member.Status, "inviting an existing member")
	assert.Equal(t, "already_member", invErrorCode(member))
	assert.Equal(t, "email", member.ErrorParam())

	upd := api.Admin(http.MethodPut, "/users/"+userID, map[string]any{"role": "ADMIN", "first_name": "Annie"})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "admin", upd.Str("role"))
	assert.Equal(t, "Annie", upd.Str("first_name"))
	assert.Equal(t, "admin", api.Admin(http.MethodGet, "/users/"+userID, nil).Str("role"))

	del := api.Admin(http.MethodDelete, "/users/"+userID, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/users/"+userID, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/users/"+userID, nil).Status)
	memberOf, err := api.Read.MemberWorkspaceIDs(context.Background(), api.OrgID, userID)
	require.NoError(t, err)
	assert.Empty(t, memberOf, "removed from every workspace")
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/notifications", annKey, nil).Status,
		"a removed user's keys stop working")

	reinvite, _ := tokens.invite(t, api, api.AdminKey, map[string]any{"email": "ann@example.com", "role": "member"})
	assert.Equal(t, http.StatusOK, reinvite.Status, "a removed user's e-mail may be invited again: %s", reinvite.Raw)

	tokens.neverStored(t, api)
}

func TestInviteResendCancelAndExpiry(t *testing.T) {
	api := newTestAPI(t)
	var tokens invTokens
	body := map[string]any{"email": "bob@example.com", "role": "member", "workspaces": []any{}}

	first, token1 := tokens.invite(t, api, api.AdminKey, body)
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	id := first.Str("id")

	pending := api.Admin(http.MethodPost, "/users/invites", body)
	assert.Equal(t, http.StatusConflict, pending.Status, "a pending invite for the e-mail exists")
	assert.Equal(t, "invite_pending", invErrorCode(pending))
	assert.Equal(t, "email", pending.ErrorParam())

	api.Advance(24 * time.Hour)
	resent := api.Admin(http.MethodPost, "/users/invites/"+id+"/resend", nil)
	require.Equal(t, http.StatusOK, resent.Status, string(resent.Raw))
	token2 := tokens.tokenOf(t, resent.Str("invite_link"))
	assert.Equal(t, resent.Str("invite_link"), resent.Str("inviteLink"))
	assert.NotEqual(t, token1, token2, "a resend issues a new token")
	assert.Equal(t, api.Now().Add(domain.InviteTTL).Format(time.RFC3339), api.Admin(http.MethodGet, "/users/invites/"+id, nil).Str("expires_at"),
		"a resend extends the expiry")
	assert.Len(t, api.Admin(http.MethodGet, "/notifications?kind=invite", nil).Data(), 2, "each send is recorded")

	old := invAccept(api, token1)
	assert.Equal(t, http.StatusNotFound, old.Status, "the old link stops working")
	assert.Equal(t, "token", old.ErrorParam())

	cancel := api.Admin(http.MethodDelete, "/users/invites/"+id, nil)
	require.Equal(t, http.StatusOK, cancel.Status, string(cancel.Raw))
	assert.Equal(t, "cancelled", api.Admin(http.MethodGet, "/users/invites/"+id, nil).Str("status"))
	assert.Len(t, api.Admin(http.MethodGet, "/users/invites?status=cancelled", nil).Data(), 1)
	for name, r := range map[string]response{
		"cancel twice":       api.Admin(http.MethodDelete, "/users/invites/"+id, nil),
		"resend a cancelled": api.Admin(http.MethodPost, "/users/invites/"+id+"/resend", nil),
		"accept a cancelled": invAccept(api, token2),
	} {
		assert.Equal(t, http.StatusConflict, r.Status, name)
		assert.Equal(t, "invite_cancelled", invErrorCode(r), name)
	}

	// Once cancelled, the e-mail may be invited again; that invite expires after seven days.
	second, token3 := tokens.invite(t, api, api.AdminKey, body)
	require.Equal(t, http.StatusOK, second.Status, string(second.Raw))
	id2 := second.Str("id")
	api.Advance(domain.InviteTTL - time.Second)
	assert.Equal(t, "pending", api.Admin(http.MethodGet, "/users/invites/"+id2, nil).Str("status"))
	api.Advance(time.Second)
	assert.Equal(t, "expired", api.Admin(http.MethodGet, "/users/invites/"+id2, nil).Str("status"), "expiry is computed from the clock")
	assert.Len(t, api.Admin(http.MethodGet, "/users/invites?status=expired", nil).Data(), 1)

	expired := invAccept(api, token3)
	assert.Equal(t, http.StatusConflict, expired.Status, string(expired.Raw))
	assert.Equal(t, "invite_expired", invErrorCode(expired))
	assert.Equal(t, http.StatusConflict, invAccept(api, token3).Status)

	// An expired invite does not block a new one; resending the expired one revives it only
	// while no other is pending.
	third, _ := tokens.invite(t, api, api.AdminKey, body)
	require.Equal(t, http.StatusOK, third.Status, string(third.Raw))
	// The write above waited for the read model, so it holds the refusals' events too.
	assert.Len(t, api.Read.AuditLog(projections.AuditFilter{OrganisationID: api.OrgID, Action: "InviteExpired", ResourceID: id2}), 1,
		"a refused acceptance records the expiry, once")
	blocked := api.Admin(http.MethodPost, "/users/invites/"+id2+"/resend", nil)
	assert.Equal(t, http.StatusConflict, blocked.Status)
	assert.Equal(t, "invite_pending", invErrorCode(blocked))
	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, "/users/invites/"+third.Str("id"), nil).Status)

	revived := api.Admin(http.MethodPost, "/users/invites/"+id2+"/resend", nil)
	require.Equal(t, http.StatusOK, revived.Status, string(revived.Raw))
	token4 := tokens.tokenOf(t, revived.Str("invite_link"))
	assert.Equal(t, "pending", api.Admin(http.MethodGet, "/users/invites/"+id2, nil).Str("status"))
	joined := invAccept(api, token4, "first_name", strings.Repeat("B", 255))
	require.Equal(t, http.StatusOK, joined.Status, string(joined.Raw))
	assert.Empty(t, joined.Body["workspace_ids"])
	assert.Empty(t, joined.Body["api_keys"])

	tokens.neverStored(t, api)
}

func TestInviteIdempotentRetryAnswersTheSameLink(t *testing.T) {
	api := newTestAPI(t)
	var tokens invTokens
	body := map[string]any{"email": "eve@example.com", "role": "member"}
	first := api.Admin(http.MethodPost, "/users/invites", body, "Idempotency-Key", "invite-eve")
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	retry := api.Admin(http.MethodPost, "/users/invites", body, "Idempotency-Key", "invite-eve")
	require.Equal(t, http.StatusOK, retry.Status, string(retry.Raw))
	assert.Equal(t, first.Str("id"), retry.Str("id"))
	assert.Equal(t, first.Str("invite_link"), retry.Str("invite_link"), "the retry's link works")
	assert.Len(t, api.Admin(http.MethodGet, "/notifications?kind=invite", nil).Data(), 1, "recorded once")
	require.Equal(t, http.StatusOK, invAccept(api, tokens.tokenOf(t, retry.Str("invite_link"))).Status)
	tokens.neverStored(t, api)
}

func TestInviteErrors(t *testing.T) {
	api := newTestAPI(t)
	var tokens invTokens
	ws := api.seedWorkspace("team-a", nil)
	archived := api.seedWorkspace("old", nil)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, archived), domain.WorkspaceArchived{WorkspaceID: archived, At: api.Now()})
	n := 0
	valid := func() map[string]any {
		n++
		return map[string]any{"email": fmt.Sprintf("user%d@example.com", n), "role": "member",
			"workspaces": []map[string]any{{"id": ws, "role": "member"}}}
	}
	with := func(k string, v any) map[string]any { b := valid(); b[k] = v; return b }
	wsItem := func(id, role string) []map[string]any { return []map[string]any{{"id": id, "role": role}} }
	cases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"valid", valid(), 200, ""},
		{"no workspaces", with("workspaces", nil), 200, ""},
		{"e-mail at 254 characters", with("email", strings.Repeat("a", 242)+"@example.com"), 200, ""},
		{"e-mail at 255 characters", with("email", strings.Repeat("a", 243)+"@example.com"), 400, "email"},
		{"e-mail missing", with("email", ""), 400, "email"},
		{"e-mail malformed", with("email", "not-an-email"), 400, "email"},
		{"role missing", with("role", ""), 400, "role"},
		{"role unknown", with("role", "boss"), 400, "role"},
		{"owner is not an invite role", with("role", "owner"), 400, "role"},
		{"workspace role unknown", with("workspaces", wsItem(ws, "owner")), 400, "workspaces[0].role"},
		{"workspace id missing", with("workspaces", wsItem("", "member")), 400, "workspaces[0].id"},
		{"workspace named twice", with("workspaces", []map[string]any{{"id": ws, "role": "member"}, {"id": "team-a", "role": "admin"}}), 400, "workspaces[1].id"},
		{"unknown workspace id", with("workspaces", wsItem("7b0d0e9e-0000-4000-8000-000000000000", "member")), 404, "workspaces[0].id"},
		{"unknown workspace slug", with("workspaces", wsItem("no-such-team", "member")), 404, "workspaces[0].id"},
		{"archived workspace", with("workspaces", wsItem(archived, "member")), 409, "workspaces[0].id"},
		{"unknown key scope", with("workspace_api_key_details", map[string]any{"scopes": []string{"logs.view", "fly"}}), 400, "workspace_api_key_details.scopes[1]"},
		{"organisation scope for a workspace key", with("workspace_api_key_details", map[string]any{"scopes": []string{"organisation_users.create"}}), 400, "workspace_api_key_details.scopes[0]"},
		{"no key scopes", with("workspace_api_key_details", map[string]any{"scopes": []string{}}), 400, "workspace_api_key_details.scopes"},
		{"unknown field", with("colour", "red"), 400, "colour"},
		{"email not a string", with("email", 5), 400, "email"},
		{"not JSON", "{", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := tokens.invite(t, api, api.AdminKey, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
	assert.Contains(t, func() string {
		r := api.Admin(http.MethodPost, "/users/invites", with("email", strings.Repeat("a", 243)+"@example.com"))
		return r.ErrorMessage()
	}(), "254", "the message names the bound")

	// Who may invite: 401 without a key; 403 for a member, for a manager beyond their rights.
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPost, "/users/invites", "", valid()).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodPost, "/users/invites", "cw-wrong", valid()).Status)
	other := api.seedWorkspace("team-b", nil)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	member := api.seedUser("member@example.com", domain.RoleMember)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, ws),
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: manager, Role: domain.RoleManager, At: api.Now()},
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: member, Role: domain.RoleMember, At: api.Now()})
	managerKey := invWorkspaceKey(t, api, ws, manager, domain.WorkspaceScopes())
	memberKey := invWorkspaceKey(t, api, ws, member, domain.WorkspaceScopes())
	narrowKey := invWorkspaceKey(t, api, ws, manager, []string{"invites.create", "logs.view"})
	logsKey := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "logs", "scopes": []string{"logs.view"}}).Str("key")

	access := []struct {
		name   string
		key    string
		body   map[string]any
		status int
		param  string
	}{
		{"a member cannot invite", memberKey, valid(), 403, ""},
		{"an admin key without the scope", logsKey, valid(), 403, ""},
		{"a manager invites a member into their workspace", managerKey, with("workspaces", wsItem(ws, "manager")), 200, ""},
		{"a manager cannot invite an organisation admin", managerKey, with("role", "admin"), 403, "role"},
		{"a manager cannot invite a workspace admin", managerKey, with("workspaces", wsItem(ws, "admin")), 403, "workspaces[0].role"},
		{"a manager cannot invite into another workspace", managerKey, with("workspaces", wsItem(other, "member")), 403, "workspaces[0].id"},
		{"a manager cannot invite to the organisation alone", managerKey, with("workspaces", nil), 403, "workspaces"},
		{"a manager cannot give key scopes they lack", narrowKey, with("workspace_api_key_details", map[string]any{"scopes": []string{"logs.export"}}), 403, "workspace_api_key_details.scopes"},
		{"a manager gives key scopes they hold", narrowKey, with("workspace_api_key_details", map[string]any{"scopes": []string{"logs.view"}}), 200, ""},
	}
	var byManager string
	for _, tc := range access {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := tokens.invite(t, api, tc.key, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			} else if tc.key == managerKey {
				byManager = r.Str("id")
			}
		})
	}
	require.NotEmpty(t, byManager)

	// Managers see, resend and cancel the invites into their workspace; members do not.
	orgOnly := with("role", "admin")
	orgOnly["workspaces"] = nil
	adminOnly, _ := tokens.invite(t, api, api.AdminKey, orgOnly)
	require.Equal(t, http.StatusOK, adminOnly.Status)
	seen := api.Do(http.MethodGet, "/users/invites", managerKey, nil)
	require.Equal(t, http.StatusOK, seen.Status)
	for _, i := range seen.Data() {
		assert.NotEqual(t, adminOnly.Str("id"), i["id"], "a manager sees only the invites into their workspaces")
	}
	assert.NotEmpty(t, seen.Data())
	assert.Equal(t, http.StatusNotFound, api.Do(http.MethodGet, "/users/invites/"+adminOnly.Str("id"), managerKey, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/users/invites/"+adminOnly.Str("id"), managerKey, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, "/users/invites/"+adminOnly.Str("id")+"/resend", managerKey, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/users/invites/"+byManager, memberKey, nil).Status)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/users/invites", logsKey, nil).Status)
	resent := api.Do(http.MethodPost, "/users/invites/"+byManager+"/resend", managerKey, nil)
	require.Equal(t, http.StatusOK, resent.Status, string(resent.Raw))
	tokens.tokenOf(t, resent.Str("invite_link"))
	assert.Equal(t, http.StatusOK, api.Do(http.MethodDelete, "/users/invites/"+byManager, managerKey, nil).Status)

	// Paths and unknown invites.
	unknown := "7b0d0e9e-0000-4000-8000-000000000000"
	for name, r := range map[string]response{
		"get, not a UUID":     api.Admin(http.MethodGet, "/users/invites/nope", nil),
		"cancel, not a UUID":  api.Admin(http.MethodDelete, "/users/invites/nope", nil),
		"resend, not a UUID":  api.Admin(http.MethodPost, "/users/invites/nope/resend", nil),
		"list, bad status":    api.Admin(http.MethodGet, "/users/invites?status=lost", nil),
		"list, bad role":      api.Admin(http.MethodGet, "/users/invites?role=owner", nil),
		"list, bad page size": api.Admin(http.MethodGet, "/users/invites?page_size=1001", nil),
	} {
		assert.Equal(t, http.StatusBadRequest, r.Status, name)
		assert.NotEmpty(t, r.ErrorParam(), name)
	}
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/users/invites/"+unknown, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/users/invites/"+unknown, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPost, "/users/invites/"+unknown+"/resend", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/users/invites", "", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodDelete, "/users/invites/"+unknown, "", nil).Status)

	// Accepting needs no API key; its errors name the field.
	pendingResp, token := tokens.invite(t, api, api.AdminKey, valid())
	require.Equal(t, http.StatusOK, pendingResp.Status)
	acceptCases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"no token", map[string]any{"first_name": "A"}, 400, "token"},
		{"a token of the wrong form", map[string]any{"token": "guess"}, 404, "token"},
		{"a token of no invite", map[string]any{"token": unknown + "." + strings.Repeat("a", 43)}, 404, "token"},
		{"a wrong secret", map[string]any{"token": pendingResp.Str("id") + "." + strings.Repeat("a", 43)}, 404, "token"},
		{"first name at 256", map[string]any{"token": token, "first_name": strings.Repeat("f", 256)}, 400, "first_name"},
		{"last name at 256", map[string]any{"token": token, "last_name": strings.Repeat("l", 256)}, 400, "last_name"},
		{"unknown field", map[string]any{"token": token, "password": "x"}, 400, "password"},
		{"not JSON", "{", 400, ""},
	}
	for _, tc := range acceptCases {
		t.Run("accept/"+tc.name, func(t *testing.T) {
			r := api.Do(http.MethodPost, "/users/invites/accept", "", tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
		})
	}
	assert.Equal(t, "pending", api.Admin(http.MethodGet, "/users/invites/"+pendingResp.Str("id"), nil).Str("status"),
		"refused attempts leave the invite pending")
	viaQuery := api.Do(http.MethodPost, "/admin/users/invites/accept?token="+url.QueryEscape(token), "", nil)
	require.Equal(t, http.StatusOK, viaQuery.Status, "the link's own query carries the token: %s", viaQuery.Raw)
	assert.Equal(t, []any{ws}, viaQuery.Body["workspace_ids"])

	// Joining as an existing member has its own error at acceptance too.
	third, t3 := tokens.invite(t, api, api.AdminKey, map[string]any{"email": "dup2@example.com", "role": "member"})
	require.Equal(t, http.StatusOK, third.Status)
	// Someone joined with the e-mail while the invite waited: the reservation says who.
	api.seedEvents(domain.ReservationStream("email", "dup2@example.com"),
		domain.NameReserved{Kind: "email", Name: "dup2@example.com", OwnerID: manager, At: api.Now()})
	clash := invAccept(api, t3)
	assert.Equal(t, http.StatusConflict, clash.Status, string(clash.Raw))
	assert.Equal(t, "already_member", invErrorCode(clash))
	assert.Equal(t, "email", clash.ErrorParam())
	assert.Equal(t, "pending", api.Admin(http.MethodGet, "/users/invites/"+third.Str("id"), nil).Str("status"))

	tokens.neverStored(t, api)
}

func TestUserErrors(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	bob := api.seedUser("bob@example.com", domain.RoleMember)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, ws),
		domain.WorkspaceMemberAdded{WorkspaceID: ws, UserID: bob, Role: domain.RoleManager, At: api.Now()})
	bobKey := invWorkspaceKey(t, api, ws, bob, domain.WorkspaceScopes())
	logsKey := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "logs", "scopes": []string{"logs.view"}}).Str("key")
	unknown := "7b0d0e9e-0000-4000-8000-000000000000"

	update := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"first name at 255", map[string]any{"first_name": strings.Repeat("f", 255)}, 200, ""},
		{"first name at 256", map[string]any{"first_name": strings.Repeat("f", 256)}, 400, "first_name"},
		{"last name at 256", map[string]any{"last_name": strings.Repeat("l", 256)}, 400, "last_name"},
		{"role in any case", map[string]any{"role": "Admin"}, 200, ""},
		{"role unknown", map[string]any{"role": "manager"}, 400, "role"},
		{"role not a string", map[string]any{"role": 1}, 400, "role"},
		{"nothing to update", map[string]any{}, 400, ""},
		{"unknown field", map[string]any{"email": "x@example.com"}, 400, "email"},
		{"an admin key cannot make an owner", map[string]any{"role": "owner"}, 403, "role"},
	}
	for _, tc := range update {
		t.Run("update/"+tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, "/users/"+bob, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			}
		})
	}

	demote := api.Admin(http.MethodPut, "/users/"+api.OwnerID, map[string]any{"role": "admin"})
	assert.Equal(t, http.StatusConflict, demote.Status, "the last owner cannot be demoted: %s", demote.Raw)
	assert.Equal(t, "last_owner", invErrorCode(demote))
	owner := api.Admin(http.MethodDelete, "/users/"+api.OwnerID, nil)
	assert.Equal(t, http.StatusConflict, owner.Status, "the owner cannot be removed")
	assert.Equal(t, "owner", api.Admin(http.MethodGet, "/users/"+api.OwnerID, nil).Str("role"))

	for name, r := range map[string]response{
		"list without a key":        api.Do(http.MethodGet, "/users", "", nil),
		"get with a wrong key":      api.Do(http.MethodGet, "/users/"+bob, "cw-wrong", nil),
		"update without a key":      api.Do(http.MethodPut, "/users/"+bob, "", map[string]any{"role": "member"}),
		"remove without a key":      api.Do(http.MethodDelete, "/users/"+bob, "", nil),
		"notifications without key": api.Do(http.MethodGet, "/notifications", "", nil),
	} {
		assert.Equal(t, http.StatusUnauthorized, r.Status, name)
	}
	for name, r := range map[string]response{
		"a workspace key lists users":     api.Do(http.MethodGet, "/users", bobKey, nil),
		"a workspace key reads a user":    api.Do(http.MethodGet, "/users/"+bob, bobKey, nil),
		"a workspace key updates a user":  api.Do(http.MethodPut, "/users/"+bob, bobKey, map[string]any{"role": "admin"}),
		"a workspace key removes a user":  api.Do(http.MethodDelete, "/users/"+bob, bobKey, nil),
		"an admin key without the scope":  api.Do(http.MethodGet, "/users", logsKey, nil),
		"an admin key without the scope2": api.Do(http.MethodDelete, "/users/"+bob, logsKey, nil),
	} {
		assert.Equal(t, http.StatusForbidden, r.Status, name)
	}
	for name, r := range map[string]response{
		"get, not a UUID":    api.Admin(http.MethodGet, "/users/nope", nil),
		"update, not a UUID": api.Admin(http.MethodPut, "/users/nope", map[string]any{"role": "member"}),
		"remove, not a UUID": api.Admin(http.MethodDelete, "/users/nope", nil),
		"list, bad role":     api.Admin(http.MethodGet, "/users?role=boss", nil),
	} {
		assert.Equal(t, http.StatusBadRequest, r.Status, name)
		assert.NotEmpty(t, r.ErrorParam(), name)
	}
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/users/"+unknown, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, "/users/"+unknown, map[string]any{"role": "member"}).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/users/"+unknown, nil).Status)

	// Removing a user takes them out of their workspaces and stops their keys.
	require.Equal(t, http.StatusOK, api.Do(http.MethodGet, "/notifications", bobKey, nil).Status)
	assert.Equal(t, []any{ws}, api.Admin(http.MethodGet, "/users/"+bob, nil).Body["workspace_ids"])
	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, "/users/"+bob, nil).Status)
	w, _, err := api.Read.Workspace(context.Background(), api.OrgID, ws)
	require.NoError(t, err)
	assert.NotContains(t, w.Members, bob)
	assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, "/notifications", bobKey, nil).Status)
	assert.Len(t, api.Read.AuditLog(projections.AuditFilter{OrganisationID: api.OrgID, Action: "WorkspaceMemberRemoved", ResourceID: ws}), 1)
}
