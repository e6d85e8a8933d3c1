// Package memory is the answer cache of embedded mode: the entries live in this process, in a
// map bounded by bytes with least-recently-used eviction, and are written behind to a SQLite
// file (the schema of migrations/sqlite/cache) so that a restart keeps them. A lookup never
// touches the file; puts, deletes, purges and evictions reach it in batches from a background
// goroutine.
//
// One process owns a file: two stores on one file would each overwrite the other's writes.
//
// It imports the cache contract, the migrations and the SQLite driver, never the gateway.
package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	_ "modernc.org/sqlite" // pure-Go driver: the embedded default needs no cgo

	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/cache/internal/codec"
	"github.com/causeway/causeway/migrations"
)

// Defaults of Config.
const (
	// DefaultMaxBytes bounds the entries' bytes (cache.Entry.Size): 256 MiB.
	DefaultMaxBytes = 256 << 20
	// DefaultFlushInterval is how often what changed is written to the file. It is also what
	// a crash may lose: the entries put (and the deletions made) within the last interval.
	DefaultFlushInterval = time.Second
	// DefaultSweepInterval is how often the entries that expired are dropped.
	DefaultSweepInterval = time.Minute
)

const (
	// flushBatch is how many pending writes wake the writer before its interval ends, so that
	// a burst of puts is written in small transactions rather than one large one.
	flushBatch = 256
	// closeTimeout bounds the last flush, at Close.
	closeTimeout = 30 * time.Second
	// flushTimeout bounds one flush of the background writer, so a stuck disk cannot stop it
	// for ever.
	flushTimeout = time.Minute
)

// Config is how the store is opened; every field may be left zero.
type Config struct {
	// Path is the SQLite file the entries are written behind to and loaded from at Open (the
	// gateway passes DATA_DIR/cache.db); "": the entries live in memory only and Close loses
	// them.
	Path string
	// MaxBytes bounds the sum of the entries' Size; zero: DefaultMaxBytes.
	MaxBytes int64
	// FlushInterval is how often changes are written to Path; zero: DefaultFlushInterval.
	FlushInterval time.Duration
	// SweepInterval is how often expired entries are dropped; zero: DefaultSweepInterval.
	SweepInterval time.Duration
	// Log is told when writing the file starts failing and when it works again; nil: slog's
	// default logger.
	Log *slog.Logger
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("cache/memory: MaxBytes must not be negative (got %d)", c.MaxBytes))
	}
	if c.FlushInterval < 0 {
		errs = append(errs, fmt.Errorf("cache/memory: FlushInterval must not be negative (got %s)", c.FlushInterval))
	}
	if c.SweepInterval < 0 {
		errs = append(errs, fmt.Errorf("cache/memory: SweepInterval must not be negative (got %s)", c.SweepInterval))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = DefaultSweepInterval
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// Store is the in-process answer cache.
//
// One mutex guards everything: a Get moves its entry to the front of the recency list, so even
// a read writes. Crash bound: the writer flushes every FlushInterval (and sooner after a burst
// of flushBatch changes), so a crash loses at most the changes of the last interval. For a
// cache that is fine: a lost entry is one more miss, and a lost deletion brings back an entry
// that was valid when put (a lost purge excepted, which the gateway's operator may repeat).
type Store struct {
	cfg Config
	db  *sql.DB // nil: no file
	log *slog.Logger

	mu      sync.Mutex
	closed  bool
	entries map[string]*node
	lru     node // sentinel of the recency list: lru.next is the most recently used
	bytes   int64
	seq     int64
	// changes lists, in seq order, the entries with a vector as they were put. A record whose
	// entry has since been replaced, or has gone, is stale: Changes skips it, and compact drops
	// the stale records once they are half of the list.
	changes []change
	stale   int
	// pending is what the writer has to write, by key: the entry to store, or nil to delete.
	// Only the last change of a key matters, so a key put and purged between two flushes is
	// written once. A node is never changed once inserted (but for its place in the recency
	// list), so the writer reads it without the lock.
	pending map[string]*node

	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	failing bool // the last flush failed; guarded by the writer goroutine alone
}

var _ cache.Store = (*Store)(nil)

type node struct {
	e          cache.Entry
	size, seq  int64
	prev, next *node
}

type change struct {
	seq int64
	key string
}

// Open opens the store, loading from cfg.Path (created if needed) the entries that have not
// expired, and starts the background writer and sweeper, which Close stops.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Store{
		cfg:     cfg,
		log:     cfg.Log.With("component", "cache/memory"),
		entries: map[string]*node{},
		kick:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.lru.next, s.lru.prev = &s.lru, &s.lru
	if cfg.Path != "" {
		db, err := openFile(ctx, cfg.Path)
		if err != nil {
			return nil, err
		}
		s.db = db
		s.pending = map[string]*node{}
		if err := s.load(ctx, time.Now()); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	go s.run()
	return s, nil
}

func openFile(ctx context.Context, path string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("cache/memory: %w", err)
	}
	// synchronous=NORMAL: in WAL mode a power cut may lose the last transactions, never the
	// file; a cache can spare them.
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("cache/memory: %w", err)
	}
	// The writer is the only user after load.
	db.SetMaxOpenConns(1)
	if err := migrations.ApplySQLite(ctx, db, migrations.SQLiteCache); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("cache/memory: %w", err)
	}
	return db, nil
}

