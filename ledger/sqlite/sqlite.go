// Package sqlite is the usage ledger's embedded store: one SQLite file, through the pure-Go
// modernc driver (no cgo), with the schema of migrations/sqlite/ledger. It is the only part of
// the ledger that knows SQLite.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // pure-Go driver: the embedded default needs no cgo

	"github.com/causeway/causeway/ledger"
	"github.com/causeway/causeway/migrations"
)

// Store keeps the ledger's rows in a SQLite file.
//
// Adds in this process are serialised by a mutex, which is cheaper than SQLite's busy-wait
// between writers; other processes on the same file are kept apart by BEGIN IMMEDIATE and the
// busy timeout.
type Store struct {
	db        *sql.DB
	mu        sync.Mutex
	lastPrune time.Time // guarded by mu
}

var _ ledger.Store = (*Store)(nil)

const (
	// keepBatches is how long an applied batch id is remembered: far longer than any retry.
	keepBatches = 24 * time.Hour
	// pruneEvery is how often an Add also forgets the batch ids older than keepBatches.
	pruneEvery = time.Hour
)

// Open opens (creating if needed) the ledger file at path and applies its schema.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("ledger/sqlite: the ledger needs a file path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("ledger/sqlite: %w", err)
	}
	// synchronous=FULL: a flushed batch is charged usage, and must survive a power cut.
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("ledger/sqlite: %w", err)
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	if err := migrations.ApplySQLite(ctx, db, migrations.SQLiteLedger); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("ledger/sqlite: %w", err)
	}
	return &Store{db: db}, nil
}

// Load returns every row.
func (s *Store) Load(ctx context.Context) ([]ledger.Row, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT budget, period, used FROM usage_ledger ORDER BY budget, period`)
	if err != nil {
		return nil, fail(ctx, "load", err)
	}
	defer rows.Close()
	var out []ledger.Row
	for rows.Next() {
		var r ledger.Row
		if err := rows.Scan(&r.Budget, &r.Period, &r.Used); err != nil {
			return nil, fail(ctx, "load", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, "load", err)
	}
	return out, nil
}

// Add adds the deltas in one transaction that also records batchID; a recorded batchID adds
// nothing.
func (s *Store) Add(ctx context.Context, batchID string, deltas []ledger.Row) error {
	if batchID == "" {
		return errors.New("ledger/sqlite: add: a batch needs an id")
	}
	if len(deltas) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if err := s.add(ctx, batchID, deltas, now); err != nil {
		return fail(ctx, "add batch "+batchID, err)
	}
	return nil
}

func (s *Store) add(ctx context.Context, batchID string, deltas []ledger.Row, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `INSERT INTO usage_ledger_batches (id, applied_at) VALUES (?, ?)
		ON CONFLICT (id) DO NOTHING`, batchID, now.UnixNano())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // applied before: nothing to add
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO usage_ledger (budget, period, used, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (budget, period) DO UPDATE SET used = usage_ledger.used + excluded.used, updated_at = excluded.updated_at`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, d := range deltas {
		if _, err := stmt.ExecContext(ctx, d.Budget, d.Period, d.Used, now.UnixNano()); err != nil {
			return err
		}
	}
	prune := now.Sub(s.lastPrune) >= pruneEvery
	if prune {
		if _, err := tx.ExecContext(ctx, `DELETE FROM usage_ledger_batches WHERE applied_at < ?`,
			now.Add(-keepBatches).UnixNano()); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if prune {
		s.lastPrune = now
	}
	return nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// fail describes err without handing the driver's error type out; a cancelled or expired ctx
// stays recognisable.
func fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("ledger/sqlite: %s: %w", op, ctxErr)
	}
	return fmt.Errorf("ledger/sqlite: %s: %v", op, err)
}
