package analyticstest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
)

// allGroupBys is the specification's groupings and the reference's extras; the metadata
// grouping runs once per key the rows hold, the odd one included.
func allGroupBys() []analytics.GroupsQuery {
	var out []analytics.GroupsQuery
	for _, g := range append(append([]string{}, analytics.GroupBys...), analytics.GroupUser) {
		out = append(out, analytics.GroupsQuery{GroupBy: g})
	}
	for _, k := range []string{"env", OddKey, analytics.UserMetadataKey, "absent"} {
		out = append(out, analytics.GroupsQuery{GroupBy: analytics.GroupMetadata, MetadataKey: k})
	}
	return out
}

func groupName(q analytics.GroupsQuery) string {
	if q.MetadataKey != "" {
		return q.GroupBy + "(" + q.MetadataKey + ")"
	}
	return q.GroupBy
}

// groups checks every grouping with every column in one query and with none, and every column
// asked alone.
func (s suite) groups(t *testing.T) {
	for _, base := range allGroupBys() {
		for _, cols := range [][]string{nil, analytics.Columns} {
			q := base
			q.OrganisationID, q.Columns, q.PageSize = Org, cols, analytics.MaxPageSize
			t.Run(fmt.Sprintf("%s/%d columns", groupName(q), len(cols)), func(t *testing.T) { s.check(t, q) })
		}
	}
	// The reference's groupings (users, metadata) with the columns the HTTP layer answers for
	// them, their fixed ones and those asked, ordered by an asked column.
	for _, base := range []analytics.GroupsQuery{{GroupBy: analytics.GroupUser}, {GroupBy: analytics.GroupMetadata, MetadataKey: "env"}} {
		for _, order := range []struct {
			by   string
			desc bool
		}{{analytics.ColP95Latency, false}, {analytics.ColErrorCount, true}} {
			q := base
			q.OrganisationID, q.PageSize, q.SortBy, q.SortDesc = Org, analytics.MaxPageSize, order.by, order.desc
			q.Columns = []string{analytics.ColCost, analytics.ColAvgTokens, analytics.ColLastSeen, analytics.ColP95Latency, analytics.ColErrorCount}
			t.Run(fmt.Sprintf("%s/asked columns by %s", groupName(q), order.by), func(t *testing.T) { s.check(t, q) })
		}
	}
	for _, c := range analytics.Columns {
		t.Run("only "+c, func(t *testing.T) {
			s.check(t, analytics.GroupsQuery{Filter: analytics.Filter{OrganisationID: Org}, GroupBy: analytics.GroupProvider,
				Columns: []string{c}, PageSize: analytics.MaxPageSize})
		})
	}
}

