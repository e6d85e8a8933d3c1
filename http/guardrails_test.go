package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

var guardrailScopes = []string{"configs.create", "configs.read", "configs.list", "configs.update", "configs.delete"}

// piiGuardrail is a create body in the reference's shape.
func piiGuardrail(owner map[string]any) map[string]any {
	body := map[string]any{"name": "PII guard",
		"checks": []any{
			map[string]any{"id": "default.regexMatch", "parameters": map[string]any{"rule": `\d{3}-\d{2}-\d{4}`, "not": true}, "name": "SSN"},
			map[string]any{"id": "default.requiredMetadataKeyPairs", "parameters": map[string]any{"metadataPairs": map[string]any{"team": "a"}, "operator": "all"}, "is_enabled": false},
		},
		"actions": map[string]any{"deny": true, "async": false,
			"on_success": map[string]any{"feedback": map[string]any{"value": 5, "weight": 1, "metadata": ""}},
			"on_fail":    map[string]any{"feedback": map[string]any{"value": -5, "weight": 1, "metadata": "pii"}}}}
	for k, v := range owner {
		body[k] = v
	}
	return body
}

func createGuardrailOK(t *testing.T, api *testAPI, key string, body map[string]any) map[string]any {
	t.Helper()
	r := api.Do(http.MethodPost, "/guardrails", key, body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Body
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The reference's CRUD: create answers {id, slug, version_id}; a guardrail reads by id or
// slug as GuardrailDetails; a change of checks or actions is a new version, a rename is not;
// lists filter by workspace_id and organisation_id and page; DELETE archives it and frees its
// slug.
func TestGuardrailLifecycle(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	other := api.seedWorkspace("team-b", nil)

	created := createGuardrailOK(t, api, api.AdminKey, piiGuardrail(map[string]any{"workspace_id": ws}))
	assert.Equal(t, []string{"id", "slug", "version_id"}, keys(created), "CreateGuardrailResponse")
	id, slug, v1 := created["id"].(string), created["slug"].(string), created["version_id"].(string)
	assert.True(t, strings.HasPrefix(slug, "pii-guard-"), slug)
	api.Advance(time.Minute)
	orgWide := createGuardrailOK(t, api, api.AdminKey, map[string]any{"name": "Org words", "slug": "org-words", "organisation_id": api.OrgID,
		"checks": []any{map[string]any{"id": "default.contains", "parameters": map[string]any{"words": []any{"secret"}}}}, "actions": map[string]any{}})
	assert.Equal(t, "org-words", orgWide["slug"])
	api.Advance(time.Minute)
	createGuardrailOK(t, api, api.AdminKey, map[string]any{"name": "B", "workspace_id": other,
		"checks": []any{map[string]any{"id": "default.regexMatch", "parameters": map[string]any{"rule": "b"}}}, "actions": map[string]any{"async": true}})

	for _, ref := range []string{id, slug} {
		got := api.Admin(http.MethodGet, "/guardrails/"+ref, nil)
		require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
		assert.Equal(t, []string{"actions", "checks", "created_at", "id", "last_updated_at", "name", "object", "organisation_id", "owner_id",
			"slug", "status", "updated_by", "version_id", "workspace_id"}, keys(got.Body), "GuardrailDetails")
		assert.Equal(t, id, got.Body["id"])
		assert.Equal(t, ws, got.Body["workspace_id"])
		assert.Equal(t, api.OrgID, got.Body["organisation_id"])
		assert.Equal(t, "active", got.Body["status"])
		assert.Equal(t, v1, got.Body["version_id"])
		assert.Equal(t, `"0"`, got.Header.Get("ETag"), "the stream's revision")
		checks, _ := json.Marshal(got.Body["checks"])
		assert.JSONEq(t, `[{"id":"default.regexMatch","parameters":{"rule":"\\d{3}-\\d{2}-\\d{4}","not":true},"name":"SSN","is_enabled":true},
			{"id":"default.requiredMetadataKeyPairs","parameters":{"metadataPairs":{"team":"a"},"operator":"all"},"is_enabled":false}]`, string(checks))
		actions, _ := json.Marshal(got.Body["actions"])
		assert.JSONEq(t, `{"deny":true,"async":false,"on_success":{"feedback":{"value":5,"weight":1,"metadata":""}},
			"on_fail":{"feedback":{"value":-5,"weight":1,"metadata":"pii"}}}`, string(actions))
	}
	org := api.Admin(http.MethodGet, "/guardrails/org-words", nil)
	require.Equal(t, http.StatusOK, org.Status)
	assert.Nil(t, org.Body["workspace_id"], "an organisation guardrail's workspace_id is null")
	assert.Contains(t, string(org.Raw), `"workspace_id":null`)
	defaults, _ := json.Marshal(org.Body["actions"])
	assert.JSONEq(t, `{"deny":false,"async":false,"on_success":{"feedback":{"value":5,"weight":1,"metadata":""}},
		"on_fail":{"feedback":{"value":-5,"weight":1,"metadata":""}}}`, string(defaults), "the reference's defaults")

	upd := api.Admin(http.MethodPut, "/guardrails/"+slug, map[string]any{"name": "PII",
		"checks": []any{map[string]any{"id": "default.contains", "parameters": map[string]any{"words": []any{"ssn"}}}}})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, []string{"id", "slug", "version_id"}, keys(upd.Body), "UpdateGuardrailResponse")
	v2 := upd.Body["version_id"].(string)
	assert.NotEqual(t, v1, v2, "new checks are a new version")
	renamed := api.Admin(http.MethodPut, "/guardrails/"+id, map[string]any{"name": "PII only"})
	require.Equal(t, http.StatusOK, renamed.Status, string(renamed.Raw))
	assert.Equal(t, v2, renamed.Body["version_id"], "a rename is no new version")
	now := api.Admin(http.MethodGet, "/guardrails/"+id, nil)
	assert.Equal(t, "PII only", now.Body["name"])
	assert.Equal(t, true, obj(now.Body, "actions")["deny"], "new checks keep the actions in force")
	assert.Equal(t, `"2"`, now.Header.Get("ETag"))

	versions := api.Admin(http.MethodGet, "/guardrails/"+slug+"/versions", nil)
	require.Equal(t, http.StatusOK, versions.Status, string(versions.Raw))
	require.Len(t, versions.Data(), 2)
	assert.Equal(t, v2, versions.Data()[0]["version_id"], "newest first")
	assert.Equal(t, v1, versions.Data()[1]["version_id"])
	assert.Equal(t, "SSN", versions.Data()[1]["checks"].([]any)[0].(map[string]any)["name"], "each version keeps its checks")

	list := api.Admin(http.MethodGet, "/guardrails", nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	assert.Equal(t, "list", list.Body["object"])
	assert.EqualValues(t, 3, list.Body["total"])
	require.Len(t, list.Data(), 3)
	assert.Nil(t, list.Data()[0]["checks"], "lists show GuardrailSummary")
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"workspace_id=" + ws, []string{"PII only"}},
		{"workspace_id=" + other, []string{"B"}},
		{"organisation_id=" + api.OrgID, []string{"Org words"}},
		{"page_size=1&current_page=1", []string{"Org words"}},
		{"page_size=2&current_page=1", []string{"PII only"}},
	} {
		r := api.Admin(http.MethodGet, "/guardrails?"+tc.query, nil)
		require.Equal(t, http.StatusOK, r.Status, tc.query)
		var names []string
		for _, d := range r.Data() {
			names = append(names, d["name"].(string))
		}
		assert.Equal(t, tc.want, names, tc.query)
	}
	paged := api.Admin(http.MethodGet, "/guardrails?page_size=1&current_page=1", nil)
	assert.EqualValues(t, 3, paged.Body["total"])
	assert.EqualValues(t, 1, paged.Body["page_size"])
	assert.EqualValues(t, 1, paged.Body["current_page"])
	for q, param := range map[string]string{"page_size=1001": "page_size", "current_page=-1": "current_page",
		"organisation_id=someone-else": "organisation_id", "status=gone": "status"} {
		r := api.Admin(http.MethodGet, "/guardrails?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, q)
		assert.Equal(t, param, r.ErrorParam(), q)
	}

	del := api.Admin(http.MethodDelete, "/guardrails/"+slug, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, "archived", del.Body["status"])
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/guardrails/"+slug, nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, "/guardrails/"+id, nil).Status)
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, "/guardrails/"+id+"?status=archived", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, "/guardrails/"+id, nil).Status)
	assert.Len(t, api.Admin(http.MethodGet, "/guardrails", nil).Data(), 2)
	assert.Len(t, api.Admin(http.MethodGet, "/guardrails?status=archived", nil).Data(), 1)
	again := api.Admin(http.MethodPost, "/guardrails", piiGuardrail(map[string]any{"workspace_id": ws, "slug": slug}))
	assert.Equal(t, http.StatusOK, again.Status, "a deleted guardrail's slug is free: %s", again.Raw)
}

