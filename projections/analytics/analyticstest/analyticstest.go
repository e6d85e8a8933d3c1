// Package analyticstest is the contract every analytics.Store is held to: the same generated
// rows are loaded into the store, and each answer is compared with a plain Go computation over
// those rows.
//
// Percentiles: both engines are exact (ClickHouse's quantileExact, not the sampling quantile),
// defined as the value at 0-based position floor(p·n) of the group's latencies in ascending
// order; the reference computes the same position, so the approximation bound is zero and
// percentiles compare like every other float, within a relative 1e-6.
package analyticstest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/projections/analytics"
)

// NumRows is how many rows the suite loads.
const NumRows = 10_000

// Org is the organisation most rows belong to; the others prove the organisation filter.
const Org = "org-1"

// Start is the first generated timestamp; rows spread over 30 days from it.
var Start = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// Rows generates the suite's rows, the same ones for every call.
func Rows() []gateway.LogRecord {
	r := rand.New(rand.NewPCG(6, 6))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	providers := []struct{ provider, service string }{
		{"@openai-prod", "openai"}, {"@anthropic", "anthropic"}, {"@azure", "azure-openai"}, {"@groq", "groq"},
	}
	codes := []int{200, 200, 200, 200, 201, 400, 401, 429, 500, 502}
	rows := make([]gateway.LogRecord, NumRows)
	for i := range rows {
		p := providers[r.IntN(len(providers))]
		prompt := r.IntN(40)
		total := r.IntN(4000)
		in := r.IntN(total + 1)
		start := Start.Add(time.Duration(r.Int64N(int64(30*24*time.Hour/time.Millisecond))) * time.Millisecond)
		latency := float64(r.IntN(30_000)) / 10
		meta := map[string]string{}
		if r.IntN(4) > 0 {
			meta["env"] = pick("prod", "dev", "staging")
		}
		if r.IntN(2) == 0 {
			meta["user"] = "u" + strconv.Itoa(r.IntN(7))
		}
		rows[i] = gateway.LogRecord{
			ID:               fmt.Sprintf("req-%05d", i),
			TraceID:          fmt.Sprintf("trace-%04d", i/3),
			SpanID:           fmt.Sprintf("span-%05d", i),
			OrganisationID:   pick(Org, Org, Org, Org, "org-2", "org-3"),
			WorkspaceID:      pick("ws-a", "ws-b", "ws-c", "ws-d"),
			APIKeyID:         pick("key-1", "key-2", "key-3", "key-4", "key-5", "key-6", "key-7"),
			Provider:         p.provider,
			AIService:        p.service,
			Model:            pick("gpt-4o", "gpt-4o-mini", "claude-sonnet", "claude-haiku", "llama-70b", "o3", "embed-3"),
			ConfigID:         pick("", "cfg-1", "cfg-2", "cfg-3"),
			Endpoint:         pick("chatComplete", "complete", "embed"),
			Method:           "POST",
			Path:             "/v1/chat/completions",
			StatusCode:       codes[r.IntN(len(codes))],
			PromptTokens:     in,
			CompletionTokens: total - in,
			TotalTokens:      total,
			CachedTokens:     r.IntN(in + 1),
			Cost:             float64(r.IntN(1_000_000)) / 1e5,
			LatencyMS:        latency,
			CacheStatus:      pick("HIT", "MISS", "MISS", "DISABLED"),
			RetryCount:       r.IntN(3),
			LogFormat:        "v1",
			StartedAt:        start,
			EndedAt:          start.Add(time.Duration(latency * float64(time.Millisecond))),
		}
		if prompt < 5 {
			rows[i].PromptID = "prompt-" + strconv.Itoa(prompt)
		}
		if len(meta) > 0 {
			rows[i].Metadata = meta
		}
	}
	return rows
}

