// Package redis is the answer cache on a Redis server (CAUSEWAY_CACHE_URL naming a Redis),
// through go-redis v9, shared by every gateway instance that uses the same server and prefix.
//
// Under the prefix (Config.Prefix), each entry is a hash that Redis expires at the entry's
// ExpiresAt, and beside the entries:
//
//	seq             the put counter (INCR)
//	bytes           the running sum of the entries' Size
//	info            a hash of every entry held: its size and the purge set it is in
//	age             a sorted set of the entries by put seq: the bound evicts from its head
//	changes         a sorted set of the entries with a vector by put seq: Changes reads it
//	expiry          a sorted set of the entries by ExpiresAt: what Redis expired is found there
//	                and removed from the rest, a few at every put and all at every prune
//	ns:<n>:<ws>:<ns> a set per workspace (n is its length) and namespace: Purge pops it
//
// Every change of these keys is one Lua script, so that the bookkeeping never disagrees with
// the entries whatever runs concurrently. The scripts name keys they build from the prefix, so
// the store needs a single Redis (with replicas or not), not a Redis Cluster.
//
// It imports the cache contract and go-redis, never the gateway, HTTP or commands.
package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/cache/internal/codec"
)

// Defaults of Config.
const (
	// DefaultPrefix starts every key the store writes.
	DefaultPrefix = "causeway:cache:"
	// DefaultMaxBytes bounds the entries' bytes (cache.Entry.Size): 1 GiB.
	DefaultMaxBytes = 1 << 30
	// DefaultPruneInterval is how often a store removes from the bookkeeping what Redis
	// expired.
	DefaultPruneInterval = 30 * time.Second
)

const (
	// sweepOnPut is how many expired entries each put removes from the bookkeeping: enough to
	// keep up with the puts that expire, few enough to keep a put short.
	sweepOnPut = 16
	// pruneBatch is how many expired entries one script of a prune removes, and purgeBatch how
	// many entries one script of a purge deletes: Redis runs nothing else during a script.
	pruneBatch = 500
	purgeBatch = 500
	// pruneTimeout bounds one background prune.
	pruneTimeout = time.Minute
)

