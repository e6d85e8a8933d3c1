package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// asOfMark is an instant between two changes. The event store stamps RecordedAt with the wall
// clock, not the test clock, so marks come from the wall clock, a little apart from the
// events on either side.
func asOfMark() time.Time {
	time.Sleep(20 * time.Millisecond)
	m := time.Now()
	time.Sleep(20 * time.Millisecond)
	return m
}

func asOfQuery(at time.Time) string {
	return "as_of=" + url.QueryEscape(at.UTC().Format(time.RFC3339Nano))
}

// asOfHeaderTime is the answer's x-gateway-as-of, which must be a time.
func asOfHeaderTime(t *testing.T, r response) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, r.Header.Get(AsOfHeader))
	require.NoError(t, err, "the answer says since when its state held: %q", r.Header.Get(AsOfHeader))
	return at
}

func asOfRateLimitBody(ws string, value int) map[string]any {
	return map[string]any{"name": "per key", "workspace_id": ws, "type": "requests", "unit": "rpm", "value": value,
		"conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}}
}

// asOfPolicy creates a rate-limit policy with value 5 and changes it to 10, 20 and 30, and
// returns its id, the instant before it existed, and the instant after each change.
func asOfPolicy(t *testing.T, api *testAPI, ws string) (string, time.Time, []time.Time) {
	t.Helper()
	before := asOfMark()
	created := api.Admin(http.MethodPost, "/policies/rate-limits", asOfRateLimitBody(ws, 5))
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	id := created.Str("id")
	var marks []time.Time
	for _, v := range []int{10, 20, 30} {
		marks = append(marks, asOfMark())
		api.Advance(time.Minute)
		upd := api.Admin(http.MethodPut, "/policies/rate-limits/"+id, map[string]any{"value": v})
		require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	}
	marks = append(marks, asOfMark())
	return id, before, marks[1:]
}

func TestAsOfRateLimitPolicyReadsEachPastValue(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	id, before, marks := asOfPolicy(t, api, ws)
	path := "/policies/rate-limits/" + id

	var since time.Time
	for i, want := range []float64{10, 20, 30} {
		got := api.Admin(http.MethodGet, path+"?"+asOfQuery(marks[i]), nil)
		require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
		assert.EqualValues(t, want, got.Body["value"], "as of mark %d", i)
		assert.Equal(t, "policy_rate_limits", got.Str("object"))
		held := asOfHeaderTime(t, got)
		assert.False(t, held.After(marks[i]), "the state began at or before the instant asked for")
		assert.True(t, held.After(since), "each change began after the one before")
		since = held
	}

	gone := api.Admin(http.MethodGet, path+"?"+asOfQuery(before), nil)
	require.Equal(t, http.StatusNotFound, gone.Status, string(gone.Raw))
	assert.Contains(t, gone.ErrorMessage(), "did not exist at")
	assert.Empty(t, gone.Header.Get(AsOfHeader))

	now := api.Admin(http.MethodGet, path, nil)
	latest := api.Admin(http.MethodGet, path+"?"+asOfQuery(marks[2]), nil)
	assert.Equal(t, now.Body, latest.Body, "an as_of read has the normal read's shape")
	assert.Empty(t, now.Header.Get(AsOfHeader), "only as_of reads carry the header")

	// The state holds from its event's instant, inclusive: read as of the header's own time.
	exact := api.Admin(http.MethodGet, path+"?as_of="+url.QueryEscape(latest.Header.Get(AsOfHeader)), nil)
	require.Equal(t, http.StatusOK, exact.Status, string(exact.Raw))
	assert.EqualValues(t, 30, exact.Body["value"])

	// An archived policy is gone from the normal read but shown as it was by as_of.
	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, path, nil).Status)
	archivedAt := asOfMark()
	require.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, path, nil).Status)
	past := api.Admin(http.MethodGet, path+"?"+asOfQuery(archivedAt), nil)
	require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
	assert.Equal(t, "archived", past.Str("status"))
	assert.Equal(t, "active", api.Admin(http.MethodGet, path+"?"+asOfQuery(marks[2]), nil).Str("status"))
}

