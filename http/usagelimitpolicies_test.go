package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

const ulpPath = "/policies/usage-limits"

func ulpBody(ws string) map[string]any {
	return map[string]any{"name": "monthly budget", "workspace_id": ws, "type": "cost", "credit_limit": 10,
		"alert_threshold": 8, "periodic_reset": "monthly",
		"conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}}
}

func ulpCreate(t *testing.T, api *testAPI, body map[string]any) string {
	t.Helper()
	r := api.Admin(http.MethodPost, ulpPath, body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("id")
}

// ulpSystem is the context of the gateway and the scheduler: the system actor.
func ulpSystem(api *testAPI) context.Context {
	return commands.WithRequest(context.Background(), commands.Request{Actor: domain.System(api.OrgID), RequestID: uuid.NewString()})
}

func ulpWait(t *testing.T, api *testAPI, res commands.Result) {
	t.Helper()
	if res.Position == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, api.Read.WaitFor(ctx, res.Position))
}

// ulpRecord records usage as the gateway will, and waits until the read model has it.
func ulpRecord(t *testing.T, api *testAPI, policyID, valueKey string, amount float64) {
	t.Helper()
	h, err := commands.NewRecordUsageLimitPolicyUsageHandler(api.Deps)
	require.NoError(t, err)
	res, err := h.Handle(ulpSystem(api), commands.RecordUsageLimitPolicyUsage{PolicyID: policyID, ValueKey: valueKey, Amount: amount})
	require.NoError(t, err)
	ulpWait(t, api, res)
}

// ulpEntity returns the entity of valueKey from the entities list.
func ulpEntity(t *testing.T, api *testAPI, policyID, valueKey string) map[string]any {
	t.Helper()
	r := api.Admin(http.MethodGet, ulpPath+"/"+policyID+"/entities", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	for _, en := range r.Data() {
		if en["value_key"] == valueKey {
			return en
		}
	}
	require.Failf(t, "no entity", "%s has no entity %q: %s", policyID, valueKey, r.Raw)
	return nil
}

// ulpNotifications returns the kinds of the notifications recorded about a policy.
func ulpNotifications(api *testAPI, policyID string) []string {
	var kinds []string
	for _, rec := range api.Read.AuditLog(projections.AuditFilter{OrganisationID: api.OrgID, Action: "NotificationRecorded"}) {
		var n domain.Notification
		if json.Unmarshal(rec.After, &n) == nil && n.ResourceID == policyID {
			kinds = append(kinds, n.Kind)
		}
	}
	return kinds
}

func TestUsageLimitPolicyLifecycle(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)

	created := api.Admin(http.MethodPost, ulpPath, ulpBody(ws))
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	assert.Equal(t, "policy_usage_limits", created.Str("object"))
	assert.NotEmpty(t, created.Header.Get(PositionHeader), "a write says its position")
	id := created.Str("id")
	require.True(t, isUUID(id))

	got := api.Admin(http.MethodGet, ulpPath+"/"+id, nil)
	require.Equal(t, http.StatusOK, got.Status, "read your write at once")
	assert.Equal(t, "policy_usage_limits", got.Str("object"))
	assert.Equal(t, "monthly budget", got.Str("name"))
	assert.Equal(t, "active", got.Str("status"))
	assert.Equal(t, "cost", got.Str("type"))
	assert.EqualValues(t, 10, got.Body["credit_limit"])
	assert.EqualValues(t, 8, got.Body["alert_threshold"])
	assert.Equal(t, "monthly", got.Str("periodic_reset"))
	assert.Nil(t, got.Body["periodic_reset_days"])
	assert.Equal(t, api.Now().AddDate(0, 1, 0).Format(time.RFC3339), got.Str("next_usage_reset_at"))
	assert.Contains(t, got.Body, "last_reset_at")
	assert.Nil(t, got.Body["last_reset_at"])
	assert.NotContains(t, got.Body, "value_key_usage_map", "usage is shown only with include_usage=true")
	assert.Equal(t, ws, got.Str("workspace_id"))
	assert.Equal(t, api.OrgID, got.Str("organisation_id"))
	assert.Len(t, got.Body["conditions"], 1)
	assert.Len(t, got.Body["group_by"], 1)

	withUsage := api.Admin(http.MethodGet, ulpPath+"/"+id+"?include_usage=true", nil)
	require.Equal(t, http.StatusOK, withUsage.Status)
	assert.Equal(t, map[string]any{}, withUsage.Body["value_key_usage_map"])
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, ulpPath+"/"+id+"?include_usage=maybe", nil).Status)

	api.Advance(time.Hour)
	upd := api.Admin(http.MethodPut, ulpPath+"/"+id, map[string]any{"name": "weekly budget", "credit_limit": 20,
		"alert_threshold": nil, "periodic_reset": nil, "periodic_reset_days": 14})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "policy_usage_limits", upd.Str("object"))
	assert.Equal(t, "weekly budget", upd.Str("name"))
	assert.EqualValues(t, 20, upd.Body["credit_limit"])
	assert.Nil(t, upd.Body["alert_threshold"], "null removes the threshold")
	assert.Nil(t, upd.Body["periodic_reset"])
	assert.EqualValues(t, 14, upd.Body["periodic_reset_days"])
	assert.Equal(t, api.Now().AddDate(0, 0, 14).Format(time.RFC3339), upd.Str("next_usage_reset_at"), "a new schedule starts now")

	upd = api.Admin(http.MethodPut, ulpPath+"/"+id, map[string]any{"periodic_reset": nil})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Nil(t, upd.Body["periodic_reset_days"], "null periodic_reset removes the periodic reset")
	assert.Nil(t, upd.Body["next_usage_reset_at"])

	tokens := ulpBody(ws)
	tokens["type"] = "tokens"
	tokensID := ulpCreate(t, api, tokens)

	list := api.Admin(http.MethodGet, ulpPath, nil)
	require.Equal(t, http.StatusOK, list.Status)
	assert.Equal(t, "list", list.Str("object"))
	assert.EqualValues(t, 2, list.Body["total"])
	require.Len(t, list.Data(), 2)
	assert.Equal(t, tokensID, list.Data()[0]["id"], "newest first")
	assert.Equal(t, "policy_usage_limits", list.Data()[0]["object"])
	typed := api.Admin(http.MethodGet, ulpPath+"?type=cost", nil)
	require.Len(t, typed.Data(), 1)
	assert.Equal(t, id, typed.Data()[0]["id"])
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, ulpPath+"?type=requests", nil).Status)
	assert.Len(t, api.Admin(http.MethodGet, ulpPath+"?workspace_id="+ws, nil).Data(), 2)
	paged := api.Admin(http.MethodGet, ulpPath+"?page_size=1&current_page=1", nil)
	require.Len(t, paged.Data(), 1)
	assert.Equal(t, id, paged.Data()[0]["id"])

	del := api.Admin(http.MethodDelete, ulpPath+"/"+id, nil)
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	assert.Equal(t, "archived", del.Str("status"))
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, ulpPath+"/"+id, nil).Status, "status defaults to active")
	archived := api.Admin(http.MethodGet, ulpPath+"/"+id+"?status=archived", nil)
	require.Equal(t, http.StatusOK, archived.Status)
	assert.Equal(t, "archived", archived.Str("status"))
	assert.Len(t, api.Admin(http.MethodGet, ulpPath, nil).Data(), 1)
	assert.Len(t, api.Admin(http.MethodGet, ulpPath+"?status=archived", nil).Data(), 1)
	assert.Len(t, api.Admin(http.MethodGet, ulpPath+"?status=active,archived", nil).Data(), 2)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodDelete, ulpPath+"/"+id, nil).Status, "archived twice")
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, ulpPath+"/"+id, map[string]any{"name": "x"}).Status,
		"an archived policy cannot change")
}

