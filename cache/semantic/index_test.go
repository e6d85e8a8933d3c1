package semantic_test

import (
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cache/semantic"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// add is one Add of a test's setup.
type add struct {
	partition, key string
	vec            []float32
	expires        time.Time
}

func TestIndex(t *testing.T) {
	later := t0.Add(time.Hour)
	cases := []struct {
		name      string
		opts      semantic.Options
		adds      []add
		removes   []string
		partition string
		query     []float32
		now       time.Time
		wantKey   string // "" for no match
		wantScore float32
		wantLen   int
	}{
		{
			name: "the most similar entry of the partition",
			adds: []add{
				{"p", "east", []float32{1, 0, 0}, later},
				{"p", "north", []float32{0, 1, 0}, later},
				{"p", "north-east", []float32{1, 1, 0}, later},
			},
			partition: "p", query: []float32{1, 0.9, 0}, now: t0,
			wantKey: "north-east", wantScore: 0.9986, wantLen: 3,
		},
		{
			name: "another partition's entries are not compared",
			adds: []add{
				{"p", "east", []float32{1, 0, 0}, later},
				{"q", "north", []float32{0, 1, 0}, later},
			},
			partition: "p", query: []float32{0, 1, 0}, now: t0,
			wantKey: "east", wantScore: 0, wantLen: 2,
		},
		{
			name:      "a partition with no entry",
			adds:      []add{{"p", "east", []float32{1, 0, 0}, later}},
			partition: "q", query: []float32{1, 0, 0}, now: t0,
			wantLen: 1,
		},
		{
			name: "similarity is cosine: lengths do not count",
			adds: []add{
				{"p", "long", []float32{30, 40, 0}, later},
				{"p", "short", []float32{0.1, 0, 0}, later},
			},
			partition: "p", query: []float32{0.003, 0.004, 0}, now: t0,
			wantKey: "long", wantScore: 1, wantLen: 2,
		},
		{
			name: "adding a key again replaces its vector",
			adds: []add{
				{"p", "k", []float32{1, 0, 0}, later},
				{"p", "other", []float32{0.6, 0.8, 0}, later},
				{"p", "k", []float32{0, 0, 1}, later},
			},
			partition: "p", query: []float32{1, 0, 0}, now: t0,
			wantKey: "other", wantScore: 0.6, wantLen: 2,
		},
		{
			name: "adding a key to another partition moves it",
			adds: []add{
				{"p", "k", []float32{1, 0, 0}, later},
				{"q", "k", []float32{1, 0, 0}, later},
			},
			partition: "p", query: []float32{1, 0, 0}, now: t0,
			wantLen: 1,
		},
		{
			name: "the moved key answers in its new partition",
			adds: []add{
				{"p", "k", []float32{1, 0, 0}, later},
				{"q", "k", []float32{0, 1, 0}, later},
			},
			partition: "q", query: []float32{0, 1, 0}, now: t0,
			wantKey: "k", wantScore: 1, wantLen: 1,
		},
		{
			name: "a removed key does not answer",
			adds: []add{
				{"p", "a", []float32{1, 0, 0}, later},
				{"p", "b", []float32{0, 1, 0}, later},
			},
			removes:   []string{"a", "missing"},
			partition: "p", query: []float32{1, 0, 0}, now: t0,
			wantKey: "b", wantScore: 0, wantLen: 1,
		},
		{
			name: "an expired entry does not answer, though held until swept",
			adds: []add{
				{"p", "stale", []float32{1, 0, 0}, t0},
				{"p", "fresh", []float32{1, 1, 0}, later},
			},
			partition: "p", query: []float32{1, 0, 0}, now: t0,
			wantKey: "fresh", wantScore: 0.7071, wantLen: 2,
		},
		{
			name:      "a zero expiry never expires",
			adds:      []add{{"p", "k", []float32{1, 0, 0}, time.Time{}}},
			partition: "p", query: []float32{1, 0, 0}, now: t0.AddDate(100, 0, 0),
			wantKey: "k", wantScore: 1, wantLen: 1,
		},
		{
			name: "vectors of another dimension in the partition are not compared",
			adds: []add{
				{"p", "old-model", []float32{1, 0, 0, 0}, later},
				{"p", "new-model", []float32{0, 1, 0}, later},
			},
			partition: "p", query: []float32{1, 0, 0}, now: t0,
			wantKey: "new-model", wantScore: 0, wantLen: 2,
		},
		{
			name:      "a query of a dimension the partition does not hold",
			adds:      []add{{"p", "k", []float32{1, 0, 0}, later}},
			partition: "p", query: []float32{1, 0}, now: t0,
			wantLen: 1,
		},
		{
			name: "a vector with no direction is not stored, and removes its key",
			adds: []add{
				{"p", "k", []float32{1, 0, 0}, later},
				{"p", "k", []float32{0, 0, 0}, later},
				{"p", "nan", []float32{float32(math.NaN()), 0, 0}, later},
				{"p", "inf", []float32{float32(math.Inf(1)), 0, 0}, later},
				{"p", "empty", nil, later},
			},
			partition: "p", query: []float32{1, 0, 0}, now: t0,
			wantLen: 0,
		},
		{
			name:      "a query with no direction matches nothing",
			adds:      []add{{"p", "k", []float32{1, 0, 0}, later}},
			partition: "p", query: []float32{0, 0, 0}, now: t0,
			wantLen: 1,
		},
		{
			name: "a full index evicts the entry added longest ago",
			opts: semantic.Options{MaxEntries: 2},
			adds: []add{
				{"p", "first", []float32{1, 0, 0}, later},
				{"p", "second", []float32{0, 1, 0}, later},
				{"p", "third", []float32{0, 0, 1}, later},
			},
			partition: "p", query: []float32{1, 0.1, 0}, now: t0,
			wantKey: "second", wantScore: 0.0995, wantLen: 2,
		},
		{
			name: "adding a key again makes it the newest",
			opts: semantic.Options{MaxEntries: 2},
			adds: []add{
				{"p", "first", []float32{1, 0, 0}, later},
				{"p", "second", []float32{0, 1, 0}, later},
				{"p", "first", []float32{1, 0, 0}, later},
				{"p", "third", []float32{0, 0, 1}, later},
			},
			partition: "p", query: []float32{0.1, 1, 0}, now: t0,
			wantKey: "first", wantScore: 0.0995, wantLen: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := semantic.New(tc.opts)
			for _, a := range tc.adds {
				ix.Add(a.partition, a.key, a.vec, a.expires)
			}
			for _, k := range tc.removes {
				ix.Remove(k)
			}
			m, ok := ix.Nearest(tc.partition, tc.query, tc.now)
			require.Equal(t, tc.wantKey != "", ok, "match %+v", m)
			require.Equal(t, tc.wantKey, m.Key)
			require.InDelta(t, tc.wantScore, m.Score, 1e-4)
			require.Equal(t, tc.wantLen, ix.Len())
		})
	}
}