// filterCases are the filters every query is checked under, each field at least once.
func filterCases() []struct {
	name string
	set  func(f *analytics.Filter)
} {
	n := func(v int) *int { return &v }
	return []struct {
		name string
		set  func(f *analytics.Filter)
	}{
		{"other organisation", func(f *analytics.Filter) { f.OrganisationID = "org-2" }},
		{"unknown organisation", func(f *analytics.Filter) { f.OrganisationID = "org-none" }},
		{"time range", func(f *analytics.Filter) {
			f.From, f.To = Start.Add(5*24*time.Hour+1234*time.Millisecond), Start.Add(12*24*time.Hour+7*time.Millisecond)
		}},
		{"from only", func(f *analytics.Filter) { f.From = Start.Add(20 * 24 * time.Hour) }},
		{"to only", func(f *analytics.Filter) { f.To = Start.Add(3 * 24 * time.Hour) }},
		{"workspaces", func(f *analytics.Filter) { f.WorkspaceIDs = []string{"ws-a", "ws-c"} }},
		{"api keys", func(f *analytics.Filter) { f.APIKeyIDs = []string{"key-2"} }},
		{"configs", func(f *analytics.Filter) { f.ConfigIDs = []string{"cfg-1", "cfg-3"} }},
		{"no config", func(f *analytics.Filter) { f.ConfigIDs = []string{""} }},
		{"providers", func(f *analytics.Filter) { f.Providers = []string{"@groq", "@azure"} }},
		{"models", func(f *analytics.Filter) { f.Models = []string{"gpt-4o", "o3"} }},
		{"ai service and model pairs", func(f *analytics.Filter) {
			f.ServiceModels = []analytics.ServiceModel{{AIService: "openai", Model: "gpt-4o"}, {AIService: "groq", Model: "o3"}}
		}},
		{"prompts", func(f *analytics.Filter) { f.PromptIDs = []string{"prompt-1", "prompt-4"} }},
		{"status codes", func(f *analytics.Filter) { f.StatusCodes = []int{429, 500, 502} }},
		{"metadata one pair", func(f *analytics.Filter) { f.Metadata = map[string]string{"env": "prod"} }},
		{"metadata two pairs", func(f *analytics.Filter) {
			f.Metadata = map[string]string{"env": "dev", analytics.UserMetadataKey: "u3"}
		}},
		{"metadata empty value", func(f *analytics.Filter) { f.Metadata = map[string]string{OddKey: ""} }},
		{"metadata no match", func(f *analytics.Filter) { f.Metadata = map[string]string{"env": ""} }},
		{"trace id", func(f *analytics.Filter) { f.TraceID = "trace-0042" }},
		{"span id", func(f *analytics.Filter) { f.SpanID = "span-0042" }},
		{"cost range", func(f *analytics.Filter) { f.MinCost, f.MaxCost = f64(1.5), f64(3.25) }},
		{"token range", func(f *analytics.Filter) { f.MinTokens, f.MaxTokens = n(100), n(900) }},
		{"prompt token range", func(f *analytics.Filter) { f.MinPromptTokens, f.MaxPromptTokens = n(200), n(1200) }},
		{"completion token range", func(f *analytics.Filter) {
			f.MinCompletionTokens, f.MaxCompletionTokens = n(0), n(300)
		}},
		{"everything", func(f *analytics.Filter) {
			f.WorkspaceIDs = []string{"ws-a", "ws-b", "ws-c"}
			f.StatusCodes = []int{200, 201, 500}
			f.From = Start.Add(24 * time.Hour)
			f.MinTokens = n(500)
			f.MaxCost = f64(8)
			f.MinPromptTokens = n(100)
			f.MaxCompletionTokens = n(3000)
		}},
	}
}

func f64(v float64) *float64 { return &v }

func (s suite) groupFilters(t *testing.T) {
	for _, tc := range filterCases() {
		for _, g := range []string{analytics.GroupModel, analytics.GroupStatusCode} {
			t.Run(tc.name+"/"+g, func(t *testing.T) {
				q := analytics.GroupsQuery{Filter: analytics.Filter{OrganisationID: Org}, GroupBy: g,
					Columns: analytics.Columns, PageSize: analytics.MaxPageSize}
				tc.set(&q.Filter)
				s.check(t, q)
			})
		}
	}
}

func (s suite) groupPagination(t *testing.T) {
	for _, size := range []int{1, 2, 3, 5} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			q := analytics.GroupsQuery{Filter: analytics.Filter{OrganisationID: Org}, GroupBy: analytics.GroupAPIKey,
				PageSize: size}
			want := refGroups(s.rows, q)
			var got []string
			for page := 0; page*size < len(want)+size; page++ {
				q.Page = page
				res, err := s.store.Groups(context.Background(), q)
				require.NoError(t, err)
				require.Equal(t, len(want), res.Total, "page %d", page)
				require.LessOrEqual(t, len(res.Groups), size)
				got = append(got, keysOf(res.Groups)...)
			}
			assert.Equal(t, keysOf(want), got)
		})
	}
}