// Config is how the store is opened; every field may be left zero.
type Config struct {
	// Prefix starts every key the store writes; zero: DefaultPrefix. Stores with the same
	// prefix on one server share their entries.
	Prefix string
	// MaxBytes bounds the sum of the entries' Size; zero: DefaultMaxBytes. Every put evicts
	// the least recently put entries until the sum is within it.
	MaxBytes int64
	// PruneInterval is how often the store removes what Redis expired from its bookkeeping;
	// zero: DefaultPruneInterval.
	PruneInterval time.Duration
	// Log is told when pruning starts failing and when it works again; nil: slog's default
	// logger.
	Log *slog.Logger
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("cache/redis: MaxBytes must not be negative (got %d)", c.MaxBytes))
	}
	if c.PruneInterval < 0 {
		errs = append(errs, fmt.Errorf("cache/redis: PruneInterval must not be negative (got %s)", c.PruneInterval))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
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

// Store keeps the answer cache in Redis.
type Store struct {
	rdb *goredis.Client
	cfg Config
	log *slog.Logger

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

var _ cache.Store = (*Store)(nil)

// Open connects to the Redis that url names (redis:// or rediss://, as go-redis parses it),
// checks that it answers, and starts the background prune. The store owns the connection:
// Close closes it.
func Open(ctx context.Context, url string, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	opts, err := goredis.ParseURL(url)
	if err != nil {
		// The parse error may quote the URL, password included.
		return nil, errors.New("cache/redis: the URL is not a redis:// or rediss:// URL")
	}
	rdb := goredis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fail(ctx, "connect", err)
	}
	s := &Store{rdb: rdb, cfg: cfg, log: cfg.Log.With("component", "cache/redis"),
		stop: make(chan struct{}), done: make(chan struct{})}
	go cache.PruneEvery(s.stop, s.done, s.cfg.PruneInterval, pruneTimeout, s.Prune, s.log,
		"pruning the answer cache fails; expired entries still count against its bound")
	return s, nil
}

// lib is the start of every script: ARGV[1] is the prefix. drop removes an entry and its
// bookkeeping and answers whether it was held; sweep drops up to n entries that expired by now
// (Unix milliseconds) and answers how many; evict drops the least recently put entries while
// the bytes exceed maxBytes (and resets a total that no entry accounts for).
const lib = `
local P = ARGV[1]
local function drop(k)
	local info = redis.call('HGET', P .. 'info', k)
	if info then
		local i = string.find(info, ':', 1, true)
		redis.call('DECRBY', P .. 'bytes', string.sub(info, 1, i - 1))
		redis.call('SREM', string.sub(info, i + 1), k)
		redis.call('HDEL', P .. 'info', k)
	end
	redis.call('DEL', P .. 'e:' .. k)
	redis.call('ZREM', P .. 'age', k)
	redis.call('ZREM', P .. 'changes', k)
	redis.call('ZREM', P .. 'expiry', k)
	return info ~= false
end
local function sweep(now, n)
	local ks = redis.call('ZRANGEBYSCORE', P .. 'expiry', '-inf', now, 'LIMIT', 0, n)
	for _, k in ipairs(ks) do drop(k) end
	return #ks
end
local function evict(maxBytes)
	local n = 0
	while tonumber(redis.call('GET', P .. 'bytes') or '0') > maxBytes do
		local oldest = redis.call('ZRANGE', P .. 'age', 0, 0)
		if #oldest == 0 then
			redis.call('SET', P .. 'bytes', 0)
			break
		end
		drop(oldest[1])
		n = n + 1
	end
	return n
end
`

// putScript: ARGV = prefix, key, workspace, namespace, partition, body, meta, vector,
// created (Unix µs), expires (Unix µs), expires (Unix ms, rounded up), size, maxBytes,
// now (Unix ms). It answers the entry's seq, or 0 when it was not stored (too large, or
// expired already); either way the entry it replaces is gone.
var putScript = goredis.NewScript(lib + `
local k = ARGV[2]
drop(k)
local now, maxBytes = tonumber(ARGV[14]), tonumber(ARGV[13])
sweep(now, ` + strconv.Itoa(sweepOnPut) + `)
if tonumber(ARGV[12]) > maxBytes or tonumber(ARGV[11]) <= now then return 0 end
local seq = redis.call('INCR', P .. 'seq')
local ek = P .. 'e:' .. k
redis.call('HSET', ek, 'ws', ARGV[3], 'ns', ARGV[4], 'part', ARGV[5], 'body', ARGV[6], 'meta', ARGV[7],
	'vec', ARGV[8], 'created', ARGV[9], 'expires', ARGV[10], 'seq', seq)
redis.call('PEXPIREAT', ek, ARGV[11])
local nsk = P .. 'ns:' .. string.len(ARGV[3]) .. ':' .. ARGV[3] .. ':' .. ARGV[4]
redis.call('SADD', nsk, k)
redis.call('HSET', P .. 'info', k, ARGV[12] .. ':' .. nsk)
redis.call('INCRBY', P .. 'bytes', ARGV[12])
redis.call('ZADD', P .. 'age', seq, k)
redis.call('ZADD', P .. 'expiry', ARGV[11], k)
if ARGV[8] ~= '' then redis.call('ZADD', P .. 'changes', seq, k) end
evict(maxBytes)
return seq
`)

// purgeScript: ARGV = prefix, workspace, namespace. It deletes up to purgeBatch entries of
// the namespace and answers how many of them were held and how many are left.
var purgeScript = goredis.NewScript(lib + `
local nsk = P .. 'ns:' .. string.len(ARGV[2]) .. ':' .. ARGV[2] .. ':' .. ARGV[3]
local n = 0
for _, k in ipairs(redis.call('SPOP', nsk, ` + strconv.Itoa(purgeBatch) + `)) do
	if drop(k) then n = n + 1 end
end
return {n, redis.call('SCARD', nsk)}
`)

// pruneScript: ARGV = prefix, now (Unix ms), maxBytes. It drops up to pruneBatch expired
// entries, then evicts down to the bound, and answers how many it dropped of each.
var pruneScript = goredis.NewScript(lib + `
local swept = sweep(tonumber(ARGV[2]), ` + strconv.Itoa(pruneBatch) + `)
return {swept, evict(tonumber(ARGV[3]))}
`)

// fields are the entry hash's fields as Get reads them.
var fields = []string{"ws", "ns", "part", "body", "meta", "vec", "created", "expires", "seq"}

// Get answers the live entry under key if it belongs to workspace: one HMGET.
func (s *Store) Get(ctx context.Context, workspace, key string, now time.Time) (cache.Entry, bool, error) {
	vals, err := s.rdb.HMGet(ctx, s.cfg.Prefix+"e:"+key, fields...).Result()
	if err != nil {
		return cache.Entry{}, false, fail(ctx, "get", err)
	}
	e, _, ok, err := parse(key, vals)
	if err != nil {
		return cache.Entry{}, false, fail(ctx, "get", err)
	}
	if !ok || e.Workspace != workspace || !e.ExpiresAt.After(now) {
		return cache.Entry{}, false, nil
	}
	return e, true, nil
}

// Put stores e, replacing any entry under e.Key, and evicts the least recently put entries
// while the bound is exceeded: one script.
func (s *Store) Put(ctx context.Context, e cache.Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	expiresMs := (e.ExpiresAt.UnixMicro() + 999) / 1000
	err := putScript.Run(ctx, s.rdb, nil, s.cfg.Prefix, e.Key, e.Workspace, e.Namespace, e.Partition,
		e.Body, e.Meta, codec.Vector(e.Vector), e.CreatedAt.UnixMicro(), e.ExpiresAt.UnixMicro(), expiresMs,
		e.Size(), s.cfg.MaxBytes, time.Now().UnixMilli()).Err()
	if err != nil {
		return fail(ctx, "put", err)
	}
	return nil
}

// Purge deletes every entry of workspace's namespace, purgeBatch at a time.
func (s *Store) Purge(ctx context.Context, workspace, namespace string) (int64, error) {
	var total int64
	for {
		res, err := purgeScript.Run(ctx, s.rdb, nil, s.cfg.Prefix, workspace, namespace).Int64Slice()
		if err != nil {
			return total, fail(ctx, "purge", err)
		}
		if len(res) != 2 {
			return total, fmt.Errorf("cache/redis: purge: the script answered %v", res)
		}
		total += res[0]
		if res[1] == 0 {
			return total, nil
		}
	}
}

// Changes answers up to limit entries with a vector put after the cursor, in put order: the
// members of the changes set after it, then their hashes in one pipeline. A member whose hash
// is gone (expired) or holds a later put (replaced meanwhile, listed again later) is passed
// over.
func (s *Store) Changes(ctx context.Context, after cache.Cursor, limit int) ([]cache.Entry, cache.Cursor, error) {
	if err := ctx.Err(); err != nil {
		return nil, after, fail(ctx, "changes", err)
	}
	if limit <= 0 {
		return nil, after, nil
	}
	members, err := s.rdb.ZRangeByScoreWithScores(ctx, s.cfg.Prefix+"changes", &goredis.ZRangeBy{
		Min: "(" + strconv.FormatInt(int64(after), 10), Max: "+inf", Count: int64(limit)}).Result()
	if err != nil {
		return nil, after, fail(ctx, "changes", err)
	}
	if len(members) == 0 {
		return nil, after, nil
	}
	cmds := make([]*goredis.SliceCmd, len(members))
	_, err = s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, m := range members {
			cmds[i] = p.HMGet(ctx, s.cfg.Prefix+"e:"+m.Member.(string), fields...)
		}
		return nil
	})
	if err != nil {
		return nil, after, fail(ctx, "changes", err)
	}
	var out []cache.Entry
	for i, m := range members {
		e, seq, ok, err := parse(m.Member.(string), cmds[i].Val())
		if err != nil {
			return nil, after, fail(ctx, "changes", err)
		}
		if ok && seq == int64(m.Score) && len(e.Vector) > 0 {
			out = append(out, e)
		}
	}
	return out, cache.Cursor(members[len(members)-1].Score), nil
}