// Every refusal names its field, and a bound names the bound.
func TestGuardrailValidationNamesTheField(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	check := func(id string, params any) map[string]any { return map[string]any{"id": id, "parameters": params} }
	regex := check("default.regexMatch", map[string]any{"rule": "x"})
	checks := func(n int, c map[string]any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = c
		}
		return out
	}
	with := func(field string, v any) map[string]any {
		b := map[string]any{"name": "g", "workspace_id": ws, "checks": []any{regex}, "actions": map[string]any{"deny": true}}
		if v == nil {
			delete(b, field)
		} else {
			b[field] = v
		}
		return b
	}
	pad := func(n int) map[string]any { return map[string]any{"rule": strings.Repeat("x", n)} }
	cases := []struct {
		name  string
		body  any
		param string
		bound string
	}{
		{"no name", with("name", nil), "name", ""},
		{"name of 256", with("name", strings.Repeat("n", 256)), "name", "at most 255"},
		{"bad slug", with("slug", "PII Guard"), "slug", ""},
		{"no checks", with("checks", nil), "checks", "1 to 50"},
		{"no check", with("checks", []any{}), "checks", "from 1 to 50"},
		{"51 checks", with("checks", checks(51, regex)), "checks", "from 1 to 50"},
		{"checks not an array", with("checks", "default.regexMatch"), "checks", ""},
		{"an unknown check", with("checks", []any{regex, check("acme.scan", nil)}), "checks[1].id", "not a known guardrail check"},
		{"a check id that is none", with("checks", []any{check("regex match", nil)}), "checks[0].id", ""},
		{"a check id of 129", with("checks", []any{check("default."+strings.Repeat("a", 121), nil)}), "checks[0].id", "at most 128"},
		{"a missing parameter", with("checks", []any{check("default.regexMatch", map[string]any{})}), "checks[0].parameters.rule", "is required"},
		{"a parameter out of its values", with("checks", []any{regex, check("default.requiredMetadataKeyPairs",
			map[string]any{"metadataPairs": map[string]any{}, "operator": "most"})}), "checks[1].parameters.operator", "all, any, none"},
		{"parameters not an object", with("checks", []any{check("default.regexMatch", []any{"x"})}), "checks[0].parameters", ""},
		{"parameters over 64 KiB", with("checks", []any{check("default.regexMatch", pad(domain.MaxCheckParamsBytes))}), "checks[0].parameters", "at most 65536 bytes"},
		{"all parameters over 256 KiB", with("checks", checks(5, check("default.jsonSchema", map[string]any{"schema": map[string]any{
			"type": "string", "description": strings.Repeat("d", 60_000)}}))), "checks", "at most 262144 bytes"},
		{"a check's name of 256", with("checks", []any{map[string]any{"id": "default.regexMatch", "parameters": map[string]any{"rule": "x"},
			"name": strings.Repeat("n", 256)}}), "checks[0].name", "at most 255"},
		{"an unknown check field", with("checks", []any{map[string]any{"id": "default.regexMatch", "params": map[string]any{}}}), "checks[0].params", ""},
		{"no actions", with("actions", nil), "actions", "required"},
		{"the reference example's actions", with("actions", map[string]any{"onFail": "block", "message": "no"}), "actions.message", ""},
		{"deny not a boolean", with("actions", map[string]any{"deny": "yes"}), "actions.deny", ""},
		{"feedback value of -11", with("actions", map[string]any{"on_fail": map[string]any{"feedback": map[string]any{"value": -11}}}),
			"actions.on_fail.feedback.value", "from -10 to 10"},
		{"feedback weight of 1.5", with("actions", map[string]any{"on_success": map[string]any{"feedback": map[string]any{"weight": 1.5}}}),
			"actions.on_success.feedback.weight", "from 0 to 1"},
		{"feedback metadata of 4097", with("actions", map[string]any{"on_fail": map[string]any{"feedback": map[string]any{"metadata": strings.Repeat("m", 4097)}}}),
			"actions.on_fail.feedback.metadata", "at most 4096"},
		{"another organisation", with("organisation_id", "org-else"), "organisation_id", ""},
		{"no owner", func() map[string]any { b := with("workspace_id", nil); return b }(), "workspace_id", ""},
		{"an unknown field", with("colour", "red"), "colour", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, "/guardrails", tc.body)
			require.Equal(t, http.StatusBadRequest, r.Status, string(r.Raw))
			assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
			assert.Contains(t, r.ErrorMessage(), tc.bound)
		})
	}
	fifty := api.Admin(http.MethodPost, "/guardrails", with("checks", checks(50, regex)))
	assert.Equal(t, http.StatusOK, fifty.Status, "50 checks: %s", fifty.Raw)
	id := fifty.Body["id"].(string)
	for name, tc := range map[string]struct {
		body  any
		param string
	}{
		"nothing":           {map[string]any{}, ""},
		"a bad new version": {map[string]any{"checks": []any{check("default.contains", map[string]any{"words": "ssn"})}}, "checks[0].parameters.words"},
		"bad actions":       {map[string]any{"actions": []any{}}, "actions"},
		"a slug":            {map[string]any{"slug": "new"}, "slug"},
	} {
		r := api.Admin(http.MethodPut, "/guardrails/"+id, tc.body)
		assert.Equal(t, http.StatusBadRequest, r.Status, name)
		assert.Equal(t, tc.param, r.ErrorParam(), name)
	}
	assert.Equal(t, []any{}, api.Admin(http.MethodGet, "/guardrails?status=archived", nil).Body["data"], "nothing refused was written")
}

