package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/internal/syncbuf"
	"github.com/causeway/causeway/ledger"
)

// memStore is a Store in memory. fail makes the next Adds fail; ambiguous makes a failing Add
// apply its batch first, as when the commit got through but its answer was lost.
type memStore struct {
	mu        sync.Mutex
	rows      map[[2]string]float64
	applied   map[string]bool
	calls     []addCall
	fail      int
	ambiguous bool
}

type addCall struct {
	id   string
	rows []ledger.Row
}

var _ ledger.Store = (*memStore)(nil)

func newMemStore(rows ...ledger.Row) *memStore {
	s := &memStore{rows: map[[2]string]float64{}, applied: map[string]bool{}}
	for _, r := range rows {
		s.rows[[2]string{r.Budget, r.Period}] = r.Used
	}
	return s
}

func (s *memStore) Load(context.Context) ([]ledger.Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ledger.Row
	for k, v := range s.rows {
		out = append(out, ledger.Row{Budget: k[0], Period: k[1], Used: v})
	}
	return out, nil
}

func (s *memStore) Add(_ context.Context, id string, deltas []ledger.Row) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, addCall{id, append([]ledger.Row(nil), deltas...)})
	if s.fail > 0 {
		s.fail--
		if s.ambiguous {
			s.apply(id, deltas)
		}
		return errors.New("store down")
	}
	s.apply(id, deltas)
	return nil
}

func (s *memStore) apply(id string, deltas []ledger.Row) {
	if s.applied[id] {
		return
	}
	s.applied[id] = true
	for _, d := range deltas {
		s.rows[[2]string{d.Budget, d.Period}] += d.Used
	}
}

func (s *memStore) Close() error { return nil }

func (s *memStore) used(name, period string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows[[2]string{name, period}]
}

func (s *memStore) addCalls() []addCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]addCall(nil), s.calls...)
}

func (s *memStore) failNext(n int, ambiguous bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail, s.ambiguous = n, ambiguous
}

// sorted returns rows ordered by budget then period, for comparison.
func sorted(rows []ledger.Row) []ledger.Row {
	out := append([]ledger.Row(nil), rows...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Budget != out[j].Budget {
			return out[i].Budget < out[j].Budget
		}
		return out[i].Period < out[j].Period
	})
	return out
}

// recorder collects crossings.
type recorder struct {
	mu   sync.Mutex
	list []ledger.Crossing
}

func (r *recorder) on(c ledger.Crossing) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, c)
}

// got lists the crossings as "kind name period used".
func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.list {
		out = append(out, fmt.Sprintf("%s %s %s %g", c.Kind, c.Budget.Name(), c.Budget.Period, c.Used))
	}
	return out
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func cost(id string, limit float64) ledger.Budget {
	return ledger.Budget{Kind: ledger.KindAPIKey, ID: id, Period: "p1", Type: ledger.TypeCost, Limit: limit}
}

func tokens(id string, limit float64) ledger.Budget {
	return ledger.Budget{Kind: ledger.KindWorkspace, ID: id, Sub: "tokens", Period: "p1", Type: ledger.TypeTokens, Limit: limit}
}

// charge reserves and settles amt, requiring admission.
func charge(t *testing.T, l *ledger.Ledger, amt ledger.Amount, budgets ...ledger.Budget) []ledger.Charge {
	t.Helper()
	r, ref := l.Reserve(budgets, amt)
	require.Nil(t, ref)
	return r.Settle(amt)
}

func TestBudgetName(t *testing.T) {
	require.Equal(t, "api_key:k1", ledger.Budget{Kind: ledger.KindAPIKey, ID: "k1"}.Name())
	require.Equal(t, "usage_limit_policy:p1:workspace_id:w1", ledger.Budget{Kind: ledger.KindPolicy, ID: "p1", Sub: "workspace_id:w1"}.Name())
}

func TestReserveIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name    string
		budgets []ledger.Budget
		used    ledger.Amount // settled against every budget first
		worst   ledger.Amount
		refused string // the budget named by the refusal; "" when admitted
	}{
		{"all fit", []ledger.Budget{cost("a", 1), tokens("w", 100), cost("b", 2)}, ledger.Amount{}, ledger.Amount{Cost: 1, Tokens: 100}, ""},
		{"the last budget refuses", []ledger.Budget{cost("a", 10), cost("b", 10), tokens("w", 10)}, ledger.Amount{}, ledger.Amount{Cost: 1, Tokens: 11}, "workspace:w:tokens"},
		{"the first budget refuses", []ledger.Budget{cost("a", 1), tokens("w", 100)}, ledger.Amount{Cost: 0.5}, ledger.Amount{Cost: 0.6, Tokens: 1}, "api_key:a"},
		{"a budget listed twice takes both amounts", []ledger.Budget{cost("a", 1), cost("a", 1)}, ledger.Amount{}, ledger.Amount{Cost: 0.6}, "api_key:a"},
		{"exactly the limit fits, rounding aside", []ledger.Budget{cost("a", 0.3)}, ledger.Amount{Cost: 0.1}, ledger.Amount{Cost: 0.2}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := ledger.New(newMemStore(), ledger.Options{})
			if tc.used != (ledger.Amount{}) {
				charge(t, l, tc.used, tc.budgets...)
			}
			r, ref := l.Reserve(tc.budgets, tc.worst)
			if tc.refused == "" {
				require.Nil(t, ref)
				require.NotNil(t, r)
				return
			}
			require.Nil(t, r)
			require.NotNil(t, ref)
			require.Equal(t, tc.refused, ref.Budget.Name())
			require.False(t, ref.Exhausted)
			// Nothing stayed reserved: each budget still takes its whole remaining allowance.
			for _, b := range tc.budgets {
				left := b.Limit - l.Used(b)
				worst := ledger.Amount{Cost: left, Tokens: left}
				r, ref := l.Reserve([]ledger.Budget{b}, worst)
				require.Nil(t, ref, "%s", b.Name())
				r.Settle(ledger.Amount{})
			}
		})
	}
}

func TestRefusalMessages(t *testing.T) {
	pol := ledger.Budget{Kind: ledger.KindPolicy, ID: "pol", Sub: "api_key:k1", Period: "p", Type: ledger.TypeCost, Limit: 1}
	l := ledger.New(newMemStore(), ledger.Options{})
	charge(t, l, ledger.Amount{Cost: 0.8}, pol)
	held, ref := l.Reserve([]ledger.Budget{pol}, ledger.Amount{Cost: 0.15})
	require.Nil(t, ref)

	_, ref = l.Reserve([]ledger.Budget{pol}, ledger.Amount{Cost: 0.1})
	require.NotNil(t, ref)
	require.Equal(t, ledger.Refusal{Budget: pol, Used: 0.8, Reserved: 0.15, Requested: 0.1}, *ref)
	require.EqualError(t, ref, "budget usage_limit_policy:pol:api_key:k1 (cost, USD) cannot take this request: "+
		"used 0.8 + 0.15 reserved by requests in flight + 0.1 requested exceeds the limit of 1")

	held.Settle(ledger.Amount{Cost: 0.22})
	_, ref = l.Reserve([]ledger.Budget{pol}, ledger.Amount{})
	require.NotNil(t, ref)
	require.True(t, ref.Exhausted)
	require.EqualError(t, ref, "budget usage_limit_policy:pol:api_key:k1 (cost, USD) is exhausted: used 1.02 of 1")

	tok := tokens("w", 10)
	charge(t, l, ledger.Amount{Tokens: 10}, tok)
	_, ref = l.Reserve([]ledger.Budget{tok}, ledger.Amount{})
	require.EqualError(t, ref, "budget workspace:w:tokens (tokens) is exhausted: used 10 of 10")
}