func TestAsOfErrors(t *testing.T) {
	api := newTestAPI(t)
	wsA := api.seedWorkspace("team-a", nil)
	wsB := api.seedWorkspace("team-b", nil)
	id, _, marks := asOfPolicy(t, api, wsA)
	path := "/policies/rate-limits/" + id
	keyOf := func(ws string, scopes ...string) string {
		r := api.Admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "svc", "workspace_id": ws, "scopes": scopes})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Str("key")
	}
	keyA, keyB, unscoped := keyOf(wsA, "policies.read"), keyOf(wsB, "policies.read"), keyOf(wsA, "logs.view")
	at := asOfQuery(marks[0])
	cases := []struct {
		name    string
		key     string
		path    string
		status  int
		param   string
		message string
	}{
		{"not a time", api.AdminKey, path + "?as_of=yesterday", 400, "as_of", "RFC 3339"},
		{"empty", api.AdminKey, path + "?as_of=", 400, "as_of", "RFC 3339"},
		{"a date without a time", api.AdminKey, path + "?as_of=2026-11-20", 400, "as_of", "RFC 3339"},
		{"month 13", api.AdminKey, path + "?as_of=2026-13-01T00:00:00Z", 400, "as_of", "RFC 3339"},
		{"an hour ahead", api.AdminKey, path + "?" + asOfQuery(time.Now().Add(time.Hour)), 400, "as_of", "not be after now"},
		{"now is not the future", api.AdminKey, path + "?" + asOfQuery(time.Now()), 200, "", ""},
		{"an unencoded offset", api.AdminKey, path + "?as_of=" + marks[0].In(time.FixedZone("", 3600)).Format(time.RFC3339Nano), 200, "", ""},
		{"a bad id", api.AdminKey, "/policies/rate-limits/nope?" + at, 400, "rateLimitsPolicyId", "UUID"},
		{"an unknown id", api.AdminKey, "/policies/rate-limits/" + uuid.NewString() + "?" + at, 404, "", "did not exist at"},
		{"a key of the policy's workspace", keyA, path + "?" + at, 200, "", ""},
		{"a key of another workspace", keyB, path + "?" + at, 404, "", "not found"},
		{"a key without policies.read", unscoped, path + "?" + at, 403, "", "policies.read"},
		{"no key", "", path + "?" + at, 401, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := api.Do(http.MethodGet, c.path, c.key, nil)
			require.Equal(t, c.status, got.Status, string(got.Raw))
			assert.Equal(t, c.param, got.ErrorParam())
			assert.Contains(t, got.ErrorMessage(), c.message)
			if c.status == http.StatusOK {
				normal := api.Do(http.MethodGet, path, c.key, nil)
				assert.Equal(t, http.StatusOK, normal.Status, "as_of is allowed exactly where the normal read is")
			}
		})
	}
}

