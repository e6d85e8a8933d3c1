// Package sqlite is the embedded event store backend: one SQLite file, through the pure-Go
// modernc.org/sqlite driver, no server and no cgo.
//
// It implements the contract of package eventstore and translates the driver's errors into
// the contract's. It must not import another backend (postgres, esdb) or the package that picks
// one (eventstore/open); only cmd/ chooses a backend.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // pure-Go driver: the embedded default needs no cgo

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/internal/backend"
	"github.com/causeway/causeway/eventstore/internal/sqlstore"
	"github.com/causeway/causeway/migrations"
)

// Store is the embedded event store: one file, a pure-Go driver, no server.
//
// SQLite has one writer at a time, so positions (the rowid) are committed in order and a
// reader can never observe a gap that a slower writer fills later. Appends in this process
// are also serialised by a mutex, which is cheaper than SQLite's busy-wait between writers;
// other processes are kept out by BEGIN IMMEDIATE and the busy timeout.
type Store struct {
	db      *sql.DB
	writeMu sync.Mutex
	wake    *sqlstore.Wakeup
	poll    time.Duration
}

var _ eventstore.Store = (*Store)(nil)

// sqlitePoll is how often an idle subscription looks for events appended by other processes;
// appends in this process wake subscribers at once.
const sqlitePoll = 100 * time.Millisecond

// Open opens (creating if needed) the event store file at path and applies its schema.
func Open(ctx context.Context, path string) (*Store, error) {
	path, _, _ = strings.Cut(path, "?")
	if path == "" {
		return nil, fmt.Errorf("%w: sqlite event store needs a file path (sqlite://./data/events.db)", eventstore.ErrInvalidArgument)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("eventstore: sqlite: %w", err)
		}
	}
	// WAL lets readers work while a writer commits; synchronous=FULL because this is the
	// audit log and a committed event must survive a power cut.
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("eventstore: sqlite: %w", err)
	}
	db.SetMaxOpenConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	if err := migrations.ApplySQLite(ctx, db, migrations.SQLiteEventStore); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("eventstore: sqlite: %w", err)
	}
	return &Store{db: db, wake: sqlstore.NewWakeup(), poll: sqlitePoll}, nil
}

