package memory

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/cache/cachetest"
)

func open(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestContract(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
			return open(t, Config{Path: filepath.Join(t.TempDir(), "cache.db"), MaxBytes: cfg.MaxBytes,
				FlushInterval: 5 * time.Millisecond})
		})
	})
	t.Run("memory-only", func(t *testing.T) {
		cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
			return open(t, Config{MaxBytes: cfg.MaxBytes})
		})
	})
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	err := Config{MaxBytes: -1, FlushInterval: -time.Second, SweepInterval: -time.Second}.Validate()
	require.ErrorContains(t, err, "MaxBytes")
	require.ErrorContains(t, err, "FlushInterval")
	require.ErrorContains(t, err, "SweepInterval")
	require.NoError(t, Config{}.Validate())
	_, err = Open(context.Background(), Config{MaxBytes: -1})
	require.Error(t, err)
}

// A Get makes its entry the most recently used: the entry evicted is the one neither put nor
// read for the longest.
func TestEvictsTheLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	now := cachetest.Now()
	entry := func(k string) cache.Entry {
		e := cachetest.NewEntry("ws", "", k, now, time.Hour)
		e.Body = bytes.Repeat([]byte("x"), 1000)
		return e
	}
	s := open(t, Config{MaxBytes: 3 * entry("a").Size()})
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, s.Put(ctx, entry(k)))
	}
	_, ok, err := s.Get(ctx, "ws", "a", now)
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, s.Put(ctx, entry("d")))
	// Checked in this order, the recency is c, a, d (least recent first).
	for _, k := range []string{"b", "c", "a", "d"} {
		_, ok, err := s.Get(ctx, "ws", k, now)
		require.NoError(t, err)
		require.Equal(t, k != "b", ok, k)
	}
	// A Get from another workspace is no use, and refreshes nothing.
	_, ok, err = s.Get(ctx, "other", "c", now)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, s.Put(ctx, entry("e")))
	for k, want := range map[string]bool{"a": true, "c": false, "d": true, "e": true} {
		_, ok, err := s.Get(ctx, "ws", k, now)
		require.NoError(t, err)
		require.Equal(t, want, ok, k)
	}
}

func TestPruneDropsTheExpired(t *testing.T) {
	ctx := context.Background()
	now := cachetest.Now()
	s := open(t, Config{})
	require.NoError(t, s.Put(ctx, cachetest.NewEntry("ws", "", "short", now, time.Minute)))
	long := cachetest.NewEntry("ws", "", "long", now, time.Hour)
	require.NoError(t, s.Put(ctx, long))
	n, err := s.Prune(ctx, now.Add(2*time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{Entries: 1, Bytes: long.Size()}, st)
}

func TestTheSweeperDropsTheExpired(t *testing.T) {
	ctx := context.Background()
	s := open(t, Config{SweepInterval: 10 * time.Millisecond})
	require.NoError(t, s.Put(ctx, cachetest.NewEntry("ws", "", "k", time.Now(), 20*time.Millisecond)))
	require.Eventually(t, func() bool {
		st, err := s.Stats(ctx)
		return err == nil && st.Entries == 0
	}, 5*time.Second, 10*time.Millisecond)
}

// Close writes what is pending, and the next Open loads it back: entries, their put order
// (Changes), their size, and not what was purged, evicted or expired.
func TestReopenKeepsTheEntries(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "cache.db")
	now := cachetest.Now()
	// An interval longer than the test: only Close writes.
	cfg := Config{Path: path, FlushInterval: time.Hour}
	s, err := Open(ctx, cfg)
	require.NoError(t, err)
	var want []cache.Entry
	for i := range 5 {
		e := cachetest.NewEntry("ws", "", fmt.Sprintf("k%d", i), now, time.Hour)
		e.Vector = []float32{float32(i), -1}
		require.NoError(t, s.Put(ctx, e))
		want = append(want, e)
	}
	replaced := want[1]
	replaced.Body = []byte(`{"answer":"replaced"}`)
	require.NoError(t, s.Put(ctx, replaced))
	want = append([]cache.Entry{want[0]}, append(want[2:], replaced)...)
	exact := cachetest.NewEntry("ws", "", "exact", now, time.Hour)
	require.NoError(t, s.Put(ctx, exact))
	require.NoError(t, s.Put(ctx, cachetest.NewEntry("ws", "gone", "purged", now, time.Hour)))
	n, err := s.Purge(ctx, "ws", "gone")
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.NoError(t, s.Put(ctx, cachetest.NewEntry("ws", "", "expired", now.Add(-time.Hour), time.Minute)))
	before, err := s.Stats(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = open(t, cfg)
	for _, e := range append(want, exact) {
		got, ok, err := s.Get(ctx, "ws", e.Key, now)
		require.NoError(t, err)
		require.True(t, ok, e.Key)
		cachetest.RequireEntry(t, e, got, e.Key)
	}
	for _, k := range []string{"purged", "expired"} {
		_, ok, err := s.Get(ctx, "ws", k, now.Add(-time.Hour))
		require.NoError(t, err)
		require.False(t, ok, k)
	}
	after, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{Entries: before.Entries - 1, Bytes: before.Bytes - cachetest.NewEntry("ws", "", "expired", now, 0).Size()}, after,
		"all but the expired entry")

	es, _, err := s.Changes(ctx, 0, 100)
	require.NoError(t, err)
	var keys []string
	for _, e := range es {
		keys = append(keys, e.Key)
	}
	require.Equal(t, []string{"k0", "k2", "k3", "k4", "k1"}, keys, "put order survives the restart")

	// New puts come after the loaded ones.
	late := cachetest.NewEntry("ws", "", "late", now, time.Hour)
	late.Vector = []float32{1}
	require.NoError(t, s.Put(ctx, late))
	es, _, err = s.Changes(ctx, 0, 100)
	require.NoError(t, err)
	require.Equal(t, "late", es[len(es)-1].Key)
}

