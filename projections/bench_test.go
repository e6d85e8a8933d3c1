package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/postgres"
	"github.com/causeway/causeway/migrations/migrationstest"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
	pgmodel "github.com/causeway/causeway/projections/postgres"
	"github.com/causeway/causeway/projections/projectionstest"
)

// benchEvents is the size of the replay benchmarks' history.
const benchEvents = 100_000

// BenchmarkReplay rebuilds read models from 100,000 events: into memory and into PostgreSQL,
// against a baseline of only reading the same events (the floor of any replay).
func BenchmarkReplay(b *testing.B) {
	steps := projectionstest.History(benchEvents/10, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := loadForBench(b, steps)
	reg := domain.NewRegistry()
	ctx := context.Background()

	report := func(b *testing.B, events int, elapsed time.Duration) {
		b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(events), "events")
	}
	b.Run("baseline-read-only", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start, n := time.Now(), 0
			var from eventstore.Position
			for {
				evs, err := store.ReadAll(ctx, from, 1000)
				if err != nil {
					b.Fatal(err)
				}
				if len(evs) == 0 {
					break
				}
				n += len(evs)
				from = evs[len(evs)-1].Position
			}
			report(b, n, time.Since(start))
		}
	})
	b.Run("memory", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			stats, err := projections.Rebuild(ctx, store, memory.New(reg), 0)
			if err != nil {
				b.Fatal(err)
			}
			report(b, stats.Events, stats.Elapsed)
		}
	})
	if os.Getenv("TEST_DATABASE_URL") == "" {
		return
	}
	b.Run("postgres", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			pool, err := pgxpool.New(ctx, migrationstest.PostgresURL(b))
			if err != nil {
				b.Fatal(err)
			}
			m, err := pgmodel.New(ctx, pool, reg, "postgres")
			if err != nil {
				b.Fatal(err)
			}
			stats, err := projections.Rebuild(ctx, store, m, 0)
			if err != nil {
				b.Fatal(err)
			}
			report(b, stats.Events, stats.Elapsed)
			pool.Close()
		}
	})
}

// BenchmarkAppendToReadModelLag measures, with the runner live, the time from the start of an
// append until each read model has folded it: the in-memory routing tables and PostgreSQL.
func BenchmarkAppendToReadModelLag(b *testing.B) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		b.Skip("TEST_DATABASE_URL is unset")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := migrationstest.PostgresURL(b)
	store, err := postgres.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	reg := domain.NewRegistry()
	mem := memory.New(reg, memory.Options{NoAudit: true})
	pg, err := pgmodel.New(ctx, pool, reg, "postgres")
	if err != nil {
		b.Fatal(err)
	}
	r := &projections.Runner{Store: store, Projections: []projections.Projection{mem, pg}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go func() { _ = r.Run(ctx) }()

	var memLag, pgLag []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev := domain.RateLimitPolicyCreated{PolicyID: uuid.NewString(), OrganisationID: "org", WorkspaceID: "ws",
			Conditions: []domain.Condition{{Key: "api_key", Value: "k"}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			Type: "requests", Unit: "rpm", Value: 10, At: time.Now()}
		data := mustMarshal(b, ev)
		start := time.Now()
		res, err := store.Append(ctx, domain.Stream(domain.RateLimitPolicyPrefix, ev.PolicyID), eventstore.NoStream,
			eventstore.EventData{ID: uuid.New(), Type: ev.EventType(), Data: data})
		if err != nil {
			b.Fatal(err)
		}
		if err := mem.WaitFor(ctx, res.Position); err != nil {
			b.Fatal(err)
		}
		memLag = append(memLag, time.Since(start))
		if err := pg.WaitFor(ctx, res.Position); err != nil {
			b.Fatal(err)
		}
		pgLag = append(pgLag, time.Since(start))
	}
	b.StopTimer()
	pct := func(lat []time.Duration, p float64) float64 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds())
	}
	b.ReportMetric(pct(memLag, 0.5), "memory-p50-µs")
	b.ReportMetric(pct(memLag, 0.99), "memory-p99-µs")
	b.ReportMetric(pct(pgLag, 0.5), "postgres-p50-µs")
	b.ReportMetric(pct(pgLag, 0.99), "postgres-p99-µs")
}

func loadForBench(b *testing.B, steps []projectionstest.Step) eventstore.Store {
	b.Helper()
	dir := b.TempDir()
	store, err := projectionstest.LoadInto(context.Background(), filepath.Join(dir, "events.db"), steps)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return store
}

func mustMarshal(b *testing.B, v domain.Event) []byte {
	b.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		b.Fatal(fmt.Errorf("marshal: %w", err))
	}
	return data
}
