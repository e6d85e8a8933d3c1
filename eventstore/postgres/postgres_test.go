package postgres_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/eventstoretest"
	"github.com/causeway/causeway/eventstore/postgres"
	"github.com/causeway/causeway/migrations/migrationstest"
)

func openPostgres(t *testing.T) eventstore.Store {
	s, err := postgres.Open(context.Background(), migrationstest.PostgresURL(t))
	require.NoError(t, err)
	return s
}

func TestPostgresContract(t *testing.T) {
	eventstoretest.Run(t, openPostgres)
}

func TestPostgresBackendSpecific(t *testing.T) {
	eventstoretest.RunSQL(t, openPostgres)
}

// Two stores on one schema stand for two serving processes: the reader is woken by the
// writer's NOTIFY, not by an append of its own.
func TestPostgresSubscriptionSeesAnotherProcess(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	ctx := context.Background()
	writer, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	defer writer.Close()
	reader, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	defer reader.Close()
	eventstoretest.RequireCrossStoreDelivery(t, writer, reader)
}

// The gap test: 32 writers commit in random order after random delays, and some of their
// appends roll back just before COMMIT. A subscriber that runs throughout must see every
// committed event exactly once, in position order, and nothing that rolled back.
func TestPostgresNoGapsUnderConcurrentWritersAndRollbacks(t *testing.T) {
	const (
		writers   = 32
		committed = 10_000
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	url := migrationstest.PostgresURL(t)
	s, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()

	errRollback := errors.New("injected rollback")
	postgres.SetBeforeCommit(s, func(ctx context.Context) error {
		r := rand.IntN(100)
		if r < 10 {
			return errRollback // 10% of appends roll back after writing their rows
		}
		if r < 40 {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		}
		return nil
	})

	sub, err := s.Subscribe(ctx, eventstore.Start)
	require.NoError(t, err)
	defer sub.Close()

	var (
		mu         sync.Mutex
		wrote      = map[uuid.UUID]bool{}
		rolledBack = map[uuid.UUID]bool{}
		remaining  atomic.Int64
		wg         sync.WaitGroup
	)
	remaining.Store(committed)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for remaining.Load() > 0 {
				n := 1 + rand.IntN(3)
				evs := eventstoretest.Events("Soak", n)
				_, err := s.Append(ctx, eventstoretest.Stream("soak"), eventstore.Any, evs...)
				mu.Lock()
				for _, e := range evs {
					if err == nil {
						wrote[e.ID] = true
					} else {
						rolledBack[e.ID] = true
					}
				}
				mu.Unlock()
				if err == nil {
					remaining.Add(-int64(n))
				} else if !errors.Is(err, eventstore.ErrUnavailable) {
					t.Errorf("writer %d: unexpected error %v", w, err)
					return
				}
			}
		}(w)
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	seen := map[uuid.UUID]bool{}
	var last eventstore.Position
	lastEvent := time.Now()
	for {
		rctx, rcancel := context.WithTimeout(ctx, 250*time.Millisecond)
		ev, err := sub.Recv(rctx)
		rcancel()
		if errors.Is(err, context.DeadlineExceeded) {
			mu.Lock()
			caughtUp := isClosed(writersDone) && len(seen) == len(wrote)
			committedSoFar := len(wrote)
			mu.Unlock()
			if caughtUp {
				break
			}
			require.Less(t, time.Since(lastEvent), 10*time.Second,
				"subscriber stalled after %d of %d committed events", len(seen), committedSoFar)
			continue
		}
		require.NoError(t, err)
		lastEvent = time.Now()
		require.Equal(t, last+1, ev.Position, "positions are dense and in order: no gap, no repeat")
		last = ev.Position
		require.False(t, seen[ev.ID], "event %s delivered twice", ev.ID)
		seen[ev.ID] = true
	}

	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(wrote), committed)
	assert.NotEmpty(t, rolledBack, "the test injected rollbacks")
	for id := range wrote {
		require.True(t, seen[id], "committed event %s was never delivered", id)
	}
	for id := range rolledBack {
		require.False(t, seen[id], "rolled-back event %s was delivered", id)
	}
	t.Logf("%d committed events delivered once each, in order; %d events rolled back", len(wrote), len(rolledBack))
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
