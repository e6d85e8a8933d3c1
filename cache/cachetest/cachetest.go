// Package cachetest is the contract suite every cache.Store backend is held to: Run(t, open)
// and RunShared(t, openPair), called from each backend's tests, and BenchmarkGet for their
// benchmarks. It imports only the cache contract, testify and the standard library.
//
// Every test gets a store of its own from open and expects it to start empty. Times are built
// from the wall clock (a backend may drop an entry once its own clock passes ExpiresAt) and
// kept to the microsecond, the precision the contract promises.
package cachetest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cache"
)

// Config is what a test asks of the store it opens.
type Config struct {
	// MaxBytes is the store's byte bound; 0: the backend's default.
	MaxBytes int64
}

// OpenFunc returns an empty store for one test; the suite closes it.
type OpenFunc func(t *testing.T, cfg Config) cache.Store

// OpenPairFunc returns two stores on one empty backing store, standing for two gateway
// instances; the suite closes them.
type OpenPairFunc func(t *testing.T, cfg Config) (cache.Store, cache.Store)

// Pruner is a store that enforces its bound (or drops what expired) in the background as well
// as on demand. The suite prunes such a store before it checks the bound, since the background
// pass would do the same a little later.
type Pruner interface {
	Prune(ctx context.Context, now time.Time) (int64, error)
}

// Run runs the contract against the backend that open returns.
func Run(t *testing.T, open OpenFunc) {
	tests := []struct {
		name string
		cfg  Config
		fn   func(t *testing.T, s cache.Store, cfg Config)
	}{
		{"PutGetRoundTrip", Config{}, testRoundTrip},
		{"PutRefusesEntryWithoutKeyOrWorkspace", Config{}, testPutValidates},
		{"PutReplacesUnderTheSameKey", Config{}, testReplace},
		{"GetAnswersOnlyBeforeExpiresAt", Config{}, testExpiry},
		{"PutOfAnExpiredEntryRemovesTheOldOne", Config{}, testPutExpired},
		{"GetIsScopedToTheWorkspace", Config{}, testWorkspaceIsolation},
		{"PurgeIsScopedToWorkspaceAndNamespace", Config{}, testPurge},
		{"StatsCountEntriesAndBytes", Config{}, testStats},
		{"ByteBoundKeepsTheNewest", Config{MaxBytes: 64 << 10}, testByteBound},
		{"EntryLargerThanTheBoundIsNotStored", Config{MaxBytes: 8 << 10}, testTooLarge},
		{"ChangesInPutOrderWithACursor", Config{}, testChanges},
		{"ChangesAnswerAReplacedEntryAgain", Config{}, testChangesReplaced},
		{"CancelledContextFails", Config{}, testCancelled},
		{"ConcurrentUse", Config{MaxBytes: 32 << 10}, testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, tc.cfg)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s, tc.cfg)
		})
	}
}

// RunShared runs the tests of two stores on one backing store: what one puts, the other
// answers, purges and lists in Changes.
func RunShared(t *testing.T, openPair OpenPairFunc) {
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b cache.Store)
	}{
		{"EachAnswersWhatTheOtherPut", testSharedGet},
		{"PurgeOnOneIsSeenByTheOther", testSharedPurge},
		{"ChangesListTheOthersPuts", testSharedChanges},
		{"ConcurrentPutsFromBothAllListedInChanges", testSharedConcurrentChanges},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := openPair(t, Config{})
			t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
			tc.fn(t, a, b)
		})
	}
}

