package semantic

import (
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultThreshold is the similarity from which a lookup answers by default: on the labelled
// set of testdata/pairs.jsonl, 2 of the 100 pairs that are not paraphrases reach it, and none of
// the 100 paraphrases (see the package doc).
const DefaultThreshold float32 = 0.996

// DefaultMaxEntries bounds an Index built with Options{}. Each entry takes five bytes a
// dimension (its float32 vector and, on amd64, its int8 codes): 100,000 entries take 730 MiB at
// 1,536 dimensions (the largest common embedding size), 370 MiB at 768.
const DefaultMaxEntries = 100_000

// shards spreads partitions over this many locks, so that a long scan of one partition does not
// hold up lookups and writes in others.
const shards = 16

// Options configures an Index.
type Options struct {
	// MaxEntries is the most entries the index holds; adding one more evicts the entry added
	// longest ago. Zero or less means DefaultMaxEntries.
	MaxEntries int
}

// Match is the entry most similar to a query: its key and the cosine similarity of its vector
// to the query, in [-1, 1].
type Match struct {
	Key   string
	Score float32
}

// Hit reports whether m is similar enough to answer the query at threshold.
func (m Match) Hit(threshold float32) bool { return m.Score >= threshold }

// Index is an in-memory nearest-neighbour index of embedding vectors, searched one partition at
// a time by exact cosine similarity. Its methods are safe for concurrent use.
//
// Within a partition, vectors of different lengths (a model whose dimension changed) are kept
// apart and never compared: a query is compared with the vectors of its own length only.
type Index struct {
	max  int
	seed maphash.Seed

	// wmu serialises the writers (Add, Remove, Sweep); it guards keys, order and seq. Readers
	// take only the read lock of one shard, so a writer blocks lookups in its shard alone, and
	// only while it changes it.
	wmu   sync.Mutex
	keys  map[string]loc
	order fifo
	seq   uint64
	count atomic.Int64

	shards [shards]shard
}

type shard struct {
	mu    sync.RWMutex
	slabs map[slabKey]*slab
}

// slabKey names the vectors of one partition and one length.
type slabKey struct {
	partition string
	dim       int
}

// slab holds its vectors end to end in one slice, so that a scan reads memory in order.
type slab struct {
	key     slabKey
	vecs    []float32 // entry i is vecs[i*dim : (i+1)*dim], of norm 1
	codes   []int8    // entry i quantised: codes[i*dim : (i+1)*dim] times scales[i]
	scales  []float32 // codes and scales stay empty where scans do not use them (!quantised)
	keys    []string
	expires []int64 // Unix nanoseconds; math.MaxInt64 for an entry that never expires
}

type loc struct {
	sh   *shard
	s    *slab
	slot int
	seq  uint64 // which Add put it there, to tell its order entry from a stale one
}

// New returns an empty Index.
func New(opts Options) *Index {
	limit := opts.MaxEntries
	if limit <= 0 {
		limit = DefaultMaxEntries
	}
	ix := &Index{max: limit, seed: maphash.MakeSeed(), keys: make(map[string]loc)}
	for i := range ix.shards {
		ix.shards[i].slabs = make(map[slabKey]*slab)
	}
	return ix
}

// Len returns the number of entries held, expired ones not yet swept included.
func (ix *Index) Len() int { return int(ix.count.Load()) }

// Add stores vec under key in partition, replacing whatever key held before, in this partition
// or another. The vector is copied and normalised; a vector that cannot be (empty, all zeros,
// or not finite) is not stored, and key is removed. A zero expires means the entry never
// expires. When the index is full, the entries added longest ago are evicted.
func (ix *Index) Add(partition, key string, vec []float32, expires time.Time) {
	inv, ok := invNorm(vec)
	if !ok {
		ix.Remove(key)
		return
	}
	exp := int64(math.MaxInt64)
	if !expires.IsZero() {
		exp = expires.UnixNano()
	}
	sk := slabKey{partition: partition, dim: len(vec)}
	sh := ix.shard(partition)

	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.seq++
	if old, found := ix.keys[key]; found {
		if old.s.key == sk {
			sh.mu.Lock()
			old.s.set(old.slot, vec, inv)
			old.s.expires[old.slot] = exp
			sh.mu.Unlock()
			old.seq = ix.seq
			ix.keys[key] = old
			ix.pushOrderLocked(key)
			return
		}
		ix.removeLocked(key, old)
	}

	sh.mu.Lock()
	s := sh.slabs[sk]
	if s == nil {
		s = &slab{key: sk}
		sh.slabs[sk] = s
	}
	slot := len(s.keys)
	s.vecs = append(s.vecs, vec...)
	if quantised {
		s.codes = append(s.codes, make([]int8, len(vec))...)
		s.scales = append(s.scales, 0)
	}
	s.set(slot, vec, inv)
	s.keys = append(s.keys, key)
	s.expires = append(s.expires, exp)
	sh.mu.Unlock()

	ix.keys[key] = loc{sh: sh, s: s, slot: slot, seq: ix.seq}
	ix.pushOrderLocked(key)
	ix.count.Add(1)
	for int(ix.count.Load()) > ix.max {
		ix.evictOldestLocked()
	}
}

// Remove drops key's entry, if there is one.
func (ix *Index) Remove(key string) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if l, found := ix.keys[key]; found {
		ix.removeLocked(key, l)
	}
}