func TestUsageLimitPolicyCreateErrors(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	archivedWS := api.seedWorkspace("team-old", nil)
	api.seedEvents(domain.Stream(domain.WorkspacePrefix, archivedWS), domain.WorkspaceArchived{WorkspaceID: archivedWS, At: api.Now()})
	valid := func() map[string]any {
		b := ulpBody(ws)
		delete(b, "periodic_reset")
		return b
	}
	with := func(kv ...any) map[string]any {
		b := valid()
		for i := 0; i+1 < len(kv); i += 2 {
			b[kv[i].(string)] = kv[i+1]
		}
		return b
	}
	without := func(k string) map[string]any { b := valid(); delete(b, k); return b }
	cases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"valid", valid(), 200, ""},
		{"name at 255", with("name", strings.Repeat("n", 255)), 200, ""},
		{"name at 256", with("name", strings.Repeat("n", 256)), 400, "name"},
		{"name absent", without("name"), 200, ""},
		{"type tokens", with("type", "tokens"), 200, ""},
		{"bad type", with("type", "requests"), 400, "type"},
		{"type missing", without("type"), 400, "type"},
		{"credit_limit fractional", with("credit_limit", 0.5, "alert_threshold", 0.25), 200, ""},
		{"credit_limit zero", with("credit_limit", 0, "alert_threshold", nil), 400, "credit_limit"},
		{"credit_limit negative", with("credit_limit", -1, "alert_threshold", nil), 400, "credit_limit"},
		{"credit_limit missing", without("credit_limit"), 400, "credit_limit"},
		{"credit_limit not a number", with("credit_limit", "ten"), 400, "credit_limit"},
		{"alert_threshold zero", with("alert_threshold", 0), 200, ""},
		{"alert_threshold just below credit_limit", with("alert_threshold", 9.99), 200, ""},
		{"alert_threshold at credit_limit", with("alert_threshold", 10), 400, "alert_threshold"},
		{"alert_threshold above credit_limit", with("alert_threshold", 11), 400, "alert_threshold"},
		{"alert_threshold negative", with("alert_threshold", -0.5), 400, "alert_threshold"},
		{"alert_threshold null", with("alert_threshold", nil), 200, ""},
		{"periodic_reset weekly", with("periodic_reset", "weekly"), 200, ""},
		{"periodic_reset monthly", with("periodic_reset", "monthly"), 200, ""},
		{"periodic_reset null", with("periodic_reset", nil), 200, ""},
		{"periodic_reset daily", with("periodic_reset", "daily"), 400, "periodic_reset"},
		{"periodic_reset_days 0", with("periodic_reset_days", 0), 400, "periodic_reset_days"},
		{"periodic_reset_days 1", with("periodic_reset_days", 1), 200, ""},
		{"periodic_reset_days 365", with("periodic_reset_days", 365), 200, ""},
		{"periodic_reset_days 366", with("periodic_reset_days", 366), 400, "periodic_reset_days"},
		{"periodic_reset_days fractional", with("periodic_reset_days", 1.5), 400, "periodic_reset_days"},
		{"both reset fields", with("periodic_reset", "weekly", "periodic_reset_days", 7), 400, "periodic_reset_days"},
		{"empty conditions", with("conditions", []map[string]string{}), 400, "conditions"},
		{"conditions missing", without("conditions"), 400, "conditions"},
		{"endpoint_type condition", with("conditions", []map[string]string{{"key": "endpoint_type", "value": "chatComplete"}}), 200, ""},
		{"metadata condition", with("conditions", []map[string]string{{"key": "metadata._user", "value": "ann"}}), 200, ""},
		{"unknown condition key", with("conditions", []map[string]string{{"key": "user", "value": "x"}}), 400, "conditions[0].key"},
		{"empty condition value", with("conditions", []map[string]string{{"key": "api_key", "value": ""}}), 400, "conditions[0].value"},
		{"empty group_by", with("group_by", []map[string]string{}), 400, "group_by"},
		{"group_by missing", without("group_by"), 400, "group_by"},
		{"endpoint_type cannot group", with("group_by", []map[string]string{{"key": "endpoint_type"}}), 400, "group_by[0].key"},
		{"own organisation_id", with("organisation_id", api.OrgID), 200, ""},
		{"other organisation_id", with("organisation_id", uuid.NewString()), 400, "organisation_id"},
		{"workspace missing", with("workspace_id", uuid.NewString()), 404, "workspace_id"},
		{"workspace archived", with("workspace_id", archivedWS), 409, "workspace_id"},
		{"no workspace with an organisation key", without("workspace_id"), 400, "workspace_id"},
		{"unknown field", with("unit", "rpm"), 400, "unit"},
		{"not JSON", "{", 400, ""},
		{"empty body", "", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPost, ulpPath, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
	// The bounds are named in the messages.
	assert.Contains(t, api.Admin(http.MethodPost, ulpPath, with("name", strings.Repeat("n", 256))).ErrorMessage(), "at most 255")
	assert.Contains(t, api.Admin(http.MethodPost, ulpPath, with("periodic_reset_days", 366)).ErrorMessage(), "1 to 365")
	assert.Contains(t, api.Admin(http.MethodPost, ulpPath, with("alert_threshold", 10)).ErrorMessage(), "below credit_limit")
	assert.Contains(t, api.Admin(http.MethodPost, ulpPath, with("credit_limit", 0, "alert_threshold", nil)).ErrorMessage(), "greater than 0")

	// A refused create writes nothing.
	for _, p := range api.Admin(http.MethodGet, ulpPath, nil).Data() {
		assert.NotEqual(t, strings.Repeat("n", 256), p["name"])
	}
}