func TestExhaustedRefusesAmountZero(t *testing.T) {
	l := ledger.New(newMemStore(), ledger.Options{})
	b := cost("a", 1)
	_, ref := l.Reserve([]ledger.Budget{b}, ledger.Amount{})
	require.Nil(t, ref, "an empty budget takes a request of 0")
	charge(t, l, ledger.Amount{Cost: 1}, b)
	r, ref := l.Reserve([]ledger.Budget{b}, ledger.Amount{})
	require.Nil(t, r)
	require.NotNil(t, ref)
	require.True(t, ref.Exhausted)
	require.Equal(t, 1.0, ref.Used)

	zero := cost("z", 0)
	_, ref = l.Reserve([]ledger.Budget{zero}, ledger.Amount{})
	require.NotNil(t, ref, "a limit of 0 is exhausted from the start")
	require.True(t, ref.Exhausted)
}

// 200 requests race for a limit of 20: exactly 20 get in, and 20 is charged.
func TestConcurrentReservesNeverOvershoot(t *testing.T) {
	l := ledger.New(newMemStore(), ledger.Options{})
	b := tokens("w", 20)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 200 {
		wg.Go(func() {
			<-start
			r, ref := l.Reserve([]ledger.Budget{b}, ledger.Amount{Tokens: 1})
			if ref != nil {
				return
			}
			admitted.Add(1)
			r.Settle(ledger.Amount{Tokens: 1})
		})
	}
	close(start)
	wg.Wait()
	require.EqualValues(t, 20, admitted.Load())
	require.Equal(t, 20.0, l.Used(b))
}

func TestSettleIsIdempotent(t *testing.T) {
	l := ledger.New(newMemStore(), ledger.Options{})
	a, w := cost("a", 10), tokens("w", 1000)
	r, ref := l.Reserve([]ledger.Budget{a, w}, ledger.Amount{Cost: 5, Tokens: 500})
	require.Nil(t, ref)
	got := r.Settle(ledger.Amount{Cost: 1.5, Tokens: 120})
	require.Equal(t, []ledger.Charge{{Budget: a, Amount: 1.5, Used: 1.5}, {Budget: w, Amount: 120, Used: 120}}, got)
	require.Nil(t, r.Settle(ledger.Amount{Cost: 1.5, Tokens: 120}))
	require.Equal(t, 1.5, l.Used(a))
	require.Equal(t, 120.0, l.Used(w))

	// The reservation was released once: the rest of the allowance is free, and no more.
	_, ref = l.Reserve([]ledger.Budget{a}, ledger.Amount{Cost: 8.5})
	require.Nil(t, ref)
	_, ref = l.Reserve([]ledger.Budget{a}, ledger.Amount{Cost: 0.01})
	require.NotNil(t, ref)
	require.Equal(t, 8.5, ref.Reserved)

	var none *ledger.Reservation
	require.Nil(t, none.Settle(ledger.Amount{Cost: 1}))
}

func TestSettleBeyondTheWorstCasePassesTheLimit(t *testing.T) {
	l := ledger.New(newMemStore(), ledger.Options{})
	b := cost("a", 1)
	r, ref := l.Reserve([]ledger.Budget{b}, ledger.Amount{Cost: 0.5})
	require.Nil(t, ref)
	got := r.Settle(ledger.Amount{Cost: 1.25, Tokens: 99})
	require.Equal(t, []ledger.Charge{{Budget: b, Amount: 1.25, Used: 1.25}}, got)
	_, ref = l.Reserve([]ledger.Budget{b}, ledger.Amount{})
	require.True(t, ref.Exhausted)
	require.Equal(t, 1.25, ref.Used)
}

func TestNegativeAndNaNAmountsCountAsZero(t *testing.T) {
	l := ledger.New(newMemStore(), ledger.Options{})
	b := cost("a", 1)
	r, ref := l.Reserve([]ledger.Budget{b}, ledger.Amount{Cost: -5})
	require.Nil(t, ref)
	nan := 0.0
	nan /= nan
	require.Equal(t, []ledger.Charge{{Budget: b}}, r.Settle(ledger.Amount{Cost: nan}))
	require.Zero(t, l.Used(b))
}