// guardrailKey makes a workspace key: a service key acts as the workspace's manager, a user
// key as its user's role.
func guardrailKey(t *testing.T, api *testAPI, path, ws, user string) string {
	t.Helper()
	body := map[string]any{"name": "k", "workspace_id": ws, "scopes": guardrailScopes}
	if user != "" {
		body["user_id"] = user
	}
	r := api.Admin(http.MethodPost, path, body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("key")
}

// Who sees and who writes: everyone of the organisation sees its guardrails, and a
// workspace's those who see the workspace; organisation admins write every guardrail, a
// workspace's managers their workspace's; members and other workspaces write none.
func TestGuardrailAccess(t *testing.T) {
	api := newTestAPI(t)
	member := api.seedUser("member@example.com", domain.RoleMember)
	ws := api.seedWorkspace("team-a", map[string]domain.Role{member: domain.RoleMember})
	other := api.seedWorkspace("team-b", nil)
	managerKey := guardrailKey(t, api, "/api-keys/workspace/service", ws, "")
	memberKey := guardrailKey(t, api, "/api-keys/workspace/user", ws, member)
	otherKey := guardrailKey(t, api, "/api-keys/workspace/service", other, "")

	orgG := createGuardrailOK(t, api, api.AdminKey, piiGuardrail(map[string]any{"organisation_id": api.OrgID}))["id"].(string)
	wsG := createGuardrailOK(t, api, api.AdminKey, piiGuardrail(map[string]any{"workspace_id": ws}))["id"].(string)

	read := func(key, id string) int { return api.Do(http.MethodGet, "/guardrails/"+id, key, nil).Status }
	assert.Equal(t, http.StatusOK, read(memberKey, orgG), "a member sees the organisation's guardrails")
	assert.Equal(t, http.StatusOK, read(memberKey, wsG), "and its workspace's")
	assert.Equal(t, http.StatusOK, read(otherKey, orgG))
	assert.Equal(t, http.StatusNotFound, read(otherKey, wsG), "another workspace's guardrail is not found")
	assert.Len(t, api.Do(http.MethodGet, "/guardrails", otherKey, nil).Data(), 1, "lists show what the key sees")
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, "/guardrails?workspace_id="+ws, otherKey, nil).Status)

	for _, tc := range []struct {
		name, key, id string
		want          int
	}{
		{"a manager its workspace's", managerKey, wsG, http.StatusOK},
		{"a manager the organisation's", managerKey, orgG, http.StatusForbidden},
		{"a member its workspace's", memberKey, wsG, http.StatusForbidden},
		{"a member the organisation's", memberKey, orgG, http.StatusForbidden},
		{"another workspace's manager", otherKey, wsG, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Do(http.MethodPut, "/guardrails/"+tc.id, tc.key, map[string]any{"name": "renamed"})
			assert.Equal(t, tc.want, r.Status, string(r.Raw))
		})
	}
	created := api.Do(http.MethodPost, "/guardrails", managerKey, piiGuardrail(nil))
	require.Equal(t, http.StatusOK, created.Status, "a workspace key creates in its own workspace: %s", created.Raw)
	assert.Equal(t, ws, api.Admin(http.MethodGet, "/guardrails/"+created.Body["id"].(string), nil).Body["workspace_id"])
	for name, tc := range map[string]struct {
		key  string
		body map[string]any
		want int
	}{
		"a manager, the organisation's":       {managerKey, piiGuardrail(map[string]any{"organisation_id": api.OrgID}), http.StatusForbidden},
		"a manager, another workspace's":      {managerKey, piiGuardrail(map[string]any{"workspace_id": other}), http.StatusForbidden},
		"a member, its workspace's":           {memberKey, piiGuardrail(nil), http.StatusForbidden},
		"an archived or unknown workspace's":  {api.AdminKey, piiGuardrail(map[string]any{"workspace_id": "no-such"}), http.StatusNotFound},
		"a manager, with a workspace_id null": {managerKey, piiGuardrail(map[string]any{"workspace_id": nil}), http.StatusOK},
	} {
		r := api.Do(http.MethodPost, "/guardrails", tc.key, tc.body)
		assert.Equal(t, tc.want, r.Status, "%s: %s", name, r.Raw)
	}
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodDelete, "/guardrails/"+wsG, memberKey, nil).Status)
	assert.Equal(t, http.StatusOK, api.Do(http.MethodDelete, "/guardrails/"+wsG, managerKey, nil).Status)
	denied := api.Admin(http.MethodGet, "/audit-logs?resource_type=guardrail&status_code=403", nil)
	require.Equal(t, http.StatusOK, denied.Status, string(denied.Raw))
	assert.NotEmpty(t, denied.Data(), "refusals are in the audit log under the guardrail type")
}