func TestAsOfWorkspaceBeforeItsArchive(t *testing.T) {
	api := newTestAPI(t)
	ann := api.seedUser("ann@example.com", domain.RoleMember)
	before := asOfMark()
	created := api.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Data Science", "slug": "data-science"})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	id := created.Str("id")
	empty := asOfMark()
	api.Advance(time.Minute)
	added := api.Admin(http.MethodPost, "/workspaces/"+id+"/users", map[string]any{"users": []map[string]string{{"id": ann, "role": "member"}}})
	require.Equal(t, http.StatusOK, added.Status, string(added.Raw))
	member := asOfMark()
	api.Advance(time.Minute)
	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, "/workspaces/"+id, nil).Status)
	archived := asOfMark()

	cases := []struct {
		name   string
		at     time.Time
		status string
		users  int
	}{
		{"created, no members yet", empty, "active", 0},
		{"a member added", member, "active", 1},
		{"archived", archived, "archived", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ref := range []string{id, "data-science"} {
				got := api.Admin(http.MethodGet, "/workspaces/"+ref+"?"+asOfQuery(c.at), nil)
				require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
				assert.Equal(t, id, got.Str("id"))
				assert.Equal(t, c.status, got.Str("status"), ref)
				assert.Len(t, got.Body["users"], c.users, ref)
				asOfHeaderTime(t, got)
			}
		})
	}
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/workspaces/"+id+"?"+asOfQuery(before), nil).Status)
	assert.Equal(t, "archived", api.Admin(http.MethodGet, "/workspaces/"+id, nil).Str("status"), "the normal read says now")

	// The user's workspaces are as they were too.
	for at, want := range map[time.Time][]any{empty: {}, member: {id}} {
		u := api.Admin(http.MethodGet, "/users/"+ann+"?"+asOfQuery(at), nil)
		require.Equal(t, http.StatusOK, u.Status, string(u.Raw))
		assert.Equal(t, want, u.Body["workspace_ids"])
	}
}

func TestAsOfAPIKeyAcrossARotation(t *testing.T) {
	api := newTestAPI(t)
	created := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "ci",
		"scopes": []string{"organisation_service_api_keys.read", "completions.write"}})
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	id, first := created.Str("id"), created.Str("key")
	beforeRotation := asOfMark()
	api.Advance(time.Minute)
	rotated := api.Admin(http.MethodPost, "/api-keys/"+id+"/rotate", nil)
	require.Equal(t, http.StatusOK, rotated.Status, string(rotated.Raw))
	second := rotated.Str("key")
	afterRotation := asOfMark()
	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, "/api-keys/"+id, nil).Status)
	deleted := asOfMark()

	path := "/api-keys/" + id + "?"
	old := api.Admin(http.MethodGet, path+asOfQuery(beforeRotation), nil)
	require.Equal(t, http.StatusOK, old.Status, string(old.Raw))
	current := api.Admin(http.MethodGet, path+asOfQuery(afterRotation), nil)
	require.Equal(t, http.StatusOK, current.Status, string(current.Raw))
	assert.Equal(t, "api-key", old.Str("object"))
	assert.NotEqual(t, old.Str("key"), current.Str("key"), "the masked key differs by time")
	assert.Equal(t, first[len(first)-4:], old.Str("key")[len(old.Str("key"))-4:])
	assert.Equal(t, second[len(second)-4:], current.Str("key")[len(current.Str("key"))-4:])
	for _, got := range []response{old, current} {
		assert.Contains(t, got.Str("key"), "****", "masked")
		for _, secret := range []string{first, second, domain.HashKey(first), domain.HashKey(second)} {
			assert.NotContains(t, string(got.Raw), secret, "never a plaintext or a hash")
		}
		assert.NotContains(t, got.Body, "hash")
	}

	gone := api.Admin(http.MethodGet, path+asOfQuery(deleted), nil)
	assert.Equal(t, http.StatusNotFound, gone.Status, "a deleted key did not exist then")
	assert.Contains(t, gone.ErrorMessage(), "did not exist at")
}

