package postgres

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/ledger"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// openShared opens one store per instance id on one schema, each on a pool of its own (one
// gateway process each).
func openShared(t *testing.T, url string, ids ...string) []*Store {
	t.Helper()
	out := make([]*Store, len(ids))
	for i, id := range ids {
		s, err := OpenShared(context.Background(), newPool(t, url), id)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		out[i] = s
	}
	return out
}

// invariant checks what the leases keep under every change: leased is the sum of the holds,
// no hold is negative, and used + leased never passes the limit (no usage beyond the worst
// case here). It answers the row's used and leased.
func invariant(t *testing.T, pool *pgxpool.Pool, budget, period string, limit float64) (used, leased float64) {
	t.Helper()
	ctx := context.Background()
	var held float64
	var negative int
	// One statement, so one snapshot: the ledger's background work may be changing both.
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(h.held), 0), count(*) FILTER (WHERE h.held < 0),
			(SELECT used FROM usage_ledger WHERE budget = $1 AND period = $2),
			(SELECT leased FROM usage_ledger WHERE budget = $1 AND period = $2)
		FROM usage_leases h WHERE h.budget = $1 AND h.period = $2`, budget, period).Scan(&held, &negative, &used, &leased))
	require.Zero(t, negative, "no hold is negative")
	require.InDelta(t, held, leased, 1e-9, "leased is the sum of the holds")
	require.LessOrEqual(t, used+leased, limit+1e-9, "used + leased <= limit")
	return used, leased
}

func TestTakeNeverLeasesPastTheLimit(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	stores := openShared(t, url, "a", "b", "c")
	pool := newPool(t, url)
	const limit = 100.0
	ctx := context.Background()

	var granted, returned sync.Map // instance -> *float64 guarded by mu
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range stores {
		for range 8 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
				for range 25 {
					g, err := s.Take(ctx, []ledger.Ask{{Budget: "api_key:k", Period: "p", Limit: limit, Need: float64(1 + r.IntN(3)), Share: 0.25}})
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					v, _ := granted.LoadOrStore(s.instance, new(float64))
					*v.(*float64) += g[0].Granted
					mu.Unlock()
					if g[0].Granted > 0 && r.IntN(3) == 0 {
						back := g[0].Granted / 2
						if assert.NoError(t, s.Return(ctx, []ledger.Row{{Budget: "api_key:k", Period: "p", Used: back}})) {
							mu.Lock()
							v, _ := returned.LoadOrStore(s.instance, new(float64))
							*v.(*float64) += back
							mu.Unlock()
						}
					}
				}
			})
		}
	}
	wg.Wait()
	_, leased := invariant(t, pool, "api_key:k", "p", limit)
	var total float64
	for _, s := range stores {
		g, _ := granted.Load(s.instance)
		r, ok := returned.Load(s.instance)
		net := *g.(*float64)
		if ok {
			net -= *r.(*float64)
		}
		var held float64
		_ = pool.QueryRow(ctx, `SELECT coalesce(sum(held), 0) FROM usage_leases WHERE instance = $1`, s.instance).Scan(&held)
		require.InDelta(t, net, held, 1e-9, "instance %s holds what it was granted less what it returned", s.instance)
		total += net
	}
	require.InDelta(t, limit, leased, 1e-9, "240 takes of 1 to 3 lease the whole limit, and no more")
	require.InDelta(t, limit, total, 1e-9)
}

func TestGrantShrinksAsTheLimitNears(t *testing.T) {
	s := openShared(t, migrationstest.PostgresURL(t), "a")[0]
	ctx := context.Background()
	var sizes []float64
	for range 6 {
		g, err := s.Take(ctx, []ledger.Ask{{Budget: "b", Period: "p", Limit: 64, Share: 0.5}})
		require.NoError(t, err)
		sizes = append(sizes, g[0].Granted)
		require.False(t, g[0].Short, "a top-up (no need) is never short")
	}
	require.Equal(t, []float64{32, 16, 8, 4, 2, 1}, sizes, "half of what is left each time")

	g, err := s.Take(ctx, []ledger.Ask{{Budget: "b", Period: "p", Limit: 64, Need: 3, Share: 0.5}})
	require.NoError(t, err)
	require.Equal(t, ledger.Grant{Granted: 1, Used: 0, Leased: 64, Short: true}, g[0],
		"short of the need: what is left is taken, and the take is short")
}

func TestSpendingMovesTheLeaseToUsage(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	s := openShared(t, url, "a")[0]
	pool := newPool(t, url)
	ctx := context.Background()
	_, err := s.Take(ctx, []ledger.Ask{{Budget: "b", Period: "p", Limit: 10, Need: 4}})
	require.NoError(t, err)
	require.NoError(t, s.Add(ctx, "batch-1", []ledger.Row{{Budget: "b", Period: "p", Used: 3}}))
	used, leased := invariant(t, pool, "b", "p", 10)
	require.Equal(t, [2]float64{3, 1}, [2]float64{used, leased})

	// Spending past the lease (usage beyond the worst case) empties it, and no more.
	require.NoError(t, s.Add(ctx, "batch-2", []ledger.Row{{Budget: "b", Period: "p", Used: 2}}))
	used, leased = invariant(t, pool, "b", "p", 10)
	require.Equal(t, [2]float64{5, 0}, [2]float64{used, leased})

	// A plain store (not shared) adds usage without touching leases.
	plain := open(t, pool)
	require.NoError(t, plain.Add(ctx, "batch-3", []ledger.Row{{Budget: "b", Period: "p", Used: 1}}))
	used, _ = invariant(t, pool, "b", "p", 10)
	require.Equal(t, 6.0, used)
}

func TestRestartUnderTheSameIDReclaimsItsLeases(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	pool := newPool(t, url)
	ctx := context.Background()
	first := openShared(t, url, "a", "b")
	_, err := first[0].Take(ctx, []ledger.Ask{{Budget: "b", Period: "p", Limit: 10, Need: 4}})
	require.NoError(t, err)
	_, err = first[1].Take(ctx, []ledger.Ask{{Budget: "b", Period: "p", Limit: 10, Need: 2}})
	require.NoError(t, err)
	_, leased := invariant(t, pool, "b", "p", 10)
	require.Equal(t, 6.0, leased)

	// "a" dies without returning anything, and starts again.
	openShared(t, url, "a")
	_, leased = invariant(t, pool, "b", "p", 10)
	require.Equal(t, 2.0, leased, "what a held is back; what b holds is b's")

	got, err := first[1].Reclaim(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, 2.0, got)
	_, leased = invariant(t, pool, "b", "p", 10)
	require.Zero(t, leased)
}

// newLedger is one instance's Ledger on a shared store, running until the test ends.
func newLedger(t *testing.T, s *Store, opts ledger.Options) *ledger.Ledger {
	t.Helper()
	opts.Leases = s
	if opts.FlushEvery == 0 {
		opts.FlushEvery = 20 * time.Millisecond
	}
	l := ledger.New(s, opts)
	require.NoError(t, l.Load(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() {
		require.NoError(t, l.Close(context.Background()))
		cancel()
		<-done
	})
	return l
}

// serve sends each ledger its share of n requests of 1 token against a budget of limit,
// concurrently, each settling what it reserved, and answers how many were admitted.
func serve(t *testing.T, ledgers []*ledger.Ledger, shares []int, budget ledger.Budget) int {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i, l := range ledgers {
		for range shares[i] {
			wg.Go(func() {
				r, ref := l.Reserve([]ledger.Budget{budget}, ledger.Amount{Tokens: 1})
				if ref != nil {
					assert.Nil(t, ref.Err, "refused by the store: %v", ref)
					return
				}
				admitted.Add(1)
				time.Sleep(time.Millisecond)
				r.Settle(ledger.Amount{Tokens: 1})
			})
		}
	}
	wg.Wait()
	return int(admitted.Load())
}

func TestLedgersOnThreeInstancesAdmitExactlyTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shares []int
	}{
		{"spread evenly", []int{30, 30, 30}},
		{"all on one", []int{90, 0, 0}},
		{"skewed 80/10/10", []int{72, 9, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := migrationstest.PostgresURL(t)
			stores := openShared(t, url, "a", "b", "c")
			ledgers := make([]*ledger.Ledger, len(stores))
			for i, s := range stores {
				ledgers[i] = newLedger(t, s, ledger.Options{})
			}
			budget := ledger.Budget{Kind: ledger.KindAPIKey, ID: "k", Period: "p", Type: ledger.TypeTokens, Limit: 30}
			require.Equal(t, 30, serve(t, ledgers, tc.shares, budget), "exactly the limit is admitted")
			for _, l := range ledgers {
				require.NoError(t, l.Flush(context.Background()))
			}
			used, _ := invariant(t, newPool(t, url), budget.Name(), "p", 30)
			require.Equal(t, 30.0, used)
		})
	}
}

func TestARequestWaitsForTheOthersToReturnTheirLeases(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	stores := openShared(t, url, "a", "b")
	// a takes the whole budget at its first request (a share of 1), and keeps it: it is never
	// idle for long enough to return it by itself.
	a := newLedger(t, stores[0], ledger.Options{LeaseShare: 1, LeaseIdle: time.Hour})
	b := newLedger(t, stores[1], ledger.Options{LeaseIdle: time.Hour})
	budget := ledger.Budget{Kind: ledger.KindWorkspace, ID: "w", Sub: "cost", Period: "p", Type: ledger.TypeCost, Limit: 1}
	r, ref := a.Reserve([]ledger.Budget{budget}, ledger.Amount{Cost: 0.25})
	require.Nil(t, ref)
	r.Settle(ledger.Amount{Cost: 0.25})

	start := time.Now()
	r, ref = b.Reserve([]ledger.Budget{budget}, ledger.Amount{Cost: 0.5})
	require.Nil(t, ref, "b is admitted once a returns what it holds free")
	r.Settle(ledger.Amount{Cost: 0.5})
	t.Logf("b waited %s for a's lease", time.Since(start).Round(time.Millisecond))

	// 0.25 is left; a request of 0.5 is refused, naming the budget and the figures.
	_, ref = a.Reserve([]ledger.Budget{budget}, ledger.Amount{Cost: 0.5})
	require.NotNil(t, ref)
	require.Nil(t, ref.Err)
	require.False(t, ref.Exhausted)
	require.Contains(t, ref.Error(), "budget workspace:w:cost (cost, USD) cannot take this request: used 0.75")
}

func TestAnIdleLeaseIsReturned(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	pool := newPool(t, url)
	s := openShared(t, url, "a")[0]
	l := newLedger(t, s, ledger.Options{LeaseIdle: 100 * time.Millisecond})
	budget := ledger.Budget{Kind: ledger.KindAPIKey, ID: "k", Period: "p", Type: ledger.TypeTokens, Limit: 1000}
	r, ref := l.Reserve([]ledger.Budget{budget}, ledger.Amount{Tokens: 10})
	require.Nil(t, ref)
	r.Settle(ledger.Amount{Tokens: 7})
	_, leased := invariant(t, pool, budget.Name(), "p", 1000)
	require.Greater(t, leased, 10.0, "the first take asks for a share of what is left")
	require.Eventually(t, func() bool {
		used, leased := invariant(t, pool, budget.Name(), "p", 1000)
		return used == 7 && leased == 0
	}, 5*time.Second, 20*time.Millisecond, "the lease goes back once idle, and the usage is written")
}

func TestAStoreThatFailsRefusesWhatTheLeaseCannotTake(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	s, err := OpenShared(context.Background(), pool, "a")
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(); pool.Close() })
	l := ledger.New(s, ledger.Options{Leases: s, LeaseShare: 0.1, LeaseWait: 200 * time.Millisecond})
	budget := ledger.Budget{Kind: ledger.KindAPIKey, ID: "k", Period: "p", Type: ledger.TypeTokens, Limit: 100}
	r, ref := l.Reserve([]ledger.Budget{budget}, ledger.Amount{Tokens: 1})
	require.Nil(t, ref)
	r.Settle(ledger.Amount{Tokens: 1})

	pool.Close() // the database is gone for this instance
	admitted := 0
	for range 20 {
		r, ref := l.Reserve([]ledger.Budget{budget}, ledger.Amount{Tokens: 1})
		if ref != nil {
			require.Error(t, ref.Err)
			require.Contains(t, ref.Error(), "no allowance could be taken from the shared ledger")
			break
		}
		admitted++
		r.Settle(ledger.Amount{Tokens: 1})
	}
	require.Equal(t, 9, admitted, "what the lease held (10.9 of which 1 spent) is served, then refused")
}

// A policy's entities charged on one instance are listed, with their usage, by the others'
// Counters once the charge is written: the admin API of any instance shows every entity.
func TestCountersReadTheSharedStore(t *testing.T) {
	url := migrationstest.PostgresURL(t)
	stores := openShared(t, url, "a", "b")
	a, b := newLedger(t, stores[0], ledger.Options{}), newLedger(t, stores[1], ledger.Options{})
	ann := ledger.Budget{Kind: ledger.KindPolicy, ID: "pol", Sub: "metadata._user:ann", Period: "p", Type: ledger.TypeTokens, Limit: 1000}
	bob := ledger.Budget{Kind: ledger.KindPolicy, ID: "pol", Sub: "metadata._user:bob", Period: "p", Type: ledger.TypeTokens, Limit: 1000}
	other := ledger.Budget{Kind: ledger.KindPolicy, ID: "pol2", Sub: "metadata._user:ann", Period: "p", Type: ledger.TypeTokens, Limit: 1000}
	for _, c := range []struct {
		l      *ledger.Ledger
		budget ledger.Budget
		tokens float64
	}{{a, ann, 40}, {a, other, 5}, {b, bob, 7}} {
		r, ref := c.l.Reserve([]ledger.Budget{c.budget}, ledger.Amount{Tokens: c.tokens})
		require.Nil(t, ref)
		r.Settle(ledger.Amount{Tokens: c.tokens})
	}
	require.NoError(t, a.Flush(context.Background()))
	require.NoError(t, b.Flush(context.Background()))
	want := []ledger.Counter{{Sub: "metadata._user:ann", Period: "p", Used: 40}, {Sub: "metadata._user:bob", Period: "p", Used: 7}}
	assert.Equal(t, want, b.Counters(ledger.KindPolicy, "pol"), "B lists A's entity")
	assert.Equal(t, want, a.Counters(ledger.KindPolicy, "pol"), "and A lists B's")
}