// BenchmarkGet measures Get of a live entry (a 2 KiB answer with a 256-float vector) among
// 1000 in the store.
func BenchmarkGet(b *testing.B, s cache.Store) {
	ctx := context.Background()
	now := time.Now()
	const n = 1000
	for i := range n {
		e := NewEntry("bench", "", "k"+strconv.Itoa(i), now, time.Hour)
		e.Body = bytes.Repeat([]byte("x"), 2<<10)
		e.Vector = make([]float32, 256)
		if err := s.Put(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := s.Get(ctx, "bench", "k"+strconv.Itoa(i%n), now); err != nil || !ok {
			b.Fatalf("get: ok=%v err=%v", ok, err)
		}
	}
}

// Now is the suite's clock: the wall clock to the microsecond.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// NewEntry is an entry of workspace's namespace under key, created at now and living ttl,
// with a body naming its key and meta, and no vector.
func NewEntry(workspace, namespace, key string, now time.Time, ttl time.Duration) cache.Entry {
	return cache.Entry{
		Key:       key,
		Workspace: workspace,
		Namespace: namespace,
		Partition: workspace + "/route/model/" + namespace,
		Body:      []byte(`{"answer":"` + key + `"}`),
		Meta:      []byte(`{"usage":{"total_tokens":12},"cost":0.0003}`),
		CreatedAt: now,
		ExpiresAt: now.Add(ttl),
	}
}

// RequireEntry fails unless got holds what want does: empty and nil slices are the same, and
// times are compared as instants.
func RequireEntry(t testing.TB, want, got cache.Entry, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, want.Key, got.Key, msgAndArgs...)
	require.Equal(t, want.Workspace, got.Workspace, msgAndArgs...)
	require.Equal(t, want.Namespace, got.Namespace, msgAndArgs...)
	require.Equal(t, want.Partition, got.Partition, msgAndArgs...)
	require.True(t, bytes.Equal(want.Body, got.Body), "body: want %q, got %q %v", want.Body, got.Body, fmt.Sprint(msgAndArgs...))
	require.True(t, bytes.Equal(want.Meta, got.Meta), "meta: want %q, got %q %v", want.Meta, got.Meta, fmt.Sprint(msgAndArgs...))
	if len(want.Vector) == 0 {
		require.Empty(t, got.Vector, msgAndArgs...)
	} else {
		require.Equal(t, want.Vector, got.Vector, msgAndArgs...)
	}
	require.True(t, want.CreatedAt.Equal(got.CreatedAt), "created_at: want %s, got %s %v", want.CreatedAt, got.CreatedAt, fmt.Sprint(msgAndArgs...))
	require.True(t, want.ExpiresAt.Equal(got.ExpiresAt), "expires_at: want %s, got %s %v", want.ExpiresAt, got.ExpiresAt, fmt.Sprint(msgAndArgs...))
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func put(t testing.TB, s cache.Store, es ...cache.Entry) {
	t.Helper()
	for _, e := range es {
		require.NoError(t, s.Put(ctxT(t), e), "put %s", e.Key)
	}
}

func get(t testing.TB, s cache.Store, workspace, key string, now time.Time) (cache.Entry, bool) {
	t.Helper()
	e, ok, err := s.Get(ctxT(t), workspace, key, now)
	require.NoError(t, err, "get %s/%s", workspace, key)
	return e, ok
}

func requireHit(t testing.TB, s cache.Store, want cache.Entry, now time.Time) {
	t.Helper()
	got, ok := get(t, s, want.Workspace, want.Key, now)
	require.True(t, ok, "%s/%s must be answered", want.Workspace, want.Key)
	RequireEntry(t, want, got, want.Key)
}

func requireMiss(t testing.TB, s cache.Store, workspace, key string, now time.Time) {
	t.Helper()
	_, ok := get(t, s, workspace, key, now)
	require.False(t, ok, "%s/%s must not be answered", workspace, key)
}

func stats(t testing.TB, s cache.Store) cache.Stats {
	t.Helper()
	st, err := s.Stats(ctxT(t))
	require.NoError(t, err)
	return st
}

// settle lets a Pruner enforce its bound now rather than at its next background pass.
func settle(t testing.TB, s cache.Store) {
	t.Helper()
	if p, ok := s.(Pruner); ok {
		_, err := p.Prune(ctxT(t), time.Now())
		require.NoError(t, err)
	}
}

// changes follows s's Changes from after to the end, limit at a time, and answers the entries
// it listed, in order, with the cursor it ended at.
func changes(t testing.TB, s cache.Store, after cache.Cursor, limit int) ([]cache.Entry, cache.Cursor) {
	t.Helper()
	var all []cache.Entry
	for range 10000 {
		es, next, err := s.Changes(ctxT(t), after, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(es), limit)
		require.GreaterOrEqual(t, next, after, "the cursor never goes back")
		if next == after {
			require.Empty(t, es, "a cursor that does not move answers nothing")
			return all, next
		}
		all = append(all, es...)
		after = next
	}
	t.Fatal("Changes never reached the end")
	return nil, 0
}

func keys(es []cache.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Key
	}
	return out
}

