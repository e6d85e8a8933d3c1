package open_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/eventstoretest"
	"github.com/causeway/causeway/eventstore/open"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// benchBackend is one event store under benchmark, with a baseline on the same database: a
// bare one-row INSERT transaction with the same durability, the floor of any durable append.
type benchBackend struct {
	name     string
	open     func(b *testing.B) eventstore.Store
	baseline func(b *testing.B) func(ctx context.Context, i int) error
}

func benchBackends(b *testing.B) []benchBackend {
	var out []benchBackend
	sqlitePath := func(b *testing.B) string { return filepath.Join(b.TempDir(), "events.db") }
	out = append(out, benchBackend{
		name: "sqlite",
		open: func(b *testing.B) eventstore.Store {
			s, err := open.Open(context.Background(), "sqlite://"+sqlitePath(b))
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
		baseline: func(b *testing.B) func(ctx context.Context, i int) error {
			db, err := sql.Open("sqlite", "file:"+sqlitePath(b)+
				"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			if _, err := db.Exec(`CREATE TABLE baseline (id INTEGER PRIMARY KEY, data BLOB)`); err != nil {
				b.Fatal(err)
			}
			return func(ctx context.Context, i int) error {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO baseline (data) VALUES (?)`, `{"i":1}`); err != nil {
					_ = tx.Rollback()
					return err
				}
				return tx.Commit()
			}
		},
	})
	if os.Getenv("TEST_DATABASE_URL") != "" {
		out = append(out, benchBackend{
			name: "postgres",
			open: func(b *testing.B) eventstore.Store {
				s, err := open.Open(context.Background(), migrationstest.PostgresURL(b))
				if err != nil {
					b.Fatal(err)
				}
				return s
			},
			baseline: func(b *testing.B) func(ctx context.Context, i int) error {
				conn, err := pgx.Connect(context.Background(), migrationstest.PostgresURL(b))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { conn.Close(context.Background()) })
				if _, err := conn.Exec(context.Background(), `CREATE TABLE baseline (id bigserial PRIMARY KEY, data json)`); err != nil {
					b.Fatal(err)
				}
				return func(ctx context.Context, i int) error {
					_, err := conn.Exec(ctx, `INSERT INTO baseline (data) VALUES ('{"i":1}')`)
					return err
				}
			},
		})
	}
	if url := os.Getenv("EVENTSTORE_URL"); url != "" {
		out = append(out, benchBackend{
			name: "esdb",
			open: func(b *testing.B) eventstore.Store {
				s, err := open.Open(context.Background(), url)
				if err != nil {
					b.Fatal(err)
				}
				return s
			},
		})
	}
	return out
}

// BenchmarkEventStore measures, per backend: append latency (single events and batches of
// 10), appends per second with 1 and 8 writers, and subscription lag from the start of an
// append to its delivery. Latencies are reported as p50/p99 in microseconds; cmd/benchreport
// turns the output into a table with ratios against the baseline.
func BenchmarkEventStore(b *testing.B) {
	for _, be := range benchBackends(b) {
		b.Run(be.name, func(b *testing.B) {
			if be.baseline != nil {
				b.Run("baseline-insert", func(b *testing.B) {
					insert := be.baseline(b)
					ctx := context.Background()
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						start := time.Now()
						if err := insert(ctx, i); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					reportLatency(b, lat)
				})
			}
			for _, batch := range []int{1, 10} {
				b.Run(fmt.Sprintf("append-batch-%d", batch), func(b *testing.B) {
					s := be.open(b)
					defer s.Close()
					ctx := context.Background()
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						evs := eventstoretest.Events("Bench", batch)
						start := time.Now()
						if _, err := s.Append(ctx, eventstoretest.Stream("bench"), eventstore.NoStream, evs...); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					reportLatency(b, lat)
				})
			}
			for _, writers := range []int{1, 8} {
				b.Run(fmt.Sprintf("throughput-writers-%d", writers), func(b *testing.B) {
					s := be.open(b)
					defer s.Close()
					ctx := context.Background()
					var wg sync.WaitGroup
					next := make(chan struct{}, b.N)
					for i := 0; i < b.N; i++ {
						next <- struct{}{}
					}
					close(next)
					b.ResetTimer()
					start := time.Now()
					for w := 0; w < writers; w++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							stream := eventstoretest.Stream("writer")
							for range next {
								if _, err := s.Append(ctx, stream, eventstore.Any, eventstoretest.Events("Bench", 1)...); err != nil {
									b.Error(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
				})
			}
			b.Run("subscription-lag", func(b *testing.B) {
				s := be.open(b)
				defer s.Close()
				ctx := context.Background()
				m, err := s.Append(ctx, eventstoretest.Stream("marker"), eventstore.NoStream, eventstoretest.Events("Marker", 1)...)
				if err != nil {
					b.Fatal(err)
				}
				sub, err := s.Subscribe(ctx, m.Position)
				if err != nil {
					b.Fatal(err)
				}
				defer sub.Close()
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ev := eventstoretest.Events("Lag", 1)
					start := time.Now()
					if _, err := s.Append(ctx, eventstoretest.Stream("lag"), eventstore.NoStream, ev...); err != nil {
						b.Fatal(err)
					}
					for {
						got, err := sub.Recv(ctx)
						if err != nil {
							b.Fatal(err)
						}
						if got.ID == ev[0].ID {
							break
						}
					}
					lat = append(lat, time.Since(start))
				}
				reportLatency(b, lat)
			})
		})
	}
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