func (s suite) groupSorting(t *testing.T) {
	for _, c := range append([]string{analytics.ColRequests}, analytics.Columns...) {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/desc=%v", c, desc), func(t *testing.T) {
				q := analytics.GroupsQuery{Filter: analytics.Filter{OrganisationID: Org}, GroupBy: analytics.GroupModel,
					PageSize: analytics.MaxPageSize, SortBy: c, SortDesc: desc}
				if c != analytics.ColRequests {
					q.Columns = []string{c}
				}
				res, err := s.store.Groups(context.Background(), q)
				require.NoError(t, err)
				assert.ElementsMatch(t, keysOf(refGroups(s.rows, q)), keysOf(res.Groups))
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
}

func (s suite) invalidGroups(t *testing.T) {
	ok := analytics.GroupsQuery{Filter: analytics.Filter{OrganisationID: Org}, GroupBy: analytics.GroupModel}
	cases := []struct {
		name  string
		set   func(q *analytics.GroupsQuery)
		param string
		bound string
	}{
		{"unknown groupBy", func(q *analytics.GroupsQuery) { q.GroupBy = "users" }, "groupBy", "metadata"},
		{"metadata without key", func(q *analytics.GroupsQuery) { q.GroupBy = analytics.GroupMetadata }, "metadataKey", "required"},
		{"metadata key too long", func(q *analytics.GroupsQuery) {
			q.GroupBy, q.MetadataKey = analytics.GroupMetadata, strings.Repeat("k", domain.MaxNameLength+1)
		}, "metadataKey", "255"},
		{"unknown column", func(q *analytics.GroupsQuery) { q.Columns = []string{"p50_latency"} }, "columns", "first_seen"},
		{"column twice", func(q *analytics.GroupsQuery) { q.Columns = []string{"cost", "cost"} }, "columns", "twice"},
		{"negative page", func(q *analytics.GroupsQuery) { q.Page = -1 }, "current_page", "0"},
		{"page too large", func(q *analytics.GroupsQuery) { q.PageSize = analytics.MaxPageSize + 1 }, "page_size", "1000"},
		{"negative page size", func(q *analytics.GroupsQuery) { q.PageSize = -1 }, "page_size", "1000"},
		{"sort by a column not asked", func(q *analytics.GroupsQuery) { q.SortBy = analytics.ColCost }, "order_by", "requests"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := ok
			tc.set(&q)
			_, err := s.store.Groups(context.Background(), q)
			requireInvalid(t, err, tc.param, tc.bound)
		})
	}
	t.Run("metadata key at the bound", func(t *testing.T) {
		q := ok
		q.GroupBy, q.MetadataKey = analytics.GroupMetadata, strings.Repeat("k", domain.MaxNameLength)
		res, err := s.store.Groups(context.Background(), q)
		require.NoError(t, err)
		assert.Zero(t, res.Total)
		assert.Empty(t, res.Groups)
	})
	t.Run("page size at the bound", func(t *testing.T) {
		q := ok
		q.PageSize = analytics.MaxPageSize
		_, err := s.store.Groups(context.Background(), q)
		require.NoError(t, err)
	})
}