func testRoundTrip(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	full := NewEntry("ws1", "ns", "k1", now, time.Hour)
	full.Vector = []float32{0.25, -1.5, 3.1415927, 0, float32(1e-7)}
	bare := cache.Entry{Key: "k2", Workspace: "ws1", Body: []byte(`{}`), ExpiresAt: now.Add(time.Minute)}
	put(t, s, full, bare)

	requireHit(t, s, full, now)
	got, ok := get(t, s, "ws1", "k2", now)
	require.True(t, ok)
	RequireEntry(t, bare, got)
	require.Nil(t, got.Vector, "an exact-only entry answers no vector")
	require.True(t, got.CreatedAt.IsZero(), "a zero CreatedAt stays zero")
	requireMiss(t, s, "ws1", "absent", now)
}

func testPutValidates(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	require.Error(t, s.Put(ctxT(t), NewEntry("ws", "", "", now, time.Hour)), "no key")
	require.Error(t, s.Put(ctxT(t), NewEntry("", "", "k", now, time.Hour)), "no workspace")
	require.Error(t, s.Put(ctxT(t), cache.Entry{Key: "k", Workspace: "ws", CreatedAt: now}), "no expiry")
	require.Equal(t, cache.Stats{}, stats(t, s))
}

func testReplace(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	first := NewEntry("ws", "", "k", now, time.Hour)
	first.Vector = []float32{1, 2, 3}
	put(t, s, first)
	second := NewEntry("ws", "other", "k", now.Add(time.Second), 2*time.Hour)
	second.Body = []byte(`{"answer":"refreshed, and longer than before"}`)
	second.Meta = nil
	put(t, s, second)

	requireHit(t, s, second, now.Add(time.Second))
	require.Equal(t, cache.Stats{Entries: 1, Bytes: second.Size()}, stats(t, s), "the replaced entry counts no more")
}

func testExpiry(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	e := NewEntry("ws", "", "k", now, time.Hour)
	put(t, s, e)
	requireHit(t, s, e, now)
	requireHit(t, s, e, e.ExpiresAt.Add(-time.Millisecond))
	requireMiss(t, s, "ws", "k", e.ExpiresAt)
	requireMiss(t, s, "ws", "k", e.ExpiresAt.Add(time.Hour))
}

func testPutExpired(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	put(t, s, NewEntry("ws", "", "k", now, time.Hour))
	put(t, s, NewEntry("ws", "", "k", now.Add(-time.Hour), time.Minute))
	requireMiss(t, s, "ws", "k", Now())
}

func testWorkspaceIsolation(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	a := NewEntry("ws-a", "", "k", now, time.Hour)
	put(t, s, a)
	requireMiss(t, s, "ws-b", "k", now)
	requireMiss(t, s, "", "k", now)
	requireHit(t, s, a, now)

	// The key is unique per store: another workspace's put under it replaces the entry, and
	// the first workspace is not answered the second's answer.
	b := NewEntry("ws-b", "", "k", now, time.Hour)
	put(t, s, b)
	requireMiss(t, s, "ws-a", "k", now)
	requireHit(t, s, b, now)
}

