// Package postgres is the answer cache of server mode: one answer_cache table (migration
// 0006 of migrations/postgres) that every gateway instance on the database reads and writes,
// through pgx v5. A lookup is one indexed SELECT; the byte bound is kept by a prune that each
// store runs in the background (the first instance to start one holds the others off).
//
// It imports the cache contract, the migrations and pgx, never the gateway, HTTP or commands.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/cache/internal/codec"
	"github.com/causeway/causeway/migrations"
)

// Defaults of Config.
const (
	// DefaultMaxBytes bounds the entries' bytes (cache.Entry.Size): 1 GiB.
	DefaultMaxBytes = 1 << 30
	// DefaultPruneInterval is how often a store deletes what expired and what exceeds the bound.
	DefaultPruneInterval = 30 * time.Second
)

// pruneTimeout bounds one background prune, so a hung database cannot stop the loop for ever.
const pruneTimeout = time.Minute

// Config is how the store is opened; every field may be left zero.
type Config struct {
	// MaxBytes bounds the sum of the entries' Size; zero: DefaultMaxBytes. Between two prunes
	// the table may exceed it by what was put meanwhile.
	MaxBytes int64
	// PruneInterval is how often the store prunes; zero: DefaultPruneInterval.
	PruneInterval time.Duration
	// Log is told when pruning starts failing and when it works again; nil: slog's default
	// logger.
	Log *slog.Logger
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("cache/postgres: MaxBytes must not be negative (got %d)", c.MaxBytes))
	}
	if c.PruneInterval < 0 {
		errs = append(errs, fmt.Errorf("cache/postgres: PruneInterval must not be negative (got %s)", c.PruneInterval))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.PruneInterval == 0 {
		c.PruneInterval = DefaultPruneInterval
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// Store keeps the answer cache in PostgreSQL, in the pool's current schema.
type Store struct {
	pool *pgxpool.Pool
	cfg  Config
	log  *slog.Logger

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

var _ cache.Store = (*Store)(nil)

// Open applies migrations/postgres to the pool's current schema and starts the background
// prune, which Close stops. The pool stays the caller's: Close does not close it.
func Open(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Store, error) {
	if pool == nil {
		return nil, errors.New("cache/postgres: a pool is required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		return nil, fail(ctx, "migrate", err)
	}
	s := &Store{pool: pool, cfg: cfg, log: cfg.Log.With("component", "cache/postgres"),
		stop: make(chan struct{}), done: make(chan struct{})}
	go cache.PruneEvery(s.stop, s.done, s.cfg.PruneInterval, pruneTimeout, s.Prune, s.log,
		"pruning the answer cache fails; the table may exceed its bound")
	return s, nil
}

const columns = `key, workspace_id, namespace, partition, body, meta, vector, created_at, expires_at`

// Get answers the live entry under key if it belongs to workspace.
func (s *Store) Get(ctx context.Context, workspace, key string, now time.Time) (cache.Entry, bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+columns+` FROM answer_cache
		WHERE key = $1 AND workspace_id = $2 AND expires_at > $3`, key, workspace, now)
	if err != nil {
		return cache.Entry{}, false, fail(ctx, "get", err)
	}
	e, err := pgx.CollectExactlyOneRow(rows, scanEntry)
	if errors.Is(err, pgx.ErrNoRows) {
		return cache.Entry{}, false, nil
	}
	if err != nil {
		return cache.Entry{}, false, fail(ctx, "get", err)
	}
	return e, true, nil
}

// putLocked is the put of an entry with a vector. Changes follows seq, so an entry must never
// become visible after one with a higher seq, or a follower that has passed it would miss it
// for good. Taking the advisory lock before nextval, and holding it until the statement's
// transaction has committed (a commit is visible before its locks are released), makes the
// puts with a vector commit in seq order. Exact-only puts, which Changes does not list, skip
// the lock.
const putLocked = `WITH ordered AS (
		SELECT pg_advisory_xact_lock(hashtext('causeway.answer_cache.seq.' || current_schema())))
	INSERT INTO answer_cache (` + columns + `, size, seq)
	SELECT $1::text, $2::text, $3::text, $4::text, $5::bytea, $6::bytea, $7::bytea, $8::timestamptz,
		$9::timestamptz, $10::bigint, nextval('answer_cache_seq') FROM ordered
	` + onConflict

const putUnlocked = `INSERT INTO answer_cache (` + columns + `, size, seq)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, nextval('answer_cache_seq'))
	` + onConflict

const onConflict = `ON CONFLICT (key) DO UPDATE SET workspace_id = excluded.workspace_id,
		namespace = excluded.namespace, partition = excluded.partition, body = excluded.body,
		meta = excluded.meta, vector = excluded.vector, created_at = excluded.created_at,
		expires_at = excluded.expires_at, size = excluded.size, seq = excluded.seq`

// Put stores e, replacing any entry under e.Key, with the next seq.
func (s *Store) Put(ctx context.Context, e cache.Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	size := e.Size()
	if size > s.cfg.MaxBytes {
		// Never stored (the prune would delete everything else first), but it still replaces.
		if _, err := s.pool.Exec(ctx, `DELETE FROM answer_cache WHERE key = $1`, e.Key); err != nil {
			return fail(ctx, "put", err)
		}
		return nil
	}
	query := putUnlocked
	if len(e.Vector) > 0 {
		query = putLocked
	}
	body := e.Body
	if body == nil {
		body = []byte{}
	}
	if _, err := s.pool.Exec(ctx, query, e.Key, e.Workspace, e.Namespace, e.Partition, body, codec.Bytes(e.Meta),
		codec.Vector(e.Vector), e.CreatedAt, e.ExpiresAt, size); err != nil {
		return fail(ctx, "put", err)
	}
	return nil
}

// Purge deletes every entry of workspace's namespace.
func (s *Store) Purge(ctx context.Context, workspace, namespace string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM answer_cache WHERE workspace_id = $1 AND namespace = $2`,
		workspace, namespace)
	if err != nil {
		return 0, fail(ctx, "purge", err)
	}
	return tag.RowsAffected(), nil
}

// Changes answers up to limit entries with a vector whose seq is after the cursor, in seq
// order.
func (s *Store) Changes(ctx context.Context, after cache.Cursor, limit int) ([]cache.Entry, cache.Cursor, error) {
	if err := ctx.Err(); err != nil {
		return nil, after, fail(ctx, "changes", err)
	}
	if limit <= 0 {
		return nil, after, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+columns+`, seq FROM answer_cache
		WHERE seq > $1 AND vector IS NOT NULL ORDER BY seq LIMIT $2`, int64(after), limit)
	if err != nil {
		return nil, after, fail(ctx, "changes", err)
	}
	next := after
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cache.Entry, error) {
		var seq int64
		e, err := scan(r, &seq)
		next = cache.Cursor(seq)
		return e, err
	})
	if err != nil {
		return nil, after, fail(ctx, "changes", err)
	}
	return out, next, nil
}

// Stats answers the entries and bytes in the table, the expired ones not yet pruned included.
func (s *Store) Stats(ctx context.Context) (cache.Stats, error) {
	var st cache.Stats
	if err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(size), 0)::bigint FROM answer_cache`).
		Scan(&st.Entries, &st.Bytes); err != nil {
		return cache.Stats{}, fail(ctx, "stats", err)
	}
	return st, nil
}

// Prune deletes the entries that expired by now, then the least recently put while the sizes
// add up to more than MaxBytes, and answers how many it deleted. When another store is pruning
// the same table, it leaves the work to it and answers 0.
func (s *Store) Prune(ctx context.Context, now time.Time) (int64, error) {
	var deleted int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext('causeway.answer_cache.prune.' || current_schema()))`).
			Scan(&mine); err != nil || !mine {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM answer_cache WHERE expires_at <= $1`, now)
		if err != nil {
			return err
		}
		deleted = tag.RowsAffected()
		var total int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(size), 0)::bigint FROM answer_cache`).Scan(&total); err != nil {
			return err
		}
		if total <= s.cfg.MaxBytes {
			return nil
		}
		// Keep the newest entries whose sizes, added from the newest back, fit the bound.
		tag, err = tx.Exec(ctx, `DELETE FROM answer_cache c USING (
				SELECT key, sum(size) OVER (ORDER BY seq DESC ROWS UNBOUNDED PRECEDING) AS newer
				FROM answer_cache) r
			WHERE c.key = r.key AND r.newer > $1`, s.cfg.MaxBytes)
		if err != nil {
			return err
		}
		deleted += tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, fail(ctx, "prune", err)
	}
	return deleted, nil
}

// Close stops the background prune; the pool belongs to Open's caller.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
	})
	return nil
}

func scanEntry(r pgx.CollectableRow) (cache.Entry, error) { return scan(r) }

// scan reads the columns of `columns`, then extra.
func scan(r pgx.CollectableRow, extra ...any) (cache.Entry, error) {
	var e cache.Entry
	var vector []byte
	if err := r.Scan(append([]any{&e.Key, &e.Workspace, &e.Namespace, &e.Partition, &e.Body, &e.Meta, &vector,
		&e.CreatedAt, &e.ExpiresAt}, extra...)...); err != nil {
		return cache.Entry{}, err
	}
	v, err := codec.ParseVector(vector)
	if err != nil {
		return cache.Entry{}, fmt.Errorf("entry %s: %w", e.Key, err)
	}
	e.Vector, e.Meta = v, codec.Bytes(e.Meta)
	e.CreatedAt, e.ExpiresAt = e.CreatedAt.UTC(), e.ExpiresAt.UTC()
	return e, nil
}

// fail describes err without handing pgx's error types out; a cancelled or expired ctx stays
// recognisable.
func fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("cache/postgres: %s: %w", op, ctxErr)
	}
	return fmt.Errorf("cache/postgres: %s: %v", op, err)
}