func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	if err := backend.ValidateAppend(stream, expected, events); err != nil {
		return eventstore.AppendResult{}, err
	}
	metas := make([][]byte, len(events))
	for i, ev := range events {
		m, err := sqlstore.EncodeMetadata(ev.Metadata)
		if err != nil {
			return eventstore.AppendResult{}, err
		}
		metas[i] = m
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return eventstore.AppendResult{}, sqliteError(ctx, err)
	}
	defer func() { _ = tx.Rollback() }()

	found, err := sqliteStoredIDs(ctx, tx, events)
	if err != nil {
		return eventstore.AppendResult{}, sqliteError(ctx, err)
	}
	if len(found) > 0 {
		return sqlstore.RetryResult(stream, events, found)
	}

	var current sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(revision) FROM es_events WHERE stream = ?`, stream).Scan(&current); err != nil {
		return eventstore.AppendResult{}, sqliteError(ctx, err)
	}
	if !backend.Satisfied(expected, uint64(current.Int64), current.Valid) {
		return eventstore.AppendResult{}, &eventstore.WrongExpectedVersionError{Stream: stream, Expected: expected,
			Actual: uint64(current.Int64), ActualExists: current.Valid}
	}

	next := uint64(0)
	if current.Valid {
		next = uint64(current.Int64) + 1
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO es_events
		(id, stream, revision, type, schema_version, data, metadata, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return eventstore.AppendResult{}, sqliteError(ctx, err)
	}
	defer stmt.Close()
	now := time.Now().UnixNano()
	var res eventstore.AppendResult
	for i, ev := range events {
		r, err := stmt.ExecContext(ctx, ev.ID.String(), stream, int64(next)+int64(i), ev.Type,
			backend.SchemaVersion(ev), backend.Data(ev), metas[i], now)
		if err != nil {
			return eventstore.AppendResult{}, sqliteError(ctx, err)
		}
		pos, err := r.LastInsertId()
		if err != nil {
			return eventstore.AppendResult{}, sqliteError(ctx, err)
		}
		res = eventstore.AppendResult{NextRevision: next + uint64(i), Position: eventstore.Position(pos)}
	}
	if err := tx.Commit(); err != nil {
		return eventstore.AppendResult{}, sqliteError(ctx, err)
	}
	s.wake.Notify()
	return res, nil
}

func sqliteStoredIDs(ctx context.Context, tx *sql.Tx, events []eventstore.EventData) ([]sqlstore.StoredRevision, error) {
	args := make([]any, len(events))
	for i, ev := range events {
		args[i] = ev.ID.String()
	}
	q := `SELECT id, stream, revision, position FROM es_events WHERE id IN (?` +
		strings.Repeat(",?", len(events)-1) + `)`
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sqlstore.StoredRevision
	for rows.Next() {
		var (
			id  string
			f   sqlstore.StoredRevision
			rev int64
			pos int64
		)
		if err := rows.Scan(&id, &f.Stream, &rev, &pos); err != nil {
			return nil, err
		}
		f.Revision, f.Position = uint64(rev), eventstore.Position(pos)
		if err := f.ID.UnmarshalText([]byte(id)); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

const sqliteColumns = `position, id, stream, revision, type, schema_version, data, metadata, recorded_at`

func (s *Store) ReadStream(ctx context.Context, stream string, dir eventstore.Direction, from uint64, max int) ([]eventstore.RecordedEvent, error) {
	limit := int64(-1) // SQLite: no limit
	if max > 0 {
		limit = int64(max)
	}
	read := func(ctx context.Context, backwards bool, from int64) ([]eventstore.RecordedEvent, error) {
		if backwards {
			return s.query(ctx, `SELECT `+sqliteColumns+` FROM es_events WHERE stream = ? AND revision <= ?
				ORDER BY revision DESC LIMIT ?`, stream, from, limit)
		}
		return s.query(ctx, `SELECT `+sqliteColumns+` FROM es_events WHERE stream = ? AND revision >= ?
			ORDER BY revision LIMIT ?`, stream, from, limit)
	}
	return sqlstore.ReadStream(ctx, dir, from, read, func(ctx context.Context) error { return s.requireStream(ctx, stream) })
}

func (s *Store) requireStream(ctx context.Context, stream string) error {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM es_events WHERE stream = ? LIMIT 1`, stream).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %q", eventstore.ErrStreamNotFound, stream)
	}
	return sqliteError(ctx, err)
}

func (s *Store) ReadAll(ctx context.Context, from eventstore.Position, max int) ([]eventstore.RecordedEvent, error) {
	if max <= 0 {
		return nil, fmt.Errorf("%w: ReadAll needs a positive maximum", eventstore.ErrInvalidArgument)
	}
	return s.query(ctx, `SELECT `+sqliteColumns+` FROM es_events WHERE position > ? ORDER BY position LIMIT ?`,
		int64(from), max)
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]eventstore.RecordedEvent, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, sqliteError(ctx, err)
	}
	defer rows.Close()
	out := []eventstore.RecordedEvent{}
	for rows.Next() {
		var (
			ev       eventstore.RecordedEvent
			id       string
			pos, rev int64
			data     []byte
			meta     []byte
			nanos    int64
		)
		if err := rows.Scan(&pos, &id, &ev.Stream, &rev, &ev.Type, &ev.SchemaVersion, &data, &meta, &nanos); err != nil {
			return nil, sqliteError(ctx, err)
		}
		ev.Position, ev.Revision, ev.Data = eventstore.Position(pos), uint64(rev), data
		ev.RecordedAt = time.Unix(0, nanos).UTC()
		if err := sqlstore.DecodeEnvelope(&ev, id, meta); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, sqliteError(ctx, err)
	}
	return out, nil
}

func (s *Store) Subscribe(ctx context.Context, from eventstore.Position) (eventstore.Subscription, error) {
	return sqlstore.Subscribe(ctx, from, s.ReadAll, s.wake, s.poll), nil
}

func (s *Store) Ping(ctx context.Context) error {
	var one int
	return sqliteError(ctx, s.db.QueryRowContext(ctx, `SELECT 1 FROM es_events LIMIT 1`).Scan(&one))
}

func (s *Store) Close() error { return s.db.Close() }

// sqliteError translates driver errors at the boundary: the context's own error stays as it
// is, no rows is not an error for Ping, and everything else is the backend being unavailable.
func sqliteError(ctx context.Context, err error) error {
	switch {
	case err == nil, errors.Is(err, sql.ErrNoRows):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%w: sqlite: %v", eventstore.ErrUnavailable, err)
}
