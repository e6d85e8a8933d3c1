package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/open"
	"github.com/causeway/causeway/migrations"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
	pgmodel "github.com/causeway/causeway/projections/postgres"
)

const replayUsage = `usage: causeway replay [--models memory,postgres] [--verify] [--swap]

Rebuilds read models from the events and reports events per second:
  memory    into memory (what every process does at start)
  postgres  into fresh tables beside the live ones (DATABASE_URL), up to the live checkpoint
  --verify  compare the rebuilt PostgreSQL tables with the live ones; exit 1 and print the
            differences when they disagree
  --swap    put the rebuilt tables in place of the live ones, in one transaction
`

// replay is `causeway replay`. Exit codes: 0 done (and equal, with --verify), 1 differences
// or failure, 2 usage.
func replay(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage) }
	models := fs.String("models", "", "memory, postgres, or both (default: postgres with DATABASE_URL, else memory)")
	verify := fs.Bool("verify", false, "compare the PostgreSQL rebuild with the live tables")
	swap := fs.Bool("swap", false, "swap the PostgreSQL rebuild in")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "causeway: the configuration has problems:\n%v\n", err)
		return 2
	}
	want := map[string]bool{}
	if *models == "" {
		*models = "memory"
		if cfg.DatabaseURL != "" {
			*models = "postgres"
		}
	}
	for _, m := range strings.Split(*models, ",") {
		switch m = strings.TrimSpace(m); m {
		case "memory", "postgres":
			want[m] = true
		default:
			fmt.Fprintf(stderr, "causeway replay: --models: %q is not memory or postgres\n", m)
			return 2
		}
	}
	if (*verify || *swap || want["postgres"]) && cfg.DatabaseURL == "" {
		fmt.Fprintln(stderr, "causeway replay: the postgres read model, --verify and --swap need DATABASE_URL")
		return 2
	}
	if *verify || *swap {
		want["postgres"] = true
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, err := open.Open(ctx, cfg.EventStoreURL)
	if err != nil {
		fmt.Fprintf(stderr, "causeway replay: event store: %v\n", err)
		return 1
	}
	defer store.Close()
	reg := domain.NewRegistry()

	if want["memory"] {
		stats, err := projections.Rebuild(ctx, store, memory.New(reg), 0)
		if err != nil {
			fmt.Fprintf(stderr, "causeway replay: memory: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "memory: %d events in %s (%.0f events/s), up to position %d\n",
			stats.Events, stats.Elapsed.Round(1e6), stats.EventsPerSecond(), stats.Position)
	}
	if !want["postgres"] {
		return 0
	}
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintf(stderr, "causeway replay: DATABASE_URL: %v\n", err)
		return 1
	}
	defer pool.Close()
	_, stats, err := pgmodel.Rebuild(ctx, store, pool, reg)
	if err != nil {
		fmt.Fprintf(stderr, "causeway replay: postgres: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "postgres: %d events in %s (%.0f events/s), up to position %d, into fresh tables\n",
		stats.Events, stats.Elapsed.Round(1e6), stats.EventsPerSecond(), stats.Position)
	if *verify {
		const limit = 100
		diffs, err := pgmodel.Verify(ctx, pool, limit)
		if err != nil {
			fmt.Fprintf(stderr, "causeway replay: verify: %v\n", err)
			return 1
		}
		if len(diffs) > 0 {
			fmt.Fprintf(stdout, "verify: the rebuild and the live tables disagree (%d differences, at most %d per table shown):\n", len(diffs), limit)
			for _, d := range diffs {
				fmt.Fprintf(stdout, "  %s %s: %s\n", d.Table, d.Key, d.Detail)
			}
			return 1
		}
		fmt.Fprintln(stdout, "verify: the rebuild equals the live tables")
	}
	if *swap {
		if err := pgmodel.Swap(ctx, pool); err != nil {
			fmt.Fprintf(stderr, "causeway replay: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, "swap: the rebuilt tables are live")
	}
	return 0
}

// migrate is `causeway migrate`: the PostgreSQL schema for DATABASE_URL and, when it is
// PostgreSQL, EVENTSTORE_URL. (The servers apply it at start too.)
func migrate(getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "causeway: the configuration has problems:\n%v\n", err)
		return 2
	}
	var targets []string
	for _, u := range []string{cfg.DatabaseURL, cfg.EventStoreURL} {
		if strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
			targets = append(targets, u)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintln(stderr, "causeway migrate: nothing to migrate: neither DATABASE_URL nor EVENTSTORE_URL is PostgreSQL (SQLite migrates itself at start)")
		return 2
	}
	ctx := context.Background()
	files, _ := migrations.Postgres.Files()
	for _, u := range targets {
		pool, err := pgxpool.New(ctx, u)
		if err == nil {
			err = migrations.ApplyPostgres(ctx, pool, migrations.Postgres)
			pool.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "causeway migrate: %s: %v\n", eventstore.Redact(u), errors.Unwrap(err))
			return 1
		}
		fmt.Fprintf(stdout, "%s: schema at version %d\n", eventstore.Redact(u), files[len(files)-1].Version)
	}
	return 0
}