// Run loads the rows into a store from open and checks its answers.
func Run(t *testing.T, open func(t *testing.T) analytics.Store) {
	store := open(t)
	ctx := context.Background()
	rows := Rows()
	const batch = 1000
	for i := 0; i < len(rows); i += batch {
		require.NoError(t, store.Insert(ctx, rows[i:i+batch]))
	}
	// A redelivered batch, and one straddling two batches: each row must still count once.
	require.NoError(t, store.Insert(ctx, rows[3*batch:4*batch]))
	require.NoError(t, store.Insert(ctx, rows[batch/2:batch+batch/2]))

	t.Run("every groupBy by every column", func(t *testing.T) {
		for _, g := range analytics.GroupBys {
			for _, c := range append([]string{""}, analytics.Columns...) {
				q := analytics.GroupsQuery{GroupBy: g, OrganisationID: Org, PageSize: analytics.MaxPageSize}
				if c != "" {
					q.Columns = []string{c}
				}
				t.Run(g+"/"+c, func(t *testing.T) { check(t, store, rows, q) })
			}
			t.Run(g+"/all", func(t *testing.T) {
				check(t, store, rows, analytics.GroupsQuery{GroupBy: g, OrganisationID: Org,
					Columns: analytics.Columns, PageSize: analytics.MaxPageSize})
			})
		}
	})

	t.Run("filters", func(t *testing.T) {
		f := func(v float64) *float64 { return &v }
		n := func(v int) *int { return &v }
		cases := []struct {
			name string
			set  func(q *analytics.GroupsQuery)
		}{
			{"other organisation", func(q *analytics.GroupsQuery) { q.OrganisationID = "org-2" }},
			{"unknown organisation", func(q *analytics.GroupsQuery) { q.OrganisationID = "org-none" }},
			{"time range", func(q *analytics.GroupsQuery) {
				q.From, q.To = Start.Add(5*24*time.Hour+1234*time.Millisecond), Start.Add(12*24*time.Hour+7*time.Millisecond)
			}},
			{"from only", func(q *analytics.GroupsQuery) { q.From = Start.Add(20 * 24 * time.Hour) }},
			{"to only", func(q *analytics.GroupsQuery) { q.To = Start.Add(3 * 24 * time.Hour) }},
			{"workspaces", func(q *analytics.GroupsQuery) { q.WorkspaceIDs = []string{"ws-a", "ws-c"} }},
			{"api keys", func(q *analytics.GroupsQuery) { q.APIKeyIDs = []string{"key-2"} }},
			{"configs", func(q *analytics.GroupsQuery) { q.ConfigIDs = []string{"cfg-1", "cfg-3"} }},
			{"providers", func(q *analytics.GroupsQuery) { q.Providers = []string{"@groq", "@azure"} }},
			{"models", func(q *analytics.GroupsQuery) { q.Models = []string{"gpt-4o", "o3"} }},
			{"status codes", func(q *analytics.GroupsQuery) { q.StatusCodes = []int{429, 500, 502} }},
			{"metadata one pair", func(q *analytics.GroupsQuery) { q.Metadata = map[string]string{"env": "prod"} }},
			{"metadata two pairs", func(q *analytics.GroupsQuery) {
				q.Metadata = map[string]string{"env": "dev", "user": "u3"}
			}},
			{"metadata no match", func(q *analytics.GroupsQuery) { q.Metadata = map[string]string{"env": ""} }},
			{"trace id", func(q *analytics.GroupsQuery) { q.TraceID = "trace-0042" }},
			{"cost range", func(q *analytics.GroupsQuery) { q.MinCost, q.MaxCost = f(1.5), f(3.25) }},
			{"token range", func(q *analytics.GroupsQuery) { q.MinTokens, q.MaxTokens = n(100), n(900) }},
			{"everything", func(q *analytics.GroupsQuery) {
				q.WorkspaceIDs = []string{"ws-a", "ws-b", "ws-c"}
				q.StatusCodes = []int{200, 201, 500}
				q.From = Start.Add(24 * time.Hour)
				q.MinTokens = n(500)
				q.MaxCost = f(8)
			}},
		}
		for _, tc := range cases {
			for _, g := range []string{analytics.GroupModel, analytics.GroupStatusCode} {
				t.Run(tc.name+"/"+g, func(t *testing.T) {
					q := analytics.GroupsQuery{GroupBy: g, OrganisationID: Org, Columns: analytics.Columns,
						PageSize: analytics.MaxPageSize}
					tc.set(&q)
					check(t, store, rows, q)
				})
			}
		}
	})

	t.Run("pagination", func(t *testing.T) {
		for _, size := range []int{1, 2, 3, 5} {
			t.Run(strconv.Itoa(size), func(t *testing.T) {
				q := analytics.GroupsQuery{GroupBy: analytics.GroupAPIKey, OrganisationID: Org, PageSize: size}
				want := reference(rows, q)
				var got []string
				for page := 0; page*size < len(want)+size; page++ {
					q.Page = page
					res, err := store.Groups(ctx, q)
					require.NoError(t, err)
					require.Equal(t, len(want), res.Total)
					require.LessOrEqual(t, len(res.Groups), size)
					for _, g := range res.Groups {
						got = append(got, g.Key)
					}
				}
				assert.Equal(t, keys(want), got)
			})
		}
	})

	t.Run("sorting", func(t *testing.T) {
		for _, c := range append([]string{analytics.ColRequests}, analytics.Columns...) {
			for _, desc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/desc=%v", c, desc), func(t *testing.T) {
					q := analytics.GroupsQuery{GroupBy: analytics.GroupModel, OrganisationID: Org,
						PageSize: analytics.MaxPageSize, SortBy: c, SortDesc: desc}
					if c != analytics.ColRequests {
						q.Columns = []string{c}
					}
					res, err := store.Groups(ctx, q)
					require.NoError(t, err)
					want := reference(rows, q)
					assert.ElementsMatch(t, keys(want), keysOf(res.Groups))
					for i := 1; i < len(res.Groups); i++ {
						a, b := value(res.Groups[i-1], c), value(res.Groups[i], c)
						if desc {
							a, b = b, a
						}
						assert.True(t, a <= b || near(a, b), "%s: %v then %v", c, value(res.Groups[i-1], c), value(res.Groups[i], c))
					}
				})
			}
		}
	})

	t.Run("invalid queries", func(t *testing.T) {
		f := func(v float64) *float64 { return &v }
		n := func(v int) *int { return &v }
		ok := analytics.GroupsQuery{GroupBy: analytics.GroupModel, OrganisationID: Org}
		cases := []struct {
			name  string
			set   func(q *analytics.GroupsQuery)
			param string
		}{
			{"no organisation", func(q *analytics.GroupsQuery) { q.OrganisationID = "" }, "organisation_id"},
			{"unknown groupBy", func(q *analytics.GroupsQuery) { q.GroupBy = "user" }, "groupBy"},
			{"unknown column", func(q *analytics.GroupsQuery) { q.Columns = []string{"p50_latency"} }, "columns"},
			{"column twice", func(q *analytics.GroupsQuery) { q.Columns = []string{"cost", "cost"} }, "columns"},
			{"empty time range", func(q *analytics.GroupsQuery) { q.From, q.To = Start, Start }, "time_of_generation_min"},
			{"negative cost", func(q *analytics.GroupsQuery) { q.MinCost = f(-1) }, "cost_min"},
			{"cost range reversed", func(q *analytics.GroupsQuery) { q.MinCost, q.MaxCost = f(2), f(1) }, "cost_min"},
			{"negative tokens", func(q *analytics.GroupsQuery) { q.MinTokens = n(-1) }, "total_units_min"},
			{"token range reversed", func(q *analytics.GroupsQuery) { q.MinTokens, q.MaxTokens = n(2), n(1) }, "total_units_min"},
			{"negative page", func(q *analytics.GroupsQuery) { q.Page = -1 }, "current_page"},
			{"page too large", func(q *analytics.GroupsQuery) { q.PageSize = analytics.MaxPageSize + 1 }, "page_size"},
			{"negative page size", func(q *analytics.GroupsQuery) { q.PageSize = -1 }, "page_size"},
			{"sort by a column not asked", func(q *analytics.GroupsQuery) { q.SortBy = analytics.ColCost }, "order_by"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				q := ok
				tc.set(&q)
				_, err := store.Groups(ctx, q)
				var de *domain.Error
				require.True(t, errors.As(err, &de), "got %v", err)
				assert.Equal(t, domain.CodeInvalid, de.Code)
				assert.Equal(t, tc.param, de.Param)
			})
		}
	})
}