func TestUsageLimitPolicyUpdateErrors(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	id := ulpCreate(t, api, ulpBody(ws))
	ulpRecord(t, api, id, "api_key:known", 1)
	cases := []struct {
		name   string
		body   any
		status int
		param  string
	}{
		{"name at 255", map[string]any{"name": strings.Repeat("n", 255)}, 200, ""},
		{"name at 256", map[string]any{"name": strings.Repeat("n", 256)}, 400, "name"},
		{"credit_limit zero", map[string]any{"credit_limit": 0}, 400, "credit_limit"},
		{"credit_limit at the kept threshold", map[string]any{"credit_limit": 8}, 400, "credit_limit"},
		{"credit_limit just above the kept threshold", map[string]any{"credit_limit": 8.5}, 200, ""},
		{"alert_threshold at credit_limit", map[string]any{"alert_threshold": 8.5}, 400, "alert_threshold"},
		{"alert_threshold negative", map[string]any{"alert_threshold": -1}, 400, "alert_threshold"},
		{"alert_threshold zero", map[string]any{"alert_threshold": 0}, 200, ""},
		{"lower both at once", map[string]any{"credit_limit": 5, "alert_threshold": 4}, 200, ""},
		{"alert_threshold not a number", map[string]any{"alert_threshold": "high"}, 400, "alert_threshold"},
		{"periodic_reset_days 0", map[string]any{"periodic_reset_days": 0}, 400, "periodic_reset_days"},
		{"periodic_reset_days 1", map[string]any{"periodic_reset_days": 1}, 200, ""},
		{"periodic_reset_days 365", map[string]any{"periodic_reset_days": 365}, 200, ""},
		{"periodic_reset_days 366", map[string]any{"periodic_reset_days": 366}, 400, "periodic_reset_days"},
		{"both reset fields", map[string]any{"periodic_reset": "weekly", "periodic_reset_days": 3}, 400, "periodic_reset_days"},
		{"periodic_reset daily", map[string]any{"periodic_reset": "daily"}, 400, "periodic_reset"},
		{"reset_usage_for_value unknown", map[string]any{"reset_usage_for_value": "api_key:nobody"}, 404, "reset_usage_for_value"},
		{"reset_usage_for_value known", map[string]any{"reset_usage_for_value": "api_key:known"}, 200, ""},
		{"type cannot change", map[string]any{"type": "tokens"}, 400, "type"},
		{"conditions cannot change", map[string]any{"conditions": []any{}}, 400, "conditions"},
		{"nothing to update", map[string]any{}, 400, ""},
		{"not JSON", "[", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Admin(http.MethodPut, ulpPath+"/"+id, tc.body)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		assert.Equal(t, http.StatusBadRequest, api.Admin(m, ulpPath+"/not-a-uuid", map[string]any{"name": "x"}).Status, m)
		assert.Equal(t, http.StatusNotFound, api.Admin(m, ulpPath+"/"+uuid.NewString(), map[string]any{"name": "x"}).Status, m)
	}
	assert.Equal(t, "policyUsageLimitsId", api.Admin(http.MethodGet, ulpPath+"/not-a-uuid", nil).ErrorParam())
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, ulpPath+"?status=deleted", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, ulpPath+"/"+id+"?status=deleted", nil).Status)
	assert.Equal(t, http.StatusMethodNotAllowed, api.Admin(http.MethodPatch, ulpPath+"/"+id, map[string]any{"name": "x"}).Status)
}

