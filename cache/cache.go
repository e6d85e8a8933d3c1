package cache

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Entry is one cached answer.
type Entry struct {
	Key       string    // the exact lookup key (a hex digest the gateway computes); unique per store
	Workspace string    // the owning workspace; a lookup is always scoped to one workspace
	Namespace string    // x-gateway-cache-namespace; "" is the default namespace
	Partition string    // the semantic search scope (workspace, route, model, namespace), opaque here
	Body      []byte    // the answer, JSON
	Meta      []byte    // opaque JSON the gateway keeps beside the answer (usage, cost, latency)
	Vector    []float32 // the embedding for semantic lookups; nil when the entry is exact-only
	CreatedAt time.Time // kept to the microsecond
	// ExpiresAt ends the entry: Get answers it only while ExpiresAt is after the now it is
	// given, and a backend may drop it once its own clock has passed ExpiresAt.
	ExpiresAt time.Time
}

// EntryOverhead is what an entry counts against the size bound beyond its variable parts: the
// times, the lengths and the bookkeeping every backend keeps beside it.
const EntryOverhead = 64

// Size is what the entry counts against a store's size bound, in bytes: its strings, its body,
// its meta, four bytes per vector component and EntryOverhead. The workspace, namespace and
// partition count too, because the partition the gateway builds can be as long as a small body.
func (e Entry) Size() int64 {
	return int64(len(e.Key)+len(e.Workspace)+len(e.Namespace)+len(e.Partition)+
		len(e.Body)+len(e.Meta)+4*len(e.Vector)) + EntryOverhead
}

// Validate reports what makes e unfit for Put: it needs a key and a workspace, because a lookup
// is always by both, and an expiry, because a cache never keeps an answer for ever.
func (e Entry) Validate() error {
	var errs []error
	if e.Key == "" {
		errs = append(errs, errors.New("cache: an entry needs a key"))
	}
	if e.Workspace == "" {
		errs = append(errs, errors.New("cache: an entry needs a workspace"))
	}
	if e.ExpiresAt.IsZero() {
		errs = append(errs, errors.New("cache: an entry needs an expiry"))
	}
	return errors.Join(errs...)
}

// Store keeps cached answers within a byte bound.
//
// A backend may keep the slices of an Entry handed to Put and hand the very same slices to
// every Get and Changes (the in-process one does, to copy nothing on a hit): none of them may
// be modified.
type Store interface {
	// Get answers the live entry (ExpiresAt after now) under key if it belongs to workspace.
	// An entry of another workspace is never answered (ok=false), even with the right key.
	Get(ctx context.Context, workspace, key string, now time.Time) (Entry, bool, error)
	// Put stores e, replacing any entry under e.Key (force-refresh relies on this). An entry
	// larger than the store's bound is not stored, but still removes the entry it replaces.
	Put(ctx context.Context, e Entry) error
	// Purge deletes every entry of workspace's namespace and answers how many it deleted.
	Purge(ctx context.Context, workspace, namespace string) (int64, error)
	// Changes answers up to limit entries WITH a vector that were put after the cursor, oldest
	// first, and the cursor to continue from: each instance's in-memory semantic index follows
	// it. A replaced entry appears again, at its new place; purged, evicted and expired entries
	// simply stop being answered by Get, and the index verifies its candidates with Get.
	Changes(ctx context.Context, after Cursor, limit int) ([]Entry, Cursor, error)
	// Stats answers the entries and bytes held, expired ones not yet removed included.
	Stats(ctx context.Context) (Stats, error)
	// Close releases the store; what it writes behind is written first.
	Close() error
}

// Cursor is a place in a store's sequence of puts; the zero Cursor is before the first.
type Cursor int64

// Stats is what a store holds: Bytes is the sum of its entries' Size.
type Stats struct{ Entries, Bytes int64 }

// PruneEvery calls prune every interval, each call bounded by timeout, until stop is closed,
// then closes done. A failing prune is logged once as the failures start (WARN, with warn) and
// once as they end (INFO), not at every interval. The shared stores run it in the background.
func PruneEvery(stop <-chan struct{}, done chan<- struct{}, every, timeout time.Duration,
	prune func(ctx context.Context, now time.Time) (int64, error), log *slog.Logger, warn string) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		_, err := prune(ctx, time.Now())
		cancel()
		switch {
		case err != nil && !failing:
			failing = true
			log.Warn(warn, "err", err)
		case err == nil && failing:
			failing = false
			log.Info("pruning the answer cache works again")
		}
	}
}