// check compares the store's answer to q with the reference, group by group.
func check(t *testing.T, store analytics.Store, rows []gateway.LogRecord, q analytics.GroupsQuery) {
	t.Helper()
	res, err := store.Groups(context.Background(), q)
	require.NoError(t, err)
	want := reference(rows, q)
	require.Equal(t, len(want), res.Total)
	require.Equal(t, keys(want), keysOf(res.Groups))
	for i, w := range want {
		got := res.Groups[i]
		assert.Equal(t, w.Requests, got.Requests, "%s requests", w.Key)
		require.Len(t, got.Values, len(q.Columns))
		for _, c := range q.Columns {
			assert.True(t, near(w.Values[c], got.Values[c]), "%s %s: want %v, got %v", w.Key, c, w.Values[c], got.Values[c])
		}
	}
}

// near compares floats within a relative 1e-6 (absolute near zero).
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func keys(gs []analytics.Group) []string { return keysOf(gs) }

func keysOf(gs []analytics.Group) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Key
	}
	return out
}

func value(g analytics.Group, c string) float64 {
	if c == analytics.ColRequests {
		return float64(g.Requests)
	}
	return g.Values[c]
}

// matches is the reference filter.
func matches(r gateway.LogRecord, q analytics.GroupsQuery) bool {
	in := func(v string, set []string) bool { return len(set) == 0 || slices.Contains(set, v) }
	switch {
	case r.OrganisationID != q.OrganisationID,
		!in(r.WorkspaceID, q.WorkspaceIDs), !in(r.APIKeyID, q.APIKeyIDs), !in(r.ConfigID, q.ConfigIDs),
		!in(r.Provider, q.Providers), !in(r.Model, q.Models),
		len(q.StatusCodes) > 0 && !slices.Contains(q.StatusCodes, r.StatusCode),
		!q.From.IsZero() && r.StartedAt.UnixMilli() < q.From.UnixMilli(),
		!q.To.IsZero() && r.StartedAt.UnixMilli() >= q.To.UnixMilli(),
		q.TraceID != "" && r.TraceID != q.TraceID,
		q.MinCost != nil && r.Cost < *q.MinCost, q.MaxCost != nil && r.Cost > *q.MaxCost,
		q.MinTokens != nil && r.TotalTokens < *q.MinTokens, q.MaxTokens != nil && r.TotalTokens > *q.MaxTokens:
		return false
	}
	for k, v := range q.Metadata {
		got, ok := r.Metadata[k]
		if !ok || got != v {
			return false
		}
	}
	return true
}