// load reads the live entries in put order, so that the least recently put is the first
// evicted, and deletes the expired ones from the file.
func (s *Store) load(ctx context.Context, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM answer_cache WHERE expires_at <= ?`, now.UnixMicro()); err != nil {
		return fail(ctx, "load", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT key, workspace_id, namespace, partition, body, meta, vector,
		created_at, expires_at, seq FROM answer_cache ORDER BY seq`)
	if err != nil {
		return fail(ctx, "load", err)
	}
	defer rows.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for rows.Next() {
		var e cache.Entry
		var vector []byte
		var created, expires, seq int64
		if err := rows.Scan(&e.Key, &e.Workspace, &e.Namespace, &e.Partition, &e.Body, &e.Meta, &vector,
			&created, &expires, &seq); err != nil {
			return fail(ctx, "load", err)
		}
		if e.Vector, err = codec.ParseVector(vector); err != nil {
			return fmt.Errorf("cache/memory: load %s: %w", e.Key, err)
		}
		e.Meta = codec.Bytes(e.Meta)
		e.CreatedAt, e.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
		s.seq = max(s.seq, seq-1) // keep the order and numbering of the file
		s.insert(e)
	}
	if err := rows.Err(); err != nil {
		return fail(ctx, "load", err)
	}
	// A bound lowered since the last run takes effect now.
	s.evict()
	return nil
}

// Get answers the live entry under key if it belongs to workspace, and makes it the most
// recently used. An entry found expired is dropped.
func (s *Store) Get(ctx context.Context, workspace, key string, now time.Time) (cache.Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return cache.Entry{}, false, fmt.Errorf("cache/memory: get: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.entries[key]
	if !ok || n.e.Workspace != workspace {
		return cache.Entry{}, false, nil
	}
	if !n.e.ExpiresAt.After(now) {
		s.remove(n)
		return cache.Entry{}, false, nil
	}
	s.unlink(n)
	s.pushFront(n)
	return n.e, true, nil
}

// Put stores e, replacing any entry under e.Key, then evicts the least recently used entries
// while the bound is exceeded. e's slices are kept, not copied.
func (s *Store) Put(ctx context.Context, e cache.Entry) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cache/memory: put: %w", err)
	}
	if err := e.Validate(); err != nil {
		return err
	}
	if len(e.Vector) == 0 {
		e.Vector = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("cache/memory: put: the store is closed")
	}
	if old, ok := s.entries[e.Key]; ok {
		s.remove(old)
	}
	if e.Size() > s.cfg.MaxBytes {
		return nil // never stored: it would evict everything and still not fit
	}
	n := s.insert(e)
	s.write(e.Key, n)
	s.evict()
	return nil
}

// Purge deletes every entry of workspace's namespace.
func (s *Store) Purge(ctx context.Context, workspace, namespace string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("cache/memory: purge: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, nd := range s.entries {
		if nd.e.Workspace == workspace && nd.e.Namespace == namespace {
			s.remove(nd)
			n++
		}
	}
	return n, nil
}