func testPurge(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	var all []cache.Entry
	for _, ws := range []string{"ws-a", "ws-b"} {
		for _, ns := range []string{"", "n1"} {
			for i := range 3 {
				e := NewEntry(ws, ns, fmt.Sprintf("%s|%s|%d", ws, ns, i), now, time.Hour)
				if i == 0 {
					e.Vector = []float32{float32(i)}
				}
				all = append(all, e)
			}
		}
	}
	put(t, s, all...)

	n, err := s.Purge(ctxT(t), "ws-a", "n1")
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	var bytes int64
	for _, e := range all {
		if e.Workspace == "ws-a" && e.Namespace == "n1" {
			requireMiss(t, s, e.Workspace, e.Key, now)
			continue
		}
		requireHit(t, s, e, now)
		bytes += e.Size()
	}
	require.Equal(t, cache.Stats{Entries: 9, Bytes: bytes}, stats(t, s))

	n, err = s.Purge(ctxT(t), "ws-a", "n1")
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to purge")
	n, err = s.Purge(ctxT(t), "ws-a", "")
	require.NoError(t, err)
	require.EqualValues(t, 3, n, "the default namespace is a namespace of its own")
	n, err = s.Purge(ctxT(t), "ws-c", "")
	require.NoError(t, err)
	require.Zero(t, n)
	require.EqualValues(t, 6, stats(t, s).Entries)

	// A purged namespace fills again.
	again := NewEntry("ws-a", "n1", "ws-a|n1|0", now, time.Hour)
	put(t, s, again)
	requireHit(t, s, again, now)
}

func testStats(t *testing.T, s cache.Store, _ Config) {
	require.Equal(t, cache.Stats{}, stats(t, s), "a new store is empty")
	now := Now()
	var want cache.Stats
	for i := range 10 {
		e := NewEntry("ws", "", "k"+strconv.Itoa(i), now, time.Hour)
		e.Body = bytes.Repeat([]byte("b"), 100*i)
		if i%2 == 0 {
			e.Vector = make([]float32, i)
		}
		put(t, s, e)
		want.Entries++
		want.Bytes += e.Size()
	}
	require.Equal(t, want, stats(t, s))
}

func testByteBound(t *testing.T, s cache.Store, cfg Config) {
	now := Now()
	const n = 200
	var size int64
	for i := range n {
		e := NewEntry("ws", "", fmt.Sprintf("k%03d", i), now.Add(time.Duration(i)*time.Millisecond), time.Hour)
		e.Body = bytes.Repeat([]byte("x"), 1024)
		e.Vector = make([]float32, 64)
		size = e.Size()
		put(t, s, e)
	}
	settle(t, s)
	st := stats(t, s)
	require.LessOrEqual(t, st.Bytes, cfg.MaxBytes)
	require.Greater(t, st.Bytes, cfg.MaxBytes-2*size, "the bound evicts only what it must")

	// What is left is the newest entries, with no gap.
	var hits []int
	for i := range n {
		if _, ok := get(t, s, "ws", fmt.Sprintf("k%03d", i), now); ok {
			hits = append(hits, i)
		}
	}
	require.EqualValues(t, st.Entries, len(hits))
	require.NotEmpty(t, hits)
	require.Equal(t, n-1, hits[len(hits)-1], "the newest entry is kept")
	require.Equal(t, n-len(hits), hits[0], "the oldest entries went first")
}

func testTooLarge(t *testing.T, s cache.Store, cfg Config) {
	now := Now()
	small := NewEntry("ws", "", "small", now, time.Hour)
	put(t, s, small, NewEntry("ws", "", "k", now, time.Hour))
	big := NewEntry("ws", "", "k", now, time.Hour)
	big.Body = bytes.Repeat([]byte("x"), int(cfg.MaxBytes))
	put(t, s, big)
	settle(t, s)
	requireMiss(t, s, "ws", "k", now)
	requireHit(t, s, small, now)
	require.Equal(t, cache.Stats{Entries: 1, Bytes: small.Size()}, stats(t, s))
}

