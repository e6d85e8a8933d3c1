package analyticstest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
)

const day = 24 * time.Hour

// graphRanges are the ranges, bucket sizes and filters every graph kind is checked under:
// aligned and not, with buckets of an odd size, and reaching beyond the rows so that empty
// buckets show.
var graphRanges = []struct {
	name string
	set  func(q *analytics.GraphQuery)
}{
	{"30 days by day", func(q *analytics.GraphQuery) {
		q.From, q.To, q.Bucket = Start, Start.Add(30*day), day
	}},
	{"unaligned week by 90 minutes, two models", func(q *analytics.GraphQuery) {
		q.From, q.To, q.Bucket = Start.Add(5*day+1234*time.Millisecond), Start.Add(12*day+7*time.Millisecond), 90*time.Minute
		q.Models = []string{"gpt-4o", "claude-haiku"}
	}},
	{"beyond the rows by week, one workspace and metadata", func(q *analytics.GraphQuery) {
		q.From, q.To, q.Bucket = Start.Add(-10*day), Start.Add(40*day), 7*day
		q.WorkspaceIDs = []string{"ws-b"}
		q.Metadata = map[string]string{"env": "prod"}
	}},
}

func (s suite) graphs(t *testing.T) {
	for _, kind := range analytics.Graphs {
		for _, r := range graphRanges {
			t.Run(kind+"/"+r.name, func(t *testing.T) {
				q := analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: Org}, Kind: kind}
				r.set(&q)
				s.checkGraph(t, q)
			})
		}
	}
}

func (s suite) graphBuckets(t *testing.T) {
	t.Run("1000 buckets", func(t *testing.T) {
		q := analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: Org, From: Start, To: Start.Add(1000 * time.Minute)},
			Kind: analytics.GraphRequests, Bucket: time.Minute}
		g := s.checkGraph(t, q)
		assert.Len(t, g.Points, analytics.MaxGraphBuckets)
	})
	t.Run("one millisecond", func(t *testing.T) {
		q := analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: Org, From: s.rows[0].StartedAt,
			To: s.rows[0].StartedAt.Add(time.Millisecond)}, Kind: analytics.GraphLatency, Bucket: time.Hour}
		g := s.checkGraph(t, q)
		require.Len(t, g.Points, 1)
		assert.True(t, g.Points[0].Start.Equal(s.rows[0].StartedAt.Truncate(time.Hour)))
	})
	t.Run("no rows", func(t *testing.T) {
		for _, kind := range analytics.Graphs {
			q := analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: "org-none", From: Start, To: Start.Add(day)},
				Kind: kind, Bucket: 6 * time.Hour}
			s.checkGraph(t, q)
		}
	})
}

func (s suite) invalidGraphs(t *testing.T) {
	ok := analytics.GraphQuery{Filter: analytics.Filter{OrganisationID: Org, From: Start, To: Start.Add(day)},
		Kind: analytics.GraphRequests, Bucket: time.Hour}
	cases := []struct {
		name  string
		set   func(q *analytics.GraphQuery)
		param string
		bound string
	}{
		{"no start", func(q *analytics.GraphQuery) { q.From = time.Time{} }, "time_of_generation_min", "required"},
		{"no end", func(q *analytics.GraphQuery) { q.To = time.Time{} }, "time_of_generation_max", "required"},
		{"unknown kind", func(q *analytics.GraphQuery) { q.Kind = "feedbacks" }, "graph", "cache/latency"},
		{"no bucket", func(q *analytics.GraphQuery) { q.Bucket = 0 }, "bucket", "minutes"},
		{"negative bucket", func(q *analytics.GraphQuery) { q.Bucket = -time.Hour }, "bucket", "minutes"},
		{"bucket not whole minutes", func(q *analytics.GraphQuery) { q.Bucket = 90 * time.Second }, "bucket", "minutes"},
		{"1001 buckets", func(q *analytics.GraphQuery) {
			q.To, q.Bucket = Start.Add(1000*time.Minute+time.Millisecond), time.Minute
		}, "time_of_generation_min", "1000"},
		{"1000 minutes over 1001 buckets", func(q *analytics.GraphQuery) {
			q.From, q.To, q.Bucket = Start.Add(30*time.Second), Start.Add(1000*time.Minute+30*time.Second), time.Minute
		}, "time_of_generation_min", "1000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := ok
			tc.set(&q)
			_, err := s.store.Graph(context.Background(), q)
			requireInvalid(t, err, tc.param, tc.bound)
		})
	}
	t.Run("status codes have no buckets", func(t *testing.T) {
		q := ok
		q.Kind, q.Bucket, q.From = analytics.GraphErrorStatusCodes, 0, Start.Add(-365*day)
		s.checkGraph(t, q)
	})
}

// checkGraph compares the store's graph for q with the reference's and returns it.
func (s suite) checkGraph(t *testing.T, q analytics.GraphQuery) analytics.Graph {
	t.Helper()
	got, err := s.store.Graph(context.Background(), q)
	require.NoError(t, err)
	want := refGraph(s.rows, q)
	// The savings are multiples of 1/256 (see Rows): their sums are exact.
	exact := []string{"p50", "p90", "p99", "cumulative_simple_cache_savings", "cumulative_semantic_cache_savings"}
	compareValues(t, "summary", want.Summary, got.Summary, exact)
	require.Len(t, got.Points, len(want.Points))
	for i, w := range want.Points {
		g := got.Points[i]
		assert.True(t, w.Start.Equal(g.Start), "point %d: start %v, got %v", i, w.Start, g.Start)
		assert.Equal(t, time.UTC, g.Start.Location(), "point %d", i)
		assert.Equal(t, w.StatusCode, g.StatusCode, "point %d", i)
		compareValues(t, w.Start.String(), w.Values, g.Values, exact)
	}
	return got
}

// compareValues compares two sets of named figures: the same names, values near, those named
// in exact equal.
func compareValues(t *testing.T, where string, want, got map[string]float64, exact []string) {
	t.Helper()
	require.Len(t, got, len(want), "%s: %v", where, got)
	for name, w := range want {
		g, ok := got[name]
		require.True(t, ok, "%s: no %s in %v", where, name, got)
		if slices.Contains(exact, name) {
			assert.Equal(t, w, g, "%s %s", where, name)
		} else {
			assert.True(t, near(w, g), "%s %s: want %v, got %v", where, name, w, g)
		}
	}
}
