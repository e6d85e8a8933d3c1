package httpapi

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
)

// Every groups route honours columns, the reference's named ones (users, ai-models, metadata)
// included: their own fields and the columns asked, the values those of /groups/{groupBy}.
func TestEveryGroupsRouteHonoursColumns(t *testing.T) {
	ta := newTrafficAPI(t)
	rows := ta.lastWeek(nil)
	cols := "p95_latency,error_count,cost"
	for _, c := range []struct {
		path, key string
		own       []string // the reference's fields, answered without columns
		rows      func(key string) []analytics.LogRecord
	}{
		{"/analytics/groups/users", "user", []string{"cost"}, func(k string) []analytics.LogRecord {
			return ta.lastWeek(func(r analytics.LogRecord) bool { return r.Metadata[analytics.UserMetadataKey] == k })
		}},
		{"/analytics/groups/ai-models", "ai_model", nil, func(k string) []analytics.LogRecord {
			return ta.lastWeek(func(r analytics.LogRecord) bool { return r.Model == k })
		}},
		{"/analytics/groups/metadata/env", "metadata_value", []string{"cost", "avg_tokens", "last_seen"}, func(k string) []analytics.LogRecord {
			return ta.lastWeek(func(r analytics.LogRecord) bool { return r.Metadata["env"] == k })
		}},
		{"/analytics/groups/model", "model", nil, func(k string) []analytics.LogRecord {
			return ta.lastWeek(func(r analytics.LogRecord) bool { return r.Model == k })
		}},
	} {
		t.Run(c.path, func(t *testing.T) {
			r := ta.Admin(http.MethodGet, c.path+"?columns="+cols+"&order_by=p95_latency&order_by_type=asc", nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
			require.NotEmpty(t, r.Data())
			want := append([]string{"object", c.key, "requests", "p95_latency", "error_count", "cost"}, c.own...)
			for i, item := range r.Data() {
				k := item[c.key].(string)
				assert.ElementsMatch(t, dedupe(want), mapKeys(item), k)
				for _, col := range []string{"p95_latency", "error_count", "cost"} {
					assertValue(t, expectColumn(c.rows(k), col), item[col], k+" "+col)
				}
				if i > 0 {
					assert.LessOrEqual(t, num(r.Data()[i-1]["p95_latency"]), num(item["p95_latency"]), "ordered by an asked column")
				}
			}
			bad := ta.Admin(http.MethodGet, c.path+"?columns=cost,speed", nil)
			assert.Equal(t, http.StatusBadRequest, bad.Status)
			assert.Equal(t, "columns", bad.ErrorParam())
			assert.Contains(t, bad.ErrorMessage(), strings.Join(analytics.Columns, ", "), "the valid columns are listed")
		})
	}
	require.NotEmpty(t, rows)
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !strings.Contains(","+strings.Join(out, ",")+",", ","+x+",") {
			out = append(out, x)
		}
	}
	return out
}

// groupBy and columns take the spellings the API answers (a log's ai_org, ai_model,
// response_status_code...) as well as their own; unknown ones are refused with the list.
func TestGroupsSpellings(t *testing.T) {
	ta := newTrafficAPI(t)
	same := func(canonical, alias string) {
		t.Helper()
		want := ta.Admin(http.MethodGet, canonical, nil)
		got := ta.Admin(http.MethodGet, alias, nil)
		require.Equal(t, http.StatusOK, want.Status, string(want.Raw))
		require.Equal(t, http.StatusOK, got.Status, "%s: %s", alias, got.Raw)
		require.NotEmpty(t, want.Data())
		assert.Equal(t, want.Body, got.Body, alias)
	}
	for alias, canonical := range map[string]string{
		"ai_org": "ai_service", "AI_MODEL": "model", "response_status_code": "status_code", "api_key_id": "api_key",
		"config_id": "config", "workspace_slug": "workspace", "virtual_keys": "provider", "prompt_id": "prompt",
	} {
		same("/analytics/groups/"+canonical, "/analytics/groups/"+alias)
		same("/logs/groups/"+canonical, "/logs/groups/"+alias)
	}
	same("/analytics/groups/model?columns=error_count,total_tokens&order_by=error_count",
		"/analytics/groups/model?columns=errors,total_units&order_by=ERRORS")
	for _, bad := range []struct{ query, param, lists string }{
		{"/analytics/groups/colour", "groupBy", "ai_service, model, status_code"},
		{"/analytics/groups/model?columns=speed", "columns", "cost, total_tokens"},
		{"/analytics/groups/model?columns=cost&order_by=speed", "order_by", "requests, cost"},
		{"/analytics/groups/model?order_by_type=up", "order_by_type", "asc or desc"},
	} {
		r := ta.Admin(http.MethodGet, bad.query, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, bad.query)
		assert.Equal(t, bad.param, r.ErrorParam(), bad.query)
		assert.Contains(t, r.ErrorMessage(), bad.lists, bad.query)
	}
}