func TestPeriodsAreIndependent(t *testing.T) {
	l := ledger.New(newMemStore(), ledger.Options{})
	jan := cost("a", 10)
	jan.Period = "2026-01"
	feb := jan
	feb.Period = "2026-02"

	charge(t, l, ledger.Amount{Cost: 10}, jan)
	_, ref := l.Reserve([]ledger.Budget{jan}, ledger.Amount{})
	require.True(t, ref.Exhausted)

	require.Zero(t, l.Used(feb), "a new period starts from zero")
	charge(t, l, ledger.Amount{Cost: 3}, feb)
	require.Equal(t, 10.0, l.Used(jan))
	require.Equal(t, 3.0, l.Used(feb))
	require.Equal(t, []ledger.Counter{{Period: "2026-01", Used: 10}, {Period: "2026-02", Used: 3}}, l.Counters(ledger.KindAPIKey, "a"))
}

// run starts l.Run and returns a function that closes l and waits for Run to return.
func run(t *testing.T, l *ledger.Ledger) func() error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- l.Run(context.Background()) }()
	var once sync.Once
	var closeErr error
	stop := func() error {
		once.Do(func() {
			closeErr = l.Close(ctxT(t))
			require.NoError(t, <-done)
		})
		return closeErr
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func TestCrossingsAreDeliveredOnceEach(t *testing.T) {
	withThreshold := func(b ledger.Budget, thr float64) ledger.Budget { b.Threshold = thr; return b }
	tests := []struct {
		name    string
		budget  ledger.Budget
		settles []float64
		want    []string
	}{
		{"below the threshold", withThreshold(cost("a", 10), 5), []float64{1, 2, 1.9}, nil},
		{"threshold then limit", withThreshold(cost("a", 10), 5), []float64{3, 3, 1, 5, 1},
			[]string{"threshold api_key:a p1 6", "exhausted api_key:a p1 12"}},
		{"both in one settle", withThreshold(cost("a", 10), 5), []float64{11},
			[]string{"threshold api_key:a p1 11", "exhausted api_key:a p1 11"}},
		{"exactly at the threshold and the limit", withThreshold(tokens("w", 100), 80), []float64{80, 20},
			[]string{"threshold workspace:w:tokens p1 80", "exhausted workspace:w:tokens p1 100"}},
		{"no threshold", cost("a", 2), []float64{1, 1.5}, []string{"exhausted api_key:a p1 2.5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			l := ledger.New(newMemStore(), ledger.Options{FlushEvery: time.Millisecond, OnCross: rec.on})
			stop := run(t, l)
			for _, amt := range tc.settles {
				r, ref := l.Reserve([]ledger.Budget{tc.budget}, ledger.Amount{})
				if ref != nil {
					require.True(t, ref.Exhausted)
					continue
				}
				r.Settle(ledger.Amount{Cost: amt, Tokens: amt})
			}
			require.NoError(t, stop())
			require.Equal(t, tc.want, rec.got())
		})
	}
}

func TestCrossingsWaitForTheFlushThatCoversThem(t *testing.T) {
	rec := &recorder{}
	store := newMemStore()
	l := ledger.New(store, ledger.Options{FlushEvery: time.Millisecond, OnCross: rec.on})
	store.failNext(1_000_000, false)
	stop := run(t, l)
	charge(t, l, ledger.Amount{Cost: 1}, cost("a", 1))
	time.Sleep(50 * time.Millisecond)
	require.Empty(t, rec.got(), "the usage is not written yet")
	store.failNext(0, false)
	require.Eventually(t, func() bool { return len(rec.got()) == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 1.0, store.used("api_key:a", "p1"))
	require.NoError(t, stop())
	require.Equal(t, []string{"exhausted api_key:a p1 1"}, rec.got())
}

// A crash between the flush and the crossing: the next process loads an exhausted budget, and
// its first refused request tells the crossing again, once.
func TestRefusedExhaustedDeliversACrossing(t *testing.T) {
	rec := &recorder{}
	store := newMemStore(ledger.Row{Budget: "api_key:a", Period: "p1", Used: 1.5})
	l := ledger.New(store, ledger.Options{FlushEvery: time.Millisecond, OnCross: rec.on})
	require.NoError(t, l.Load(ctxT(t)))
	stop := run(t, l)
	for range 3 {
		_, ref := l.Reserve([]ledger.Budget{cost("a", 1)}, ledger.Amount{})
		require.True(t, ref.Exhausted)
	}
	_, ref := l.Reserve([]ledger.Budget{cost("b", 1)}, ledger.Amount{Cost: 2})
	require.False(t, ref.Exhausted, "a request too big for a budget is no crossing")
	require.NoError(t, stop())
	require.Equal(t, []string{"exhausted api_key:a p1 1.5"}, rec.got())
}

// A limit raised after it was reached is a new limit: reaching it is told again.
func TestRaisedLimitIsToldAgain(t *testing.T) {
	rec := &recorder{}
	l := ledger.New(newMemStore(), ledger.Options{OnCross: rec.on})
	charge(t, l, ledger.Amount{Cost: 1}, cost("a", 1))
	charge(t, l, ledger.Amount{Cost: 1}, cost("a", 2))
	require.NoError(t, l.Close(ctxT(t)))
	require.Equal(t, []string{"exhausted api_key:a p1 1", "exhausted api_key:a p1 2"}, rec.got())
}

// A full queue drops a crossing; the budget's next charge (or refusal) queues it again.
func TestFullCrossingQueueDropsAndTellsAgain(t *testing.T) {
	rec := &recorder{}
	l := ledger.New(newMemStore(), ledger.Options{OnCross: rec.on})
	ledger.SetCrossQueue(l, 1)
	a, b := cost("a", 1), cost("b", 1)
	a.Threshold, b.Threshold = 0.5, 0.5
	charge(t, l, ledger.Amount{Cost: 0.6}, a)
	charge(t, l, ledger.Amount{Cost: 0.6}, b)
	require.NoError(t, l.Flush(ctxT(t)), "a's crossing is queued, b's dropped")

	charge(t, l, ledger.Amount{Cost: 0.1}, a) // a's mark holds: nothing new
	charge(t, l, ledger.Amount{Cost: 0.1}, b) // b's was cleared: queued again
	require.NoError(t, l.Close(ctxT(t)))
	require.Equal(t, []string{"threshold api_key:a p1 0.6"}, rec.got(),
		"b's second crossing found the queue still full (Run is not draining it) and was dropped again")

	rec2 := &recorder{}
	l = ledger.New(newMemStore(), ledger.Options{OnCross: rec2.on, FlushEvery: time.Millisecond})
	ledger.SetCrossQueue(l, 1)
	charge(t, l, ledger.Amount{Cost: 0.6}, a)
	charge(t, l, ledger.Amount{Cost: 0.6}, b)
	require.NoError(t, l.Flush(ctxT(t)))
	stop := run(t, l) // drains a's
	require.Eventually(t, func() bool { return len(rec2.got()) == 1 }, 5*time.Second, time.Millisecond)
	charge(t, l, ledger.Amount{Cost: 0.1}, b)
	require.NoError(t, stop())
	require.Equal(t, []string{"threshold api_key:a p1 0.6", "threshold api_key:b p1 0.7"}, rec2.got())
}

func TestFlushMergesDeltas(t *testing.T) {
	store := newMemStore()
	l := ledger.New(store, ledger.Options{})
	a, w := cost("a", 100), tokens("w", 1e6)
	for range 10 {
		charge(t, l, ledger.Amount{Cost: 0.5, Tokens: 100}, a, w)
	}
	apr := a
	apr.Period = "p2"
	charge(t, l, ledger.Amount{Cost: 2}, apr)
	charge(t, l, ledger.Amount{}, cost("idle", 1)) // charged nothing: no row

	require.NoError(t, l.Flush(ctxT(t)))
	calls := store.addCalls()
	require.Len(t, calls, 1)
	require.NotEmpty(t, calls[0].id)
	require.Equal(t, []ledger.Row{
		{Budget: "api_key:a", Period: "p1", Used: 5},
		{Budget: "api_key:a", Period: "p2", Used: 2},
		{Budget: "workspace:w:tokens", Period: "p1", Used: 1000},
	}, sorted(calls[0].rows))

	require.NoError(t, l.Flush(ctxT(t)))
	require.Len(t, store.addCalls(), 1, "nothing pending: no batch")
	charge(t, l, ledger.Amount{Cost: 1}, a)
	require.NoError(t, l.Flush(ctxT(t)))
	calls = store.addCalls()
	require.Len(t, calls, 2)
	require.NotEqual(t, calls[0].id, calls[1].id)
	require.Equal(t, []ledger.Row{{Budget: "api_key:a", Period: "p1", Used: 1}}, calls[1].rows)
	require.Equal(t, 6.0, store.used("api_key:a", "p1"))
}

func TestFlushRetriesTheSameBatchFirst(t *testing.T) {
	for _, ambiguous := range []bool{false, true} {
		t.Run(fmt.Sprintf("ambiguous=%v", ambiguous), func(t *testing.T) {
			store := newMemStore()
			l := ledger.New(store, ledger.Options{})
			a := cost("a", 100)
			charge(t, l, ledger.Amount{Cost: 1}, a)
			store.failNext(2, ambiguous)
			require.Error(t, l.Flush(ctxT(t)))
			charge(t, l, ledger.Amount{Cost: 2}, a)
			require.Error(t, l.Flush(ctxT(t)), "the retry fails too: the new usage waits")
			charge(t, l, ledger.Amount{Cost: 4}, a)
			require.NoError(t, l.Flush(ctxT(t)))

			calls := store.addCalls()
			require.Len(t, calls, 4)
			for _, c := range calls[:3] {
				require.Equal(t, calls[0].id, c.id, "the failed batch is retried whole")
				require.Equal(t, []ledger.Row{{Budget: "api_key:a", Period: "p1", Used: 1}}, c.rows)
			}
			require.NotEqual(t, calls[0].id, calls[3].id)
			require.Equal(t, []ledger.Row{{Budget: "api_key:a", Period: "p1", Used: 6}}, calls[3].rows,
				"usage settled meanwhile was merged apart")
			require.Equal(t, 7.0, store.used("api_key:a", "p1"), "nothing counted twice")
			require.Equal(t, 7.0, l.Used(a))
		})
	}
}

// An outage of the store is logged once as it starts (WARN) and once as it ends (INFO),
// however many flushes fail in between.
func TestAStoreOutageIsLoggedOnceEachWay(t *testing.T) {
	store := newMemStore()
	var logged syncbuf.Buffer
	l := ledger.New(store, ledger.Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	a := cost("a", 100)
	store.failNext(3, false)
	for range 3 {
		charge(t, l, ledger.Amount{Cost: 1}, a)
		require.Error(t, l.Flush(ctxT(t)))
	}
	require.NoError(t, l.Flush(ctxT(t)))
	out := logged.String()
	require.Equal(t, 1, strings.Count(out, "level=WARN"), out)
	require.Equal(t, 1, strings.Count(out, `level=INFO msg="ledger: flushing again"`), out)
	require.Equal(t, 3.0, store.used("api_key:a", "p1"))
}

func TestCloseFlushes(t *testing.T) {
	store := newMemStore()
	l := ledger.New(store, ledger.Options{FlushEvery: time.Hour})
	stop := run(t, l)
	charge(t, l, ledger.Amount{Cost: 0.25}, cost("a", 1))
	require.NoError(t, stop())
	require.Equal(t, 0.25, store.used("api_key:a", "p1"))
	require.NoError(t, l.Close(ctxT(t)), "Close is idempotent")
	require.Len(t, store.addCalls(), 1)
}

func TestCloseReturnsTheFinalFlushError(t *testing.T) {
	store := newMemStore()
	l := ledger.New(store, ledger.Options{})
	charge(t, l, ledger.Amount{Cost: 0.25}, cost("a", 1))
	store.failNext(1, false)
	require.ErrorContains(t, l.Close(ctxT(t)), "store down")
	require.ErrorContains(t, l.Close(ctxT(t)), "store down", "a second Close returns the first's result")
	require.NoError(t, l.Flush(ctxT(t)), "the usage is still held, and a later Flush writes it")
	require.Equal(t, 0.25, store.used("api_key:a", "p1"))
}

func TestRunFlushesPeriodically(t *testing.T) {
	store := newMemStore()
	l := ledger.New(store, ledger.Options{FlushEvery: 5 * time.Millisecond})
	run(t, l)
	charge(t, l, ledger.Amount{Tokens: 42}, tokens("w", 100))
	require.Eventually(t, func() bool { return store.used("workspace:w:tokens", "p1") == 42 }, 5*time.Second, time.Millisecond)
	require.Error(t, l.Run(context.Background()), "Run runs once")
}

func TestLoadThenUsed(t *testing.T) {
	store := newMemStore(
		ledger.Row{Budget: "api_key:a", Period: "p1", Used: 0.75},
		ledger.Row{Budget: "usage_limit_policy:pol:api_key:k1", Period: "p1", Used: 3},
		ledger.Row{Budget: "usage_limit_policy:pol:api_key:k2", Period: "p1", Used: 4},
		ledger.Row{Budget: "usage_limit_policy:pol:api_key:k2", Period: "p0", Used: 9},
	)
	l := ledger.New(store, ledger.Options{})
	require.NoError(t, l.Load(ctxT(t)))
	a := cost("a", 1)
	require.Equal(t, 0.75, l.Used(a))
	_, ref := l.Reserve([]ledger.Budget{a}, ledger.Amount{Cost: 0.5})
	require.NotNil(t, ref, "loaded usage counts against the limit")

	k1 := ledger.Budget{Kind: ledger.KindPolicy, ID: "pol", Sub: "api_key:k1", Period: "p1", Type: ledger.TypeCost, Limit: 10}
	require.Equal(t, 3.0, l.Used(k1))
	charge(t, l, ledger.Amount{Cost: 1}, k1)
	require.Equal(t, []ledger.Counter{
		{Sub: "api_key:k1", Period: "p1", Used: 4},
		{Sub: "api_key:k2", Period: "p0", Used: 9},
		{Sub: "api_key:k2", Period: "p1", Used: 4},
	}, l.Counters(ledger.KindPolicy, "pol"))
	require.Empty(t, l.Counters(ledger.KindPolicy, "other"))
}

// Reserve and Settle over three budgets, from every core at once: the request path's cost.
func BenchmarkReserveSettle(b *testing.B) {
	l := ledger.New(newMemStore(), ledger.Options{})
	budgets := []ledger.Budget{
		cost("key", 1e15),
		{Kind: ledger.KindWorkspace, ID: "w", Sub: "cost", Period: "p1", Type: ledger.TypeCost, Limit: 1e15},
		{Kind: ledger.KindPolicy, ID: "pol", Sub: "api_key:key", Period: "p1", Type: ledger.TypeTokens, Limit: 1e15},
	}
	worst, actual := ledger.Amount{Cost: 0.01, Tokens: 4096}, ledger.Amount{Cost: 0.004, Tokens: 1500}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, ref := l.Reserve(budgets, worst)
			if ref != nil {
				b.Fatal(ref)
			}
			r.Settle(actual)
		}
	})
}
