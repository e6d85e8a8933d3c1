package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/cache"
	cachememory "github.com/causeway/causeway/cache/memory"
	cachepg "github.com/causeway/causeway/cache/postgres"
	cacheredis "github.com/causeway/causeway/cache/redis"
	"github.com/causeway/causeway/cache/semantic"
	"github.com/causeway/causeway/gateway"
)

// startCache opens the answer cache's store: Redis when CAUSEWAY_CACHE_URL names one, else
// PostgreSQL in server mode (shared by the instances), else DATA_DIR/cache.db, an in-process
// LRU written behind to SQLite so that a restart keeps it. Each instance keeps its own
// semantic index in memory, loaded from the store's entries and kept current by following
// them (every 200 ms: an entry another instance stored is found semantically here within
// that, and exactly at once). With CAUSEWAY_CACHE=OFF nothing is opened.
func (m *Main) startCache(ctx context.Context, pool *pgxpool.Pool) error {
	if !m.Config.Cache {
		return nil
	}
	var (
		store cache.Store
		err   error
	)
	switch {
	case m.Config.CacheURL != "":
		store, err = cacheredis.Open(ctx, m.Config.CacheURL, cacheredis.Config{MaxBytes: m.Config.CacheBytes, Log: m.Logger})
	case pool != nil:
		store, err = cachepg.Open(ctx, pool, cachepg.Config{MaxBytes: m.Config.CacheBytes, Log: m.Logger})
	default:
		store, err = cachememory.Open(ctx, cachememory.Config{Path: filepath.Join(m.Config.DataDir, "cache.db"),
			MaxBytes: m.Config.CacheBytes, Log: m.Logger})
	}
	if err != nil {
		return fmt.Errorf("answer cache: %w", err)
	}
	index := semantic.New(semantic.Options{})
	m.AnswerCache = store
	m.Cache = &gateway.Cache{Store: store, Index: semanticIndex{index}, Threshold: float64(semantic.DefaultThreshold), Log: m.Logger}
	follow := &cacheFollower{store: store, index: index}
	if err := follow.pass(ctx); err != nil {
		_ = store.Close()
		return fmt.Errorf("answer cache: loading the semantic index: %w", err)
	}
	bg, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		follow.run(bg, 200*time.Millisecond, m)
	}()
	m.closers = append(m.closers, func() error {
		stop()
		<-done
		return store.Close()
	})
	return nil
}

// cacheBackend names what keeps the answer cache, for health.
func (m *Main) cacheBackend() string {
	switch {
	case m.Config.CacheURL != "":
		return "redis"
	case m.Postgres != nil:
		return "postgres"
	}
	return "sqlite"
}

// cacheFollower keeps a semantic index current with the store's entries that have vectors.
type cacheFollower struct {
	store  cache.Store
	index  *semantic.Index
	cursor cache.Cursor
}

// pass reads every entry put since the last pass into the index.
func (f *cacheFollower) pass(ctx context.Context) error {
	for {
		entries, next, err := f.store.Changes(ctx, f.cursor, 1000)
		if err != nil {
			return err
		}
		for _, e := range entries {
			f.index.Add(e.Partition, e.Key, e.Vector, e.ExpiresAt)
		}
		f.cursor = next
		if len(entries) < 1000 {
			return nil
		}
	}
}

func (f *cacheFollower) run(ctx context.Context, every time.Duration, m *Main) {
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := f.pass(ctx)
		switch {
		case err != nil && !failing && !errors.Is(err, context.Canceled):
			failing = true
			m.Logger.Warn("the semantic index cannot follow the answer cache's store; it serves what it has", "error", err)
		case err == nil && failing:
			failing = false
			m.Logger.Info("the semantic index follows the answer cache's store again")
		}
		f.index.Sweep(time.Now())
	}
}

// semanticIndex is the index as the gateway asks it.
type semanticIndex struct{ ix *semantic.Index }

func (s semanticIndex) Nearest(partition string, vec []float32, now time.Time) (string, float32, bool) {
	match, ok := s.ix.Nearest(partition, vec, now)
	return match.Key, match.Score, ok
}

func (s semanticIndex) Add(partition, key string, vec []float32, expires time.Time) {
	s.ix.Add(partition, key, vec, expires)
}

func (s semanticIndex) Remove(key string) { s.ix.Remove(key) }