func TestUsageLimitPolicyUsageAndEntities(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	id := ulpCreate(t, api, ulpBody(ws))
	const keyA, keyB = "api_key:a", "metadata._user:ann/smith"

	ulpRecord(t, api, id, keyA, 0.25)
	ulpRecord(t, api, id, keyA, 0.5)
	en := ulpEntity(t, api, id, keyA)
	assert.EqualValues(t, 0.75, en["current_usage"], "fractional usage adds up")
	assert.Equal(t, "active", en["status"])
	assert.Equal(t, "policy_usage_limits_entity", en["object"])
	assert.Equal(t, domain.UsageEntityID(id, keyA), en["id"])
	assert.Nil(t, en["last_reset_at"])
	ulpRecord(t, api, id, keyA, 0.1)
	ulpRecord(t, api, id, keyA, 0.2)
	assert.EqualValues(t, 1.05, ulpEntity(t, api, id, keyA)["current_usage"], "no float noise (0.1 + 0.2)")

	// Threshold 8, limit 10: the alert comes once, the exhaustion at the limit.
	ulpRecord(t, api, id, keyA, 6.5)
	assert.Empty(t, ulpNotifications(api, id), "7.55 is under the threshold")
	ulpRecord(t, api, id, keyA, 0.5)
	assert.Equal(t, []string{domain.NotifyUsageThreshold}, ulpNotifications(api, id))
	assert.Equal(t, true, ulpEntity(t, api, id, keyA)["is_threshold_alerts_sent"])
	ulpRecord(t, api, id, keyA, 0.5)
	assert.Equal(t, []string{domain.NotifyUsageThreshold}, ulpNotifications(api, id), "once per period")
	ulpRecord(t, api, id, keyA, 2)
	en = ulpEntity(t, api, id, keyA)
	assert.Equal(t, "exhausted", en["status"])
	assert.EqualValues(t, 10.55, en["current_usage"])
	assert.Equal(t, true, en["is_exhausted_alerts_sent"])
	assert.Equal(t, []string{domain.NotifyUsageThreshold, domain.NotifyUsageExhausted}, ulpNotifications(api, id))
	ulpRecord(t, api, id, keyB, 3)

	// The entities list filters by status and by a part of the value key, and pages.
	list := api.Admin(http.MethodGet, ulpPath+"/"+id+"/entities", nil)
	require.Equal(t, http.StatusOK, list.Status)
	assert.Equal(t, "list", list.Str("object"))
	assert.EqualValues(t, 2, list.Body["total"])
	exhausted := api.Admin(http.MethodGet, ulpPath+"/"+id+"/entities?status=exhausted", nil)
	require.Len(t, exhausted.Data(), 1)
	assert.Equal(t, keyA, exhausted.Data()[0]["value_key"])
	assert.Len(t, api.Admin(http.MethodGet, ulpPath+"/"+id+"/entities?status=active,exhausted", nil).Data(), 2)
	searched := api.Admin(http.MethodGet, ulpPath+"/"+id+"/entities?search=ANN", nil)
	require.Len(t, searched.Data(), 1)
	assert.Equal(t, keyB, searched.Data()[0]["value_key"])
	assert.Len(t, api.Admin(http.MethodGet, ulpPath+"/"+id+"/entities?page_size=1&current_page=1", nil).Data(), 1)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, ulpPath+"/"+id+"/entities?status=archived", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodGet, ulpPath+"/not-a-uuid/entities", nil).Status)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodGet, ulpPath+"/"+uuid.NewString()+"/entities", nil).Status)

	usage := api.Admin(http.MethodGet, ulpPath+"/"+id+"?include_usage=true", nil)
	require.Equal(t, http.StatusOK, usage.Status)
	m, _ := usage.Body["value_key_usage_map"].(map[string]any)
	require.Contains(t, m, keyA)
	assert.Equal(t, "exhausted", m[keyA].(map[string]any)["status"])
	assert.EqualValues(t, 3, m[keyB].(map[string]any)["current_usage"])

	// Raising the credit limit above the usage reactivates the entity and resets its alerts.
	upd := api.Admin(http.MethodPut, ulpPath+"/"+id, map[string]any{"credit_limit": 20, "alert_threshold": 15})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	en = ulpEntity(t, api, id, keyA)
	assert.Equal(t, "active", en["status"])
	assert.Equal(t, false, en["is_threshold_alerts_sent"])
	assert.Equal(t, false, en["is_exhausted_alerts_sent"])
	// Lowering it under the usage exhausts the entity at once, with its alert.
	upd = api.Admin(http.MethodPut, ulpPath+"/"+id, map[string]any{"credit_limit": 10.5, "alert_threshold": nil})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, "exhausted", ulpEntity(t, api, id, keyA)["status"])
	assert.Equal(t, []string{domain.NotifyUsageThreshold, domain.NotifyUsageExhausted, domain.NotifyUsageExhausted}, ulpNotifications(api, id))

	// Reset by value key (URL-escaped) with PUT, by id with POST.
	reset := api.Admin(http.MethodPut, ulpPath+"/"+id+"/entities/"+url.PathEscape(keyA)+"/reset", nil)
	require.Equal(t, http.StatusOK, reset.Status, string(reset.Raw))
	assert.EqualValues(t, 0, reset.Body["current_usage"])
	assert.Equal(t, "active", reset.Str("status"))
	assert.Equal(t, api.Now().Format(time.RFC3339), reset.Str("last_reset_at"))
	assert.EqualValues(t, 0, ulpEntity(t, api, id, keyA)["current_usage"], "read your write")
	reset = api.Admin(http.MethodPost, ulpPath+"/"+id+"/entities/"+domain.UsageEntityID(id, keyB)+"/reset", nil)
	require.Equal(t, http.StatusOK, reset.Status, string(reset.Raw))
	assert.Equal(t, keyB, reset.Str("value_key"))
	assert.EqualValues(t, 0, ulpEntity(t, api, id, keyB)["current_usage"])

	missing := api.Admin(http.MethodPut, ulpPath+"/"+id+"/entities/api_key:nobody/reset", nil)
	assert.Equal(t, http.StatusNotFound, missing.Status)
	assert.Equal(t, "entityId", missing.ErrorParam())
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, ulpPath+"/"+uuid.NewString()+"/entities/x/reset", nil).Status)
	assert.Equal(t, http.StatusBadRequest, api.Admin(http.MethodPut, ulpPath+"/not-a-uuid/entities/x/reset", nil).Status)

	// Archived: the usage stays readable, nothing more is recorded or reset.
	require.Equal(t, http.StatusOK, api.Admin(http.MethodDelete, ulpPath+"/"+id, nil).Status)
	assert.Len(t, api.Admin(http.MethodGet, ulpPath+"/"+id+"/entities", nil).Data(), 2)
	assert.Equal(t, http.StatusNotFound, api.Admin(http.MethodPut, ulpPath+"/"+id+"/entities/"+url.PathEscape(keyA)+"/reset", nil).Status)
	h, err := commands.NewRecordUsageLimitPolicyUsageHandler(api.Deps)
	require.NoError(t, err)
	_, err = h.Handle(ulpSystem(api), commands.RecordUsageLimitPolicyUsage{PolicyID: id, ValueKey: keyA, Amount: 1})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))
}