// noise is a float's binary noise in JSON: a run of zeros or nines before a last digit, or an
// exponent.
var noise = regexp.MustCompile(`\d\.?\d*(0{6,}|9{6,})\d|\de-\d`)

// Money is answered in USD rounded to 10 decimal places, as plain numbers, wherever it is:
// logs, groups, graphs, the summary, and a key's current usage.
func TestMoneyIsRoundedEverywhere(t *testing.T) {
	ta := newTrafficAPI(t)
	at := ta.Now().Add(-time.Hour)
	// Sums computed at run time, as the gateway's are (constants are exact in Go).
	add := func(xs ...float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	}
	require.Equal(t, 0.30000000000000004, add(0.1, 0.2))
	var noisy []analytics.LogRecord
	for i, cost := range []float64{1.3500000000000001e-05, add(0.1, 0.2), 1e-13} {
		noisy = append(noisy, analytics.LogRecord{ID: uuid.NewString(), OrganisationID: ta.OrgID, WorkspaceID: ta.WSA,
			AIService: "openai", Model: "noisy-model", StatusCode: 200, Cost: cost, LatencyMS: 0.443, TTFTMS: 0.1004,
			Metadata: map[string]string{"env": "noise"}, StartedAt: at.Add(time.Duration(i) * time.Second), EndedAt: at})
	}
	ta.insert(noisy...)
	model := "models=noisy-model"

	detail := ta.Admin(http.MethodGet, "/logs/"+noisy[0].ID, nil)
	require.Equal(t, http.StatusOK, detail.Status, string(detail.Raw))
	assert.Contains(t, string(detail.Raw), `"cost":0.0000135`)
	assert.Contains(t, string(detail.Raw), `"responseTime":0.443`, "one latency, in milliseconds")
	assert.Contains(t, string(detail.Raw), `"response_time":0.443`, "the same in metrics")
	assert.Contains(t, string(detail.Raw), `"time_to_first_token":0.1`)
	list := ta.Admin(http.MethodGet, "/logs?"+model, nil)
	require.Len(t, list.Data(), 3)
	assert.Contains(t, string(list.Raw), `"cost":0.3,`)
	assert.Contains(t, string(list.Raw), `"cost":0,`, "below the precision is 0")

	for _, path := range []string{
		"/logs?" + model,
		"/analytics/groups/model?columns=cost&" + model,
		"/analytics/groups/users?" + model,
		"/analytics/groups/metadata/env?" + model,
		"/analytics/graphs/cost?" + model,
		"/analytics/summary?" + model,
	} {
		r := ta.Admin(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Raw)
		for _, m := range regexp.MustCompile(`"(cost|total|avg)":[-0-9.e+]+`).FindAllString(string(r.Raw), -1) {
			assert.NotRegexp(t, noise, m, path)
		}
	}
	sum := ta.Admin(http.MethodGet, "/analytics/summary?"+model, nil)
	assert.Contains(t, string(sum.Raw), `"cost":0.3000135,`, "the sum, rounded")
	graph := ta.Admin(http.MethodGet, "/analytics/graphs/cost?"+model, nil)
	assert.Contains(t, string(graph.Raw), `"total":0.3000135`)

	key := ta.Admin(http.MethodPost, "/api-keys/workspace/service", map[string]any{"name": "budgeted", "workspace_id": ta.WSA,
		"scopes": []string{"logs.view"}, "usage_limits": map[string]any{"type": "cost", "credit_limit": 10, "alert_threshold": 1}})
	require.Equal(t, http.StatusOK, key.Status, string(key.Raw))
	id := key.Str("id")
	ta.seedEvents(domain.Stream(domain.APIKeyPrefix, id), domain.APIKeyUsageThresholdReached{KeyID: id, Usage: add(1.1, 2.2),
		AlertThreshold: 1, At: ta.Now()})
	got := ta.Admin(http.MethodGet, "/api-keys/"+id, nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Contains(t, string(got.Raw), `"current_usage":3.3,`)
	assert.NotContains(t, string(got.Raw), "3.3000000000000003")
	listed := ta.Admin(http.MethodGet, "/api-keys?workspace_id="+ta.WSA, nil)
	assert.NotContains(t, string(listed.Raw), "3.3000000000000003")

	note := uuid.NewString()
	ta.seedEvents(domain.Stream(domain.NotificationPrefix, note), domain.NotificationRecorded{NotificationID: note,
		OrganisationID: ta.OrgID, Kind: domain.NotifyUsageThreshold, Recipients: []string{"organisation:admins"},
		Subject: "API key reached its alert threshold", ResourceType: "api_key", ResourceID: id,
		Data: map[string]string{"current_usage": strconv.FormatFloat(add(1.1, 2.2), 'f', -1, 64), "alert_threshold": "1"}, At: ta.Now()})
	alert := ta.Admin(http.MethodGet, "/notifications/"+note, nil)
	require.Equal(t, http.StatusOK, alert.Status, string(alert.Raw))
	assert.Equal(t, "3.3", obj(alert.Body, "data")["current_usage"], "a budget alert's usage, as money is answered")
}