// Stats answers the entries and bytes in the bookkeeping, the expired ones not yet pruned
// included.
func (s *Store) Stats(ctx context.Context) (cache.Stats, error) {
	var bytes *goredis.StringCmd
	var entries *goredis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		bytes = p.Get(ctx, s.cfg.Prefix+"bytes")
		entries = p.HLen(ctx, s.cfg.Prefix+"info")
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return cache.Stats{}, fail(ctx, "stats", err)
	}
	st := cache.Stats{Entries: entries.Val()}
	if b, err := bytes.Int64(); err == nil {
		st.Bytes = b
	} else if !errors.Is(err, goredis.Nil) {
		return cache.Stats{}, fail(ctx, "stats", err)
	}
	return st, nil
}

// Prune removes from the bookkeeping every entry that expired by now, and evicts down to the
// bound (which another store with a larger MaxBytes may have let grow); it answers how many
// entries it dropped.
func (s *Store) Prune(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for {
		res, err := pruneScript.Run(ctx, s.rdb, nil, s.cfg.Prefix, now.UnixMilli(), s.cfg.MaxBytes).Int64Slice()
		if err != nil {
			return total, fail(ctx, "prune", err)
		}
		if len(res) != 2 {
			return total, fmt.Errorf("cache/redis: prune: the script answered %v", res)
		}
		total += res[0] + res[1]
		if res[0] < pruneBatch {
			return total, nil
		}
	}
}

// Close stops the background prune and closes the connection.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		err = s.rdb.Close()
	})
	return err
}

// parse reads an entry hash's fields (in the order of fields); ok is false when the hash does
// not exist.
func parse(key string, vals []any) (e cache.Entry, seq int64, ok bool, err error) {
	if len(vals) != len(fields) || vals[0] == nil {
		return cache.Entry{}, 0, false, nil
	}
	str := func(i int) string {
		v, _ := vals[i].(string)
		return v
	}
	e = cache.Entry{Key: key, Workspace: str(0), Namespace: str(1), Partition: str(2),
		Body: []byte(str(3)), Meta: codec.Bytes([]byte(str(4)))}
	if e.Vector, err = codec.ParseVector([]byte(str(5))); err != nil {
		return cache.Entry{}, 0, false, fmt.Errorf("entry %s: %w", key, err)
	}
	created, err1 := strconv.ParseInt(str(6), 10, 64)
	expires, err2 := strconv.ParseInt(str(7), 10, 64)
	seq, err3 := strconv.ParseInt(str(8), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return cache.Entry{}, 0, false, fmt.Errorf("entry %s: %w", key, err)
	}
	e.CreatedAt, e.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
	return e, seq, true, nil
}

// fail describes err without handing go-redis's error types out; a cancelled or expired ctx
// stays recognisable.
func fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("cache/redis: %s: %w", op, ctxErr)
	}
	return fmt.Errorf("cache/redis: %s: %v", op, err)
}