// invalidFilters checks the filter's bounds on every query: one validation, the same params.
func (s suite) invalidFilters(t *testing.T) {
	n := func(v int) *int { return &v }
	cases := []struct {
		name  string
		set   func(f *analytics.Filter)
		param string
		bound string
	}{
		{"no organisation", func(f *analytics.Filter) { f.OrganisationID = "" }, "organisation_id", "required"},
		{"empty time range", func(f *analytics.Filter) { f.From, f.To = Start, Start }, "time_of_generation_min", "before"},
		{"reversed time range", func(f *analytics.Filter) { f.From, f.To = Start, Start.Add(-time.Millisecond) }, "time_of_generation_min", "before"},
		{"negative cost", func(f *analytics.Filter) { f.MinCost = f64(-0.01) }, "cost_min", "at least 0"},
		{"negative max cost", func(f *analytics.Filter) { f.MaxCost = f64(-1) }, "cost_max", "at least 0"},
		{"cost not a number", func(f *analytics.Filter) { f.MinCost = f64(math.NaN()) }, "cost_min", "finite"},
		{"infinite max cost", func(f *analytics.Filter) { f.MaxCost = f64(math.Inf(1)) }, "cost_max", "finite"},
		{"cost range reversed", func(f *analytics.Filter) { f.MinCost, f.MaxCost = f64(2), f64(1.99) }, "cost_min", "cost_max"},
		{"negative tokens", func(f *analytics.Filter) { f.MinTokens = n(-1) }, "total_units_min", "at least 0"},
		{"negative max tokens", func(f *analytics.Filter) { f.MaxTokens = n(-1) }, "total_units_max", "at least 0"},
		{"token range reversed", func(f *analytics.Filter) { f.MinTokens, f.MaxTokens = n(2), n(1) }, "total_units_min", "total_units_max"},
		{"negative prompt tokens", func(f *analytics.Filter) { f.MinPromptTokens = n(-1) }, "prompt_token_min", "at least 0"},
		{"negative max prompt tokens", func(f *analytics.Filter) { f.MaxPromptTokens = n(-1) }, "prompt_token_max", "at least 0"},
		{"prompt token range reversed", func(f *analytics.Filter) {
			f.MinPromptTokens, f.MaxPromptTokens = n(5), n(4)
		}, "prompt_token_min", "prompt_token_max"},
		{"negative completion tokens", func(f *analytics.Filter) { f.MinCompletionTokens = n(-1) }, "completion_token_min", "at least 0"},
		{"negative max completion tokens", func(f *analytics.Filter) { f.MaxCompletionTokens = n(-1) }, "completion_token_max", "at least 0"},
		{"completion token range reversed", func(f *analytics.Filter) {
			f.MinCompletionTokens, f.MaxCompletionTokens = n(5), n(4)
		}, "completion_token_min", "completion_token_max"},
		{"pair without a service", func(f *analytics.Filter) {
			f.ServiceModels = []analytics.ServiceModel{{Model: "gpt-4o"}}
		}, "ai_org_model", "both"},
		{"pair with a 256-character model", func(f *analytics.Filter) {
			f.ServiceModels = []analytics.ServiceModel{{AIService: "openai", Model: strings.Repeat("m", 256)}}
		}, "ai_org_model", "at most 255"},
	}
	ctx := context.Background()
	queries := map[string]func(f analytics.Filter) error{
		"groups": func(f analytics.Filter) error {
			_, err := s.store.Groups(ctx, analytics.GroupsQuery{Filter: f, GroupBy: analytics.GroupModel})
			return err
		},
		"graph": func(f analytics.Filter) error {
			if f.From.IsZero() {
				f.From, f.To = Start, Start.Add(24*time.Hour)
			}
			_, err := s.store.Graph(ctx, analytics.GraphQuery{Filter: f, Kind: analytics.GraphRequests, Bucket: time.Hour})
			return err
		},
		"summary": func(f analytics.Filter) error { _, err := s.store.Summary(ctx, f); return err },
		"cache summary": func(f analytics.Filter) error {
			_, err := s.store.CacheSummary(ctx, f)
			return err
		},
		"logs": func(f analytics.Filter) error {
			_, err := s.store.Logs(ctx, analytics.LogsQuery{Filter: f})
			return err
		},
		"scan logs": func(f analytics.Filter) error {
			return s.store.ScanLogs(ctx, f, func(analytics.LogRecord) error { return errors.New("no row may be read") })
		},
	}
	for _, tc := range cases {
		for name, query := range queries {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				f := analytics.Filter{OrganisationID: Org}
				tc.set(&f)
				requireInvalid(t, f.Validate(), tc.param, tc.bound)
				requireInvalid(t, query(f), tc.param, tc.bound)
			})
		}
	}
	t.Run("bounds at their edge", func(t *testing.T) {
		f := analytics.Filter{OrganisationID: Org, From: Start, To: Start.Add(time.Millisecond),
			MinCost: f64(0), MaxCost: f64(0), MinTokens: n(0), MaxTokens: n(0), MinPromptTokens: n(0),
			MaxPromptTokens: n(0), MinCompletionTokens: n(0), MaxCompletionTokens: n(0)}
		require.NoError(t, f.Validate())
		for name, query := range queries {
			assert.NoError(t, query(f), name)
		}
	})
}

// requireInvalid checks err is a domain.Invalid naming param, whose message names the bound.
func requireInvalid(t *testing.T, err error, param, bound string) {
	t.Helper()
	var de *domain.Error
	require.True(t, errors.As(err, &de), "got %v", err)
	assert.Equal(t, domain.CodeInvalid, de.Code)
	assert.Equal(t, param, de.Param)
	assert.Contains(t, de.Message, bound)
}

// check compares the store's answer to q with the reference, group by group.
func (s suite) check(t *testing.T, q analytics.GroupsQuery) {
	t.Helper()
	res, err := s.store.Groups(context.Background(), q)
	require.NoError(t, err)
	want := refGroups(s.rows, q)
	require.Equal(t, len(want), res.Total)
	require.Equal(t, keysOf(want), keysOf(res.Groups))
	for i, w := range want {
		got := res.Groups[i]
		assert.Equal(t, w.Requests, got.Requests, "%s requests", w.Key)
		require.Len(t, got.Values, len(q.Columns))
		for _, c := range q.Columns {
			if c == analytics.ColP95Latency || c == analytics.ColP99Latency {
				assert.Equal(t, w.Values[c], got.Values[c], "%s %s", w.Key, c)
				continue
			}
			assert.True(t, near(w.Values[c], got.Values[c]), "%s %s: want %v, got %v", w.Key, c, w.Values[c], got.Values[c])
		}
	}
}

// near compares floats within a relative 1e-6 (absolute near zero).
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func keysOf(gs []analytics.Group) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Key
	}
	return out
}