// Through the generic machinery: a retried create with its Idempotency-Key answers the first
// result and writes nothing; If-Match refuses a stale write; as_of reads a past version;
// the history and the audit log hold every change with the state before and after.
func TestGuardrailIdempotencyConcurrencyHistoryAndAudit(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	body := piiGuardrail(map[string]any{"workspace_id": ws, "slug": "pii"})
	first := api.Admin(http.MethodPost, "/guardrails", body, "Idempotency-Key", "g-1")
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	again := api.Admin(http.MethodPost, "/guardrails", body, "Idempotency-Key", "g-1")
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, first.Body, again.Body)
	reused := api.Admin(http.MethodPost, "/guardrails", piiGuardrail(map[string]any{"workspace_id": ws, "name": "Other"}), "Idempotency-Key", "g-1")
	assert.Equal(t, http.StatusUnprocessableEntity, reused.Status, "a key reused for another request")
	id, v1 := first.Body["id"].(string), first.Body["version_id"].(string)
	assert.Len(t, api.Admin(http.MethodGet, "/guardrails", nil).Data(), 1)

	etag := api.Admin(http.MethodGet, "/guardrails/pii", nil).Header.Get("ETag")
	mark := asOfMark()
	ok := api.Admin(http.MethodPut, "/guardrails/pii", map[string]any{"actions": map[string]any{"deny": false}}, "If-Match", etag)
	require.Equal(t, http.StatusOK, ok.Status, string(ok.Raw))
	stale := api.Admin(http.MethodPut, "/guardrails/pii", map[string]any{"name": "late"}, "If-Match", etag)
	assert.Equal(t, http.StatusPreconditionFailed, stale.Status, string(stale.Raw))

	past := api.Admin(http.MethodGet, "/guardrails/pii?"+asOfQuery(mark), nil)
	require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
	assert.Equal(t, v1, past.Body["version_id"], "as of then, the first version")
	assert.Equal(t, true, obj(past.Body, "actions")["deny"])
	assert.NotEmpty(t, past.Header.Get(AsOfHeader))
	assert.Equal(t, false, obj(api.Admin(http.MethodGet, "/guardrails/"+id, nil).Body, "actions")["deny"])
	before := api.Admin(http.MethodGet, "/guardrails/"+id+"?as_of="+url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)), nil)
	assert.Equal(t, http.StatusNotFound, before.Status, "before it was created")
	pastList := api.Admin(http.MethodGet, "/guardrails?"+asOfQuery(mark), nil)
	require.Equal(t, http.StatusOK, pastList.Status, string(pastList.Raw))
	require.Len(t, pastList.Data(), 1)
	assert.Equal(t, v1, pastList.Data()[0]["version_id"], "lists as of then too")

	for _, ref := range []string{id, "pii"} {
		history := api.Admin(http.MethodGet, "/audit/resources/guardrail/"+ref+"/history", nil)
		require.Equal(t, http.StatusOK, history.Status, string(history.Raw))
		entries := history.Data()
		require.Len(t, entries, 2)
		assert.Equal(t, "GuardrailCreated", entries[0]["action"])
		assert.Nil(t, entries[0]["before"])
		assert.Equal(t, "GuardrailUpdated", entries[1]["action"])
		assert.Len(t, obj(entries[1], "before")["versions"], 1)
		assert.Len(t, obj(entries[1], "after")["versions"], 2)
	}
	audit := api.Admin(http.MethodGet, "/audit-logs?resource_type=guardrails&resource_id="+id, nil)
	require.Equal(t, http.StatusOK, audit.Status, string(audit.Raw))
	require.Len(t, audit.Data(), 2)
	for _, rec := range audit.Data() {
		assert.Equal(t, "guardrail", rec["resource_type"])
		assert.NotNil(t, rec["after"])
	}
}

