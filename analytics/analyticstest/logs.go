package analyticstest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
)

// summaryFilters are the filters the summaries are checked under: where builds them the same
// for every query, and the groups check every field, so a few that touch the summaries'
// figures (users in metadata, errors in statuses, the token sums) do.
func summaryFilters() map[string]analytics.Filter {
	out := map[string]analytics.Filter{"no filter": {OrganisationID: Org}}
	for _, tc := range filterCases() {
		switch tc.name {
		case "other organisation", "unknown organisation", "time range", "metadata two pairs", "status codes",
			"span id", "prompt token range", "completion token range", "everything":
			f := analytics.Filter{OrganisationID: Org}
			tc.set(&f)
			out[tc.name] = f
		}
	}
	return out
}

func (s suite) summaries(t *testing.T) {
	ctx := context.Background()
	for name, f := range summaryFilters() {
		t.Run(name, func(t *testing.T) {
			got, err := s.store.Summary(ctx, f)
			require.NoError(t, err)
			checkSummary(t, refSummary(s.rows, f), got)
			cache, err := s.store.CacheSummary(ctx, f)
			require.NoError(t, err)
			checkCacheSummary(t, refCacheSummary(s.rows, f), cache)
		})
	}
}

func checkSummary(t *testing.T, want, got analytics.Summary) {
	t.Helper()
	assert.Equal(t, want.Requests, got.Requests, "requests")
	assert.Equal(t, want.TotalTokens, got.TotalTokens, "total tokens")
	assert.Equal(t, want.PromptTokens, got.PromptTokens, "prompt tokens")
	assert.Equal(t, want.CompletionTokens, got.CompletionTokens, "completion tokens")
	assert.Equal(t, want.Errors, got.Errors, "errors")
	assert.Equal(t, want.Users, got.Users, "users")
	for _, f := range []struct {
		name      string
		want, got float64
	}{{"cost", want.Cost, got.Cost}, {"avg latency", want.AvgLatencyMS, got.AvgLatencyMS},
		{"success rate", want.SuccessRate, got.SuccessRate}} {
		assert.True(t, near(f.want, f.got), "%s: want %v, got %v", f.name, f.want, f.got)
	}
}

func checkCacheSummary(t *testing.T, want, got analytics.CacheSummary) {
	t.Helper()
	assert.Equal(t, want.Hits, got.Hits, "hits")
	assert.Equal(t, want.TotalRequests, got.TotalRequests, "total requests")
	assert.True(t, near(want.AvgHitLatencyMS, got.AvgHitLatencyMS), "avg hit latency: want %v, got %v",
		want.AvgHitLatencyMS, got.AvgHitLatencyMS)
	assert.True(t, near(want.Speedup, got.Speedup), "speedup: want %v, got %v", want.Speedup, got.Speedup)
	assert.Equal(t, want.SimpleHits, got.SimpleHits, "simple hits")
	assert.Equal(t, want.SemanticHits, got.SemanticHits, "semantic hits")
	// Multiples of 1/256 and 1/8 (see Rows): their sums are exact.
	assert.Equal(t, want.CostSaved, got.CostSaved, "cost saved")
	assert.Equal(t, want.LatencySavedMS, got.LatencySavedMS, "latency saved")
}

