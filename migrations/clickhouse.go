package migrations

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// ApplyClickHouse brings a ClickHouse database up to date with s. ClickHouse has no
// transactions, so each statement of a file runs on its own, in order, and the file is
// recorded only after all of them succeeded; the statements are written to be rerun
// harmlessly (IF NOT EXISTS), so that a file interrupted half-way is simply applied again.
// Release 18.16 has no ADD COLUMN IF NOT EXISTS: an ADD COLUMN that finds its column there
// already (a run cut off before the file was recorded) counts as done.
func ApplyClickHouse(ctx context.Context, conn driver.Conn, s Set) error {
	all, err := s.Files()
	if err != nil {
		return err
	}
	if err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		set_name   String,
		version    UInt32,
		name       String,
		applied_at DateTime DEFAULT now()
	) ENGINE = MergeTree() ORDER BY (set_name, version)`); err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations WHERE set_name = ?`, s.Name)
	if err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	applied := map[int]bool{}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("migrations %s: %w", s.Name, err)
		}
		applied[int(v)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	for _, f := range pending(all, applied) {
		for _, stmt := range statements(f.SQL) {
			if err := conn.Exec(ctx, stmt); err != nil && !columnAddedBefore(stmt, err) {
				return fmt.Errorf("migrations %s: %s: %w", s.Name, f.Name, err)
			}
		}
		if err := recordClickHouse(ctx, conn, s, f); err != nil {
			return fmt.Errorf("migrations %s: %s: %w", s.Name, f.Name, err)
		}
	}
	return nil
}

// columnAddedBefore reports whether err is ClickHouse's "column already exists" (code 44)
// answering an ADD COLUMN.
func columnAddedBefore(stmt string, err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && ex.Code == 44 && strings.Contains(strings.ToUpper(stmt), "ADD COLUMN")
}

// recordClickHouse records f as applied. The row goes as a data block: a server of release
// 18.16 reads an INSERT's rows from the client's blocks, not from a VALUES clause in the query
// text, and would wait for them.
func recordClickHouse(ctx context.Context, conn driver.Conn, s Set, f File) error {
	batch, err := conn.PrepareBatch(ctx, `INSERT INTO schema_migrations (set_name, version, name)`)
	if err != nil {
		return err
	}
	if err := batch.Append(s.Name, uint32(f.Version), f.Name); err != nil {
		_ = batch.Abort()
		return err
	}
	return batch.Send()
}

// statements splits a file on the semicolons that end its lines, dropping comment lines: the
// native protocol takes one statement per query.
func statements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(trimmed, ";") {
			if st := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"); st != "" {
				out = append(out, st)
			}
			cur.Reset()
		}
	}
	if st := strings.TrimSpace(cur.String()); st != "" {
		out = append(out, st)
	}
	return out
}
