package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/pricing"
)

// listsAPI is the admin API with every area set up (a request log store with rows, exports,
// prices) and one resource of every kind, so that every GET route has something to read.
type listsAPI struct {
	*exportAPI
	WS, Member, Invite, KeyID, RateLimit, UsageLimit, Note, Export string
	Config, Integration, Provider, Guardrail, Webhook              string
	Prompt, Partial, Label, Collection                             string
}

func newListsAPI(t *testing.T) *listsAPI {
	t.Helper()
	e := newExportAPI(t, nil)
	book, err := pricing.New(pricing.Config{}, pricing.Options{Now: e.Now, Overrides: e.Read.Overrides()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = book.Close() })
	e.AdminAPI.Pricing = book
	l := &listsAPI{exportAPI: e, WS: e.WS}
	ok := func(r response) response {
		t.Helper()
		require.Less(t, r.Status, 300, string(r.Raw))
		return r
	}
	l.Member = e.seedUser("ann@example.com", domain.RoleMember)
	ok(e.Admin(http.MethodPost, "/workspaces/"+l.WS+"/users", map[string]any{"users": []map[string]string{{"id": l.Member, "role": "member"}}}))
	l.Invite = ok(e.Admin(http.MethodPost, "/users/invites", map[string]any{"email": "cy@example.com", "role": "member"})).Str("id")
	l.KeyID = ok(e.Admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "svc", "workspace_id": l.WS,
		"scopes": []string{"logs.view"}})).Str("id")
	l.RateLimit = ok(e.Admin(http.MethodPost, "/policies/rate-limits", asOfRateLimitBody(l.WS, 5))).Str("id")
	l.UsageLimit = ok(e.Admin(http.MethodPost, "/policies/usage-limits", map[string]any{"name": "budget", "workspace_id": l.WS,
		"type": "cost", "credit_limit": 10, "conditions": []map[string]string{{"key": "workspace_id", "value": l.WS}},
		"group_by": []map[string]string{{"key": "api_key"}}})).Str("id")
	l.Note = uuid.NewString()
	e.seedEvents(domain.Stream(domain.NotificationPrefix, l.Note), domain.NotificationRecorded{NotificationID: l.Note,
		OrganisationID: e.OrgID, WorkspaceID: l.WS, Kind: domain.NotifyUsageThreshold, Recipients: []string{"ops@example.com"},
		Subject: "Usage threshold reached", ResourceType: domain.UsageLimitPolicyPrefix, ResourceID: l.UsageLimit, At: e.Now()})
	ok(e.Admin(http.MethodPost, "/configs", map[string]any{"name": "Main", "slug": "main", "workspace_id": l.WS,
		"config": map[string]any{"provider": "openai"}}))
	l.Config = "main"
	ok(e.Admin(http.MethodPost, "/guardrails", map[string]any{"name": "Words", "slug": "words", "workspace_id": l.WS,
		"checks":  []any{map[string]any{"id": "default.contains", "parameters": map[string]any{"words": []string{"secret"}}}},
		"actions": map[string]any{"deny": true}}))
	l.Guardrail = "words"
	ok(e.Admin(http.MethodPost, "/integrations", map[string]any{"name": "OpenAI prod", "slug": "openai-prod", "ai_provider_id": "openai",
		"key": "sk-test-0123456789abcdef"}))
	l.Integration = "openai-prod"
	ok(e.Admin(http.MethodPut, "/integrations/openai-prod/workspaces", map[string]any{
		"workspaces": []map[string]any{{"id": l.WS, "enabled": true}}}))
	l.Provider = "openai-prod"
	l.Export = e.create(e.body())
	l.Webhook = ok(e.Admin(http.MethodPost, "/webhooks", map[string]any{"name": "Ops", "url": "https://hooks.example.com/ops",
		"workspace_id": l.WS, "kinds": []string{domain.NotifyUsageThreshold}})).Str("id")
	l.Collection = ok(e.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": l.WS, "name": "Support"})).Str("id")
	l.Prompt = ok(e.Admin(http.MethodPost, "/prompts", map[string]any{"name": "Reply", "slug": "reply", "collection_id": l.Collection,
		"string": "Hi {{name}}", "parameters": map[string]any{"temperature": 0.1}, "virtual_key": "openai-prod"})).Str("slug")
	l.Partial = ok(e.Admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": l.WS, "name": "Tone", "string": "Be kind."})).Str("slug")
	l.Label = ok(e.Admin(http.MethodPost, "/labels", map[string]any{"name": "production"})).Str("id")
	return l
}

// listCase is a GET route and a change after which its answer differs.
type listCase struct {
	path   string
	change func(t *testing.T, l *listsAPI)
}

func (l *listsAPI) listCases() []listCase {
	ok := func(t *testing.T, r response) {
		t.Helper()
		require.Less(t, r.Status, 300, string(r.Raw))
	}
	return []listCase{
		{"/workspaces", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPost, "/workspaces", map[string]any{"name": "Team C"}))
		}},
		{"/workspaces/" + l.WS + "/users", func(t *testing.T, l *listsAPI) {
			bob := l.seedUser("bob@example.com", domain.RoleMember)
			ok(t, l.Admin(http.MethodPost, "/workspaces/"+l.WS+"/users", map[string]any{"users": []map[string]string{{"id": bob, "role": "member"}}}))
		}},
		{"/workspaces/" + l.WS + "/users/" + l.Member, func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/workspaces/"+l.WS+"/users/"+l.Member, map[string]any{"role": "manager"}))
		}},
		{"/workspaces/" + l.WS + "/settings", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/workspaces/"+l.WS+"/settings", map[string]any{"security_settings": map[string]bool{"membersViewAnalytics": false}}))
		}},
		{"/users", func(t *testing.T, l *listsAPI) { l.seedUser("dee@example.com", domain.RoleMember) }},
		{"/users/invites", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPost, "/users/invites", map[string]any{"email": "eve@example.com", "role": "member"}))
		}},
		{"/api-keys", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodDelete, "/api-keys/"+l.KeyID, nil))
		}},
		{"/policies/rate-limits", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/policies/rate-limits/"+l.RateLimit, map[string]any{"value": 50}))
		}},
		{"/policies/usage-limits", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/policies/usage-limits/"+l.UsageLimit, map[string]any{"name": "renamed"}))
		}},
		{"/notifications", func(t *testing.T, l *listsAPI) {
			id := uuid.NewString()
			l.seedEvents(domain.Stream(domain.NotificationPrefix, id), domain.NotificationRecorded{NotificationID: id,
				OrganisationID: l.OrgID, Kind: domain.NotifyInvite, Recipients: []string{"x@example.com"}, Subject: "Invite", At: l.Now()})
		}},
		{"/configs", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPost, "/configs", map[string]any{"name": "Other", "slug": "other", "workspace_id": l.WS,
				"config": map[string]any{"provider": "openai"}}))
		}},
		{"/configs/" + l.Config + "/versions", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/configs/"+l.Config, map[string]any{"config": map[string]any{"provider": "anthropic"}}))
		}},
		{"/guardrails", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/guardrails/"+l.Guardrail, map[string]any{"name": "Secret words"}))
		}},
		{"/guardrails/" + l.Guardrail + "/versions", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/guardrails/"+l.Guardrail, map[string]any{"actions": map[string]any{"async": true}}))
		}},
		{"/integrations", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/integrations/"+l.Integration, map[string]any{"name": "OpenAI"}))
		}},
		{"/integrations/" + l.Integration + "/workspaces", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/integrations/"+l.Integration+"/workspaces", map[string]any{
				"workspaces": []map[string]any{{"id": l.WS, "enabled": true, "rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 10}}}}}))
		}},
		{"/webhooks", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/webhooks/"+l.Webhook, map[string]any{"disabled": true}))
		}},
		{"/providers", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/providers/"+l.Provider, map[string]any{"note": "changed"}))
		}},
		{"/virtual-keys", nil}, // the providers' change shows here too
		{"/logs/exports", func(t *testing.T, l *listsAPI) { l.create(l.body()) }},
		{"/logs/exports/" + l.Export, func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/logs/exports/"+l.Export, l.body(func(b map[string]any) { b["description"] = "changed" })))
		}},
		{"/prompts", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/prompts/"+l.Prompt, map[string]any{"name": "Answer"}))
		}},
		{"/prompts/" + l.Prompt + "/versions", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/prompts/"+l.Prompt, map[string]any{"patch": true, "model": "gpt-4o"}))
		}},
		{"/prompts/partials", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPost, "/prompts/partials", map[string]any{"workspace_id": l.WS, "name": "Footer", "string": "Bye."}))
		}},
		{"/prompts/partials/" + l.Partial + "/versions", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/prompts/partials/"+l.Partial, map[string]any{"string": "Be warm."}))
		}},
		{"/labels", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/labels/"+l.Label, map[string]any{"description": "live traffic"}))
		}},
		{"/collections", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPost, "/collections", map[string]any{"workspace_id": l.WS, "name": "Billing"}))
		}},
		{"/collections/" + l.Collection, func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/collections/"+l.Collection, map[string]any{"name": "Support team"}))
		}},
		{"/policies/usage-limits/" + l.UsageLimit + "/entities", nil}, // no entity before or after
		{"/model-configs/pricing/openai/gpt-4o", func(t *testing.T, l *listsAPI) {
			ok(t, l.Admin(http.MethodPut, "/model-configs/pricing/openai/gpt-4o", map[string]any{"pay_as_you_go": map[string]any{
				"request_token": map[string]any{"price": 0.5}}}))
		}},
	}
}