// cacheSavings states CacheOrg's figures (cacheRows) as numbers: what the hits saved, in the
// cache summary and cumulated over the hit-rate graph's buckets, and the hit rate by model.
// A forced refresh, like a miss, is no hit.
func (s suite) cacheSavings(t *testing.T) {
	ctx := context.Background()
	f := analytics.Filter{OrganisationID: CacheOrg}
	c, err := s.store.CacheSummary(ctx, f)
	require.NoError(t, err)
	// Hit latencies 20, 40, 10, 30: 25 on average; the others' 400, 900, 200: 500.
	assert.Equal(t, analytics.CacheSummary{Hits: 4, SimpleHits: 2, SemanticHits: 2, TotalRequests: 7,
		AvgHitLatencyMS: 25, Speedup: 95, CostSaved: 2.125, LatencySavedMS: 1010}, c)

	g, err := s.store.Graph(ctx, analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: CacheOrg,
		From: Start, To: Start.Add(3 * day)}, Kind: analytics.GraphCacheHitRate, Bucket: day})
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"total": 4, "simple_hits": 2, "semantic_hits": 2, "rate": 4.0 / 7,
		"cumulative_simple_cache_savings": 1.75, "cumulative_semantic_cache_savings": 0.375}, g.Summary)
	want := []map[string]float64{
		{"simple_hits": 1, "semantic_hits": 1, "rate": 2.0 / 3,
			"cumulative_simple_cache_savings": 0.5, "cumulative_semantic_cache_savings": 0.25},
		{"simple_hits": 0, "semantic_hits": 0, "rate": 0,
			"cumulative_simple_cache_savings": 0.5, "cumulative_semantic_cache_savings": 0.25},
		{"simple_hits": 1, "semantic_hits": 1, "rate": 0.5,
			"cumulative_simple_cache_savings": 1.75, "cumulative_semantic_cache_savings": 0.375},
	}
	require.Len(t, g.Points, len(want))
	for i, w := range want {
		assert.True(t, g.Points[i].Start.Equal(Start.Add(time.Duration(i)*day)), "point %d", i)
		assert.Equal(t, w, g.Points[i].Values, "point %d", i)
	}

	// From the second day on, the savings of the first are not counted.
	g, err = s.store.Graph(ctx, analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: CacheOrg,
		From: Start.Add(day), To: Start.Add(3 * day)}, Kind: analytics.GraphCacheHitRate, Bucket: day})
	require.NoError(t, err)
	require.Len(t, g.Points, 2)
	assert.Zero(t, g.Points[0].Values["cumulative_simple_cache_savings"])
	assert.Equal(t, 1.25, g.Points[1].Values["cumulative_simple_cache_savings"])
	assert.Equal(t, 0.125, g.Points[1].Values["cumulative_semantic_cache_savings"])

	groups, err := s.store.Groups(ctx, analytics.GroupsQuery{Filter: f, GroupBy: analytics.GroupModel,
		Columns: []string{analytics.ColCacheHitRate}, SortBy: analytics.ColCacheHitRate, SortDesc: true})
	require.NoError(t, err)
	require.Len(t, groups.Groups, 2)
	assert.Equal(t, "gpt", groups.Groups[0].Key)
	assert.InDelta(t, 2.0/3, groups.Groups[0].Values[analytics.ColCacheHitRate], 1e-12, "a hit, a semantic hit, a miss")
	assert.Equal(t, "claude", groups.Groups[1].Key)
	assert.InDelta(t, 0.5, groups.Groups[1].Values[analytics.ColCacheHitRate], 1e-12,
		"a hit, a semantic hit, a refresh, the cache off")
}

// newestFirst is the rows of f as Logs pages them.
func (s suite) newestFirst(f analytics.Filter) []analytics.LogRecord {
	rs := refLogs(s.rows, f)
	slices.Reverse(rs)
	return rs
}

func (s suite) logsPages(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		filter   analytics.Filter
		pageSize int
	}{
		{"every row of the organisation", analytics.Filter{OrganisationID: Org}, analytics.MaxPageSize},
		{"models in a range, small pages", analytics.Filter{OrganisationID: Org, Models: []string{"o3", "embed-3"},
			From: Start.Add(2 * day), To: Start.Add(9 * day)}, 45},
		{"through the tie", analytics.Filter{OrganisationID: Org, From: s.rows[tieFrom].StartedAt,
			To: s.rows[tieFrom].StartedAt.Add(time.Millisecond)}, 13},
		{"another organisation, default page size", analytics.Filter{OrganisationID: "org-3"}, 0},
		{"no rows", analytics.Filter{OrganisationID: "org-none"}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := s.newestFirst(tc.filter)
			size := tc.pageSize
			if size == 0 {
				size = analytics.DefaultPageSize
			}
			var got []analytics.LogRecord
			pages := (len(want)+size-1)/size + 1
			if tc.pageSize == 0 {
				pages = 3
			}
			for page := 0; page < pages; page++ {
				res, err := s.store.Logs(ctx, analytics.LogsQuery{Filter: tc.filter, Page: page, PageSize: tc.pageSize})
				require.NoError(t, err)
				require.Equal(t, len(want), res.Total, "page %d", page)
				require.NotNil(t, res.Rows)
				require.LessOrEqual(t, len(res.Rows), size)
				if page*size < len(want) {
					require.Len(t, res.Rows, min(size, len(want)-page*size), "page %d", page)
				}
				got = append(got, res.Rows...)
			}
			if tc.pageSize == 0 {
				want = want[:min(len(want), pages*size)]
			}
			requireSameLogs(t, want, got)
		})
	}
	t.Run("invalid pages", func(t *testing.T) {
		for _, tc := range []struct {
			page, size int
			param      string
		}{{-1, 10, "current_page"}, {0, -1, "page_size"}, {0, analytics.MaxPageSize + 1, "page_size"}} {
			_, err := s.store.Logs(ctx, analytics.LogsQuery{Filter: analytics.Filter{OrganisationID: Org},
				Page: tc.page, PageSize: tc.size})
			requireInvalid(t, err, tc.param, "")
		}
	})
}

