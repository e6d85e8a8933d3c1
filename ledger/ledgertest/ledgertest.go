// Package ledgertest is the contract suite every ledger.Store backend is held to: Run(t, open)
// and RunShared(t, openPair), called from each backend's tests. It imports only the ledger
// contract, testify and the standard library (and uuid for batch ids).
//
// Every test gets a store of its own from open and expects it to start empty.
package ledgertest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/ledger"
)

// OpenFunc returns an empty store for one test; the suite closes it.
type OpenFunc func(t *testing.T) ledger.Store

// OpenPairFunc returns two stores on one empty database, standing for two processes; the
// suite closes them.
type OpenPairFunc func(t *testing.T) (ledger.Store, ledger.Store)

// Run runs the contract against the backend that open returns.
func Run(t *testing.T, open OpenFunc) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ledger.Store)
	}{
		{"LoadAddRoundTrip", testRoundTrip},
		{"BatchIDIsAppliedOnce", testBatchIDIdempotent},
		{"RowsRepeatedInABatchAllCount", testRepeatedRows},
		{"EmptyBatch", testEmptyBatch},
		{"CancelledAddAppliesNothing", testCancelledAdd},
		{"ConcurrentAddsSumExactly", testConcurrentAdds},
		{"LedgerRestartLosesNothing", testLedgerRestart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

// RunShared runs the tests of two stores on one database: what each process adds is summed
// exactly, and a batch id is applied once whichever process sends it.
func RunShared(t *testing.T, openPair OpenPairFunc) {
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b ledger.Store)
	}{
		{"ConcurrentAddsFromBothSumExactly", testSharedConcurrentAdds},
		{"BatchIDIsAppliedOnceAcrossStores", testSharedBatchID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := openPair(t)
			t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
			tc.fn(t, a, b)
		})
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// load returns the store's rows as a map from "budget@period" to used.
func load(t *testing.T, s ledger.Store) map[string]float64 {
	t.Helper()
	rows, err := s.Load(ctxT(t))
	require.NoError(t, err)
	out := map[string]float64{}
	for _, r := range rows {
		k := r.Budget + "@" + r.Period
		_, dup := out[k]
		require.False(t, dup, "Load returned %s twice", k)
		out[k] = r.Used
	}
	return out
}

func testRoundTrip(t *testing.T, s ledger.Store) {
	ctx := ctxT(t)
	require.Empty(t, load(t, s))

	require.NoError(t, s.Add(ctx, uuid.NewString(), []ledger.Row{
		{Budget: "api_key:k1", Period: "2026-01", Used: 0.125},
		{Budget: "api_key:k1", Period: "2026-02", Used: 2},
		{Budget: "usage_limit_policy:p1:metadata._user:ann,api_key:k1", Period: "p", Used: 1500},
	}))
	require.Equal(t, map[string]float64{
		"api_key:k1@2026-01": 0.125,
		"api_key:k1@2026-02": 2,
		"usage_limit_policy:p1:metadata._user:ann,api_key:k1@p": 1500,
	}, load(t, s))

	require.NoError(t, s.Add(ctx, uuid.NewString(), []ledger.Row{
		{Budget: "api_key:k1", Period: "2026-01", Used: 0.375},
		{Budget: "workspace:w1:tokens", Period: "2026-01", Used: 10},
	}))
	require.Equal(t, map[string]float64{
		"api_key:k1@2026-01": 0.5,
		"api_key:k1@2026-02": 2,
		"usage_limit_policy:p1:metadata._user:ann,api_key:k1@p": 1500,
		"workspace:w1:tokens@2026-01":                           10,
	}, load(t, s))

	// Values that are not exact in binary still add up to within rounding.
	for range 10 {
		require.NoError(t, s.Add(ctx, uuid.NewString(), []ledger.Row{{Budget: "provider:v1", Period: "p", Used: 0.1}}))
	}
	require.InDelta(t, 1.0, load(t, s)["provider:v1@p"], 1e-12)
}

func testBatchIDIdempotent(t *testing.T, s ledger.Store) {
	ctx := ctxT(t)
	id := uuid.NewString()
	rows := []ledger.Row{{Budget: "api_key:k1", Period: "p", Used: 3}, {Budget: "workspace:w:cost", Period: "p", Used: 1}}
	require.NoError(t, s.Add(ctx, id, rows))
	require.NoError(t, s.Add(ctx, id, rows), "a retried batch is no error")
	require.NoError(t, s.Add(ctx, id, []ledger.Row{{Budget: "api_key:k1", Period: "p", Used: 100}}),
		"an applied id applies nothing, whatever it carries")
	require.Equal(t, map[string]float64{"api_key:k1@p": 3, "workspace:w:cost@p": 1}, load(t, s))

	require.NoError(t, s.Add(ctx, uuid.NewString(), rows))
	require.Equal(t, map[string]float64{"api_key:k1@p": 6, "workspace:w:cost@p": 2}, load(t, s))
}

func testRepeatedRows(t *testing.T, s ledger.Store) {
	require.NoError(t, s.Add(ctxT(t), uuid.NewString(), []ledger.Row{
		{Budget: "api_key:k1", Period: "p", Used: 1},
		{Budget: "api_key:k2", Period: "p", Used: 5},
		{Budget: "api_key:k1", Period: "p", Used: 2},
	}))
	require.Equal(t, map[string]float64{"api_key:k1@p": 3, "api_key:k2@p": 5}, load(t, s))
}

func testEmptyBatch(t *testing.T, s ledger.Store) {
	require.NoError(t, s.Add(ctxT(t), uuid.NewString(), nil))
	require.Empty(t, load(t, s))
}

func testCancelledAdd(t *testing.T, s ledger.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	id := uuid.NewString()
	rows := []ledger.Row{{Budget: "api_key:k1", Period: "p", Used: 4}}
	require.Error(t, s.Add(ctx, id, rows))
	require.Empty(t, load(t, s))
	require.NoError(t, s.Add(ctxT(t), id, rows), "the same batch, retried, is applied")
	require.Equal(t, map[string]float64{"api_key:k1@p": 4}, load(t, s))
}

// addMany sends n batches from each of writers goroutines, each adding 1, 0.5 and 0.25 (exact
// in binary) to three rows, in an order that varies, so that row locks are taken in every order.
func addMany(t *testing.T, stores []ledger.Store, writers, n int) {
	t.Helper()
	ctx := ctxT(t)
	rows := []ledger.Row{
		{Budget: "api_key:k1", Period: "p", Used: 1},
		{Budget: "workspace:w:cost", Period: "p", Used: 0.5},
		{Budget: "usage_limit_policy:pol:api_key:k1", Period: "p", Used: 0.25},
	}
	errs := make(chan error, writers*n)
	var wg sync.WaitGroup
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range n {
				batch := make([]ledger.Row, len(rows))
				for j := range rows {
					batch[j] = rows[(j+w+i)%len(rows)]
				}
				if (w+i)%2 == 1 {
					sort.Slice(batch, func(a, b int) bool { return batch[a].Budget > batch[b].Budget })
				}
				if err := s.Add(ctx, uuid.NewString(), batch); err != nil {
					errs <- fmt.Errorf("writer %d batch %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func testConcurrentAdds(t *testing.T, s ledger.Store) {
	const writers, n = 16, 25
	addMany(t, []ledger.Store{s}, writers, n)
	require.Equal(t, map[string]float64{
		"api_key:k1@p":                        writers * n,
		"workspace:w:cost@p":                  writers * n * 0.5,
		"usage_limit_policy:pol:api_key:k1@p": writers * n * 0.25,
	}, load(t, s))
}

// A ledger that stops cleanly and a new one that loads the store: nothing charged is lost.
func testLedgerRestart(t *testing.T, s ledger.Store) {
	ctx := ctxT(t)
	key := ledger.Budget{Kind: ledger.KindAPIKey, ID: "k1", Period: "p", Type: ledger.TypeCost, Limit: 10}
	pol := ledger.Budget{Kind: ledger.KindPolicy, ID: "pol", Sub: "api_key:k1", Period: "p", Type: ledger.TypeTokens, Limit: 1e6}
	l := ledger.New(s, ledger.Options{FlushEvery: 5 * time.Millisecond})
	require.NoError(t, l.Load(ctx))
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	for i := range 40 {
		r, ref := l.Reserve([]ledger.Budget{key, pol}, ledger.Amount{Cost: 0.25, Tokens: 1000})
		require.Nil(t, ref)
		r.Settle(ledger.Amount{Cost: 0.125, Tokens: 100})
		if i%10 == 0 {
			time.Sleep(10 * time.Millisecond) // let Run flush some batches of its own
		}
	}
	require.NoError(t, l.Close(ctx))
	require.NoError(t, <-done)

	l = ledger.New(s, ledger.Options{})
	require.NoError(t, l.Load(ctx))
	require.Equal(t, 5.0, l.Used(key))
	require.Equal(t, 4000.0, l.Used(pol))
	require.Equal(t, []ledger.Counter{{Sub: "api_key:k1", Period: "p", Used: 4000}}, l.Counters(ledger.KindPolicy, "pol"))
}

func testSharedConcurrentAdds(t *testing.T, a, b ledger.Store) {
	const writers, n = 16, 25
	addMany(t, []ledger.Store{a, b}, writers, n)
	want := map[string]float64{
		"api_key:k1@p":                        writers * n,
		"workspace:w:cost@p":                  writers * n * 0.5,
		"usage_limit_policy:pol:api_key:k1@p": writers * n * 0.25,
	}
	require.Equal(t, want, load(t, a))
	require.Equal(t, want, load(t, b))
}

// The same batches sent through both stores at once (a retry landing on another connection)
// are applied once each.
func testSharedBatchID(t *testing.T, a, b ledger.Store) {
	ctx := ctxT(t)
	const batches = 50
	ids := make([]string, batches)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*batches)
	for _, s := range []ledger.Store{a, b} {
		wg.Go(func() {
			for _, id := range ids {
				if err := s.Add(ctx, id, []ledger.Row{{Budget: "api_key:k1", Period: "p", Used: 1}}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, map[string]float64{"api_key:k1@p": batches}, load(t, a))
}