// answerOf is an answer's JSON as decoded: an object, or an array (the reference's lists of
// versions and partials).
func answerOf(t *testing.T, r response) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(r.Raw, &v), string(r.Raw))
	return v
}

// Every list read as of an instant answers what it answered at that instant: a snapshot of
// every list, a mark, a change to each, and then each list as of the mark equals its
// snapshot, while the live list shows the change.
func TestEveryListAsOfAnInstantAnswersWhatItAnsweredThen(t *testing.T) {
	l := newListsAPI(t)
	cases := l.listCases()
	then := map[string]response{}
	for _, c := range cases {
		r := l.Admin(http.MethodGet, c.path, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", c.path, r.Raw)
		then[c.path] = r
	}
	mark := asOfMark()
	for _, c := range cases {
		if c.change != nil {
			c.change(t, l)
		}
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			past := l.Admin(http.MethodGet, c.path+"?"+asOfQuery(mark), nil)
			require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
			assert.Equal(t, answerOf(t, then[c.path]), answerOf(t, past), "as of the mark, the answer of the mark")
			held := asOfHeaderTime(t, past)
			assert.False(t, held.After(mark), "the state held since before the mark")
			now := l.Admin(http.MethodGet, c.path, nil)
			require.Equal(t, http.StatusOK, now.Status, string(now.Raw))
			if c.path != "/policies/usage-limits/"+l.UsageLimit+"/entities" {
				assert.NotEqual(t, answerOf(t, then[c.path]), answerOf(t, now), "the change shows in the live answer")
			}
		})
	}

	alias := l.Admin(http.MethodGet, "/admin/workspaces?"+asOfQuery(mark), nil)
	assert.Equal(t, then["/workspaces"].Body, alias.Body, "the reference's /admin path reads the past too")

	// Filters and pages apply to the past as to the present.
	page := l.Admin(http.MethodGet, "/workspaces?page_size=1&current_page=0&"+asOfQuery(mark), nil)
	require.Equal(t, http.StatusOK, page.Status, string(page.Raw))
	assert.EqualValues(t, then["/workspaces"].Body["total"], page.Body["total"])
	assert.Len(t, page.Data(), 1)
	keys := l.Admin(http.MethodGet, "/api-keys?workspace_id="+l.WS+"&"+asOfQuery(mark), nil)
	require.Equal(t, http.StatusOK, keys.Status, string(keys.Raw))
	require.Len(t, keys.Data(), 1, "the key deleted after the mark is listed as of the mark")
	assert.Equal(t, l.KeyID, keys.Data()[0]["id"])

	// A list as of an instant before the organisation existed is empty; the key that asks is
	// judged as it is now.
	early := l.Admin(http.MethodGet, "/policies/rate-limits?"+asOfQuery(time.Now().Add(-24*time.Hour)), nil)
	require.Equal(t, http.StatusOK, early.Status, string(early.Raw))
	assert.Empty(t, early.Data())
	assert.Equal(t, http.StatusUnauthorized, l.Do(http.MethodGet, "/workspaces?"+asOfQuery(mark), "cw-not-a-key", nil).Status)
	weak := l.Admin(http.MethodPost, "/api-keys/organisation/service", map[string]any{"name": "weak", "scopes": []string{"logs.view"}})
	require.Equal(t, http.StatusOK, weak.Status, string(weak.Raw))
	assert.Equal(t, http.StatusForbidden, l.Do(http.MethodGet, "/workspaces?"+asOfQuery(mark), weak.Str("key"), nil).Status,
		"a key created after the mark asks, and is refused for its scopes, not for not existing then")
	var refusals []map[string]any
	require.Eventually(t, func() bool { // recorded without holding up the answer
		refusals = l.Admin(http.MethodGet, "/audit-logs?response_status_code=403&user_id="+weak.Str("id"), nil).Data()
		return len(refusals) > 0
	}, 5*time.Second, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	refusals = l.Admin(http.MethodGet, "/audit-logs?response_status_code=403&user_id="+weak.Str("id"), nil).Data()
	require.Len(t, refusals, 1, "the refusal is recorded once")
	assert.Equal(t, "/v1/workspaces", refusals[0]["uri"])
}