// requireSameLogs compares rows in order, field by field, naming the first row that differs.
func requireSameLogs(t *testing.T, want, got []analytics.LogRecord) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		require.Equal(t, want[i], got[i], "row %d (%s)", i, want[i].ID)
	}
	require.Equal(t, len(want), len(got), "rows")
}

func (s suite) log(t *testing.T) {
	ctx := context.Background()
	t.Run("every field round-trips", func(t *testing.T) {
		n := 0
		for i := 0; i < len(s.rows); i += 97 {
			want := s.rows[i]
			got, ok, err := s.store.Log(ctx, want.OrganisationID, want.ID)
			require.NoError(t, err)
			require.True(t, ok, want.ID)
			require.Equal(t, stored(want), got)
			n++
		}
		require.Greater(t, n, 100)
	})
	t.Run("rows with every optional field and none", func(t *testing.T) {
		for _, i := range []int{0, 7, 15, 35, 1007, 5001} {
			want := s.rows[i]
			got, ok, err := s.store.Log(ctx, want.OrganisationID, want.ID)
			require.NoError(t, err)
			require.True(t, ok, want.ID)
			require.Equal(t, stored(want), got)
		}
	})
	t.Run("cache write tokens round-trip", func(t *testing.T) {
		n := 0
		for _, want := range s.rows {
			if n == 200 {
				break
			}
			if want.CacheWriteTokens == 0 {
				continue
			}
			got, ok, err := s.store.Log(ctx, want.OrganisationID, want.ID)
			require.NoError(t, err)
			require.True(t, ok, want.ID)
			require.Equal(t, want.CacheWriteTokens, got.CacheWriteTokens, want.ID)
			require.Equal(t, want.CachedTokens, got.CachedTokens, want.ID)
			require.Equal(t, stored(want), got)
			n++
		}
		require.Equal(t, 200, n, "rows with cache writes")
	})
	t.Run("cache savings round-trip", func(t *testing.T) {
		n := 0
		for _, want := range s.rows {
			if n == 200 {
				break
			}
			if want.CacheSavedCost == 0 {
				continue
			}
			got, ok, err := s.store.Log(ctx, want.OrganisationID, want.ID)
			require.NoError(t, err)
			require.True(t, ok, want.ID)
			require.Equal(t, want.CacheSavedCost, got.CacheSavedCost, want.ID)
			require.Equal(t, want.CacheSavedMS, got.CacheSavedMS, want.ID)
			require.Equal(t, stored(want), got)
			n++
		}
		require.Equal(t, 200, n, "rows with cache savings")
	})
	t.Run("prompt version and label round-trip", func(t *testing.T) {
		n := 0
		for _, want := range s.rows {
			if n == 200 {
				break
			}
			if want.PromptLabel == "" {
				continue
			}
			got, ok, err := s.store.Log(ctx, want.OrganisationID, want.ID)
			require.NoError(t, err)
			require.True(t, ok, want.ID)
			require.Equal(t, want.PromptID, got.PromptID, want.ID)
			require.Equal(t, want.PromptVersion, got.PromptVersion, want.ID)
			require.Equal(t, "production", got.PromptLabel, want.ID)
			require.Equal(t, stored(want), got)
			n++
		}
		require.Equal(t, 200, n, "rows with a prompt's label")
	})
	t.Run("another organisation's row is invisible", func(t *testing.T) {
		for _, r := range s.rows[:50] {
			other := "org-2"
			if r.OrganisationID == other {
				other = Org
			}
			_, ok, err := s.store.Log(ctx, other, r.ID)
			require.NoError(t, err)
			assert.False(t, ok, r.ID)
		}
	})
	t.Run("unknown id", func(t *testing.T) {
		_, ok, err := s.store.Log(ctx, Org, "req-none")
		require.NoError(t, err)
		assert.False(t, ok)
	})
	t.Run("no organisation", func(t *testing.T) {
		_, _, err := s.store.Log(ctx, "", s.rows[0].ID)
		requireInvalid(t, err, "organisation_id", "required")
	})
}