// The writer writes on its interval, not only at Close: what it wrote is in the file while
// the store still runs.
func TestWritesBehindWhileRunning(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	s := open(t, Config{Path: path, FlushInterval: 10 * time.Millisecond})
	now := cachetest.Now()
	require.NoError(t, s.Put(ctx, cachetest.NewEntry("ws", "", "k1", now, time.Hour)))
	require.NoError(t, s.Put(ctx, cachetest.NewEntry("ws", "", "k2", now, time.Hour)))
	count := func() int {
		var n int
		require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM answer_cache`).Scan(&n))
		return n
	}
	require.Eventually(t, func() bool { return count() == 2 }, 5*time.Second, 10*time.Millisecond)
	_, err := s.Purge(ctx, "ws", "")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count() == 0 }, 5*time.Second, 10*time.Millisecond)
}

// Evictions reach the file too, and a bound lowered between runs applies at Open.
func TestEvictionsAndALowerBoundPersist(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	now := cachetest.Now()
	entry := func(i int) cache.Entry {
		e := cachetest.NewEntry("ws", "", fmt.Sprintf("k%02d", i), now, time.Hour)
		e.Body = bytes.Repeat([]byte("x"), 1000)
		return e
	}
	size := entry(0).Size()
	s, err := Open(ctx, Config{Path: path, MaxBytes: 10 * size})
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, s.Put(ctx, entry(i)))
	}
	require.NoError(t, s.Close())

	s, err = Open(ctx, Config{Path: path, MaxBytes: 4 * size})
	require.NoError(t, err)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{Entries: 4, Bytes: 4 * size}, st)
	for i := range 20 {
		_, ok, err := s.Get(ctx, "ws", entry(i).Key, now)
		require.NoError(t, err)
		require.Equal(t, i >= 16, ok, i)
	}
	require.NoError(t, s.Close())
	var rows int
	s = open(t, Config{Path: path})
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM answer_cache`).Scan(&rows))
	require.Equal(t, 4, rows, "the evictions at the last Open reached the file")
}

func TestPutAfterCloseFails(t *testing.T) {
	s, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "cache.db")})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Error(t, s.Put(context.Background(), cachetest.NewEntry("ws", "", "k", time.Now(), time.Hour)))
	require.NoError(t, s.Close(), "a second Close does nothing")
}

func BenchmarkGet(b *testing.B) {
	cachetest.BenchmarkGet(b, open(b, Config{Path: filepath.Join(b.TempDir(), "cache.db")}))
}
