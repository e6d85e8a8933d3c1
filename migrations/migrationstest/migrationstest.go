// Package migrationstest gives integration tests a real, empty database of their own: a fresh
// PostgreSQL schema or ClickHouse database, dropped when the test ends.
//
// The servers come from TEST_DATABASE_URL and TEST_CLICKHOUSE_URL (make test starts them
// with scripts/services.sh). A test whose server is not configured or not reachable is
// skipped, except when CI is set: then it fails, so that CI can never pass by skipping.
package migrationstest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Unavailable skips the test, or fails it when CI is set.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set, so this integration test may not skip: %s", msg)
	}
	t.Skip(msg + " (run `make test`, which starts the servers)")
}

// PostgresURL returns a URL to a fresh, empty schema on the test PostgreSQL server; the URL
// sets search_path, so everything the test creates lands in that schema.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		Unavailable(t, "TEST_DATABASE_URL is unset")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		Unavailable(t, "PostgreSQL at TEST_DATABASE_URL is not reachable: %v", err)
	}
	defer conn.Close(context.Background())

	schema := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	return WithParam(base, "search_path", schema)
}

// ClickHouseURL returns a URL to a fresh, empty database on the test ClickHouse server,
// dropped when the test ends.
func ClickHouseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_CLICKHOUSE_URL")
	if base == "" {
		Unavailable(t, "TEST_CLICKHOUSE_URL is unset")
	}
	opts, err := clickhouse.ParseDSN(base)
	if err != nil {
		t.Fatalf("TEST_CLICKHOUSE_URL: %v", err)
	}
	opts.Protocol = clickhouse.Native
	conn, err := clickhouse.Open(opts)
	if err != nil {
		Unavailable(t, "ClickHouse at TEST_CLICKHOUSE_URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		Unavailable(t, "ClickHouse at TEST_CLICKHOUSE_URL is not reachable: %v", err)
	}
	db := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	if err := conn.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		_ = conn.Close()
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Logf("drop database %s: %v", db, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("TEST_CLICKHOUSE_URL: %v", err)
	}
	u.Path = "/" + db
	return u.String()
}

// WithParam returns rawURL with one query parameter set.
func WithParam(rawURL, key, value string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