func TestUsageLimitPolicyPeriodicReset(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	b := ulpBody(ws)
	delete(b, "periodic_reset")
	b["periodic_reset_days"] = 1
	id := ulpCreate(t, api, b)
	start := api.Now()
	ulpRecord(t, api, id, "api_key:a", 12)
	require.Equal(t, "exhausted", ulpEntity(t, api, id, "api_key:a")["status"])

	h, err := commands.NewResetUsageLimitPolicyPeriodHandler(api.Deps)
	require.NoError(t, err)
	res, err := h.Handle(ulpSystem(api), commands.ResetUsageLimitPolicyPeriod{PolicyID: id})
	require.NoError(t, err)
	assert.Zero(t, res.Position, "nothing to do before next_usage_reset_at")

	api.Advance(25 * time.Hour)
	res, err = h.Handle(ulpSystem(api), commands.ResetUsageLimitPolicyPeriod{PolicyID: id})
	require.NoError(t, err)
	ulpWait(t, api, res)
	en := ulpEntity(t, api, id, "api_key:a")
	assert.EqualValues(t, 0, en["current_usage"])
	assert.Equal(t, "active", en["status"])
	assert.Equal(t, false, en["is_threshold_alerts_sent"])
	got := api.Admin(http.MethodGet, ulpPath+"/"+id, nil)
	assert.Equal(t, start.AddDate(0, 0, 2).Format(time.RFC3339), got.Str("next_usage_reset_at"), "the schedule keeps its phase")
	assert.Equal(t, api.Now().Format(time.RFC3339), got.Str("last_reset_at"))

	// Only the system actor records usage and resets periods.
	admin := commands.WithRequest(context.Background(), commands.Request{Actor: domain.Actor{Kind: domain.ActorAPIKey,
		ID: "k", OrganisationID: api.OrgID, OrgRole: domain.RoleAdmin, KeyType: domain.KeyOrganisationService, Scopes: domain.AllScopes()}})
	_, err = h.Handle(admin, commands.ResetUsageLimitPolicyPeriod{PolicyID: id})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	rec, err := commands.NewRecordUsageLimitPolicyUsageHandler(api.Deps)
	require.NoError(t, err)
	_, err = rec.Handle(admin, commands.RecordUsageLimitPolicyUsage{PolicyID: id, ValueKey: "api_key:a", Amount: 1})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	other := commands.WithRequest(context.Background(), commands.Request{Actor: domain.System(uuid.NewString())})
	_, err = rec.Handle(other, commands.RecordUsageLimitPolicyUsage{PolicyID: id, ValueKey: "api_key:a", Amount: 1})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another organisation's system actor")
	_, err = rec.Handle(ulpSystem(api), commands.RecordUsageLimitPolicyUsage{PolicyID: id, ValueKey: "api_key:a", Amount: -1})
	assert.Equal(t, domain.CodeInvalid, domain.ErrorCode(err))
}