// Changes answers up to limit entries with a vector put after the cursor, in put order.
func (s *Store) Changes(ctx context.Context, after cache.Cursor, limit int) ([]cache.Entry, cache.Cursor, error) {
	if err := ctx.Err(); err != nil {
		return nil, after, fmt.Errorf("cache/memory: changes: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.changes), func(i int) bool { return s.changes[i].seq > int64(after) })
	var out []cache.Entry
	next := after
	for ; i < len(s.changes) && len(out) < limit; i++ {
		c := s.changes[i]
		next = cache.Cursor(c.seq)
		if n, ok := s.entries[c.key]; ok && n.seq == c.seq {
			out = append(out, n.e)
		}
	}
	return out, next, nil
}

// Stats answers the entries and bytes held.
func (s *Store) Stats(ctx context.Context) (cache.Stats, error) {
	if err := ctx.Err(); err != nil {
		return cache.Stats{}, fmt.Errorf("cache/memory: stats: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return cache.Stats{Entries: int64(len(s.entries)), Bytes: s.bytes}, nil
}

// Prune drops every entry that expired by now and answers how many; the sweeper calls it every
// SweepInterval. It looks at every entry, which once a minute costs less than keeping an
// expiry index up to date at every put.
func (s *Store) Prune(ctx context.Context, now time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("cache/memory: prune: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, nd := range s.entries {
		if !nd.e.ExpiresAt.After(now) {
			s.remove(nd)
			n++
		}
	}
	return n, nil
}

// Close stops the writer and the sweeper and writes what is pending.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	if s.db == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := s.flush(ctx)
	return errors.Join(err, s.db.Close())
}

// insert adds e as the most recently used entry with the next seq. s.mu is held and no entry
// is under e.Key.
func (s *Store) insert(e cache.Entry) *node {
	s.seq++
	n := &node{e: e, size: e.Size(), seq: s.seq}
	s.entries[e.Key] = n
	s.pushFront(n)
	s.bytes += n.size
	if e.Vector != nil {
		s.changes = append(s.changes, change{seq: n.seq, key: e.Key})
	}
	return n
}

// remove deletes n from memory and from the file. s.mu is held.
func (s *Store) remove(n *node) {
	delete(s.entries, n.e.Key)
	s.unlink(n)
	s.bytes -= n.size
	if n.e.Vector != nil {
		s.stale++
		s.compact()
	}
	s.write(n.e.Key, nil)
}

// evict removes the least recently used entries while the bound is exceeded. s.mu is held.
func (s *Store) evict() {
	for s.bytes > s.cfg.MaxBytes && s.lru.prev != &s.lru {
		s.remove(s.lru.prev)
	}
}

// compact drops the stale records of changes once they are half of it, so that the list
// stays proportional to the entries with a vector. s.mu is held.
func (s *Store) compact() {
	if s.stale < 1024 || 2*s.stale < len(s.changes) {
		return
	}
	kept := make([]change, 0, len(s.changes)-s.stale)
	for _, c := range s.changes {
		if n, ok := s.entries[c.key]; ok && n.seq == c.seq {
			kept = append(kept, c)
		}
	}
	s.changes, s.stale = kept, 0
}

// write queues a change of key for the file (n nil: a deletion) and wakes the writer once a
// batch is ready. s.mu is held.
func (s *Store) write(key string, n *node) {
	if s.pending == nil {
		return
	}
	s.pending[key] = n
	if len(s.pending) >= flushBatch {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

func (s *Store) pushFront(n *node) {
	n.prev, n.next = &s.lru, s.lru.next
	s.lru.next.prev = n
	s.lru.next = n
}

func (s *Store) unlink(n *node) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
}

// run is the background writer and sweeper.
func (s *Store) run() {
	defer close(s.done)
	flush := time.NewTicker(s.cfg.FlushInterval)
	defer flush.Stop()
	sweep := time.NewTicker(s.cfg.SweepInterval)
	defer sweep.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-sweep.C:
			_, _ = s.Prune(context.Background(), time.Now())
		case <-flush.C:
		case <-s.kick:
		}
		if s.db != nil {
			ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
			err := s.flush(ctx)
			cancel()
			s.report(err)
		}
	}
}

// report logs the first failure of an outage (WARN) and its end (INFO), not every flush.
func (s *Store) report(err error) {
	switch {
	case err != nil && !s.failing:
		s.failing = true
		s.log.Warn("writing the answer cache's file fails; changes wait in memory", "path", s.cfg.Path, "err", err)
	case err == nil && s.failing:
		s.failing = false
		s.log.Info("writing the answer cache's file works again", "path", s.cfg.Path)
	}
}

// flush writes the pending changes in one transaction. When it fails, the changes that no
// later change of the same key replaced are pending again.
func (s *Store) flush(ctx context.Context) error {
	s.mu.Lock()
	batch := s.pending
	if len(batch) == 0 {
		s.mu.Unlock()
		return nil
	}
	s.pending = map[string]*node{}
	s.mu.Unlock()
	err := s.writeBatch(ctx, batch)
	if err != nil {
		s.mu.Lock()
		for k, n := range batch {
			if _, newer := s.pending[k]; !newer {
				s.pending[k] = n
			}
		}
		s.mu.Unlock()
		return fail(ctx, "flush", err)
	}
	return nil
}

func (s *Store) writeBatch(ctx context.Context, batch map[string]*node) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	upsert, err := tx.PrepareContext(ctx, `INSERT INTO answer_cache (key, workspace_id, namespace, partition,
		body, meta, vector, created_at, expires_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET workspace_id = excluded.workspace_id, namespace = excluded.namespace,
		partition = excluded.partition, body = excluded.body, meta = excluded.meta, vector = excluded.vector,
		created_at = excluded.created_at, expires_at = excluded.expires_at, seq = excluded.seq`)
	if err != nil {
		return err
	}
	defer upsert.Close()
	del, err := tx.PrepareContext(ctx, `DELETE FROM answer_cache WHERE key = ?`)
	if err != nil {
		return err
	}
	defer del.Close()
	for k, n := range batch {
		if n == nil {
			_, err = del.ExecContext(ctx, k)
		} else {
			e := n.e
			_, err = upsert.ExecContext(ctx, e.Key, e.Workspace, e.Namespace, e.Partition, nonNil(e.Body), e.Meta,
				codec.Vector(e.Vector), e.CreatedAt.UnixMicro(), e.ExpiresAt.UnixMicro(), n.seq)
		}
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}

// nonNil keeps a nil body from being written as NULL into a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// fail describes err without handing the driver's error type out; a cancelled or expired ctx
// stays recognisable.
func fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("cache/memory: %s: %w", op, ctxErr)
	}
	return fmt.Errorf("cache/memory: %s: %v", op, err)
}
