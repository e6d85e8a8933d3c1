// Package postgres is the event store backend on PostgreSQL, through pgx; its schema comes
// from migrations/postgres.
//
// It implements the contract of package eventstore and translates pgx's errors into the
// contract's, so that no pgx type leaves it. It must not import another backend (sqlite, esdb)
// or the package that picks one (eventstore/open); only cmd/ chooses a backend.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/internal/backend"
	"github.com/causeway/causeway/eventstore/internal/sqlstore"
	"github.com/causeway/causeway/migrations"
)

// Store is the event store on PostgreSQL.
//
// Gaps: a sequence hands out numbers at insert but they become visible at commit, so with
// concurrent writers a reader could see position 7 before 6 commits and skip 6 for ever.
// Here every append first locks the one row of es_head and takes its positions from it, so
// appends are serialised from position assignment to commit: a later append cannot get a
// position until the earlier one has committed (PostgreSQL makes a commit visible before it
// releases the transaction's locks) or rolled back (which rolls the head back too, so
// positions stay dense). Readers therefore never observe a gap. The cost is one append at a
// time across the store, which admin traffic does not come near.
//
// Subscribers are woken by LISTEN/NOTIFY (the NOTIFY is sent at commit) and, as a fallback,
// poll once a second.
type Store struct {
	pool    *pgxpool.Pool
	connStr string
	wake    *sqlstore.Wakeup
	poll    time.Duration

	listenOnce sync.Once
	stop       context.CancelFunc
	stopped    chan struct{}

	// beforeCommit, when set (tests only), runs inside the append transaction just before
	// COMMIT; an error rolls the append back.
	beforeCommit func(ctx context.Context) error
}

var _ eventstore.Store = (*Store)(nil)

const (
	pgNotifyChannel = "causeway_events"
	pgPoll          = time.Second
)

// Open connects to rawURL and applies migrations/postgres to its current schema (the
// URL may set search_path).
func Open(ctx context.Context, rawURL string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres URL %s: %v", eventstore.ErrInvalidArgument, eventstore.Redact(rawURL), pgErrorText(err))
	}
	if !strings.Contains(rawURL, "pool_max_conns") {
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres: %v", eventstore.ErrUnavailable, pgErrorText(err))
	}
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w: postgres: %v", eventstore.ErrUnavailable, pgErrorText(err))
	}
	lctx, stop := context.WithCancel(context.Background())
	p := &Store{pool: pool, connStr: rawURL, wake: sqlstore.NewWakeup(), poll: pgPoll, stop: stop, stopped: make(chan struct{})}
	p.listenOnce.Do(func() { go p.listen(lctx) })
	return p, nil
}

// listen turns notifications from every process's appends into wake-ups, reconnecting with
// back-off when the connection drops. After a reconnect it wakes subscribers once, since
// notifications sent while disconnected are lost.
func (p *Store) listen(ctx context.Context) {
	defer close(p.stopped)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, p.connStr)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+pgNotifyChannel)
		}
		if err == nil {
			backoff = 100 * time.Millisecond
			p.wake.Notify()
			for {
				if _, err = conn.WaitForNotification(ctx); err != nil {
					break
				}
				p.wake.Notify()
			}
		}
		if conn != nil {
			_ = conn.Close(context.Background())
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
			backoff = min(backoff*2, 5*time.Second)
		}
	}
}

func (p *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	if err := backend.ValidateAppend(stream, expected, events); err != nil {
		return eventstore.AppendResult{}, err
	}
	n := len(events)
	ids := make([]string, n)
	types := make([]string, n)
	versions := make([]int32, n)
	datas := make([]string, n)
	metas := make([]string, n)
	for i, ev := range events {
		m, err := sqlstore.EncodeMetadata(ev.Metadata)
		if err != nil {
			return eventstore.AppendResult{}, err
		}
		ids[i], types[i], versions[i] = ev.ID.String(), ev.Type, int32(backend.SchemaVersion(ev))
		datas[i], metas[i] = string(backend.Data(ev)), string(m)
	}
	kind, rev := pgExpected(expected)
	args := []any{stream, kind, rev, ids, types, versions, datas, metas}

	// One statement, committed on its own: the whole append is one round trip.
	var (
		res eventstore.AppendResult
		err error
	)
	if p.beforeCommit == nil {
		res, err = p.appendRows(ctx, stream, events, p.pool, args)
	} else {
		err = pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
			if res, err = p.appendRows(ctx, stream, events, tx, args); err != nil {
				return err
			}
			return p.beforeCommit(ctx)
		})
	}
	if err != nil {
		return eventstore.AppendResult{}, pgAppendError(ctx, err, stream, expected)
	}
	p.wake.Notify()
	return res, nil
}

type pgQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// appendRows calls es_append (migrations/postgres/0001) and reads its answer: one 'appended'
// row, or the 'stored' events whose ids the append repeats.
func (p *Store) appendRows(ctx context.Context, stream string, events []eventstore.EventData, q pgQuerier, args []any) (eventstore.AppendResult, error) {
	rows, err := q.Query(ctx, `SELECT r_kind, r_id::text, r_stream, r_revision, r_position FROM es_append($1, $2, $3, $4, $5, $6, $7, $8)`, args...)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	defer rows.Close()
	var (
		res      eventstore.AppendResult
		appended bool
		found    []sqlstore.StoredRevision
	)
	for rows.Next() {
		var (
			kind     string
			id       *string
			f        sqlstore.StoredRevision
			rev, pos int64
		)
		if err := rows.Scan(&kind, &id, &f.Stream, &rev, &pos); err != nil {
			return eventstore.AppendResult{}, err
		}
		f.Revision, f.Position = uint64(rev), eventstore.Position(pos)
		if kind == "appended" {
			res, appended = eventstore.AppendResult{NextRevision: f.Revision, Position: f.Position}, true
			continue
		}
		if id == nil {
			return eventstore.AppendResult{}, errors.New("es_append returned a stored event without an id")
		}
		if err := f.ID.UnmarshalText([]byte(*id)); err != nil {
			return eventstore.AppendResult{}, err
		}
		found = append(found, f)
	}
	if err := rows.Err(); err != nil {
		return eventstore.AppendResult{}, err
	}
	if len(found) > 0 {
		return sqlstore.RetryResult(stream, events, found)
	}
	if !appended {
		return eventstore.AppendResult{}, errors.New("es_append returned nothing")
	}
	return res, nil
}