// Every resource read answers as_of with the normal read's body and refuses the instant
// before the resource existed.
func TestAsOfEveryResourceRead(t *testing.T) {
	beforeOrganisation := asOfMark()
	api := newTestAPI(t)
	before := asOfMark()
	ws := api.seedWorkspace("team-a", nil)
	user := api.seedUser("bob@example.com", domain.RoleMember)
	invite := api.Admin(http.MethodPost, "/users/invites", map[string]any{"email": "cy@example.com", "role": "member"})
	require.Equal(t, http.StatusOK, invite.Status, string(invite.Raw))
	policy := api.Admin(http.MethodPost, "/policies/usage-limits", map[string]any{"name": "budget", "workspace_id": ws, "type": "cost",
		"credit_limit": 10, "conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}})
	require.Equal(t, http.StatusOK, policy.Status, string(policy.Raw))
	note := uuid.NewString()
	api.seedEvents(domain.Stream(domain.NotificationPrefix, note), domain.NotificationRecorded{NotificationID: note,
		OrganisationID: api.OrgID, WorkspaceID: ws, Kind: domain.NotifyUsageThreshold, Recipients: []string{"ops@example.com"},
		Subject: "Usage threshold reached", At: api.Now()})
	after := asOfMark()

	cases := []struct {
		name   string
		path   string
		before time.Time
	}{
		{"workspace", "/workspaces/" + ws, before},
		{"user", "/users/" + user, before},
		{"invite", "/users/invites/" + invite.Str("id"), before},
		{"usage limit policy", "/policies/usage-limits/" + policy.Str("id"), before},
		{"usage limit policy with usage", "/policies/usage-limits/" + policy.Str("id") + "?include_usage=true", before},
		{"notification", "/notifications/" + note, before},
		{"organisation settings", "/organisation/settings", beforeOrganisation},
		{"organisation settings by id", "/organisations/" + api.OrgID + "/settings", beforeOrganisation},
		{"a key by the reference's path", "/admin/api-keys/" + api.adminKeyID(t), beforeOrganisation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sep := "?"
			if strings.Contains(c.path, "?") {
				sep = "&"
			}
			normal := api.Admin(http.MethodGet, c.path, nil)
			require.Equal(t, http.StatusOK, normal.Status, string(normal.Raw))
			past := api.Admin(http.MethodGet, c.path+sep+asOfQuery(after), nil)
			require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
			assert.Equal(t, normal.Body, past.Body)
			asOfHeaderTime(t, past)
			gone := api.Admin(http.MethodGet, c.path+sep+asOfQuery(c.before), nil)
			require.Equal(t, http.StatusNotFound, gone.Status, string(gone.Raw))
			assert.Contains(t, gone.ErrorMessage(), "did not exist at")
		})
	}
	other := api.Admin(http.MethodGet, "/organisations/"+uuid.NewString()+"/settings?"+asOfQuery(after), nil)
	assert.Equal(t, http.StatusNotFound, other.Status, "another organisation is not found")
}

// adminKeyID is the id of the bootstrap admin key.
func (a *testAPI) adminKeyID(t *testing.T) string {
	t.Helper()
	list := a.Admin(http.MethodGet, "/api-keys", nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	require.NotEmpty(t, list.Data())
	id, _ := list.Data()[0]["id"].(string)
	return id
}

func TestAuditHistoryOfAPolicy(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	id, _, _ := asOfPolicy(t, api, ws)

	got := api.Admin(http.MethodGet, "/audit/resources/ratelimitpolicy/"+id+"/history", nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Equal(t, "list", got.Str("object"))
	assert.EqualValues(t, 4, got.Body["total"])
	entries := got.Data()
	require.Len(t, entries, 4)
	actions := []string{"RateLimitPolicyCreated", "RateLimitPolicyUpdated", "RateLimitPolicyUpdated", "RateLimitPolicyUpdated"}
	var lastPosition float64
	var lastTime time.Time
	for i, e := range entries {
		assert.Equal(t, actions[i], e["action"], "entry %d", i)
		assert.EqualValues(t, i, e["revision"], "oldest first")
		pos, _ := e["position"].(float64)
		assert.Greater(t, pos, lastPosition)
		lastPosition = pos
		ts, err := time.Parse(time.RFC3339Nano, e["timestamp"].(string))
		require.NoError(t, err)
		assert.False(t, ts.Before(lastTime))
		lastTime = ts
		actor, _ := e["actor"].(map[string]any)
		assert.Equal(t, "api_key", actor["kind"])
		assert.NotEmpty(t, actor["id"])
		assert.NotEmpty(t, e["request_id"])
		assert.NotEmpty(t, e["client_ip"])
		after, _ := e["after"].(map[string]any)
		assert.EqualValues(t, []float64{5, 10, 20, 30}[i], after["value"])
		if i == 0 {
			assert.Nil(t, e["before"], "nothing before the first event")
			assert.Equal(t, http.MethodPost, e["method"])
			assert.Equal(t, "/v1/policies/rate-limits", e["uri"])
			continue
		}
		assert.Equal(t, entries[i-1]["after"], e["before"], "each change starts where the last ended")
		assert.Equal(t, http.MethodPut, e["method"])
		assert.Equal(t, "/v1/policies/rate-limits/"+id, e["uri"])

		// Each entry's timestamp reads its own state back.
		past := api.Admin(http.MethodGet, "/policies/rate-limits/"+id+"?as_of="+url.QueryEscape(e["timestamp"].(string)), nil)
		require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
		assert.EqualValues(t, after["value"], past.Body["value"])
		assert.Equal(t, e["timestamp"], past.Header.Get(AsOfHeader))
	}

	paged := api.Admin(http.MethodGet, "/audit/resources/rate-limits/"+id+"/history?page_size=3&current_page=1", nil)
	require.Equal(t, http.StatusOK, paged.Status, string(paged.Raw))
	assert.EqualValues(t, 4, paged.Body["total"])
	require.Len(t, paged.Data(), 1)
	assert.Equal(t, entries[3], paged.Data()[0], "a later page has the same entries, states included")
}

func TestAuditHistoryTypesAndErrors(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	id, _, _ := asOfPolicy(t, api, ws)
	keyR := api.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "reader", "scopes": []string{"logs.view"}})
	require.Equal(t, http.StatusOK, keyR.Status, string(keyR.Raw))
	wsKey := api.Admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "svc", "workspace_id": ws,
		"scopes": []string{"audit_logs.list"}})
	require.Equal(t, http.StatusOK, wsKey.Status, string(wsKey.Raw))
	history := func(typ, rid string) string { return "/audit/resources/" + typ + "/" + rid + "/history" }

	cases := []struct {
		name   string
		key    string
		path   string
		status int
		param  string
		total  int
	}{
		{"stream prefix", api.AdminKey, history("ratelimitpolicy", id), 200, "", 4},
		{"path alias", api.AdminKey, history("rate-limits", id), 200, "", 4},
		{"audit log alias", api.AdminKey, history("rate_limit_policy", id), 200, "", 4},
		{"the reference's prefix", api.AdminKey, "/admin" + history("ratelimitpolicy", id), 200, "", 4},
		{"a workspace by id", api.AdminKey, history("workspaces", ws), 200, "", 1},
		{"a workspace by slug", api.AdminKey, history("workspace", "team-a"), 200, "", 1},
		{"the organisation", api.AdminKey, history("organisation", api.OrgID), 200, "", 1},
		{"the owner", api.AdminKey, history("users", api.OwnerID), 200, "", 1},
		{"a key", api.AdminKey, history("api-keys", keyR.Str("id")), 200, "", 1},
		{"an unknown type", api.AdminKey, history("policies", id), 400, "type", 0},
		{"a reservation is no resource", api.AdminKey, history("reservation", id), 400, "type", 0},
		{"a bad page size", api.AdminKey, history("ratelimitpolicy", id) + "?page_size=1001", 400, "page_size", 0},
		{"a missing id", api.AdminKey, history("ratelimitpolicy", uuid.NewString()), 404, "", 0},
		{"a resource of another type", api.AdminKey, history("usagelimitpolicy", id), 404, "", 0},
		{"a workspace key", wsKey.Str("key"), history("ratelimitpolicy", id), 403, "", 0},
		{"without audit_logs.list", keyR.Str("key"), history("ratelimitpolicy", id), 403, "", 0},
		{"no key", "", history("ratelimitpolicy", id), 401, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := api.Do(http.MethodGet, c.path, c.key, nil)
			require.Equal(t, c.status, got.Status, string(got.Raw))
			assert.Equal(t, c.param, got.ErrorParam())
			if c.status == http.StatusOK {
				assert.EqualValues(t, c.total, got.Body["total"])
			}
		})
	}

	// An API key's history shows its states, never its hash.
	key := api.Admin(http.MethodGet, history("apikey", keyR.Str("id")), nil)
	require.Equal(t, http.StatusOK, key.Status)
	assert.NotContains(t, string(key.Raw), domain.HashKey(keyR.Str("key")))
	assert.NotContains(t, string(key.Raw), keyR.Str("key"))
}