// bodies checks the bodies' encodings: a body the gateway stored as base64 round-trips with
// its mark, and one stored before encodings existed whose bytes are not UTF-8 reads back as the
// base64 of its bytes, so that every row a store answers encodes as valid JSON.
func (s suite) bodies(t *testing.T) {
	ctx := context.Background()
	t.Run("encodings round-trip", func(t *testing.T) {
		var marked, legacy int
		for _, want := range s.rows {
			invalid := !utf8.Valid(want.RequestBody) || !utf8.Valid(want.ResponseBody)
			if want.RequestBodyEncoding == "" && want.ResponseBodyEncoding == "" && !invalid {
				continue
			}
			got, ok, err := s.store.Log(ctx, want.OrganisationID, want.ID)
			require.NoError(t, err)
			require.True(t, ok, want.ID)
			require.Equal(t, stored(want), got)
			if invalid {
				legacy++
				assert.Equal(t, "base64", got.RequestBodyEncoding, want.ID)
				assert.Equal(t, "base64", got.ResponseBodyEncoding, want.ID)
				for _, b := range []struct{ stored, read json.RawMessage }{
					{want.RequestBody, got.RequestBody}, {want.ResponseBody, got.ResponseBody}} {
					var text string
					require.NoError(t, json.Unmarshal(b.read, &text))
					raw, err := base64.StdEncoding.DecodeString(text)
					require.NoError(t, err)
					assert.Equal(t, []byte(b.stored), raw, "the stored bytes, whole")
				}
			} else {
				marked++
			}
		}
		assert.Greater(t, marked, 100, "rows with a body stored as base64")
		assert.Equal(t, 10, legacy, "rows stored before encodings")
	})
	t.Run("every row encodes as valid JSON", func(t *testing.T) {
		for _, org := range []string{Org, "org-2", "org-3"} {
			require.NoError(t, s.store.ScanLogs(ctx, analytics.Filter{OrganisationID: org}, func(r analytics.LogRecord) error {
				raw, err := json.Marshal(r)
				require.NoError(t, err, r.ID)
				require.True(t, json.Valid(raw) && utf8.Valid(raw), "%s: %q", r.ID, raw)
				return nil
			}))
		}
		page, err := s.store.Logs(ctx, analytics.LogsQuery{Filter: analytics.Filter{OrganisationID: Org}, PageSize: analytics.MaxPageSize})
		require.NoError(t, err)
		raw, err := json.Marshal(page.Rows)
		require.NoError(t, err)
		require.True(t, json.Valid(raw) && utf8.Valid(raw))
	})
}

func (s suite) scanLogs(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]analytics.Filter{
		"every row of the organisation": {OrganisationID: Org},
		"models in a range":             {OrganisationID: Org, Models: []string{"o3"}, From: Start.Add(day), To: Start.Add(20 * day)},
		"another organisation":          {OrganisationID: "org-2", StatusCodes: []int{200}},
		"no rows":                       {OrganisationID: "org-none"},
	} {
		t.Run(name, func(t *testing.T) {
			var got []analytics.LogRecord
			require.NoError(t, s.store.ScanLogs(ctx, f, func(r analytics.LogRecord) error {
				got = append(got, r)
				return nil
			}))
			requireSameLogs(t, refLogs(s.rows, f), got)
		})
	}
	t.Run("stops at the first error", func(t *testing.T) {
		stop := errors.New("stop")
		for _, after := range []int{1, 150, 2001} {
			calls := 0
			err := s.store.ScanLogs(ctx, analytics.Filter{OrganisationID: Org}, func(analytics.LogRecord) error {
				calls++
				if calls == after {
					return fmt.Errorf("row %d: %w", calls, stop)
				}
				return nil
			})
			require.ErrorIs(t, err, stop)
			assert.Equal(t, after, calls)
		}
	})
}

// duplicates checks every query over DupOrg, whose rows were inserted three times.
func (s suite) duplicates(t *testing.T) {
	ctx := context.Background()
	f := analytics.Filter{OrganisationID: DupOrg}
	want := refLogs(s.rows, f)
	require.NotEmpty(t, want)
	for _, g := range []string{analytics.GroupModel, analytics.GroupUser} {
		s.check(t, analytics.GroupsQuery{Filter: f, GroupBy: g, Columns: analytics.Columns, PageSize: analytics.MaxPageSize})
	}
	for _, kind := range analytics.Graphs {
		s.checkGraph(t, analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: DupOrg, From: Start,
			To: Start.Add(30 * day)}, Kind: kind, Bucket: day})
	}
	sum, err := s.store.Summary(ctx, f)
	require.NoError(t, err)
	checkSummary(t, refSummary(s.rows, f), sum)
	cache, err := s.store.CacheSummary(ctx, f)
	require.NoError(t, err)
	checkCacheSummary(t, refCacheSummary(s.rows, f), cache)
	page, err := s.store.Logs(ctx, analytics.LogsQuery{Filter: f, PageSize: analytics.MaxPageSize})
	require.NoError(t, err)
	assert.Equal(t, len(want), page.Total)
	slices.Reverse(want)
	requireSameLogs(t, want, page.Rows)
	var scanned []analytics.LogRecord
	require.NoError(t, s.store.ScanLogs(ctx, f, func(r analytics.LogRecord) error {
		scanned = append(scanned, r)
		return nil
	}))
	slices.Reverse(want)
	requireSameLogs(t, want, scanned)
}