func testChanges(t *testing.T, s cache.Store, _ Config) {
	ctx := ctxT(t)
	none, c0, err := s.Changes(ctx, 0, 10)
	require.NoError(t, err)
	require.Empty(t, none)
	require.Zero(t, c0, "an empty store stays at the start")

	now := Now()
	var want []cache.Entry
	for i := range 7 {
		e := NewEntry("ws", "", "k"+strconv.Itoa(i), now, time.Hour)
		if i != 2 && i != 5 {
			e.Vector = []float32{float32(i), 0.5}
			want = append(want, e)
		}
		put(t, s, e)
	}

	got, end := changes(t, s, 0, 2)
	require.Equal(t, keys(want), keys(got), "oldest first, exact-only entries left out")
	for i := range want {
		RequireEntry(t, want[i], got[i])
	}
	rest, again := changes(t, s, end, 10)
	require.Empty(t, rest, "nothing after the end")
	require.Equal(t, end, again)

	// Following from the middle answers what came after it only.
	first, mid, err := s.Changes(ctx, 0, 3)
	require.NoError(t, err)
	require.Equal(t, keys(want[:3]), keys(first))
	tail, _ := changes(t, s, mid, 10)
	require.Equal(t, keys(want[3:]), keys(tail))

	late := NewEntry("other-ws", "", "late", now, time.Hour)
	late.Vector = []float32{9}
	put(t, s, late)
	news, _ := changes(t, s, end, 10)
	require.Equal(t, []string{"late"}, keys(news), "every workspace's puts are listed")
	RequireEntry(t, late, news[0])

	_, _, err = s.Changes(ctx, 0, 0)
	require.NoError(t, err, "a limit of 0 answers nothing, without failing")
}

func testChangesReplaced(t *testing.T, s cache.Store, _ Config) {
	now := Now()
	for _, k := range []string{"a", "b", "c"} {
		e := NewEntry("ws", "", k, now, time.Hour)
		e.Vector = []float32{1}
		put(t, s, e)
	}
	_, end := changes(t, s, 0, 10)

	replaced := NewEntry("ws", "", "a", now.Add(time.Second), time.Hour)
	replaced.Body = []byte(`{"answer":"refreshed"}`)
	replaced.Vector = []float32{2, 3}
	put(t, s, replaced)
	news, _ := changes(t, s, end, 10)
	require.Len(t, news, 1, "the replacement is listed after the cursor")
	RequireEntry(t, replaced, news[0])

	all, _ := changes(t, s, 0, 10)
	require.Equal(t, []string{"b", "c", "a"}, keys(all), "listed once, at its new place")
	RequireEntry(t, replaced, all[2])
}

func testCancelled(t *testing.T, s cache.Store, _ Config) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	now := Now()
	require.Error(t, s.Put(ctx, NewEntry("ws", "", "k", now, time.Hour)))
	_, _, err := s.Get(ctx, "ws", "k", now)
	require.Error(t, err)
	_, err = s.Purge(ctx, "ws", "")
	require.Error(t, err)
	_, _, err = s.Changes(ctx, 0, 10)
	require.Error(t, err)
	_, err = s.Stats(ctx)
	require.Error(t, err)
}