func TestAddDoesNotKeepTheCallersVector(t *testing.T) {
	ix := semantic.New(semantic.Options{})
	v := []float32{1, 0, 0}
	ix.Add("p", "k", v, time.Time{})
	v[0], v[1] = 0, 1

	m, ok := ix.Nearest("p", []float32{1, 0, 0}, t0)
	require.True(t, ok)
	require.InDelta(t, 1, m.Score, 1e-6)
}

func TestSweep(t *testing.T) {
	ix := semantic.New(semantic.Options{})
	for i := range 10 {
		// Keys 0, 2, 4, 6 and 8 expire at t0; the others an hour later.
		exp := t0
		if i%2 == 1 {
			exp = t0.Add(time.Hour)
		}
		ix.Add("p"+strconv.Itoa(i%3), strconv.Itoa(i), []float32{float32(i + 1), 1}, exp)
	}

	require.Equal(t, 0, ix.Sweep(t0.Add(-time.Second)))
	require.Equal(t, 5, ix.Sweep(t0))
	require.Equal(t, 5, ix.Len())
	for i := range 10 {
		m, ok := ix.Nearest("p"+strconv.Itoa(i%3), []float32{float32(i + 1), 1}, t0.Add(-time.Second))
		require.True(t, ok, "key %d", i)
		if i%2 == 1 {
			require.Equal(t, strconv.Itoa(i), m.Key)
		} else {
			require.NotEqual(t, strconv.Itoa(i), m.Key)
		}
	}
	require.Equal(t, 5, ix.Sweep(t0.Add(time.Hour)))
	require.Equal(t, 0, ix.Len())
	_, ok := ix.Nearest("p1", []float32{1, 1}, t0)
	require.False(t, ok)
}

func TestMatchHit(t *testing.T) {
	require.True(t, semantic.Match{Score: 0.9}.Hit(0.9))
	require.False(t, semantic.Match{Score: 0.89}.Hit(0.9))
}

// TestEvictionKeepsTheNewest adds many times the bound, replacing keys and moving them across
// partitions on the way, and checks that the newest entries are the ones left.
func TestEvictionKeepsTheNewest(t *testing.T) {
	const max = 50
	ix := semantic.New(semantic.Options{MaxEntries: max})
	vec := func(i int) []float32 {
		return []float32{float32(math.Cos(float64(i))), float32(math.Sin(float64(i))), 0.001 * float32(i)}
	}
	for i := range 1000 {
		ix.Add("p"+strconv.Itoa(i%7), "k"+strconv.Itoa(i), vec(i), time.Time{})
		if i%3 == 0 {
			ix.Add("p"+strconv.Itoa(i%5), "k"+strconv.Itoa(i), vec(i), time.Time{}) // moved
		}
		if i%11 == 0 {
			ix.Remove("k" + strconv.Itoa(i-1))
		}
	}
	require.Equal(t, max, ix.Len())
	for i := 999; i > 950; i-- {
		p := "p" + strconv.Itoa(i%7)
		if i%3 == 0 {
			p = "p" + strconv.Itoa(i%5)
		}
		m, ok := ix.Nearest(p, vec(i), t0)
		if i%11 == 10 {
			continue // removed
		}
		require.True(t, ok, "key %d", i)
		require.Equal(t, "k"+strconv.Itoa(i), m.Key)
	}
}

// TestConcurrentUse runs writers, sweepers and readers together, for the race detector.
func TestConcurrentUse(t *testing.T) {
	ix := semantic.New(semantic.Options{MaxEntries: 300})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				k := strconv.Itoa((w*500 + i) % 700)
				p := "p" + strconv.Itoa(i%3)
				ix.Add(p, k, []float32{float32(i%13) + 1, float32(w), 1}, t0.Add(time.Duration(i%50)*time.Second))
				if i%7 == 0 {
					ix.Remove(k)
				}
				if i%97 == 0 {
					ix.Sweep(t0.Add(10 * time.Second))
				}
			}
		})
	}
	for r := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				if m, ok := ix.Nearest("p"+strconv.Itoa((r+i)%3), []float32{1, 2, 3}, t0); ok && m.Key == "" {
					t.Error("a match with no key")
				}
				_ = ix.Len()
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, ix.Len(), 300)
}