// Configs attach guardrails at every level; a saved config may name only live guardrails of
// its organisation or its workspace (AB16, naming the field). Workspaces attach them in their
// defaults, checked the same way.
func TestConfigsAndWorkspacesAttachGuardrails(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	other := api.seedWorkspace("team-b", nil)
	createGuardrailOK(t, api, api.AdminKey, piiGuardrail(map[string]any{"organisation_id": api.OrgID, "slug": "org-pii"}))
	mine := createGuardrailOK(t, api, api.AdminKey, piiGuardrail(map[string]any{"workspace_id": ws, "slug": "mine"}))["id"].(string)
	createGuardrailOK(t, api, api.AdminKey, piiGuardrail(map[string]any{"workspace_id": other, "slug": "theirs"}))

	config := map[string]any{"input_guardrails": []string{"org-pii"}, "output_guardrails": []string{mine},
		"strategy": map[string]any{"mode": "fallback"}, "targets": []any{
			map[string]any{"provider": "@a", "before_request_hooks": []any{map[string]any{"type": "guardrail", "id": "mine"}}},
			map[string]any{"provider": "@b", "after_request_hooks": []any{map[string]any{"id": "org-pii"}}}}}
	saved := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "guarded", "workspace_id": ws, "config": config})
	require.Equal(t, http.StatusOK, saved.Status, string(saved.Raw))
	for name, tc := range map[string]struct {
		config map[string]any
		code   string
		param  string
	}{
		"another workspace's": {map[string]any{"provider": "@a", "input_guardrails": []string{"org-pii", "theirs"}}, "AB16", "config.input_guardrails[1]"},
		"none such, nested": {map[string]any{"strategy": map[string]any{"mode": "single"}, "targets": []any{
			map[string]any{"provider": "@a", "after_request_hooks": []any{map[string]any{"id": "nope"}}}}}, "AB16", "config.targets[0].after_request_hooks[0].id"},
		"not a list":  {map[string]any{"provider": "@a", "output_guardrails": "org-pii"}, "AB16", "config.output_guardrails"},
		"inline hook": {map[string]any{"provider": "@a", "before_request_hooks": []any{map[string]any{"id": "x", "deny": true}}}, "AB16", "config.before_request_hooks[0].deny"},
	} {
		r := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "c", "workspace_id": ws, "config": tc.config})
		require.Equal(t, http.StatusBadRequest, r.Status, name)
		assert.Equal(t, tc.param, r.ErrorParam(), name)
		assert.Equal(t, tc.code, obj(r.Body, "error")["code"], name)
	}

	upd := api.Admin(http.MethodPut, "/workspaces/"+ws, map[string]any{"defaults": map[string]any{
		"metadata": map[string]any{"team": "a"}, "input_guardrails": []string{"org-pii", "mine"}, "output_guardrails": []string{mine}}})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	got := api.Admin(http.MethodGet, "/workspaces/"+ws, nil)
	assert.Equal(t, []any{"org-pii", "mine"}, obj(got.Body, "defaults")["input_guardrails"])
	r, ok := api.Index.Route(domain.HashKey(guardrailKey(t, api, "/api-keys/workspace/service", ws, "")))
	require.True(t, ok)
	require.Len(t, r.InputGuardrails, 2)
	assert.Equal(t, mine, r.InputGuardrails[1].Guardrail.Value.ID, "the gateway's index resolves what the workspace attaches")
	for body, param := range map[string]string{
		`{"defaults":{"input_guardrails":["theirs"]}}`: "defaults.input_guardrails[0]",
		`{"defaults":{"output_guardrails":["nope"]}}`:  "defaults.output_guardrails[0]",
		`{"defaults":{"output_guardrails":"mine"}}`:    "defaults.output_guardrails",
	} {
		r := api.Admin(http.MethodPut, "/workspaces/"+ws, body)
		assert.Equal(t, http.StatusBadRequest, r.Status, body)
		assert.Equal(t, param, r.ErrorParam(), body)
	}
}