// pgExpected encodes the condition as es_append takes it.
func pgExpected(e eventstore.ExpectedRevision) (kind int16, rev int64) {
	switch {
	case e.IsAny():
		return 1, 0
	case e.IsNoStream():
		return 2, 0
	case e.IsStreamExists():
		return 3, 0
	}
	n, _ := e.ExactRevision()
	if n > math.MaxInt64 {
		return 4, -1 // no stream can be at this revision
	}
	return 4, int64(n)
}

const pgColumns = `position, id::text, stream, revision, type, schema_version, data::text, metadata::text, recorded_at`

func (p *Store) ReadStream(ctx context.Context, stream string, dir eventstore.Direction, from uint64, max int) ([]eventstore.RecordedEvent, error) {
	var limit *int64 // NULL: LIMIT ALL
	if max > 0 {
		l := int64(max)
		limit = &l
	}
	read := func(ctx context.Context, backwards bool, from int64) ([]eventstore.RecordedEvent, error) {
		if backwards {
			return p.query(ctx, `SELECT `+pgColumns+` FROM es_events WHERE stream = $1 AND revision <= $2
				ORDER BY revision DESC LIMIT $3`, stream, from, limit)
		}
		return p.query(ctx, `SELECT `+pgColumns+` FROM es_events WHERE stream = $1 AND revision >= $2
			ORDER BY revision LIMIT $3`, stream, from, limit)
	}
	return sqlstore.ReadStream(ctx, dir, from, read, func(ctx context.Context) error { return p.requireStream(ctx, stream) })
}

func (p *Store) requireStream(ctx context.Context, stream string) error {
	var exists bool
	if err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM es_events WHERE stream = $1)`, stream).Scan(&exists); err != nil {
		return pgError(ctx, err)
	}
	if !exists {
		return fmt.Errorf("%w: %q", eventstore.ErrStreamNotFound, stream)
	}
	return nil
}

func (p *Store) ReadAll(ctx context.Context, from eventstore.Position, max int) ([]eventstore.RecordedEvent, error) {
	if max <= 0 {
		return nil, fmt.Errorf("%w: ReadAll needs a positive maximum", eventstore.ErrInvalidArgument)
	}
	return p.query(ctx, `SELECT `+pgColumns+` FROM es_events WHERE position > $1 ORDER BY position LIMIT $2`,
		int64(from), max)
}

func (p *Store) query(ctx context.Context, q string, args ...any) ([]eventstore.RecordedEvent, error) {
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, pgError(ctx, err)
	}
	defer rows.Close()
	out := []eventstore.RecordedEvent{}
	for rows.Next() {
		var (
			ev         eventstore.RecordedEvent
			id         string
			pos, rev   int64
			data, meta string
		)
		if err := rows.Scan(&pos, &id, &ev.Stream, &rev, &ev.Type, &ev.SchemaVersion, &data, &meta, &ev.RecordedAt); err != nil {
			return nil, pgError(ctx, err)
		}
		ev.Position, ev.Revision, ev.Data = eventstore.Position(pos), uint64(rev), []byte(data)
		ev.RecordedAt = ev.RecordedAt.UTC()
		if err := sqlstore.DecodeEnvelope(&ev, id, []byte(meta)); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, pgError(ctx, err)
	}
	return out, nil
}

func (p *Store) Subscribe(ctx context.Context, from eventstore.Position) (eventstore.Subscription, error) {
	return sqlstore.Subscribe(ctx, from, p.ReadAll, p.wake, p.poll), nil
}

func (p *Store) Ping(ctx context.Context) error {
	return pgError(ctx, p.pool.Ping(ctx))
}

func (p *Store) Close() error {
	p.stop()
	<-p.stopped
	p.pool.Close()
	return nil
}

// pgError translates pgx errors at the boundary. Any server or connection failure is
// ErrUnavailable: the append or read did not happen and may be retried. The message keeps
// PostgreSQL's text but never the connection string.
func pgError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)) {
		return ctx.Err()
	}
	if errors.Is(err, eventstore.ErrInvalidArgument) || errors.Is(err, eventstore.ErrDuplicateEventID) {
		return err
	}
	return fmt.Errorf("%w: postgres: %s", eventstore.ErrUnavailable, pgErrorText(err))
}

// pgAppendError is pgError for appends: es_append's CW001 is the concurrency conflict, with
// the stream's last revision (empty: no events) as its detail.
func pgAppendError(ctx context.Context, err error, stream string, expected eventstore.ExpectedRevision) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "CW001" {
		return pgError(ctx, err)
	}
	wev := &eventstore.WrongExpectedVersionError{Stream: stream, Expected: expected}
	if actual, perr := strconv.ParseUint(pgErr.Detail, 10, 64); perr == nil {
		wev.Actual, wev.ActualExists = actual, true
	}
	return wev
}

func pgErrorText(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity + ": " + pgErr.Message + " (SQLSTATE " + pgErr.Code + ")"
	}
	return err.Error()
}
