package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cluster"
	"github.com/causeway/causeway/migrations/migrationstest"
)

func openRegistry(t *testing.T) (*Registry, *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), migrationstest.PostgresURL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	r, err := Open(context.Background(), pool)
	require.NoError(t, err)
	return r, pool
}

func TestBeatListStaleForget(t *testing.T) {
	r, pool := openRegistry(t)
	ctx := context.Background()
	start := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	joined, err := r.Beat(ctx, cluster.Instance{ID: "b", Version: "v1", StartedAt: start, Applied: 7})
	require.NoError(t, err)
	require.True(t, joined, "a first beat joins")
	joined, err = r.Beat(ctx, cluster.Instance{ID: "b", Version: "v1", StartedAt: start, Applied: 9})
	require.NoError(t, err)
	require.False(t, joined)
	_, err = r.Beat(ctx, cluster.Instance{ID: "a", Version: "v2", StartedAt: start, Applied: 12})
	require.NoError(t, err)

	list, err := r.List(ctx, time.Minute)
	require.NoError(t, err)
	list = cluster.Lag(list)
	require.Len(t, list, 2)
	require.Equal(t, "a", list[0].ID)
	require.Equal(t, uint64(12), list[0].Applied)
	require.Zero(t, list[0].LagEvents)
	require.Equal(t, uint64(3), list[1].LagEvents, "b is 3 events behind a")
	require.Equal(t, start, list[1].StartedAt)

	// b's heartbeat stops: it is no longer listed, and is stale.
	_, err = pool.Exec(ctx, `UPDATE gateway_instances SET heartbeat_at = now() - interval '1 minute' WHERE id = 'b'`)
	require.NoError(t, err)
	list, err = r.List(ctx, 5*time.Second)
	require.NoError(t, err)
	require.Len(t, list, 1)
	stale, err := r.Stale(ctx, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, stale)
	require.NoError(t, r.Forget(ctx, "b"))
	joined, err = r.Beat(ctx, cluster.Instance{ID: "b", Version: "v1", StartedAt: start, Applied: 12})
	require.NoError(t, err)
	require.True(t, joined, "a forgotten instance joins again")
}

func TestWaitAppliedNamesTheInstancesBehind(t *testing.T) {
	r, _ := openRegistry(t)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		_, err := r.Beat(ctx, cluster.Instance{ID: id, Version: "v", StartedAt: time.Now(), Applied: 5})
		require.NoError(t, err)
	}
	require.NoError(t, cluster.WaitApplied(ctx, r, 5), "every instance has applied 5")

	// a and b move on within the wait; c does not.
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = r.Beat(ctx, cluster.Instance{ID: "a", Version: "v", StartedAt: time.Now(), Applied: 6})
		_, _ = r.Beat(ctx, cluster.Instance{ID: "b", Version: "v", StartedAt: time.Now(), Applied: 8})
	}()
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := cluster.WaitApplied(wctx, r, 6)
	var behind *cluster.BehindError
	require.True(t, errors.As(err, &behind), "%v", err)
	require.Len(t, behind.Behind, 1)
	require.Equal(t, "c", behind.Behind[0].ID)
	require.Contains(t, err.Error(), "still behind: c (at 5)")

	_, err = r.Beat(ctx, cluster.Instance{ID: "c", Version: "v", StartedAt: time.Now(), Applied: 6})
	require.NoError(t, err)
	require.NoError(t, cluster.WaitApplied(ctx, r, 6))
}

// A heartbeat reaps a stopped instance once: its leases are reclaimed and it is forgotten;
// and an instance forgotten while alive learns that it lost its leases.
func TestHeartbeatReapsStoppedInstancesAndTellsTheLost(t *testing.T) {
	r, pool := openRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := r.Beat(ctx, cluster.Instance{ID: "gone", Version: "v", StartedAt: time.Now()})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE gateway_instances SET heartbeat_at = now() - interval '1 hour' WHERE id = 'gone'`)
	require.NoError(t, err)

	var mu sync.Mutex
	var reclaimed []string
	lost := make(chan struct{}, 1)
	var pos uint64 = 3
	done := make(chan struct{})
	go func() {
		defer close(done)
		cluster.Heartbeat(ctx, r, cluster.Member{
			Self:    cluster.Instance{ID: "me", Version: "v", StartedAt: time.Now()},
			Applied: func() uint64 { mu.Lock(); defer mu.Unlock(); return pos },
			Reclaim: func(_ context.Context, id string) error {
				mu.Lock()
				reclaimed = append(reclaimed, id)
				mu.Unlock()
				return nil
			},
			Lost: func() { lost <- struct{}{} },
		})
	}()
	require.Eventually(t, func() bool {
		list, err := r.List(ctx, time.Minute)
		return err == nil && len(list) == 1 && list[0].ID == "me" && list[0].Applied == 3
	}, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(reclaimed) == 1 }, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	require.Equal(t, []string{"gone"}, reclaimed)
	pos = 4
	mu.Unlock()
	require.Eventually(t, func() bool {
		list, err := r.List(ctx, time.Minute)
		return err == nil && len(list) == 1 && list[0].Applied == 4
	}, time.Second, 5*time.Millisecond, "a new position is recorded at once")

	require.NoError(t, r.Forget(ctx, "me")) // taken for stopped by another
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("the instance was not told it lost its leases")
	}
	cancel()
	<-done
	list, err := r.List(context.Background(), time.Minute)
	require.NoError(t, err)
	require.Empty(t, list, "a stopping instance forgets itself")
}

// A claim is held by one instance at a time: another is refused until it lapses or is
// released; its holder renews it; of many claiming at once, exactly one wins.
func TestClaims(t *testing.T) {
	r, pool := openRegistry(t)
	ctx := context.Background()
	ok, err := r.Claim(ctx, "export:1", "a", time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "a free item is taken")
	ok, err = r.Claim(ctx, "export:1", "b", time.Minute)
	require.NoError(t, err)
	require.False(t, ok, "another instance is refused while the claim lasts")
	ok, err = r.Claim(ctx, "export:1", "a", time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "the holder renews")

	_, err = pool.Exec(ctx, `UPDATE work_claims SET expires_at = now() - interval '1 second' WHERE item = 'export:1'`)
	require.NoError(t, err)
	ok, err = r.Claim(ctx, "export:1", "b", time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "a lapsed claim (its holder died) is taken over")

	require.NoError(t, r.Release(ctx, "export:1", "a"), "releasing another's claim does nothing")
	ok, err = r.Claim(ctx, "export:1", "c", time.Minute)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, r.Release(ctx, "export:1", "b"))
	ok, err = r.Claim(ctx, "export:1", "c", time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "a released item is free")

	var wins sync.Map
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			holder := string(rune('A' + i))
			if ok, err := r.Claim(ctx, "export:race", holder, time.Minute); err == nil && ok {
				wins.Store(holder, true)
			}
		})
	}
	wg.Wait()
	n := 0
	wins.Range(func(any, any) bool { n++; return true })
	require.Equal(t, 1, n, "one of twenty claiming at once wins")
}
