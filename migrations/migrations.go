// Package migrations holds Causeway's database schemas as numbered SQL files, embedded in the
// binary, and applies them: each file once, in order, in its own transaction where the
// database has them, recorded in a schema_migrations table.
//
//	postgres/            every server-mode store on PostgreSQL, the answer cache included (one numbered sequence)
//	sqlite/eventstore/   the embedded event store
//	sqlite/ledger/       the embedded usage ledger (ledger/sqlite)
//	sqlite/cache/        the embedded answer cache's write-behind file (cache/memory)
//	clickhouse/          analytics (issue 6)
//
// It imports database drivers but nothing of Causeway's.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed postgres/*.sql sqlite/*/*.sql clickhouse/*.sql
var files embed.FS

// Set is one folder of numbered migrations for one database.
type Set struct {
	Name string // recorded with each applied file, e.g. "postgres"
	fsys fs.FS
	dir  string
}

var (
	// Postgres is the schema of the PostgreSQL event store, read models and usage ledger.
	Postgres = Set{Name: "postgres", fsys: files, dir: "postgres"}
	// SQLiteEventStore is the schema of the embedded event store.
	SQLiteEventStore = Set{Name: "sqlite/eventstore", fsys: files, dir: "sqlite/eventstore"}
	// SQLiteLedger is the schema of the embedded usage ledger.
	SQLiteLedger = Set{Name: "sqlite/ledger", fsys: files, dir: "sqlite/ledger"}
	// SQLiteCache is the schema of the file the embedded answer cache writes behind to.
	SQLiteCache = Set{Name: "sqlite/cache", fsys: files, dir: "sqlite/cache"}
	// SQLiteAnalytics is the schema of the embedded request log store.
	SQLiteAnalytics = Set{Name: "sqlite/analytics", fsys: files, dir: "sqlite/analytics"}
	// ClickHouse is the schema of the request log store in server mode.
	ClickHouse = Set{Name: "clickhouse", fsys: files, dir: "clickhouse"}
)

// File is one migration.
type File struct {
	Version int    // from the file name's leading number
	Name    string // the file name
	SQL     string
}

// Files returns the set's migrations in version order. A name without a leading number, or
// two files with the same number, is an error: the order must never be ambiguous.
func (s Set) Files() ([]File, error) {
	entries, err := fs.ReadDir(s.fsys, s.dir)
	if err != nil {
		return nil, fmt.Errorf("migrations %s: %w", s.Name, err)
	}
	var out []File
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migrations %s: %q does not start with a positive number and '_'", s.Name, e.Name())
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s: %q and %q share version %d", s.Name, prev, e.Name(), v)
		}
		seen[v] = e.Name()
		b, err := fs.ReadFile(s.fsys, path.Join(s.dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations %s: %w", s.Name, err)
		}
		out = append(out, File{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// pending returns the files whose versions are not in applied.
func pending(all []File, applied map[int]bool) []File {
	var out []File
	for _, f := range all {
		if !applied[f.Version] {
			out = append(out, f)
		}
	}
	return out
}