func TestUsageLimitPolicyAccess(t *testing.T) {
	api := newTestAPI(t)
	manager := api.seedUser("manager@example.com", domain.RoleMember)
	member := api.seedUser("member@example.com", domain.RoleMember)
	wsA := api.seedWorkspace("team-a", map[string]domain.Role{manager: domain.RoleManager, member: domain.RoleMember})
	wsB := api.seedWorkspace("team-b", nil)
	inA := ulpCreate(t, api, ulpBody(wsA))
	inB := ulpCreate(t, api, ulpBody(wsB))
	ulpRecord(t, api, inA, "api_key:a", 1)
	ulpRecord(t, api, inB, "api_key:b", 1)

	key := func(path string, body map[string]any) string {
		r := api.Admin(http.MethodPost, path, body)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Str("key")
	}
	noScopes := key("/api-keys/organisation/service", map[string]any{"name": "logs only", "scopes": []string{"logs.view"}})
	managerKey := key("/api-keys/workspace/user", map[string]any{"name": "mgr", "workspace_id": wsA, "user_id": manager,
		"scopes": domain.WorkspaceScopes()})
	memberKey := key("/api-keys/workspace/user", map[string]any{"name": "mem", "workspace_id": wsA, "user_id": member,
		"scopes": domain.WorkspaceScopes()})

	type call struct {
		name, method, path string
		body               any
	}
	calls := func(id string) []call {
		return []call{
			{"create", http.MethodPost, ulpPath, ulpBody(wsA)},
			{"list", http.MethodGet, ulpPath, nil},
			{"get", http.MethodGet, ulpPath + "/" + id, nil},
			{"update", http.MethodPut, ulpPath + "/" + id, map[string]any{"name": "x"}},
			{"entities", http.MethodGet, ulpPath + "/" + id + "/entities", nil},
			{"reset", http.MethodPut, ulpPath + "/" + id + "/entities/api_key:a/reset", nil},
			{"reset (POST)", http.MethodPost, ulpPath + "/" + id + "/entities/api_key:a/reset", nil},
			{"delete", http.MethodDelete, ulpPath + "/" + id, nil},
		}
	}

	for _, c := range calls(inA) {
		t.Run("no key: "+c.name, func(t *testing.T) {
			assert.Equal(t, http.StatusUnauthorized, api.Do(c.method, c.path, "", c.body).Status)
			assert.Equal(t, http.StatusUnauthorized, api.Do(c.method, c.path, "cw-wrong", c.body).Status)
		})
		t.Run("without the scope: "+c.name, func(t *testing.T) {
			r := api.Do(c.method, c.path, noScopes, c.body)
			assert.Equal(t, http.StatusForbidden, r.Status, string(r.Raw))
			assert.Contains(t, r.ErrorMessage(), "policies.")
		})
		t.Run("workspace member: "+c.name, func(t *testing.T) {
			want := http.StatusForbidden
			if c.method == http.MethodGet {
				want = http.StatusOK // members read their workspace's policies
			}
			r := api.Do(c.method, c.path, memberKey, c.body)
			assert.Equal(t, want, r.Status, string(r.Raw))
		})
	}
	// The manager of A acts on A's policies, in this order so that delete comes last.
	for _, c := range calls(inA) {
		r := api.Do(c.method, c.path, managerKey, c.body)
		assert.Equal(t, http.StatusOK, r.Status, "%s: %s", c.name, r.Raw)
	}
	// B's policy is invisible to A's manager: reads answer 404, writes 403, and lists leave it out.
	for _, c := range calls(inB)[2:] {
		want := http.StatusForbidden
		if c.method == http.MethodGet {
			want = http.StatusNotFound
		}
		r := api.Do(c.method, c.path, managerKey, c.body)
		assert.Equal(t, want, r.Status, "%s: %s", c.name, r.Raw)
	}
	for _, p := range api.Do(http.MethodGet, ulpPath+"?status=active,archived", managerKey, nil).Data() {
		assert.Equal(t, wsA, p["workspace_id"])
	}
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodGet, ulpPath+"?workspace_id="+wsB, managerKey, nil).Status)
	other := ulpBody(wsB)
	assert.Equal(t, http.StatusForbidden, api.Do(http.MethodPost, ulpPath, managerKey, other).Status, "create in another workspace")
}