// GUARDRAILS_ENABLED=OFF: every /guardrails route answers as other disabled features do.
func TestGuardrailsDisabled(t *testing.T) {
	api := newTestAPI(t)
	admin := &Admin{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Read: api.Read, Commands: api.AdminAPI.Commands, Deps: api.Deps,
		Secret: bytes.Repeat([]byte("s"), 32), Now: api.Now, WriteWait: 5 * time.Second,
		Features: Features{APIAccess: true, Policy: true, UsageLimits: true, AuditLogs: true}}
	srv := httptest.NewServer(NewRouter(Deps{Admin: admin, Health: &Health{}}))
	defer srv.Close()
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/guardrails", `{}`},
		{http.MethodGet, "/guardrails", ``},
		{http.MethodGet, "/guardrails/x", ``},
		{http.MethodGet, "/guardrails/x?as_of=2026-01-01T00:00:00Z", ``},
		{http.MethodPut, "/guardrails/x", `{"name":"x"}`},
		{http.MethodDelete, "/guardrails/x", ``},
		{http.MethodGet, "/guardrails/x/versions", ``},
	} {
		req, err := http.NewRequest(c.method, srv.URL+"/v1"+c.path, strings.NewReader(c.body))
		require.NoError(t, err)
		req.Header.Set("x-gateway-api-key", api.AdminKey)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s", c.method, c.path)
		assert.Equal(t, "disabled", body.Error.Code, "%s %s", c.method, c.path)
		assert.Contains(t, body.Error.Message, "GUARDRAILS_ENABLED", "%s %s", c.method, c.path)
	}
}