// Writers, readers, purgers and a Changes follower at once; every answer is the one put under
// its key, and the bound holds at the end.
func testConcurrent(t *testing.T, s cache.Store, cfg Config) {
	ctx := ctxT(t)
	now := Now()
	const workers, ops, keySpace = 6, 150, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range ops {
				k := "k" + strconv.Itoa(rng.IntN(keySpace))
				ws := "ws" + strconv.Itoa(rng.IntN(2))
				var err error
				switch rng.IntN(10) {
				case 0:
					_, err = s.Purge(ctx, ws, "")
				case 1, 2, 3:
					e := NewEntry(ws, "", k, now, time.Hour)
					e.Body = bytes.Repeat([]byte(k+";"), 50+rng.IntN(500))
					e.Vector = []float32{float32(w), float32(i)}
					err = s.Put(ctx, e)
				case 4:
					_, err = s.Stats(ctx)
				default:
					var got cache.Entry
					var ok bool
					got, ok, err = s.Get(ctx, ws, k, now)
					if err == nil && ok && (got.Key != k || got.Workspace != ws || !bytes.HasPrefix(got.Body, []byte(k+";"))) {
						err = fmt.Errorf("get %s/%s answered %s/%s %.20q", ws, k, got.Workspace, got.Key, got.Body)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		var c cache.Cursor
		for {
			es, next, err := s.Changes(ctx, c, 16)
			if err != nil {
				errs <- err
				return
			}
			if next < c {
				errs <- fmt.Errorf("the cursor went back from %d to %d", c, next)
				return
			}
			for _, e := range es {
				if len(e.Vector) != 2 {
					errs <- fmt.Errorf("changes answered %s with vector %v", e.Key, e.Vector)
					return
				}
			}
			c = next
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-followed
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	settle(t, s)
	require.LessOrEqual(t, stats(t, s).Bytes, cfg.MaxBytes)
}

func testSharedGet(t *testing.T, a, b cache.Store) {
	now := Now()
	e := NewEntry("ws", "", "k", now, time.Hour)
	e.Vector = []float32{1, 2}
	put(t, a, e)
	requireHit(t, b, e, now)
	requireMiss(t, b, "other", "k", now)

	replaced := NewEntry("ws", "", "k", now, time.Hour)
	replaced.Body = []byte(`{"answer":"forced refresh"}`)
	put(t, b, replaced)
	requireHit(t, a, replaced, now)
	require.Equal(t, cache.Stats{Entries: 1, Bytes: replaced.Size()}, stats(t, a))
	require.Equal(t, stats(t, a), stats(t, b))
}

func testSharedPurge(t *testing.T, a, b cache.Store) {
	now := Now()
	put(t, a, NewEntry("ws", "ns", "k1", now, time.Hour), NewEntry("ws", "ns", "k2", now, time.Hour))
	keep := NewEntry("ws", "", "k3", now, time.Hour)
	put(t, b, keep)
	n, err := b.Purge(ctxT(t), "ws", "ns")
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	requireMiss(t, a, "ws", "k1", now)
	requireMiss(t, a, "ws", "k2", now)
	requireHit(t, a, keep, now)
}

func testSharedChanges(t *testing.T, a, b cache.Store) {
	now := Now()
	var want []string
	for i := range 6 {
		s := a
		if i%2 == 1 {
			s = b
		}
		e := NewEntry("ws", "", "k"+strconv.Itoa(i), now, time.Hour)
		e.Vector = []float32{float32(i)}
		put(t, s, e)
		want = append(want, e.Key)
	}
	fromA, endA := changes(t, a, 0, 4)
	fromB, endB := changes(t, b, 0, 4)
	require.Equal(t, want, keys(fromA))
	require.Equal(t, want, keys(fromB))
	require.Equal(t, endA, endB, "one sequence for every store on the backing store")
}

// Puts from both stores race a follower of Changes on each: every entry put must reach both
// followers, whatever order the puts commit in.
func testSharedConcurrentChanges(t *testing.T, a, b cache.Store) {
	ctx := ctxT(t)
	now := Now()
	const perWriter = 60
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w, s := range []cache.Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				e := NewEntry("ws", "", fmt.Sprintf("w%d-%d", w, i), now, time.Hour)
				e.Vector = []float32{float32(w), float32(i)}
				if err := s.Put(ctx, e); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	follow := func(s cache.Store, done <-chan struct{}) (map[string]bool, error) {
		seen := map[string]bool{}
		var c cache.Cursor
		finishing := false
		for {
			es, next, err := s.Changes(ctx, c, 7)
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				seen[e.Key] = true
			}
			c = next
			if len(es) == 0 {
				if finishing {
					return seen, nil
				}
				select {
				case <-done:
					finishing = true // one more pass after the last put
				case <-time.After(time.Millisecond):
				}
			}
		}
	}
	done := make(chan struct{})
	results := make([]map[string]bool, 2)
	var fg sync.WaitGroup
	for i, s := range []cache.Store{a, b} {
		fg.Add(1)
		go func() {
			defer fg.Done()
			seen, err := follow(s, done)
			if err != nil {
				errs <- err
			}
			results[i] = seen
		}()
	}
	wg.Wait()
	close(done)
	fg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i, seen := range results {
		var missed []string
		for w := range 4 {
			for j := range perWriter {
				if k := fmt.Sprintf("w%d-%d", w, j); !seen[k] {
					missed = append(missed, k)
				}
			}
		}
		require.Empty(t, missed, "follower %d missed puts", i)
	}
}