// Sweep drops every entry expired at now and returns how many it dropped.
func (ix *Index) Sweep(now time.Time) int {
	n := now.UnixNano()
	dropped := 0
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	for i := range ix.shards {
		sh := &ix.shards[i]
		sh.mu.Lock()
		for _, s := range sh.slabs {
			// Downwards, so that the entry moved into a freed slot has been looked at already.
			for slot := len(s.keys) - 1; slot >= 0; slot-- {
				if s.expires[slot] > n {
					continue
				}
				delete(ix.keys, s.keys[slot])
				ix.removeSlotLocked(sh, s, slot)
				dropped++
			}
		}
		sh.mu.Unlock()
	}
	ix.count.Add(int64(-dropped))
	ix.order.compact(ix.keys)
	return dropped
}

// Nearest returns the live entry of partition most similar to vec (cosine similarity), and
// false when the partition holds no live entry of vec's length, or vec has no direction.
func (ix *Index) Nearest(partition string, vec []float32, now time.Time) (Match, bool) {
	inv, ok := invNorm(vec)
	if !ok {
		return Match{}, false
	}
	n := now.UnixNano()
	sh := ix.shard(partition)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	s := sh.slabs[slabKey{partition: partition, dim: len(vec)}]
	if s == nil {
		return Match{}, false
	}
	slot, d := s.scan(vec, inv, n)
	if slot < 0 {
		return Match{}, false
	}
	return Match{Key: s.keys[slot], Score: d * inv}, true
}

// scan returns the slot of the live entry of s with the largest dot product with q, whose
// norm is 1/inv, and that product; -1 when every entry has expired.
func (s *slab) scan(q []float32, inv float32, now int64) (int, float32) {
	if quantised && len(s.vecs) >= quantiseFrom {
		return s.scanQuantised(q, inv, now)
	}
	return s.scanExact(q, now)
}

// quantiseFrom is the number of float32 a slab holds (entries times dimension) from which a
// scan takes the int8 first pass. Below it, 2 MiB, the vectors stay in the processor's caches
// and the conversions cost about what the memory saved is worth: on the development machine
// (2 MiB of L2 cache a core) the two scans break even at 256 dimensions times 1,000 entries and
// at 1,536 times 250, and the int8 pass is 1.35 times as fast at 256 times 2,000, twice as fast
// at 1,536 times 500.
const quantiseFrom = 1 << 19

// scanExact compares q with every entry's vector. Expiry is read only for an entry that beats
// the best so far, so that a scan reads little besides the vectors.
func (s *slab) scanExact(q []float32, now int64) (int, float32) {
	return s.scanExactFrom(0, q, now, -1, float32(math.Inf(-1)))
}

// scanExactFrom goes on with an exact scan from slot, given the best entry before it.
func (s *slab) scanExactFrom(slot int, q []float32, now int64, at int, best float32) (int, float32) {
	dim, vecs, expires := len(q), s.vecs, s.expires
	for off := slot * dim; off < len(vecs); slot, off = slot+1, off+dim {
		if d := dot(q, vecs[off:off+dim]); d > best && expires[slot] > now {
			best, at = d, slot
		}
	}
	return at, best
}

// scanQuantised answers as scanExact does, reading a quarter of the memory for most entries,
// given inv, 1/|q|. It compares q with each entry's int8 codes first. Rounding each component of
// a vector to a code moves it by at most half the entry's scale, so the product from the codes
// is within scale*|q|₁/2 of the exact one; only an entry whose bound reaches the best exact
// product so far is compared exactly. The running best is the exact scan's at every step, so
// the answer is too.
//
// When the codes rule out too few entries (a partition of near duplicates of one another and
// of the query), reading them costs more than it saves: past the first 4,096 entries, once more
// than half have been compared exactly, the scan goes on exactly. On the development machine,
// on a partition of 100,000 near duplicates, that brought the scan from 1.45 times the exact
// scan's time to 1.1 times.
func (s *slab) scanQuantised(q []float32, inv float32, now int64) (int, float32) {
	dim, vecs, codes, scales, expires := len(q), s.vecs, s.codes, s.scales, s.expires
	var l1 float32
	for _, x := range q {
		l1 += float32(math.Abs(float64(x)))
	}
	half := l1 / 2
	// A float32 sum of products is off by at most about dim/32 roundings of |q| (each of the
	// kernels' 32 or 64 lanes adds its products in sequence); slack covers two such sums many
	// times over.
	slack := (1e-4 + float32(dim)*5e-8) / inv
	best, at, compared := float32(math.Inf(-1)), -1, 0
	for slot, off := 0, 0; off < len(codes); slot, off = slot+1, off+dim {
		sc := scales[slot]
		if sc*(dotInt8(q, codes[off:off+dim])+half)+slack <= best || expires[slot] <= now {
			continue
		}
		if d := dot(q, vecs[off:off+dim]); d > best {
			best, at = d, slot
		}
		if compared++; slot >= 4096 && compared > slot/2 {
			return s.scanExactFrom(slot+1, q, now, at, best)
		}
	}
	return at, best
}