// No GET route ignores as_of: a value that is not a time is refused, naming as_of, on every
// one of them (the routes that cannot read the past refuse any value).
func TestEveryGETRouteReadsAsOf(t *testing.T) {
	l := newListsAPI(t)
	logID := l.Rows[0].ID
	vars := map[string]string{"{id}": l.WS, "{userId}": l.Member, "{slug}": l.Config, "{exportId}": l.Export,
		"{logId}": logID, "{groupBy}": "model", "{metadataKey}": "team", "{orgId}": l.OrgID,
		"{provider}": "openai", "{model:.+}": "gpt-4o", "{type}": "workspace", "{webhookId}": l.Webhook}
	ids := map[string]string{
		"/api-keys/{id}": l.KeyID, "/policies/rate-limits/{id}": l.RateLimit, "/policies/usage-limits/{id}": l.UsageLimit,
		"/policies/usage-limits/{id}/entities": l.UsageLimit, "/users/{id}": l.Member, "/users/invites/{id}": l.Invite,
		"/notifications/{id}": l.Note, "/integrations/{slug}": l.Integration, "/integrations/{slug}/workspaces": l.Integration,
		"/providers/{slug}": l.Provider, "/virtual-keys/{slug}": l.Provider,
	}
	vars["{promptId}"], vars["{promptPartialId}"], vars["{labelId}"], vars["{collectionId}"], vars["{versionId}"] =
		l.Prompt, l.Partial, l.Label, l.Collection, "1"
	audit := l.Admin(http.MethodGet, "/audit-logs?page_size=1", nil)
	require.NotEmpty(t, audit.Data())
	ids["/audit-logs/{id}"] = audit.Data()[0]["id"].(string)

	root := mux.NewRouter()
	l.AdminAPI.Register(root.PathPrefix(BasePath).Subrouter())
	var routes []string
	require.NoError(t, root.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tmpl, _ := route.GetPathTemplate()
		methods, _ := route.GetMethods()
		for _, m := range methods {
			if m == http.MethodGet {
				routes = append(routes, strings.TrimPrefix(tmpl, BasePath))
			}
		}
		return nil
	}))
	require.Greater(t, len(routes), 50)
	for _, tmpl := range routes {
		t.Run(tmpl, func(t *testing.T) {
			path := tmpl
			if id, ok := ids[tmpl]; ok {
				path = strings.Replace(path, "{id}", id, 1)
				path = strings.Replace(path, "{slug}", id, 1)
			}
			for v, val := range vars {
				path = strings.ReplaceAll(path, v, val)
			}
			if strings.Contains(path, "/file") {
				path += "?expires=1&signature=x&"
			} else {
				path += "?"
			}
			got := l.Admin(http.MethodGet, path+"as_of=yesterday", nil)
			require.Equal(t, http.StatusBadRequest, got.Status, "%s: %s", path, got.Raw)
			assert.Equal(t, "as_of", got.ErrorParam(), string(got.Raw))
		})
	}
}