func groupKey(r gateway.LogRecord, groupBy string) string {
	switch groupBy {
	case analytics.GroupAIService:
		return r.AIService
	case analytics.GroupModel:
		return r.Model
	case analytics.GroupStatusCode:
		return strconv.Itoa(r.StatusCode)
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
	panic("unknown groupBy " + groupBy)
}

// percentile is the value at 0-based position floor(p·n) of the sorted latencies.
func percentile(sorted []float64, p float64) float64 {
	i := int(p * float64(len(sorted)))
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

// reference answers q over rows in plain Go: every group, sorted, one page.
func reference(rows []gateway.LogRecord, q analytics.GroupsQuery) []analytics.Group {
	byKey := map[string][]gateway.LogRecord{}
	for _, r := range rows {
		if matches(r, q) {
			k := groupKey(r, q.GroupBy)
			byKey[k] = append(byKey[k], r)
		}
	}
	var out []analytics.Group
	for k, rs := range byKey {
		n := float64(len(rs))
		var cost, tokens, in, outTok, lat, ok, errs, hits float64
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		lats := make([]float64, len(rs))
		for i, r := range rs {
			cost += r.Cost
			tokens += float64(r.TotalTokens)
			in += float64(r.PromptTokens)
			outTok += float64(r.CompletionTokens)
			lat += r.LatencyMS
			lats[i] = r.LatencyMS
			if r.StatusCode >= 200 && r.StatusCode < 300 {
				ok++
			}
			if r.StatusCode >= 400 {
				errs++
			}
			if r.CacheStatus == "HIT" {
				hits++
			}
			first = min(first, r.StartedAt.UnixMilli())
			last = max(last, r.StartedAt.UnixMilli())
		}
		sort.Float64s(lats)
		all := map[string]float64{
			analytics.ColCost: cost, analytics.ColTotalTokens: tokens, analytics.ColAvgTokens: tokens / n,
			analytics.ColAvgInputTokens: in / n, analytics.ColAvgOutputTokens: outTok / n,
			analytics.ColAvgLatency: lat / n, analytics.ColP95Latency: percentile(lats, analytics.P95),
			analytics.ColP99Latency: percentile(lats, analytics.P99), analytics.ColSuccessRate: ok / n,
			analytics.ColErrorCount: errs, analytics.ColCacheHitRate: hits / n,
			analytics.ColLastSeen: float64(last), analytics.ColFirstSeen: float64(first),
		}
		g := analytics.Group{Key: k, Requests: int64(len(rs)), Values: map[string]float64{}}
		for _, c := range q.Columns {
			g.Values[c] = all[c]
		}
		out = append(out, g)
	}
	sortBy, desc := q.SortBy, q.SortDesc
	if sortBy == "" {
		sortBy, desc = analytics.ColRequests, true
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := value(out[i], sortBy), value(out[j], sortBy)
		if a != b {
			if desc {
				return a > b
			}
			return a < b
		}
		return out[i].Key < out[j].Key
	})
	return out
}
