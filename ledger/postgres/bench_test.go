package postgres

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/causeway/causeway/ledger"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// countingLeases counts the takes and returns a ledger makes of the real store.
type countingLeases struct {
	*Store
	takes, returns *atomic.Int64
}

func (c countingLeases) Take(ctx context.Context, asks []ledger.Ask) ([]ledger.Grant, error) {
	c.takes.Add(1)
	return c.Store.Take(ctx, asks)
}

func (c countingLeases) Return(ctx context.Context, rows []ledger.Row) error {
	c.returns.Add(1)
	return c.Store.Return(ctx, rows)
}

// BenchmarkLeases is the cost of admitting a request against a budget and a rate-limit window
// (Reserve, then Settle) on one instance that counts alone (the baseline), and on three
// instances sharing the counters through leases in PostgreSQL. It reports the store calls
// (takes and returns) per 1000 requests: the request path does none unless a lease runs out.
func BenchmarkLeases(b *testing.B) {
	budgets := func(now time.Time) []ledger.Budget {
		return []ledger.Budget{
			{Kind: ledger.KindAPIKey, ID: "k", Period: "p", Type: ledger.TypeCost, Limit: 1e9},
			{Kind: ledger.KindRateLimit, ID: "key%3Ak", Sub: "rpm.requests", Period: now.Truncate(time.Minute).Format(time.RFC3339),
				Type: ledger.TypeRequests, Limit: 1e12, Until: now.Truncate(time.Minute).Add(time.Minute)},
		}
	}
	run := func(b *testing.B, ledgers []*ledger.Ledger) {
		var next atomic.Int64
		b.ReportAllocs()
		cpu := cpuTime()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			l := ledgers[int(next.Add(1))%len(ledgers)]
			for pb.Next() {
				bs := budgets(time.Now())
				r, ref := l.Reserve(bs, ledger.Amount{Cost: 0.01, Requests: 1})
				if ref != nil {
					b.Fatalf("refused: %v", ref)
				}
				r.Settle(ledger.Amount{Cost: 0.008, Requests: 1})
			}
		})
		b.StopTimer()
		// The process's CPU, background work (top-ups, returns, flushes) included.
		b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/1e3/float64(b.N), "cpu-µs")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "req-µs")
	}
	b.Run("baseline-one-instance", func(b *testing.B) {
		s := open(b, newPool(b, migrationstest.PostgresURL(b)))
		l := ledger.New(s, ledger.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = l.Run(ctx) }()
		defer func() { _ = l.Close(context.Background()); cancel() }()
		run(b, []*ledger.Ledger{l})
	})
	b.Run("three-instances-leases", func(b *testing.B) {
		url := migrationstest.PostgresURL(b)
		var takes, returns atomic.Int64
		var ledgers []*ledger.Ledger
		for _, id := range []string{"a", "b", "c"} {
			s, err := OpenShared(context.Background(), newPool(b, url), id)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			cl := countingLeases{Store: s, takes: &takes, returns: &returns}
			l := ledger.New(s, ledger.Options{Leases: cl})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { _ = l.Run(ctx) }()
			b.Cleanup(func() { _ = l.Close(context.Background()); cancel() })
			ledgers = append(ledgers, l)
		}
		run(b, ledgers)
		b.ReportMetric(float64(takes.Load()+returns.Load())*1000/float64(b.N), "store-calls/1000req")
	})
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