// Another organisation's resource is not found, by as_of or in history, though its stream
// exists.
func TestAsOfAndHistoryStayInTheOrganisation(t *testing.T) {
	api := newTestAPI(t)
	id := uuid.NewString()
	api.seedEvents(domain.Stream(domain.RateLimitPolicyPrefix, id), domain.RateLimitPolicyCreated{PolicyID: id,
		OrganisationID: uuid.NewString(), Type: "requests", Unit: "rpm", Value: 1, At: api.Now()})
	at := asOfMark()

	past := api.Admin(http.MethodGet, "/policies/rate-limits/"+id+"?"+asOfQuery(at), nil)
	require.Equal(t, http.StatusNotFound, past.Status, string(past.Raw))
	assert.Contains(t, past.ErrorMessage(), "not found")
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/audit/resources/ratelimitpolicy/"+id+"/history", nil).Status)
}

// With audit logs turned off, history is refused as disabled.
func TestAuditHistoryDisabled(t *testing.T) {
	api := newTestAPI(t)
	admin := &Admin{Read: api.Read, Commands: api.AdminAPI.Commands, Deps: api.Deps, Now: api.Now, Secret: bytes.Repeat([]byte("s"), 32),
		Features: Features{APIAccess: true, Policy: true, UsageLimits: true}}
	router := NewRouter(Deps{Admin: admin, Health: &Health{}})
	req := httptest.NewRequest(http.MethodGet, "/v1/audit/resources/organisation/"+api.OrgID+"/history", nil)
	req.Header.Set("x-gateway-api-key", api.AdminKey)
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, req)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"code":"disabled"`)
	assert.Contains(t, rec.Body.String(), "AUDIT_LOGS_ENABLED")
}

// A time a little after now is read as now (a client's "now", or its clock slightly ahead);
// further ahead it is refused, naming as_of and the bound.
func TestAsOfSkew(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	for _, path := range []string{"/workspaces/" + ws, "/workspaces", "/audit-logs", "/audit/resources/workspace/" + ws + "/history"} {
		soon := api.Admin(http.MethodGet, path+"?"+asOfQuery(time.Now().Add(2*time.Second)), nil)
		assert.Equal(t, http.StatusOK, soon.Status, "%s: %s", path, soon.Raw)
		roundedUp := time.Now().Add(time.Second - time.Nanosecond).Truncate(time.Second)
		now := api.Admin(http.MethodGet, path+"?as_of="+url.QueryEscape(roundedUp.UTC().Format(time.RFC3339)), nil)
		assert.Equal(t, http.StatusOK, now.Status, "%s: now to the second, rounded up: %s", path, now.Raw)
		later := api.Admin(http.MethodGet, path+"?"+asOfQuery(time.Now().Add(time.Minute)), nil)
		assert.Equal(t, http.StatusBadRequest, later.Status, path)
		assert.Equal(t, "as_of", later.ErrorParam(), path)
		assert.Contains(t, later.ErrorMessage(), "now plus 5s", path)
	}
}

// Every resource type the API has a history for answers it, each change with the states
// before and after; integrations and providers (by slug too) among them.
func TestAuditHistoryOfEveryResourceType(t *testing.T) {
	l := newListsAPI(t)
	price := l.Admin(http.MethodPut, "/model-configs/pricing/openai/gpt-4o", map[string]any{"pay_as_you_go": map[string]any{
		"request_token": map[string]any{"price": 0.5}}})
	require.Equal(t, http.StatusOK, price.Status, string(price.Raw))
	mark := asOfMark()
	require.Equal(t, http.StatusOK, l.Admin(http.MethodPut, "/integrations/"+l.Integration, map[string]any{"name": "OpenAI"}).Status)
	require.Equal(t, http.StatusOK, l.Admin(http.MethodPut, "/providers/"+l.Provider, map[string]any{"note": "changed"}).Status)
	require.Equal(t, http.StatusOK, l.Admin(http.MethodDelete, "/model-configs/pricing/openai/gpt-4o", nil).Status)
	ids := map[string]string{
		"organisation": l.OrgID, "workspace": l.WS, "user": l.Member, "invite": l.Invite, "api_key": l.KeyID,
		"rate_limit_policy": l.RateLimit, "usage_limit_policy": l.UsageLimit, "notification": l.Note,
		"integration": l.Integration, "provider": l.Provider, "config": l.Config, "log_export": l.Export, "guardrail": l.Guardrail,
		"webhook":       l.Webhook,
		"model_pricing": domain.ModelPricingOverrideID(l.OrgID, "", "openai", "gpt-4o"),
		"prompt":        l.Prompt, "prompt_partial": l.Partial, "prompt_label": l.Label, "prompt_collection": l.Collection,
	}
	history := func(typ, id, query string) response {
		return l.Admin(http.MethodGet, "/audit/resources/"+typ+"/"+id+"/history?page_size=1000"+query, nil)
	}
	for _, typ := range projections.HistoryResourceTypes() {
		t.Run(typ, func(t *testing.T) {
			id, ok := ids[typ]
			require.True(t, ok, "a case for every resource type with a history")
			got := history(typ, id, "")
			require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
			entries := got.Data()
			require.NotEmpty(t, entries)
			assert.Nil(t, entries[0]["before"], "nothing before the first event")
			for i, e := range entries {
				assert.NotNil(t, e["after"], "entry %d has the state after it", i)
				if i > 0 {
					assert.Equal(t, entries[i-1]["after"], e["before"], "entry %d starts where the last ended", i)
				}
			}
		})
	}

	integration := history("integrations", l.Integration, "").Data()
	last := integration[len(integration)-1]
	assert.Equal(t, "IntegrationUpdated", last["action"])
	assert.Equal(t, "OpenAI prod", obj(last, "before")["name"])
	assert.Equal(t, "OpenAI", obj(last, "after")["name"])
	assert.NotContains(t, string(history("integration", l.Integration, "").Raw), "sk-test-0123456789abcdef", "never the key")
	provider := history("virtual-keys", l.Provider, "").Data()
	last = provider[len(provider)-1]
	assert.Equal(t, "ProviderUpdated", last["action"])
	assert.Equal(t, "changed", obj(last, "after")["note"])
	byID := history("provider", obj(last, "after")["id"].(string), "")
	assert.Equal(t, len(provider), len(byID.Data()), "a provider by id as by slug")
	pricing := history("model_pricing", ids["model_pricing"], "").Data()
	require.Len(t, pricing, 2)
	assert.Equal(t, "removed", obj(pricing[1], "after")["status"])

	// As of the mark, the history is the changes made by then.
	past := history("integration", l.Integration, "&"+asOfQuery(mark))
	require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
	assert.Equal(t, integration[:len(integration)-1], past.Data())
	assert.EqualValues(t, len(integration)-1, past.Body["total"])
	gone := history("integration", l.Integration, "&"+asOfQuery(time.Now().Add(-time.Hour)))
	assert.Equal(t, http.StatusNotFound, gone.Status)
	assert.Contains(t, gone.ErrorMessage(), "did not exist at")

	bad := history("widgets", l.WS, "")
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, "type", bad.ErrorParam())
	assert.Contains(t, bad.ErrorMessage(), "integration")
}
