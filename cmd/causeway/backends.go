package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/clickhouse"
	"github.com/causeway/causeway/analytics/sqlite"
	"github.com/causeway/causeway/eventstore"
	httpapi "github.com/causeway/causeway/http"
	"github.com/causeway/causeway/migrations"
)

// backend is an opened read-side store: how health checks it and how to close it. Each is
// opened and migrated at start, so that a bad URL fails at once and an outage shows in health.
type backend struct {
	check httpapi.Check
	close func() error
	pool  *pgxpool.Pool // the read models' database, when there is one
}

func eventStoreBackend(rawURL string) string {
	scheme, _, _ := strings.Cut(strings.ToLower(rawURL), "://")
	switch {
	case strings.HasPrefix(scheme, "postgres"):
		return "postgres"
	case scheme == "sqlite":
		return "sqlite"
	}
	return "esdb"
}

// openReadModels opens PostgreSQL for the read models when DATABASE_URL is set; otherwise the
// read models live in memory, rebuilt from the events at start.
func openReadModels(ctx context.Context, cfg Config) (backend, error) {
	if cfg.DatabaseURL == "" {
		return backend{
			check: httpapi.Check{Name: "readmodels", Backend: "memory", Ping: func(context.Context) error { return nil }},
			close: func() error { return nil },
		}, nil
	}
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return backend{}, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		pool.Close()
		return backend{}, fmt.Errorf("DATABASE_URL: %w", err)
	}
	return backend{
		check: httpapi.Check{Name: "readmodels", Backend: "postgres", Ping: pool.Ping},
		close: func() error { pool.Close(); return nil },
		pool:  pool,
	}, nil
}

// openAnalytics opens the request log store: ClickHouse when CLICKHOUSE_URL is set, over the
// native protocol (the only one that works with every release we support); otherwise a SQLite
// file in the data directory. Either way its schema is applied at start.
func openAnalytics(ctx context.Context, cfg Config, log *slog.Logger) (analytics.Store, backend, error) {
	if cfg.ClickHouseURL != "" {
		// A ClickHouse that is down at start does not stop the gateway: the schema is applied
		// when it answers, request logs wait in the spool until then, and health says so.
		ch, err := clickhouse.Connect(cfg.ClickHouseURL)
		if err != nil {
			return nil, backend{}, fmt.Errorf("CLICKHOUSE_URL: %v", redactErr(err, cfg.ClickHouseURL))
		}
		if err := ch.Ping(ctx); err != nil {
			log.Warn("ClickHouse does not answer yet; request logs wait in the spool until it does",
				"error", redactErr(err, cfg.ClickHouseURL))
		}
		return ch, backend{
			check: httpapi.Check{Name: "analytics", Backend: "clickhouse", Ping: ch.Ping},
			close: ch.Close,
		}, nil
	}
	path := filepath.Join(cfg.DataDir, "analytics.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, backend{}, fmt.Errorf("analytics %s: %w", path, err)
	}
	return db, backend{
		check: httpapi.Check{Name: "analytics", Backend: "sqlite", Ping: db.Ping},
		close: db.Close,
	}, nil
}

// redactErr keeps a URL's password out of an error that may quote the URL.
func redactErr(err error, rawURL string) error {
	pw, ok := eventstore.URLPassword(rawURL)
	if !ok {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
}
