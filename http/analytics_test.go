package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/sqlite"
	"github.com/causeway/causeway/domain"
)

// trafficAPI is the admin API over a real SQLite request log store loaded with rows the test
// knows, so that every answer can be checked against a computation over those rows.
type trafficAPI struct {
	*testAPI
	Logs       *sqlite.Store
	Rows       []analytics.LogRecord // every stored row, of every organisation
	WSA, WSB   string                // workspaces team-a and team-b
	Keys       []string              // the API key ids rows carry
	ConfigID   string                // the saved config "cfg-main" of team-a
	ConfigSlug string
}

const otherOrg = "00000000-0000-4000-8000-0000000000ff"

func newTrafficAPI(t *testing.T) *trafficAPI {
	t.Helper()
	api := newTestAPI(t)
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	api.AdminAPI.Analytics = store
	ta := &trafficAPI{testAPI: api, Logs: store, WSA: api.seedWorkspace("team-a", nil), WSB: api.seedWorkspace("team-b", nil),
		Keys: []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}}
	cfg := api.Admin(http.MethodPost, "/configs", map[string]any{"name": "Main", "slug": "cfg-main", "workspace_id": ta.WSA,
		"config": map[string]any{"provider": "openai"}})
	require.Equal(t, http.StatusOK, cfg.Status, string(cfg.Raw))
	ta.ConfigID, ta.ConfigSlug = obj(cfg.Body, "data")["id"].(string), "cfg-main"
	ta.insert(ta.generate(400)...)
	return ta
}

