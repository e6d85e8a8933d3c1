package redis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/cache/cachetest"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// redisURL is TEST_REDIS_URL, once the server answers; the test is skipped without it, or
// fails when CI is set (migrationstest.Unavailable).
func redisURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("TEST_REDIS_URL")
	if url == "" {
		migrationstest.Unavailable(t, "TEST_REDIS_URL is unset")
	}
	opts, err := goredis.ParseURL(url)
	require.NoError(t, err, "TEST_REDIS_URL")
	rdb := goredis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		migrationstest.Unavailable(t, "Redis at TEST_REDIS_URL is not reachable: %v", err)
	}
	return url
}

// prefix is a key prefix of the test's own, whose keys are deleted when the test ends: tests
// share the server, never their keys.
func prefix(t testing.TB, url string) string {
	t.Helper()
	p := "causeway:test:" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20] + ":"
	t.Cleanup(func() {
		opts, err := goredis.ParseURL(url)
		if err != nil {
			return
		}
		rdb := goredis.NewClient(opts)
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		iter := rdb.Scan(ctx, 0, p+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			if err := rdb.Del(ctx, keys...).Err(); err != nil {
				t.Logf("delete the keys under %s: %v", p, err)
			}
		}
	})
	return p
}

func open(t testing.TB, url string, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestContract(t *testing.T) {
	cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
		url := redisURL(t)
		return open(t, url, Config{Prefix: prefix(t, url), MaxBytes: cfg.MaxBytes})
	})
}

// Two clients with one prefix stand for two gateway instances.
func TestShared(t *testing.T) {
	cachetest.RunShared(t, func(t *testing.T, cfg cachetest.Config) (cache.Store, cache.Store) {
		url := redisURL(t)
		p := prefix(t, url)
		return open(t, url, Config{Prefix: p, MaxBytes: cfg.MaxBytes}), open(t, url, Config{Prefix: p, MaxBytes: cfg.MaxBytes})
	})
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	err := Config{MaxBytes: -1, PruneInterval: -time.Second}.Validate()
	require.ErrorContains(t, err, "MaxBytes")
	require.ErrorContains(t, err, "PruneInterval")
	require.NoError(t, Config{}.Validate())
}

func TestOpenRefusesABadURLWithoutQuotingIt(t *testing.T) {
	_, err := Open(context.Background(), "http://user:secret@host", Config{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret")
}

// Stores with different prefixes on one server share nothing.
func TestPrefixesAreApart(t *testing.T) {
	ctx := context.Background()
	url := redisURL(t)
	a := open(t, url, Config{Prefix: prefix(t, url)})
	b := open(t, url, Config{Prefix: prefix(t, url)})
	require.NoError(t, a.Put(ctx, cachetest.NewEntry("ws", "", "k", time.Now(), time.Hour)))
	_, ok, err := b.Get(ctx, "ws", "k", time.Now())
	require.NoError(t, err)
	require.False(t, ok)
	st, err := b.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{}, st)
}

// What Redis expired by itself leaves the bookkeeping (the bytes, the purge set, the sorted
// sets) at the next prune, or a few at a time at the next puts.
func TestExpiredEntriesLeaveTheBookkeeping(t *testing.T) {
	ctx := context.Background()
	url := redisURL(t)
	p := prefix(t, url)
	s := open(t, url, Config{Prefix: p})
	now := time.Now()
	long := cachetest.NewEntry("ws", "", "long", now, time.Hour)
	long.Vector = []float32{1}
	require.NoError(t, s.Put(ctx, long))
	for i := range 3 {
		e := cachetest.NewEntry("ws", "", fmt.Sprintf("short%d", i), now, 50*time.Millisecond)
		e.Vector = []float32{2}
		require.NoError(t, s.Put(ctx, e))
	}
	require.Eventually(t, func() bool {
		n, err := s.rdb.Exists(ctx, p+"e:short0", p+"e:short1", p+"e:short2").Result()
		return err == nil && n == 0
	}, 5*time.Second, 10*time.Millisecond, "Redis expires the hashes")
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 4, st.Entries, "not yet pruned")

	n, err := s.Prune(ctx, time.Now())
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	st, err = s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{Entries: 1, Bytes: long.Size()}, st)
	for _, set := range []string{"age", "changes", "expiry"} {
		members, err := s.rdb.ZRange(ctx, p+set, 0, -1).Result()
		require.NoError(t, err)
		require.Equal(t, []string{"long"}, members, set)
	}
	members, err := s.rdb.SMembers(ctx, p+"ns:2:ws:").Result()
	require.NoError(t, err)
	require.Equal(t, []string{"long"}, members)
}

// A purge larger than one script's batch runs batch after batch and counts them all.
func TestPurgeOfManyEntries(t *testing.T) {
	ctx := context.Background()
	url := redisURL(t)
	s := open(t, url, Config{Prefix: prefix(t, url)})
	now := time.Now()
	const n = purgeBatch*2 + 7
	for i := range n {
		require.NoError(t, s.Put(ctx, cachetest.NewEntry("ws", "ns", fmt.Sprintf("k%d", i), now, time.Hour)))
	}
	keep := cachetest.NewEntry("ws", "", "keep", now, time.Hour)
	require.NoError(t, s.Put(ctx, keep))
	got, err := s.Purge(ctx, "ws", "ns")
	require.NoError(t, err)
	require.EqualValues(t, n, got)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{Entries: 1, Bytes: keep.Size()}, st)
}

// A bound lowered on one store (or a total that drifted) is brought back by its prune.
func TestPruneEvictsDownToTheBound(t *testing.T) {
	ctx := context.Background()
	url := redisURL(t)
	p := prefix(t, url)
	big := open(t, url, Config{Prefix: p})
	now := time.Now()
	var size int64
	for i := range 10 {
		e := cachetest.NewEntry("ws", "", fmt.Sprintf("k%d", i), now, time.Hour)
		e.Body = bytes.Repeat([]byte("x"), 1000)
		size = e.Size()
		require.NoError(t, big.Put(ctx, e))
	}
	small := open(t, url, Config{Prefix: p, MaxBytes: 4 * size})
	n, err := small.Prune(ctx, now)
	require.NoError(t, err)
	require.EqualValues(t, 6, n)
	st, err := small.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cache.Stats{Entries: 4, Bytes: 4 * size}, st)
}

func BenchmarkGet(b *testing.B) {
	url := redisURL(b)
	cachetest.BenchmarkGet(b, open(b, url, Config{Prefix: prefix(b, url)}))
}
