package migrations

import (
	"context"
	"database/sql"
	"fmt"
)

// ApplySQLite brings a SQLite database up to date with s. SQLite's single writer serialises
// concurrent starters, as long as the connection begins write transactions immediately
// (the eventstore opens it with _txlock=immediate).
func ApplySQLite(ctx context.Context, db *sql.DB, s Set) error {
	all, err := s.Files()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		set_name   TEXT    NOT NULL,
		version    INTEGER NOT NULL,
		name       TEXT    NOT NULL,
		applied_at TEXT    NOT NULL DEFAULT CURRENT_TIMESTAMP,
		PRIMARY KEY (set_name, version))`); err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	for _, f := range all {
		if err := applySQLiteFile(ctx, db, s, f); err != nil {
			return fmt.Errorf("migrations %s: %s: %w", s.Name, f.Name, err)
		}
	}
	return nil
}

// applySQLiteFile applies f unless it is recorded, checking inside the write transaction so
// that a second process that raced us sees our record and skips.
func applySQLiteFile(ctx context.Context, db *sql.DB, s Set, f File) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE set_name = ? AND version = ?`,
		s.Name, f.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, f.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (set_name, version, name) VALUES (?, ?, ?)`,
		s.Name, f.Version, f.Name); err != nil {
		return err
	}
	return tx.Commit()
}