func TestUsageLimitPolicyDisabled(t *testing.T) {
	api := newTestAPI(t)
	ws := api.seedWorkspace("team-a", nil)
	id := ulpCreate(t, api, ulpBody(ws))
	for _, f := range []struct {
		name     string
		features Features
		env      string
	}{
		{"USAGE_LIMITS_ENABLED=OFF", Features{APIAccess: true, Policy: true, UsageLimits: false, AuditLogs: true}, "USAGE_LIMITS_ENABLED"},
		{"POLICY_ENABLED=OFF", Features{APIAccess: true, Policy: false, UsageLimits: true, AuditLogs: true}, "POLICY_ENABLED"},
	} {
		t.Run(f.name, func(t *testing.T) {
			admin := &Admin{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Read: api.Read, Commands: api.AdminAPI.Commands, Deps: api.Deps,
				Secret: bytes.Repeat([]byte("s"), 32), Now: api.Now, WriteWait: 5 * time.Second, Features: f.features}
			srv := httptest.NewServer(NewRouter(Deps{Admin: admin, Health: &Health{}}))
			defer srv.Close()
			for _, c := range []struct{ method, path, body string }{
				{http.MethodPost, ulpPath, `{}`},
				{http.MethodGet, ulpPath, ``},
				{http.MethodGet, ulpPath + "/" + id, ``},
				{http.MethodPut, ulpPath + "/" + id, `{"name":"x"}`},
				{http.MethodDelete, ulpPath + "/" + id, ``},
				{http.MethodGet, ulpPath + "/" + id + "/entities", ``},
				{http.MethodPut, ulpPath + "/" + id + "/entities/x/reset", ``},
				{http.MethodPost, ulpPath + "/" + id + "/entities/x/reset", ``},
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
				assert.Equal(t, "disabled", body.Error.Code)
				assert.Contains(t, body.Error.Message, f.env)
			}
		})
	}
	assert.Equal(t, http.StatusOK, api.Admin(http.MethodGet, ulpPath+"/"+id, nil).Status, "on by default")
}