// generate makes n rows of the test organisation over the last nine days, and a few of
// another organisation that no answer may show.
func (ta *trafficAPI) generate(n int) []analytics.LogRecord {
	r := rand.New(rand.NewPCG(6, 7))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	now := ta.Now()
	codes := []int{200, 200, 200, 200, 201, 401, 429, 500}
	var rows []analytics.LogRecord
	for i := range n + 20 {
		provider, service := pick("@openai-prod", "@anthropic-main", ""), ""
		switch provider {
		case "@openai-prod", "":
			service = "openai"
		default:
			service = "anthropic"
		}
		total := r.IntN(2000)
		in := r.IntN(total + 1)
		start := now.Add(-time.Duration(r.Int64N(int64(9*24*time.Hour/time.Millisecond))) * time.Millisecond).Add(-time.Millisecond)
		latency := float64(r.IntN(30_000)) / 10
		meta := map[string]string{"env": pick("prod", "staging")}
		if u := pick("alice", "bob", "carol", ""); u != "" {
			meta[analytics.UserMetadataKey] = u
		}
		ws := ta.WSA
		if i%3 == 0 {
			ws = ta.WSB
		}
		rec := analytics.LogRecord{
			ID: uuid.NewString(), TraceID: fmt.Sprintf("trace-%d", i%10), SpanID: fmt.Sprintf("span-%d", i),
			OrganisationID: ta.OrgID, WorkspaceID: ws, APIKeyID: ta.Keys[r.IntN(len(ta.Keys))],
			Provider: provider, AIService: service, Model: pick("gpt-4o", "gpt-4o-mini", "claude-3"),
			ConfigID: pick("", ta.ConfigID), PromptID: pick("", "", "prompt-1"), Endpoint: pick("chatComplete", "embed", "proxy"),
			Method: "POST", Path: "/v1/chat/completions", StatusCode: codes[r.IntN(len(codes))],
			PromptTokens: in, CompletionTokens: total - in, TotalTokens: total, CachedTokens: r.IntN(in + 1),
			Cost: float64(r.IntN(200_000)) / 1e5, LatencyMS: latency, CacheStatus: pick("HIT", "MISS", "DISABLED"),
			RetryCount: r.IntN(3), LogFormat: "v1", Metadata: meta, StartedAt: start,
			EndedAt:     start.Add(time.Duration(latency * float64(time.Millisecond))).Truncate(time.Millisecond),
			RequestBody: []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`), ResponseBody: []byte(`{"id":"chatcmpl-1"}`),
		}
		// Semantic hits, forced refreshes and what the hits saved, set without drawing from r.
		switch {
		case rec.CacheStatus == analytics.CacheHit && i%4 == 0:
			rec.CacheStatus = analytics.CacheSemanticHit
		case rec.CacheStatus == analytics.CacheMiss && i%4 == 0:
			rec.CacheStatus = analytics.CacheRefresh
		}
		if cacheHit(rec) {
			rec.CacheSavedCost, rec.CacheSavedMS = float64(i%50+1)/1000, float64(i%700)
		}
		if i >= n {
			rec.OrganisationID, rec.WorkspaceID = otherOrg, uuid.NewString()
		}
		rows = append(rows, rec)
	}
	return rows
}

// cacheHit says whether r was answered from the cache, simply or semantically.
func cacheHit(r analytics.LogRecord) bool {
	return r.CacheStatus == analytics.CacheHit || r.CacheStatus == analytics.CacheSemanticHit
}

// insert stores rows and remembers them.
func (ta *trafficAPI) insert(rows ...analytics.LogRecord) {
	ta.t.Helper()
	require.NoError(ta.t, ta.Logs.Insert(context.Background(), rows))
	ta.Rows = append(ta.Rows, rows...)
}

// match is the test organisation's rows started in [from, to) that keep holds for.
func (ta *trafficAPI) match(from, to time.Time, keep func(analytics.LogRecord) bool) []analytics.LogRecord {
	var out []analytics.LogRecord
	for _, r := range ta.Rows {
		if r.OrganisationID == ta.OrgID && !r.StartedAt.Before(from) && r.StartedAt.Before(to) && (keep == nil || keep(r)) {
			out = append(out, r)
		}
	}
	return out
}

// lastWeek is the test organisation's rows of the default range that keep holds for.
func (ta *trafficAPI) lastWeek(keep func(analytics.LogRecord) bool) []analytics.LogRecord {
	return ta.match(ta.Now().Add(-7*24*time.Hour), ta.Now(), keep)
}

func everyRow(analytics.LogRecord) bool { return true }

// groupKeyOf is a row's key under groupBy, as the answer spells it.
func groupKeyOf(r analytics.LogRecord, groupBy string) any {
	switch groupBy {
	case analytics.GroupAIService:
		return r.AIService
	case analytics.GroupModel:
		return r.Model
	case analytics.GroupStatusCode:
		return float64(r.StatusCode)
	case analytics.GroupAPIKey:
		return r.APIKeyID
	case analytics.GroupConfig:
		return r.ConfigID
	case analytics.GroupWorkspace:
		return r.WorkspaceID
	case analytics.GroupProvider:
		return r.Provider
	case analytics.GroupPrompt:
		return r.PromptID
	}
	panic(groupBy)
}

// expectColumn computes a column over a group's rows, as the answer gives it.
func expectColumn(rows []analytics.LogRecord, col string) any {
	n := float64(len(rows))
	sum := func(f func(analytics.LogRecord) float64) float64 {
		s := 0.0
		for _, r := range rows {
			s += f(r)
		}
		return s
	}
	share := func(f func(analytics.LogRecord) bool) float64 {
		return sum(func(r analytics.LogRecord) float64 {
			if f(r) {
				return 1
			}
			return 0
		}) / n
	}
	percentile := func(p float64) float64 {
		lat := make([]float64, len(rows))
		for i, r := range rows {
			lat[i] = r.LatencyMS
		}
		slices.Sort(lat)
		return lat[min(int(p*n), len(lat)-1)]
	}
	seen := func(later bool) string {
		t := rows[0].StartedAt
		for _, r := range rows {
			if r.StartedAt.After(t) == later && !r.StartedAt.Equal(t) {
				t = r.StartedAt
			}
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	switch col {
	case analytics.ColCost:
		return sum(func(r analytics.LogRecord) float64 { return r.Cost })
	case analytics.ColTotalTokens:
		return sum(func(r analytics.LogRecord) float64 { return float64(r.TotalTokens) })
	case analytics.ColAvgTokens:
		return sum(func(r analytics.LogRecord) float64 { return float64(r.TotalTokens) }) / n
	case analytics.ColAvgInputTokens:
		return sum(func(r analytics.LogRecord) float64 { return float64(r.PromptTokens) }) / n
	case analytics.ColAvgOutputTokens:
		return sum(func(r analytics.LogRecord) float64 { return float64(r.CompletionTokens) }) / n
	case analytics.ColAvgLatency:
		return sum(func(r analytics.LogRecord) float64 { return r.LatencyMS }) / n
	case analytics.ColP95Latency:
		return percentile(analytics.P95)
	case analytics.ColP99Latency:
		return percentile(analytics.P99)
	case analytics.ColSuccessRate:
		return share(func(r analytics.LogRecord) bool { return r.StatusCode >= 200 && r.StatusCode < 300 })
	case analytics.ColErrorCount:
		return sum(func(r analytics.LogRecord) float64 {
			if r.StatusCode >= 400 {
				return 1
			}
			return 0
		})
	case analytics.ColCacheHitRate:
		return share(cacheHit)
	case analytics.ColLastSeen:
		return seen(true)
	case analytics.ColFirstSeen:
		return seen(false)
	}
	panic(col)
}

// expectGroups groups rows by groupBy, ordered as the default: requests descending, then key.
func expectGroups(rows []analytics.LogRecord, groupBy string) ([]any, map[any][]analytics.LogRecord) {
	by := map[any][]analytics.LogRecord{}
	for _, r := range rows {
		k := groupKeyOf(r, groupBy)
		by[k] = append(by[k], r)
	}
	keys := make([]any, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b any) int {
		return cmp.Or(cmp.Compare(len(by[b]), len(by[a])), strings.Compare(fmt.Sprint(a), fmt.Sprint(b)))
	})
	return keys, by
}

// assertValue compares an answered value with the expected one: floats within 1e-6 relative.
func assertValue(t *testing.T, want, got any, msg string) {
	t.Helper()
	if w, ok := want.(float64); ok {
		g, ok := got.(float64)
		require.True(t, ok, "%s: %v is not a number", msg, got)
		assert.InDelta(t, w, g, 1e-6*math.Max(1, math.Abs(w)), msg)
		return
	}
	assert.Equal(t, want, got, msg)
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func TestAnalyticsGroupsEveryGroupByAndColumn(t *testing.T) {
	ta := newTrafficAPI(t)
	rows := ta.lastWeek(nil)
	require.Greater(t, len(rows), 200)
	for _, prefix := range []string{"/analytics/groups/", "/logs/groups/"} {
		for _, groupBy := range analytics.GroupBys {
			t.Run(prefix+groupBy, func(t *testing.T) {
				keys, by := expectGroups(rows, groupBy)

				plain := ta.Admin(http.MethodGet, prefix+groupBy, nil)
				require.Equal(t, http.StatusOK, plain.Status, string(plain.Raw))
				assert.Equal(t, "list", plain.Body["object"])
				assert.EqualValues(t, len(keys), plain.Body["total"])
				first := plain.Data()[0]
				wantFields := []string{"object", "requests", groupBy}
				if groupBy == analytics.GroupWorkspace {
					wantFields = append(wantFields, "workspace_slug")
				}
				got := make([]string, 0, len(first))
				for k := range first {
					got = append(got, k)
				}
				assert.ElementsMatch(t, wantFields, got, "by default only the request count")

				all := ta.Admin(http.MethodGet, prefix+groupBy+"?page_size=1000&columns="+strings.Join(analytics.Columns, ","), nil)
				require.Equal(t, http.StatusOK, all.Status, string(all.Raw))
				data := all.Data()
				require.Len(t, data, len(keys))
				for i, item := range data {
					k := keys[i]
					assert.Equal(t, "analytics-group", item["object"])
					assert.Equal(t, k, item[groupBy], "order: requests descending, then key")
					assert.EqualValues(t, len(by[k]), item["requests"], "%v", k)
					for _, c := range analytics.Columns {
						assertValue(t, expectColumn(by[k], c), item[c], fmt.Sprintf("%s %v %s", groupBy, k, c))
					}
				}
			})
		}
	}
	t.Run("workspace groups name their slug", func(t *testing.T) {
		for _, item := range ta.Admin(http.MethodGet, "/analytics/groups/workspace", nil).Data() {
			want := map[string]string{ta.WSA: "team-a", ta.WSB: "team-b"}[item["workspace"].(string)]
			assert.Equal(t, want, item["workspace_slug"])
		}
	})
	t.Run("columns repeated and comma-separated, requests allowed", func(t *testing.T) {
		r := ta.Admin(http.MethodGet, "/analytics/groups/model?columns=cost,requests&columns=p95_latency", nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		assert.Contains(t, r.Data()[0], "cost")
		assert.Contains(t, r.Data()[0], "p95_latency")
		assert.NotContains(t, r.Data()[0], "avg_latency")
	})
}

func TestAnalyticsGroupsOrderAndPages(t *testing.T) {
	ta := newTrafficAPI(t)
	rows := ta.lastWeek(nil)
	_, by := expectGroups(rows, analytics.GroupModel)
	models := make([]string, 0, len(by))
	for k := range by {
		models = append(models, k.(string))
	}
	costOf := func(m string) float64 { return expectColumn(by[m], analytics.ColCost).(float64) }

	asc := ta.Admin(http.MethodGet, "/analytics/groups/model?columns=cost&order_by=cost&order_by_type=asc", nil)
	require.Equal(t, http.StatusOK, asc.Status, string(asc.Raw))
	slices.SortFunc(models, func(a, b string) int { return cmp.Compare(costOf(a), costOf(b)) })
	for i, item := range asc.Data() {
		assert.Equal(t, models[i], item["model"])
	}
	desc := ta.Admin(http.MethodGet, "/analytics/groups/model?columns=cost&order_by=cost", nil)
	slices.Reverse(models)
	for i, item := range desc.Data() {
		assert.Equal(t, models[i], item["model"], "order_by_type defaults to desc")
	}
	byReq := ta.Admin(http.MethodGet, "/analytics/groups/model?order_by=requests&order_by_type=ASC", nil)
	require.Equal(t, http.StatusOK, byReq.Status, string(byReq.Raw))
	for i := 1; i < len(byReq.Data()); i++ {
		assert.LessOrEqual(t, num(byReq.Data()[i-1]["requests"]), num(byReq.Data()[i]["requests"]))
	}

	// Pages of one group each walk every group once, in order; past the end the page is empty.
	keys, _ := expectGroups(rows, analytics.GroupAPIKey)
	for i, k := range keys {
		p := ta.Admin(http.MethodGet, "/analytics/groups/api_key?page_size=1&current_page="+strconv.Itoa(i), nil)
		require.Equal(t, http.StatusOK, p.Status, string(p.Raw))
		require.Len(t, p.Data(), 1)
		assert.Equal(t, k, p.Data()[0]["api_key"])
		assert.EqualValues(t, len(keys), p.Body["total"])
		assert.EqualValues(t, i, p.Body["current_page"])
		assert.EqualValues(t, 1, p.Body["page_size"])
	}
	past := ta.Admin(http.MethodGet, "/analytics/groups/api_key?page_size=1&current_page="+strconv.Itoa(len(keys)), nil)
	require.Equal(t, http.StatusOK, past.Status)
	assert.Empty(t, past.Data())
	assert.EqualValues(t, len(keys), past.Body["total"])
	assert.EqualValues(t, analytics.DefaultPageSize, ta.Admin(http.MethodGet, "/analytics/groups/model", nil).Body["page_size"])
	assert.EqualValues(t, analytics.DefaultPageSize, ta.Admin(http.MethodGet, "/analytics/groups/model?page_size=0", nil).Body["page_size"])
	assert.EqualValues(t, 2, ta.Admin(http.MethodGet, "/analytics/groups/model?pageSize=2&currentPage=0", nil).Body["page_size"])

	cases := []struct {
		name, query, param string
		status             int
	}{
		{"page_size at the bound", "page_size=1000", "", 200},
		{"page_size past the bound", "page_size=1001", "page_size", 400},
		{"page_size negative", "page_size=-1", "page_size", 400},
		{"current_page at the bound", "current_page=1000000", "", 200},
		{"current_page past the bound", "current_page=1000001", "current_page", 400},
		{"current_page negative", "current_page=-1", "current_page", 400},
		{"current_page not a number", "current_page=first", "current_page", 400},
		{"order_by a column not asked", "order_by=cost", "order_by", 400},
		{"order_by unknown", "order_by=name&columns=cost", "order_by", 400},
		{"order_by_type unknown", "order_by_type=sideways", "order_by_type", 400},
		{"unknown column", "columns=cost,median_latency", "columns", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, prefix := range []string{"/analytics/groups/model?", "/logs/groups/model?"} {
				r := ta.Admin(http.MethodGet, prefix+tc.query, nil)
				require.Equal(t, tc.status, r.Status, string(r.Raw))
				if tc.status >= 400 {
					assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				}
			}
		})
	}
	for _, prefix := range []string{"/analytics/groups/", "/logs/groups/"} {
		r := ta.Admin(http.MethodGet, prefix+"colour", nil)
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Raw))
		assert.Equal(t, "groupBy", r.ErrorParam())
		assert.Contains(t, r.ErrorMessage(), "ai_service, model, status_code, api_key, config, workspace, provider, prompt")
	}
	assert.Contains(t, ta.Admin(http.MethodGet, "/analytics/groups/model?page_size=1001", nil).ErrorMessage(), "1000")
}

func TestAnalyticsNamedGroups(t *testing.T) {
	ta := newTrafficAPI(t)
	rows := ta.lastWeek(nil)

	t.Run("ai-models", func(t *testing.T) {
		keys, by := expectGroups(rows, analytics.GroupModel)
		r := ta.Admin(http.MethodGet, "/analytics/groups/ai-models", nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Len(t, r.Data(), len(keys))
		for i, item := range r.Data() {
			assert.Equal(t, keys[i], item["ai_model"])
			assert.EqualValues(t, len(by[keys[i]]), item["requests"])
			assert.Equal(t, "analytics-group", item["object"])
		}
	})

	byValue := func(key string) map[string][]analytics.LogRecord {
		out := map[string][]analytics.LogRecord{}
		for _, r := range rows {
			if v, ok := r.Metadata[key]; ok {
				out[v] = append(out[v], r)
			}
		}
		return out
	}
	t.Run("users", func(t *testing.T) {
		want := byValue(analytics.UserMetadataKey)
		r := ta.Admin(http.MethodGet, "/analytics/groups/users", nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		assert.EqualValues(t, len(want), r.Body["total"], "rows without _user belong to no user")
		require.Len(t, r.Data(), len(want))
		for i, item := range r.Data() {
			u := item["user"].(string)
			assert.EqualValues(t, len(want[u]), item["requests"], u)
			assertValue(t, expectColumn(want[u], analytics.ColCost), item["cost"], u)
			assert.ElementsMatch(t, []string{"object", "user", "requests", "cost"}, mapKeys(item))
			if i > 0 {
				assert.GreaterOrEqual(t, num(r.Data()[i-1]["requests"]), num(item["requests"]))
			}
		}
	})
	t.Run("metadata/env", func(t *testing.T) {
		want := byValue("env")
		r := ta.Admin(http.MethodGet, "/analytics/groups/metadata/env?order_by=cost&order_by_type=asc", nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Len(t, r.Data(), len(want))
		for i, item := range r.Data() {
			v := item["metadata_value"].(string)
			assert.EqualValues(t, len(want[v]), item["requests"], v)
			assertValue(t, expectColumn(want[v], analytics.ColCost), item["cost"], v)
			assertValue(t, expectColumn(want[v], analytics.ColAvgTokens), item["avg_tokens"], v)
			assert.Equal(t, expectColumn(want[v], analytics.ColLastSeen), item["last_seen"], v)
			if i > 0 {
				assert.LessOrEqual(t, num(r.Data()[i-1]["cost"]), num(item["cost"]))
			}
		}
		page := ta.Admin(http.MethodGet, "/analytics/groups/metadata/env?page_size=1&current_page=1", nil)
		require.Equal(t, http.StatusOK, page.Status)
		assert.Len(t, page.Data(), 1)
		assert.EqualValues(t, len(want), page.Body["total"])
		assert.Empty(t, ta.Admin(http.MethodGet, "/analytics/groups/metadata/nothing-here", nil).Data())
	})
	t.Run("bounds", func(t *testing.T) {
		long := strings.Repeat("k", domain.MaxNameLength)
		assert.Equal(t, http.StatusOK, ta.Admin(http.MethodGet, "/analytics/groups/metadata/"+long, nil).Status)
		r := ta.Admin(http.MethodGet, "/analytics/groups/metadata/"+long+"k", nil)
		assert.Equal(t, http.StatusBadRequest, r.Status)
		assert.Equal(t, "metadataKey", r.ErrorParam())
		r = ta.Admin(http.MethodGet, "/analytics/groups/users?order_by=avg_tokens", nil)
		assert.Equal(t, "order_by", r.ErrorParam(), "users have no avg_tokens")
		assert.Equal(t, http.StatusOK, ta.Admin(http.MethodGet, "/analytics/groups/metadata/env?order_by=last_seen", nil).Status)
	})
}

func mapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// filterCase is a query and the rows it must select: those of [from, to) (by default the
// last seven days) that keep holds for.
type filterCase struct {
	name     string
	query    string
	keep     func(analytics.LogRecord) bool
	from, to time.Time
}

func (ta *trafficAPI) filterCases() []filterCase {
	now := ta.Now()
	from, to := now.Add(-3*24*time.Hour), now.Add(-24*time.Hour)
	in := func(xs ...string) func(string) bool { return func(s string) bool { return slices.Contains(xs, s) } }
	return []filterCase{
		{name: "none", query: "", keep: everyRow},
		{name: "workspace_slug", query: "workspace_slug=team-b", keep: func(r analytics.LogRecord) bool { return r.WorkspaceID == ta.WSB }},
		{name: "time range", query: "time_of_generation_min=" + url.QueryEscape(from.Format(time.RFC3339)) + "&time_of_generation_max=" + url.QueryEscape(to.Format(time.RFC3339)),
			keep: everyRow, from: from, to: to},
		{name: "time_of_generation_min with an offset", query: "time_of_generation_min=" + url.QueryEscape(from.In(time.FixedZone("", 5*3600+1800)).Format(time.RFC3339)),
			keep: everyRow, from: from, to: now},
		{name: "time_of_generation_max alone: the week before it", query: "time_of_generation_max=" + url.QueryEscape(to.Format(time.RFC3339)),
			keep: everyRow, from: to.Add(-7 * 24 * time.Hour), to: to},
		{name: "total_units_min", query: "total_units_min=1000", keep: func(r analytics.LogRecord) bool { return r.TotalTokens >= 1000 }},
		{name: "total_units_max", query: "total_units_max=1000", keep: func(r analytics.LogRecord) bool { return r.TotalTokens <= 1000 }},
		{name: "total_units range", query: "total_units_min=500&total_units_max=500", keep: func(r analytics.LogRecord) bool { return r.TotalTokens == 500 }},
		{name: "cost range", query: "cost_min=0.5&cost_max=1.25", keep: func(r analytics.LogRecord) bool { return r.Cost >= 0.5 && r.Cost <= 1.25 }},
		{name: "prompt_token range", query: "prompt_token_min=100&prompt_token_max=700", keep: func(r analytics.LogRecord) bool { return r.PromptTokens >= 100 && r.PromptTokens <= 700 }},
		{name: "completion_token range", query: "completion_token_min=50&completion_token_max=400", keep: func(r analytics.LogRecord) bool {
			return r.CompletionTokens >= 50 && r.CompletionTokens <= 400
		}},
		{name: "status_code", query: "status_code=429,500", keep: func(r analytics.LogRecord) bool { return r.StatusCode == 429 || r.StatusCode == 500 }},
		{name: "virtual_keys", query: "virtual_keys=openai-prod", keep: func(r analytics.LogRecord) bool { return r.Provider == "@openai-prod" }},
		{name: "providers", query: "providers=@anthropic-main&providers=openai-prod", keep: func(r analytics.LogRecord) bool { return r.Provider != "" }},
		{name: "configs by slug", query: "configs=" + ta.ConfigSlug, keep: func(r analytics.LogRecord) bool { return r.ConfigID == ta.ConfigID }},
		{name: "configs by id", query: "configs=" + ta.ConfigID, keep: func(r analytics.LogRecord) bool { return r.ConfigID == ta.ConfigID }},
		{name: "configs unknown", query: "configs=no-such-config", keep: func(analytics.LogRecord) bool { return false }},
		{name: "api_key_ids", query: "api_key_ids=" + ta.Keys[0] + "," + ta.Keys[2], keep: func(r analytics.LogRecord) bool { return in(ta.Keys[0], ta.Keys[2])(r.APIKeyID) }},
		{name: "metadata", query: "metadata=" + url.QueryEscape(`{"_user":"alice","env":"prod"}`), keep: func(r analytics.LogRecord) bool {
			return r.Metadata["_user"] == "alice" && r.Metadata["env"] == "prod"
		}},
		{name: "models", query: "models=gpt-4o,claude-3", keep: func(r analytics.LogRecord) bool { return in("gpt-4o", "claude-3")(r.Model) }},
		{name: "ai_org_model models", query: "ai_org_model=gpt-4o-mini", keep: func(r analytics.LogRecord) bool { return r.Model == "gpt-4o-mini" }},
		{name: "ai_org_model several models", query: "ai_org_model=gpt-4o,claude-3", keep: func(r analytics.LogRecord) bool { return in("gpt-4o", "claude-3")(r.Model) }},
		{name: "ai_org_model pairs", query: "ai_org_model=OpenAI__gpt-4o,anthropic__claude-3", keep: func(r analytics.LogRecord) bool {
			return r.AIService == "openai" && r.Model == "gpt-4o" || r.AIService == "anthropic" && r.Model == "claude-3"
		}},
		{name: "trace_id", query: "trace_id=trace-3", keep: func(r analytics.LogRecord) bool { return r.TraceID == "trace-3" }},
		{name: "span_id", query: "span_id=span-7", keep: func(r analytics.LogRecord) bool { return r.SpanID == "span-7" }},
		{name: "prompt_slug", query: "prompt_slug=prompt-1", keep: func(r analytics.LogRecord) bool { return r.PromptID == "prompt-1" }},
		{name: "several at once", query: "workspace_slug=team-a&status_code=200&models=gpt-4o&cost_min=0.2", keep: func(r analytics.LogRecord) bool {
			return r.WorkspaceID == ta.WSA && r.StatusCode == 200 && r.Model == "gpt-4o" && r.Cost >= 0.2
		}},
	}
}

// TestTrafficFilters checks every filter on every kind of route: the summary, the groups, the
// requests graph and the logs list select exactly the rows the filter names.
func TestTrafficFilters(t *testing.T) {
	ta := newTrafficAPI(t)
	for _, tc := range ta.filterCases() {
		t.Run(tc.name, func(t *testing.T) {
			want := ta.lastWeek(tc.keep)
			if !tc.from.IsZero() {
				want = ta.match(tc.from, tc.to, tc.keep)
			}
			if tc.name != "none" {
				all := ta.lastWeek(nil)
				if !tc.from.IsZero() {
					all = ta.match(time.Time{}, ta.Now(), nil)
				}
				require.Less(t, len(want), len(all), "the filter must select fewer rows than none")
			}
			cost := 0.0
			for _, r := range want {
				cost += r.Cost
			}

			s := ta.Admin(http.MethodGet, "/analytics/summary?"+tc.query, nil)
			require.Equal(t, http.StatusOK, s.Status, string(s.Raw))
			sum := obj(s.Body, "summary")
			assert.EqualValues(t, len(want), sum["requests"], "summary")
			assert.InDelta(t, cost, num(sum["cost"]), 1e-6)

			for _, prefix := range []string{"/analytics/groups/model", "/logs/groups/model"} {
				g := ta.Admin(http.MethodGet, prefix+"?page_size=1000&"+tc.query, nil)
				require.Equal(t, http.StatusOK, g.Status, string(g.Raw))
				n := 0.0
				for _, item := range g.Data() {
					n += num(item["requests"])
				}
				assert.EqualValues(t, len(want), n, prefix)
			}

			graph := ta.Admin(http.MethodGet, "/analytics/graphs/requests?"+tc.query, nil)
			require.Equal(t, http.StatusOK, graph.Status, string(graph.Raw))
			assert.EqualValues(t, len(want), obj(graph.Body, "summary")["total"], "graph")

			logs := ta.Admin(http.MethodGet, "/logs?page_size=1000&"+tc.query, nil)
			require.Equal(t, http.StatusOK, logs.Status, string(logs.Raw))
			assert.EqualValues(t, len(want), logs.Body["total"], "logs")
			ids := make([]string, 0, len(want))
			for _, r := range want {
				ids = append(ids, r.ID)
			}
			got := make([]string, 0, len(logs.Data()))
			for _, item := range logs.Data() {
				got = append(got, item["_id"].(string))
			}
			assert.ElementsMatch(t, ids, got)
		})
	}
}

// TestTrafficFilterBounds: every bound at its edge and one step past it, on each kind of route.
func TestTrafficFilterBounds(t *testing.T) {
	ta := newTrafficAPI(t)
	now := ta.Now()
	ts := func(t time.Time) string { return url.QueryEscape(t.Format(time.RFC3339)) }
	cases := []struct {
		name, query, param string
		status             int
		message            string
	}{
		{"total_units_min at 0", "total_units_min=0", "", 200, ""},
		{"total_units_min negative", "total_units_min=-1", "total_units_min", 400, "total_units_min must be a whole number from 0"},
		{"total_units_max at the bound", "total_units_max=2147483647", "", 200, ""},
		{"total_units_max past the bound", "total_units_max=2147483648", "total_units_max", 400, "2147483647"},
		{"total_units_min fractional", "total_units_min=1.5", "total_units_min", 400, ""},
		{"total_units_min equal to max", "total_units_min=10&total_units_max=10", "", 200, ""},
		{"total_units_min above max", "total_units_min=11&total_units_max=10", "total_units_min", 400, "total_units_min must be at most total_units_max"},
		{"prompt_token_min negative", "prompt_token_min=-1", "prompt_token_min", 400, ""},
		{"prompt_token_max at 0", "prompt_token_max=0", "", 200, ""},
		{"prompt_token_min above max", "prompt_token_min=2&prompt_token_max=1", "prompt_token_min", 400, ""},
		{"completion_token_max negative", "completion_token_max=-1", "completion_token_max", 400, ""},
		{"completion_token_min above max", "completion_token_min=2&completion_token_max=1", "completion_token_min", 400, ""},
		{"cost_min at 0", "cost_min=0", "", 200, ""},
		{"cost_min below 0", "cost_min=-0.01", "cost_min", 400, "cost_min must be a number at least 0"},
		{"cost_max not a number", "cost_max=cheap", "cost_max", 400, "cost_max must be a number at least 0"},
		{"cost_max infinite", "cost_max=Inf", "cost_max", 400, ""},
		{"cost_min equal to max", "cost_min=0.5&cost_max=0.5", "", 200, ""},
		{"cost_min above max", "cost_min=0.51&cost_max=0.5", "cost_min", 400, "cost_min must be at most cost_max"},
		{"status_code at 100", "status_code=100", "", 200, ""},
		{"status_code at 599", "status_code=599", "", 200, ""},
		{"status_code at 99", "status_code=99", "status_code", 400, "from 100 to 599"},
		{"status_code at 600", "status_code=200,600", "status_code", 400, "600"},
		{"status_code not a number", "status_code=ok", "status_code", 400, ""},
		{"api_key_ids not UUIDs", "api_key_ids=" + ta.Keys[0] + ",key-2", "api_key_ids", 400, "key-2"},
		{"metadata not JSON", "metadata=env%3Dprod", "metadata", 400, "JSON object"},
		{"metadata an array", "metadata=%5B1%5D", "metadata", 400, ""},
		{"metadata null", "metadata=null", "metadata", 400, ""},
		{"metadata with an object value", "metadata=" + url.QueryEscape(`{"a":{"b":1}}`), "metadata", 400, "\"a\""},
		{"metadata with a number", "metadata=" + url.QueryEscape(`{"n":3}`), "", 200, ""},
		{"trace_id twice", "trace_id=a,b", "trace_id", 400, "one value"},
		{"span_id twice", "span_id=a&span_id=b", "span_id", 400, ""},
		{"ai_org_model pair without a model", "ai_org_model=openai__", "ai_org_model", 400, "both parts"},
		{"ai_org_model models and pairs", "ai_org_model=gpt-4o,openai__gpt-4o", "ai_org_model", 400, "not both"},
		{"ai_org_model with models", "ai_org_model=gpt-4o&models=gpt-4o", "ai_org_model", 400, ""},
		{"time_of_generation_min not RFC 3339", "time_of_generation_min=yesterday", "time_of_generation_min", 400, "RFC 3339"},
		{"time_of_generation_max a date only", "time_of_generation_max=2026-11-20", "time_of_generation_max", 400, ""},
		{"time range one millisecond", "time_of_generation_min=" + url.QueryEscape(now.Add(-time.Millisecond).Format(time.RFC3339Nano)) + "&time_of_generation_max=" + url.QueryEscape(now.Format(time.RFC3339Nano)), "", 200, ""},
		{"time range empty", "time_of_generation_min=" + ts(now.Add(-time.Hour)) + "&time_of_generation_max=" + ts(now.Add(-time.Hour)), "time_of_generation_min", 400, "before time_of_generation_max"},
		{"time range reversed", "time_of_generation_min=" + ts(now) + "&time_of_generation_max=" + ts(now.Add(-time.Hour)), "time_of_generation_min", 400, ""},
		{"time_of_generation_min in the future", "time_of_generation_min=" + ts(now.Add(time.Hour)) + "&time_of_generation_max=" + ts(now.Add(2*time.Hour)), "time_of_generation_min", 400, "in the past"},
		{"time_of_generation_max in the future", "time_of_generation_max=" + ts(now.Add(24*time.Hour)), "", 200, ""},
		{"an offset sent unescaped", "time_of_generation_min=" + now.Add(-time.Hour).In(time.FixedZone("", 5*3600+1800)).Format(time.RFC3339), "", 200, ""},
		{"workspace_slug unknown", "workspace_slug=team-z", "workspace_slug", 404, "team-z"},
	}
	routes := []string{"/analytics/summary", "/analytics/summary/cache", "/analytics/groups/model", "/logs/groups/model",
		"/analytics/graphs/cost", "/analytics/graphs/cache/hit-rate", "/logs", "/analytics/groups/users",
		"/analytics/groups/metadata/env"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, route := range routes {
				r := ta.Admin(http.MethodGet, route+"?"+tc.query, nil)
				require.Equal(t, tc.status, r.Status, "%s: %s", route, r.Raw)
				if tc.status >= 400 {
					assert.Equal(t, tc.param, r.ErrorParam(), "%s: %s", route, r.ErrorMessage())
					assert.Contains(t, r.ErrorMessage(), tc.message, route)
				}
			}
		})
	}
}

// TestTrafficRetention: analytics reach back METRICS_RETENTION_DISPLAY, logs
// LOG_RETENTION_DISPLAY; an older time_of_generation_min is raised to the floor, and a range
// that ends before it is refused.
func TestTrafficRetention(t *testing.T) {
	ta := newTrafficAPI(t)
	now := ta.Now()
	day := 24 * time.Hour
	ago := func(d time.Duration) analytics.LogRecord {
		return analytics.LogRecord{ID: uuid.NewString(), OrganisationID: ta.OrgID, WorkspaceID: ta.WSA, Model: "old-model",
			StatusCode: 200, Endpoint: "chatComplete", Method: "POST", Path: "/v1/chat/completions", CacheStatus: "MISS",
			LogFormat: "v1", StartedAt: now.Add(-d), EndedAt: now.Add(-d)}
	}
	log89, log91, metric364, metric366 := ago(89*day), ago(91*day), ago(364*day), ago(366*day)
	ta.insert(log89, log91, metric364, metric366)
	since := func(d time.Duration) string {
		return "time_of_generation_min=" + url.QueryEscape(now.Add(-d).Format(time.RFC3339)) + "&models=old-model"
	}

	logs := ta.Admin(http.MethodGet, "/logs?"+since(400*day), nil)
	require.Equal(t, http.StatusOK, logs.Status, string(logs.Raw))
	require.Len(t, logs.Data(), 1, "logs reach back 90 days: a time_of_generation_min before that is raised")
	assert.Equal(t, log89.ID, logs.Data()[0]["_id"])
	assert.Equal(t, http.StatusOK, ta.Admin(http.MethodGet, "/logs/"+log89.ID, nil).Status)
	assert.Equal(t, http.StatusNotFound, ta.Admin(http.MethodGet, "/logs/"+log91.ID, nil).Status)
	assert.EqualValues(t, 1, ta.Admin(http.MethodGet, "/logs/groups/model?"+since(400*day), nil).Data()[0]["requests"])

	sum := ta.Admin(http.MethodGet, "/analytics/summary?"+since(400*day), nil)
	require.Equal(t, http.StatusOK, sum.Status, string(sum.Raw))
	assert.EqualValues(t, 3, obj(sum.Body, "summary")["requests"], "analytics reach back 365 days")
	assert.EqualValues(t, 3, ta.Admin(http.MethodGet, "/analytics/groups/ai-models?"+since(400*day), nil).Data()[0]["requests"])
	assert.EqualValues(t, 3, obj(ta.Admin(http.MethodGet, "/analytics/graphs/requests?"+since(400*day), nil).Body, "summary")["total"])

	// Two days on, the 89-day row is 91 days old and the 364-day row 366: both leave the view.
	ta.Advance(2 * day)
	assert.Empty(t, ta.Admin(http.MethodGet, "/logs?"+since(400*day), nil).Data())
	assert.Equal(t, http.StatusNotFound, ta.Admin(http.MethodGet, "/logs/"+log89.ID, nil).Status)
	assert.EqualValues(t, 2, obj(ta.Admin(http.MethodGet, "/analytics/summary?"+since(400*day), nil).Body, "summary")["requests"])

	before := func(d time.Duration) string {
		return "time_of_generation_min=" + url.QueryEscape(ta.Now().Add(-d-day).Format(time.RFC3339)) +
			"&time_of_generation_max=" + url.QueryEscape(ta.Now().Add(-d).Format(time.RFC3339))
	}
	r := ta.Admin(http.MethodGet, "/logs?"+before(90*day), nil)
	require.Equal(t, http.StatusBadRequest, r.Status, "a range that ends at the floor shows nothing")
	assert.Equal(t, "time_of_generation_max", r.ErrorParam())
	assert.Contains(t, r.ErrorMessage(), "90 days")
	assert.Equal(t, http.StatusOK, ta.Admin(http.MethodGet, "/logs?"+before(90*day-time.Second), nil).Status)
	assert.Equal(t, http.StatusOK, ta.Admin(http.MethodGet, "/analytics/summary?"+before(90*day), nil).Status, "analytics reach further")
	r = ta.Admin(http.MethodGet, "/analytics/summary?"+before(365*day), nil)
	require.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.ErrorMessage(), "365 days")
	assert.Equal(t, http.StatusOK, ta.Admin(http.MethodGet, "/analytics/groups/model?"+before(365*day-time.Second), nil).Status)

	// Retention follows the configuration.
	ta.AdminAPI.Retention = Retention{Logs: 10 * day, Metrics: 100 * day}
	ta.insert(ago(7 * day)) // nine days old on the moved clock
	assert.Len(t, ta.Admin(http.MethodGet, "/logs?"+since(30*day), nil).Data(), 1)
	assert.EqualValues(t, 3, obj(ta.Admin(http.MethodGet, "/analytics/summary?"+since(400*day), nil).Body, "summary")["requests"],
		"the new row and the two of 91 and 93 days, within 100 days")
	r = ta.Admin(http.MethodGet, "/logs?"+before(10*day), nil)
	assert.Contains(t, r.ErrorMessage(), "10 days")
}

func TestAnalyticsGraphs(t *testing.T) {
	ta := newTrafficAPI(t)
	now := ta.Now()
	rows := ta.lastWeek(nil)

	for _, kind := range analytics.Graphs {
		t.Run(kind, func(t *testing.T) {
			r := ta.Admin(http.MethodGet, "/analytics/graphs/"+kind, nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
			assert.Equal(t, "analytics-graph", r.Body["object"])
			require.IsType(t, map[string]any{}, r.Body["summary"])
			points, _ := r.Body["data_points"].([]any)
			require.NotEmpty(t, points)
			for _, p := range points {
				point := p.(map[string]any)
				for _, name := range analytics.GraphValues[kind] {
					assert.Contains(t, point, name)
				}
				if kind == analytics.GraphErrorStatusCodes {
					assert.Contains(t, point, "status_code")
					continue
				}
				_, err := time.Parse(time.RFC3339, point["timestamp"].(string))
				assert.NoError(t, err)
			}
		})
	}

	total := func(kind string, f func(analytics.LogRecord) float64) {
		r := ta.Admin(http.MethodGet, "/analytics/graphs/"+kind, nil)
		want := 0.0
		for _, row := range rows {
			want += f(row)
		}
		assert.InDelta(t, want, num(obj(r.Body, "summary")["total"]), 1e-6, kind)
		sum := 0.0
		for _, p := range r.Body["data_points"].([]any) {
			sum += num(p.(map[string]any)["total"])
		}
		assert.InDelta(t, want, sum, 1e-6, "%s: the buckets add up to the summary", kind)
	}
	total(analytics.GraphRequests, func(analytics.LogRecord) float64 { return 1 })
	total(analytics.GraphCost, func(r analytics.LogRecord) float64 { return r.Cost })
	total(analytics.GraphTokens, func(r analytics.LogRecord) float64 { return float64(r.TotalTokens) })
	total(analytics.GraphErrors, func(r analytics.LogRecord) float64 {
		if r.StatusCode >= 400 {
			return 1
		}
		return 0
	})

	users := map[string]bool{}
	codes := map[float64]float64{}
	for _, r := range rows {
		if u, ok := r.Metadata[analytics.UserMetadataKey]; ok {
			users[u] = true
		}
		if r.StatusCode >= 400 {
			codes[float64(r.StatusCode)]++
		}
	}
	assert.EqualValues(t, len(users), obj(ta.Admin(http.MethodGet, "/analytics/graphs/users", nil).Body, "summary")["total"])
	var latency, hitLatency, errors, hits float64
	for _, r := range rows {
		latency += r.LatencyMS
		if r.StatusCode >= 400 {
			errors++
		}
		if cacheHit(r) {
			hits++
			hitLatency += r.LatencyMS
		}
	}
	n := float64(len(rows))
	summary := func(kind, name string) float64 {
		return num(obj(ta.Admin(http.MethodGet, "/analytics/graphs/"+kind, nil).Body, "summary")[name])
	}
	assert.InDelta(t, latency/n, summary(analytics.GraphLatency, "avg"), 1e-6)
	assert.InDelta(t, errors/n, summary(analytics.GraphErrorRate, "rate"), 1e-9, "rates are shares")
	assert.InDelta(t, hits/n, summary(analytics.GraphCacheHitRate, "rate"), 1e-9)
	assert.InDelta(t, hitLatency/hits, summary(analytics.GraphCacheLatency, "avg"), 1e-6)
	assert.EqualValues(t, hits, summary(analytics.GraphCacheHitRate, "total"), "the hit-rate summary's total is its hits")

	// The hit-rate graph's savings accumulate over its points up to what the week's hits saved.
	saved := map[string]float64{}
	for _, r := range rows {
		switch r.CacheStatus {
		case analytics.CacheHit:
			saved["cumulative_simple_cache_savings"] += r.CacheSavedCost
		case analytics.CacheSemanticHit:
			saved["cumulative_semantic_cache_savings"] += r.CacheSavedCost
		}
	}
	hitRate := ta.Admin(http.MethodGet, "/analytics/graphs/cache/hit-rate", nil)
	require.Equal(t, http.StatusOK, hitRate.Status, string(hitRate.Raw))
	hitPoints := hitRate.Body["data_points"].([]any)
	for name, want := range saved {
		require.NotZero(t, want, name)
		prev := 0.0
		for _, p := range hitPoints {
			v := num(p.(map[string]any)[name])
			assert.GreaterOrEqual(t, v, prev, name)
			prev = v
		}
		assert.InDelta(t, want, prev, 1e-6, name)
		assert.InDelta(t, want, num(obj(hitRate.Body, "summary")[name]), 1e-6, name)
	}
	sc := ta.Admin(http.MethodGet, "/analytics/graphs/errors/status-codes", nil)
	got := map[float64]float64{}
	for _, p := range sc.Body["data_points"].([]any) {
		point := p.(map[string]any)
		got[num(point["status_code"])] = num(point["count"])
	}
	assert.Equal(t, codes, got)

	// The bucket follows the range: hours up to two days, days up to ninety, weeks beyond.
	for _, tc := range []struct {
		span, step time.Duration
	}{{48 * time.Hour, time.Hour}, {48*time.Hour + time.Second, 24 * time.Hour}, {90 * 24 * time.Hour, 24 * time.Hour},
		{90*24*time.Hour + time.Second, 7 * 24 * time.Hour}} {
		q := "?time_of_generation_min=" + url.QueryEscape(now.Add(-tc.span).Format(time.RFC3339)) + "&time_of_generation_max=" + url.QueryEscape(now.Format(time.RFC3339))
		r := ta.Admin(http.MethodGet, "/analytics/graphs/requests"+q, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		points := r.Body["data_points"].([]any)
		require.Greater(t, len(points), 1)
		t0, _ := time.Parse(time.RFC3339, points[0].(map[string]any)["timestamp"].(string))
		t1, _ := time.Parse(time.RFC3339, points[1].(map[string]any)["timestamp"].(string))
		assert.Equal(t, tc.step, t1.Sub(t0), "range %s", tc.span)
	}
	assert.Equal(t, http.StatusNotFound, ta.Admin(http.MethodGet, "/analytics/graphs/feelings", nil).Status)
}

func TestAnalyticsSummary(t *testing.T) {
	ta := newTrafficAPI(t)
	rows := ta.lastWeek(nil)
	var cost, latency, hitLatency, costSaved, latencySaved float64
	var tokens, prompt, completion, errors, ok, hits, semantic int
	users := map[string]bool{}
	for _, r := range rows {
		cost += r.Cost
		latency += r.LatencyMS
		tokens += r.TotalTokens
		prompt += r.PromptTokens
		completion += r.CompletionTokens
		if r.StatusCode >= 400 {
			errors++
		}
		if r.StatusCode >= 200 && r.StatusCode < 300 {
			ok++
		}
		if u, found := r.Metadata[analytics.UserMetadataKey]; found {
			users[u] = true
		}
		if cacheHit(r) {
			hits++
			hitLatency += r.LatencyMS
			costSaved += r.CacheSavedCost
			latencySaved += r.CacheSavedMS
		}
		if r.CacheStatus == analytics.CacheSemanticHit {
			semantic++
		}
	}
	require.NotZero(t, semantic)
	n := float64(len(rows))
	r := ta.Admin(http.MethodGet, "/analytics/summary", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	assert.Equal(t, "analytics-summary", r.Body["object"])
	s := obj(r.Body, "summary")
	assert.EqualValues(t, len(rows), s["requests"])
	assert.InDelta(t, cost, num(s["cost"]), 1e-6)
	assert.EqualValues(t, tokens, s["total_tokens"])
	assert.EqualValues(t, prompt, s["prompt_tokens"])
	assert.EqualValues(t, completion, s["completion_tokens"])
	assert.InDelta(t, latency/n, num(s["avg_latency"]), 1e-6)
	assert.EqualValues(t, errors, s["errors"])
	assert.InDelta(t, float64(ok)/n, num(s["success_rate"]), 1e-9)
	assert.EqualValues(t, len(users), s["users"])

	c := ta.Admin(http.MethodGet, "/analytics/summary/cache", nil)
	require.Equal(t, http.StatusOK, c.Status, string(c.Raw))
	assert.Equal(t, "analytics-summary", c.Body["object"])
	cs := obj(c.Body, "summary")
	assert.ElementsMatch(t, []string{"hits", "simple_hits", "semantic_hits", "avg_latency", "total_requests", "cache_speedup",
		"cost_saved", "latency_saved_ms"}, mapKeys(cs))
	assert.EqualValues(t, hits, cs["hits"])
	assert.EqualValues(t, hits-semantic, cs["simple_hits"])
	assert.EqualValues(t, semantic, cs["semantic_hits"])
	assert.InDelta(t, costSaved, num(cs["cost_saved"]), 1e-6)
	assert.InDelta(t, latencySaved, num(cs["latency_saved_ms"]), 1e-6)
	assert.EqualValues(t, len(rows), cs["total_requests"])
	assert.InDelta(t, hitLatency/float64(hits), num(cs["avg_latency"]), 1e-6)
	others := (latency - hitLatency) / float64(len(rows)-hits)
	assert.InDelta(t, (others-hitLatency/float64(hits))/others*100, num(cs["cache_speedup"]), 1e-6,
		"how much faster a hit is, in percent of the others' average latency")
}

// TestAnalyticsCacheSavings: rows of known savings, in a workspace of their own, and the
// answers of the cache summary and of the hit-rate graph over them, figure by figure. Savings
// are USD, as every cost (the reference's graph says cents); a forced refresh is no hit.
func TestAnalyticsCacheSavings(t *testing.T) {
	ta := newTrafficAPI(t)
	ws := ta.seedWorkspace("team-c", nil)
	base := ta.Now().Add(-3 * time.Hour).Truncate(time.Hour)
	row := func(at time.Duration, status string, cost, latency, savedCost, savedMS float64) analytics.LogRecord {
		return analytics.LogRecord{ID: uuid.NewString(), OrganisationID: ta.OrgID, WorkspaceID: ws, Model: "gpt-4o",
			Endpoint: "chatComplete", Method: "POST", Path: "/v1/chat/completions", StatusCode: 200, Cost: cost,
			LatencyMS: latency, CacheStatus: status, CacheSavedCost: savedCost, CacheSavedMS: savedMS, LogFormat: "v1",
			StartedAt: base.Add(at), EndedAt: base.Add(at + time.Second)}
	}
	ta.insert(
		row(10*time.Minute, analytics.CacheHit, 0, 20, 0.5, 300),
		row(20*time.Minute, analytics.CacheSemanticHit, 0, 40, 0.25, 150),
		row(30*time.Minute, analytics.CacheMiss, 0.75, 400, 0, 0),
		// none in the second hour
		row(2*time.Hour+10*time.Minute, analytics.CacheHit, 0, 10, 1.25, 500),
		row(2*time.Hour+20*time.Minute, analytics.CacheRefresh, 1, 900, 0, 0),
		row(2*time.Hour+30*time.Minute, analytics.CacheSemanticHit, 0, 30, 0.125, 60),
		row(2*time.Hour+40*time.Minute, analytics.CacheDisabled, 0.5, 200, 0, 0),
	)
	q := "?workspace_slug=team-c&time_of_generation_min=" + url.QueryEscape(base.Format(time.RFC3339)) +
		"&time_of_generation_max=" + url.QueryEscape(base.Add(3*time.Hour).Format(time.RFC3339))

	c := ta.Admin(http.MethodGet, "/analytics/summary/cache"+q, nil)
	require.Equal(t, http.StatusOK, c.Status, string(c.Raw))
	// Hits take 25 ms on average, the others 500: 95% faster.
	assert.Equal(t, map[string]any{"object": "analytics-summary", "summary": map[string]any{
		"hits": 4.0, "simple_hits": 2.0, "semantic_hits": 2.0, "avg_latency": 25.0, "total_requests": 7.0,
		"cache_speedup": 95.0, "cost_saved": 2.125, "latency_saved_ms": 1010.0}}, c.Body)

	g := ta.Admin(http.MethodGet, "/analytics/graphs/cache/hit-rate"+q, nil)
	require.Equal(t, http.StatusOK, g.Status, string(g.Raw))
	point := func(hour int, simple, semantic, rate, simpleSaved, semanticSaved float64) map[string]any {
		return map[string]any{"timestamp": base.Add(time.Duration(hour) * time.Hour).UTC().Format(time.RFC3339Nano),
			"simple_hits": simple, "semantic_hits": semantic, "rate": rate,
			"cumulative_simple_cache_savings": simpleSaved, "cumulative_semantic_cache_savings": semanticSaved}
	}
	assert.Equal(t, map[string]any{
		"object": "analytics-graph",
		"summary": map[string]any{"total": 4.0, "rate": 4.0 / 7, "simple_hits": 2.0, "semantic_hits": 2.0,
			"cumulative_simple_cache_savings": 1.75, "cumulative_semantic_cache_savings": 0.375},
		"data_points": []any{
			point(0, 1, 1, 2.0/3, 0.5, 0.25),
			point(1, 0, 0, 0, 0.5, 0.25),
			point(2, 1, 1, 0.5, 1.75, 0.375),
		},
	}, g.Body)
}

// TestTrafficAccess is the access matrix: admin keys see every workspace, workspace keys
// their own, and keys acting as members or managers lose analytics (not logs) when the
// security settings say so.
func TestTrafficAccess(t *testing.T) {
	ta := newTrafficAPI(t)
	member := ta.seedUser("member@example.com", domain.RoleMember)
	manager := ta.seedUser("manager@example.com", domain.RoleMember)
	ta.seedEvents(domain.Stream(domain.WorkspacePrefix, ta.WSA),
		domain.WorkspaceMemberAdded{WorkspaceID: ta.WSA, UserID: member, Role: domain.RoleMember, At: ta.Now()},
		domain.WorkspaceMemberAdded{WorkspaceID: ta.WSA, UserID: manager, Role: domain.RoleManager, At: ta.Now()})
	key := func(path string, body map[string]any) string {
		r := ta.Admin(http.MethodPost, path, body)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Str("key")
	}
	scopes := []string{"analytics.view", "logs.view", "logs.list"}
	wsKey := key("/api-keys/workspace/service", map[string]any{"name": "svc", "workspace_id": ta.WSA, "scopes": scopes})
	memberKey := key("/api-keys/workspace/user", map[string]any{"name": "mem", "workspace_id": ta.WSA, "user_id": member, "scopes": scopes})
	managerKey := key("/api-keys/workspace/user", map[string]any{"name": "mgr", "workspace_id": ta.WSA, "user_id": manager, "scopes": scopes})
	adminKey := key("/api-keys/organisation/service", map[string]any{"name": "adm", "scopes": scopes})
	logsOnly := key("/api-keys/workspace/service", map[string]any{"name": "logs", "workspace_id": ta.WSA, "scopes": []string{"logs.view"}})

	all, inA := len(ta.lastWeek(nil)), len(ta.lastWeek(func(r analytics.LogRecord) bool { return r.WorkspaceID == ta.WSA }))
	inB := all - inA
	count := func(key, query string) (int, response) {
		r := ta.Do(http.MethodGet, "/analytics/summary"+query, key, nil)
		if r.Status != http.StatusOK {
			return -1, r
		}
		return int(num(obj(r.Body, "summary")["requests"])), r
	}
	for _, tc := range []struct {
		name, key, query string
		want             int
		status           int
	}{
		{"bootstrap admin, every workspace", ta.AdminKey, "", all, 200},
		{"admin key, every workspace", adminKey, "", all, 200},
		{"admin key narrows to team-b", adminKey, "?workspace_slug=team-b", inB, 200},
		{"workspace key, its workspace", wsKey, "", inA, 200},
		{"workspace key names its workspace", wsKey, "?workspace_slug=team-a", inA, 200},
		{"workspace key names another workspace", wsKey, "?workspace_slug=team-b", 0, 403},
		{"workspace key names an unknown workspace", wsKey, "?workspace_slug=team-z", 0, 403},
		{"member, settings on", memberKey, "", inA, 200},
		{"manager, settings on", managerKey, "", inA, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, r := count(tc.key, tc.query)
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status == 200 {
				assert.Equal(t, tc.want, n)
			}
		})
	}

	// A workspace key sees its own workspace's rows in the logs, and no other's.
	var rowA, rowB, rowOther analytics.LogRecord
	for _, r := range ta.lastWeek(nil) {
		switch r.WorkspaceID {
		case ta.WSA:
			rowA = r
		case ta.WSB:
			rowB = r
		}
	}
	for _, r := range ta.Rows {
		if r.OrganisationID == otherOrg {
			rowOther = r
		}
	}
	assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs/"+rowA.ID, wsKey, nil).Status)
	assert.Equal(t, http.StatusNotFound, ta.Do(http.MethodGet, "/logs/"+rowB.ID, wsKey, nil).Status)
	assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs/"+rowB.ID, adminKey, nil).Status)
	assert.Equal(t, http.StatusNotFound, ta.Admin(http.MethodGet, "/logs/"+rowOther.ID, nil).Status, "another organisation's row")
	assert.EqualValues(t, inA, ta.Do(http.MethodGet, "/logs", wsKey, nil).Body["total"])
	assert.EqualValues(t, all, ta.Do(http.MethodGet, "/logs", adminKey, nil).Body["total"])
	groups := ta.Do(http.MethodGet, "/analytics/groups/workspace", wsKey, nil)
	require.Len(t, groups.Data(), 1)
	assert.Equal(t, ta.WSA, groups.Data()[0]["workspace"])

	// Scopes: analytics.view for analytics, logs.view for one log and the logs groups,
	// logs.list for the list.
	assert.Equal(t, http.StatusForbidden, ta.Do(http.MethodGet, "/analytics/summary", logsOnly, nil).Status)
	assert.Equal(t, http.StatusForbidden, ta.Do(http.MethodGet, "/logs", logsOnly, nil).Status)
	assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs/groups/model", logsOnly, nil).Status)
	assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs/"+rowA.ID, logsOnly, nil).Status)

	analyticsRoutes := []string{"/analytics/summary", "/analytics/summary/cache", "/analytics/groups/model", "/analytics/groups/users",
		"/analytics/groups/ai-models", "/analytics/groups/metadata/env", "/logs/groups/model"}
	for _, kind := range analytics.Graphs {
		analyticsRoutes = append(analyticsRoutes, "/analytics/graphs/"+kind)
	}
	refused := func(key, setting string) {
		t.Helper()
		for _, route := range analyticsRoutes {
			r := ta.Do(http.MethodGet, route, key, nil)
			assert.Equal(t, http.StatusForbidden, r.Status, "%s: %s", route, r.Raw)
			assert.Contains(t, r.ErrorMessage(), setting, route)
		}
		assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs", key, nil).Status, "the analytics settings leave the logs")
		assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs/"+rowA.ID, key, nil).Status)
	}
	allowed := func(key string) {
		t.Helper()
		for _, route := range analyticsRoutes {
			assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, route, key, nil).Status, route)
		}
	}
	settings := func(path string, s map[string]bool) {
		t.Helper()
		r := ta.Admin(http.MethodPut, path, map[string]any{"security_settings": s})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	}

	settings("/organisation/settings", map[string]bool{"membersViewAnalytics": false})
	refused(memberKey, "membersViewAnalytics")
	allowed(managerKey)
	allowed(wsKey)
	allowed(adminKey)

	settings("/organisation/settings", map[string]bool{"membersViewAnalytics": true, "managersViewAnalytics": false})
	allowed(memberKey)
	refused(managerKey, "managersViewAnalytics")
	allowed(wsKey)

	// A workspace's own setting overrides the organisation's.
	settings("/workspaces/"+ta.WSA+"/settings", map[string]bool{"managersViewAnalytics": true, "membersViewAnalytics": false})
	allowed(managerKey)
	refused(memberKey, "membersViewAnalytics")

	assert.Equal(t, http.StatusUnauthorized, ta.Do(http.MethodGet, "/analytics/summary", "", nil).Status)
	for _, route := range append(analyticsRoutes, "/logs", "/logs/"+rowA.ID) {
		assert.Equal(t, http.StatusUnauthorized, ta.Do(http.MethodGet, route, "", nil).Status, route)
		assert.Equal(t, http.StatusUnauthorized, ta.Do(http.MethodGet, route, "cw-wrong", nil).Status, route)
	}
}

// Without a request log store the routes exist and say so.
func TestTrafficNotConfigured(t *testing.T) {
	api := newTestAPI(t)
	for _, route := range []string{"/analytics/summary", "/analytics/groups/model", "/analytics/graphs/requests", "/logs",
		"/logs/" + uuid.NewString(), "/logs/groups/model", "/analytics/groups/users"} {
		r := api.Admin(http.MethodGet, route, nil)
		assert.Equal(t, http.StatusNotFound, r.Status, route)
		assert.Contains(t, r.ErrorMessage(), "analytics is not configured", route)
		assert.Equal(t, http.StatusUnauthorized, api.Do(http.MethodGet, route, "", nil).Status, route)
	}
}

// membersViewAllData and managersViewAllData off: a key acting as a member (manager) sees only
// the logs of the user's own API keys; analytics are unaffected.
func TestLogsViewAllData(t *testing.T) {
	ta := newTrafficAPI(t)
	member := ta.seedUser("member@example.com", domain.RoleMember)
	manager := ta.seedUser("manager@example.com", domain.RoleMember)
	ta.seedEvents(domain.Stream(domain.WorkspacePrefix, ta.WSA),
		domain.WorkspaceMemberAdded{WorkspaceID: ta.WSA, UserID: member, Role: domain.RoleMember, At: ta.Now()},
		domain.WorkspaceMemberAdded{WorkspaceID: ta.WSA, UserID: manager, Role: domain.RoleManager, At: ta.Now()})
	scopes := []string{"analytics.view", "logs.view", "logs.list"}
	userKey := func(name, user string) (id, key string) {
		r := ta.Admin(http.MethodPost, "/api-keys/workspace/user", map[string]any{"name": name, "workspace_id": ta.WSA, "user_id": user, "scopes": scopes})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Str("id"), r.Str("key")
	}
	memberID, memberKey := userKey("mem", member)
	memberID2, _ := userKey("mem-2", member)
	managerID, managerKey := userKey("mgr", manager)

	// Rows of the member's two keys and the manager's key, beside the generated ones.
	own := map[string][]analytics.LogRecord{}
	for i, keyID := range []string{memberID, memberID, memberID2, managerID, managerID} {
		rec := analytics.LogRecord{ID: uuid.NewString(), TraceID: "t", OrganisationID: ta.OrgID, WorkspaceID: ta.WSA, APIKeyID: keyID,
			Model: "gpt-4o", Endpoint: "chatComplete", Method: "POST", Path: "/v1/chat/completions", StatusCode: 200,
			CacheStatus: "DISABLED", LogFormat: "v1", StartedAt: ta.Now().Add(-time.Duration(i+1) * time.Hour), EndedAt: ta.Now()}
		ta.insert(rec)
		owner := member
		if keyID == managerID {
			owner = manager
		}
		own[owner] = append(own[owner], rec)
	}
	inA := len(ta.lastWeek(func(r analytics.LogRecord) bool { return r.WorkspaceID == ta.WSA }))
	var someoneElses analytics.LogRecord
	for _, r := range ta.lastWeek(nil) {
		if r.WorkspaceID == ta.WSA && r.APIKeyID != memberID && r.APIKeyID != memberID2 && r.APIKeyID != managerID {
			someoneElses = r
			break
		}
	}
	require.NotEmpty(t, someoneElses.ID)
	total := func(key, path string) int {
		t.Helper()
		r := ta.Do(http.MethodGet, path, key, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return int(num(r.Body["total"]))
	}
	summed := func(key string) int {
		t.Helper()
		r := ta.Do(http.MethodGet, "/logs/groups/api_key", key, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		n := 0
		for _, g := range r.Data() {
			n += int(num(g["requests"]))
		}
		return n
	}
	settings := func(s map[string]bool) {
		t.Helper()
		r := ta.Admin(http.MethodPut, "/workspaces/"+ta.WSA+"/settings", map[string]any{"security_settings": s})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	}

	// By default everyone sees the workspace's logs.
	assert.Equal(t, inA, total(memberKey, "/logs"))
	assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs/"+someoneElses.ID, memberKey, nil).Status)

	settings(map[string]bool{"membersViewAllData": false})
	assert.Equal(t, len(own[member]), total(memberKey, "/logs"), "the member's two keys' rows only")
	assert.Equal(t, len(own[member]), summed(memberKey))
	assert.Equal(t, 2, total(memberKey, "/logs?api_key_ids="+memberID), "narrowed to one own key")
	r := ta.Do(http.MethodGet, "/logs?api_key_ids="+managerID, memberKey, nil)
	assert.Equal(t, http.StatusForbidden, r.Status, "another user's key")
	assert.Equal(t, "api_key_ids", r.ErrorParam())
	assert.Equal(t, http.StatusNotFound, ta.Do(http.MethodGet, "/logs/"+someoneElses.ID, memberKey, nil).Status)
	assert.Equal(t, http.StatusOK, ta.Do(http.MethodGet, "/logs/"+own[member][0].ID, memberKey, nil).Status)
	assert.Equal(t, inA, total(managerKey, "/logs"), "managers keep their own setting")
	s := ta.Do(http.MethodGet, "/analytics/summary", memberKey, nil)
	require.Equal(t, http.StatusOK, s.Status)
	assert.EqualValues(t, inA, num(obj(s.Body, "summary")["requests"]), "analytics follow membersViewAnalytics, not this")

	settings(map[string]bool{"membersViewAllData": true, "managersViewAllData": false})
	assert.Equal(t, inA, total(memberKey, "/logs"))
	assert.Equal(t, len(own[manager]), total(managerKey, "/logs"))
	assert.Equal(t, http.StatusNotFound, ta.Do(http.MethodGet, "/logs/"+someoneElses.ID, managerKey, nil).Status)
	assert.Equal(t, inA, total(ta.AdminKey, "/logs?workspace_slug=team-a"), "admins are never limited")
}