func (ix *Index) shard(partition string) *shard {
	return &ix.shards[maphash.String(ix.seed, partition)%shards]
}

// removeLocked drops key, found at l. The caller holds wmu.
func (ix *Index) removeLocked(key string, l loc) {
	delete(ix.keys, key)
	l.sh.mu.Lock()
	ix.removeSlotLocked(l.sh, l.s, l.slot)
	l.sh.mu.Unlock()
	ix.count.Add(-1)
}

// removeSlotLocked moves the last entry of s into slot and shortens s, dropping s from its
// shard once empty. The caller holds wmu and sh.mu, and has taken the slot's key out of keys.
func (ix *Index) removeSlotLocked(sh *shard, s *slab, slot int) {
	dim, last := s.key.dim, len(s.keys)-1
	if slot != last {
		copy(s.vecs[slot*dim:(slot+1)*dim], s.vecs[last*dim:])
		if quantised {
			copy(s.codes[slot*dim:(slot+1)*dim], s.codes[last*dim:])
			s.scales[slot] = s.scales[last]
		}
		s.keys[slot], s.expires[slot] = s.keys[last], s.expires[last]
		moved := ix.keys[s.keys[slot]]
		moved.slot = slot
		ix.keys[s.keys[slot]] = moved
	}
	s.keys[last] = ""
	s.vecs, s.keys, s.expires = s.vecs[:last*dim], s.keys[:last], s.expires[:last]
	if quantised {
		s.codes, s.scales = s.codes[:last*dim], s.scales[:last]
	}
	switch {
	case last == 0:
		delete(sh.slabs, s.key)
	case cap(s.keys) > 64 && last < cap(s.keys)/4:
		// Give back the memory of a partition that shrank a lot.
		s.vecs = append(make([]float32, 0, 2*last*dim), s.vecs...)
		if quantised {
			s.codes = append(make([]int8, 0, 2*last*dim), s.codes...)
			s.scales = append(make([]float32, 0, 2*last), s.scales...)
		}
		s.keys = append(make([]string, 0, 2*last), s.keys...)
		s.expires = append(make([]int64, 0, 2*last), s.expires...)
	}
}

// pushOrderLocked records that key was added last, under seq.
func (ix *Index) pushOrderLocked(key string) {
	ix.order.push(key, ix.seq)
	if len(ix.order.items)-ix.order.head > 2*len(ix.keys)+1024 {
		ix.order.compact(ix.keys) // keys added again left too many stale elements
	}
}

func (ix *Index) evictOldestLocked() {
	for {
		key, seq, ok := ix.order.pop()
		if !ok {
			return
		}
		if l, found := ix.keys[key]; found && l.seq == seq {
			ix.removeLocked(key, l)
			return
		}
	}
}

// invNorm returns 1/|v|, and false when v has no direction to compare.
func invNorm(v []float32) (float32, bool) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
		return 0, false
	}
	return float32(1 / math.Sqrt(sum)), true
}

// set stores v times k, of norm 1, at slot, and its int8 codes when scans use them.
func (s *slab) set(slot int, v []float32, k float32) {
	dim := len(v)
	row := s.vecs[slot*dim : (slot+1)*dim]
	var top float32
	for i, x := range v {
		row[i] = x * k
		top = max(top, float32(math.Abs(float64(row[i]))))
	}
	if !quantised {
		return
	}
	sc := top / 127
	codes := s.codes[slot*dim : (slot+1)*dim]
	for i, x := range row {
		codes[i] = int8(math.Round(float64(x / sc)))
	}
	s.scales[slot] = sc
}

// fifo is the order in which entries were added. A replaced or removed entry leaves a stale
// element behind, recognised by its seq and skipped; compact drops them.
type fifo struct {
	items []fifoItem
	head  int
}

type fifoItem struct {
	key string
	seq uint64
}

func (f *fifo) push(key string, seq uint64) {
	f.items = append(f.items, fifoItem{key, seq})
}

func (f *fifo) pop() (string, uint64, bool) {
	if f.head == len(f.items) {
		return "", 0, false
	}
	it := f.items[f.head]
	f.items[f.head] = fifoItem{}
	f.head++
	if f.head > 1024 && f.head > len(f.items)/2 {
		f.items = append([]fifoItem(nil), f.items[f.head:]...)
		f.head = 0
	}
	return it.key, it.seq, true
}

// compact drops the elements of entries no longer in keys, or there under a later Add.
func (f *fifo) compact(keys map[string]loc) {
	live := f.items[:0]
	for _, it := range f.items[f.head:] {
		if l, ok := keys[it.key]; ok && l.seq == it.seq {
			live = append(live, it)
		}
	}
	clear(f.items[len(live):])
	f.items, f.head = live, 0
}
