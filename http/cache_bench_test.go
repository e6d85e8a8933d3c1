package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/causeway/causeway/cache"
	cachememory "github.com/causeway/causeway/cache/memory"
	"github.com/causeway/causeway/cache/semantic"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// cacheBench is the gateway in process with the real work on (authentication, a rate-limit
// policy, a key's and a workspace's budgets on the SQLite ledger) and the answer cache on the
// embedded store, in front of the zero-delay OpenAI stand-in.
type cacheBench struct {
	h     http.Handler
	key   string
	up    *providertest.OpenAIServer
	store *cachememory.Store
	index *semantic.Index
	cache *gateway.Cache
}

type benchIndex struct{ ix *semantic.Index }

func (s benchIndex) Nearest(partition string, vec []float32, now time.Time) (string, float32, bool) {
	m, ok := s.ix.Nearest(partition, vec, now)
	return m.Key, m.Score, ok
}
func (s benchIndex) Add(p, k string, v []float32, e time.Time) { s.ix.Add(p, k, v, e) }
func (s benchIndex) Remove(k string)                           { s.ix.Remove(k) }

func newCacheBench(b *testing.B) *cacheBench {
	// In memory only: the write-behind to SQLite is off the request path either way.
	store, err := cachememory.Open(context.Background(), cachememory.Config{MaxBytes: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	index := semantic.New(semantic.Options{MaxEntries: 200_000})
	cache := &gateway.Cache{Store: store, Index: benchIndex{index}, Threshold: 0.95}
	env := benchGateway(b, func(s *gateway.Service) { s.Cache = cache })
	return &cacheBench{h: withTraceID(env.g.endpoint(providers.EndpointChat)), key: env.key, up: env.up, store: store, index: index, cache: cache}
}

func (c *cacheBench) config(mode string) string {
	cfg := `{"provider":"openai","api_key":"sk","custom_host":"` + c.up.BaseURL() + `","cache":{"mode":"` + mode + `"`
	if mode == "semantic" {
		cfg += `,"embedding":{"model":"text-embedding-3-small"}`
	}
	return cfg + `}}`
}

func (c *cacheBench) do(b *testing.B, cfg, question string, headers ...string) string {
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"` +
		question + `"}],"max_tokens":32,"temperature":0}`)
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("x-gateway-api-key", c.key)
	req.Header.Set("x-gateway-config", cfg)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Header().Get(gateway.HeaderCacheStatus)
}

// warm sends question until it is stored (puts are off the request path).
func (c *cacheBench) warm(b *testing.B, cfg, question string) {
	for i := 0; ; i++ {
		if c.do(b, cfg, question) == "HIT" {
			return
		}
		if i > 1000 {
			b.Fatal("never stored")
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkCache is what the answer cache costs and saves, per request in process against the
// zero-delay stand-in (so the miss is the floor of any real provider call):
//   - baseline-miss: a request whose config caches, answered by the provider (lookup, call,
//     and the put off the request path), each with a new question;
//   - simple-hit: the same request again, answered from the cache;
//   - semantic-hit: a paraphrase answered by a semantic lookup: the exact miss, the
//     nearest-entry scan and the store's read, with the embedding call left out (the vector
//     it would answer is given at once);
//   - semantic-hit-with-call: the same with the embedding call, through the engine, to the
//     zero-delay stand-in: the difference is what the call costs on top;
//   - semantic-hit-100k: semantic-hit with 100,000 entries of 1,536 dimensions in the
//     request's partition (an exact scan);
//   - exact-lookup-100k: simple-hit with 100,000 entries in the store.
func BenchmarkCache(b *testing.B) {
	c := newCacheBench(b)
	simple, sem := c.config("simple"), c.config("semantic")
	report := func(b *testing.B, start time.Time) {
		b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "req-µs")
	}
	asked := 0 // the framework runs a sub-benchmark more than once: every question is new
	b.Run("baseline-miss", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			asked++
			if s := c.do(b, simple, "Question number "+strconv.Itoa(asked)+" of the miss run?"); s != "MISS" {
				b.Fatalf("status %s", s)
			}
		}
		report(b, start)
	})
	c.warm(b, simple, "What is the capital of France?")
	b.Run("simple-hit", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if s := c.do(b, simple, "What is the capital of France?"); s != "HIT" {
				b.Fatalf("status %s", s)
			}
		}
		report(b, start)
	})
	near := 0.1
	c.up.SetEmbeddings(map[string][]float32{"What is the capital of France?": benchUnit(0), "Tell me France's capital city.": benchUnit(near)})
	c.warm(b, sem, "What is the capital of France?")
	semanticHit := func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if s := c.do(b, sem, "Tell me France's capital city."); s != "SEMANTIC HIT" {
				b.Fatalf("status %s", s)
			}
		}
		report(b, start)
	}
	// The lookup without the embedding call: the vector the call would answer, at once.
	c.cache.Embed = func(context.Context, *providers.Target, string, string) ([]float32, error) {
		return benchUnit(near), nil
	}
	b.Run("semantic-hit", semanticHit)
	c.cache.Embed = nil
	// With the call, through the engine, to the zero-delay stand-in: the difference is what
	// the call costs on top.
	b.Run("semantic-hit-with-call", semanticHit)
	c.cache.Embed = func(context.Context, *providers.Target, string, string) ([]float32, error) {
		return benchUnit(near), nil
	}
	// 100,000 entries in the semantic partition of the request, none near it but the one.
	fill(b, c, sem, 100_000)
	b.Run("semantic-hit-100k", semanticHit)
	b.Run("exact-lookup-100k", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if s := c.do(b, simple, "What is the capital of France?"); s != "HIT" {
				b.Fatalf("status %s", s)
			}
		}
		report(b, start)
	})
}

// fill puts n entries into the store and the index, in the partition of the semantic
// config's requests: the partition is read off the entry the warm-up stored.
func fill(b *testing.B, c *cacheBench, cfg string, n int) {
	ctx := context.Background()
	var part string
	cur := cache.Cursor(0)
	for part == "" {
		entries, next, err := c.store.Changes(ctx, cur, 1000)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range entries {
			part = e.Partition
		}
		if len(entries) == 0 {
			b.Fatal("no semantic entry to read the partition from")
		}
		cur = next
	}
	now := time.Now()
	for i := 0; i < n; i++ {
		vec := make([]float32, embeddingDims)
		vec[2+i%(embeddingDims-2)] = 1 // orthogonal to the questions' plane
		vec[0] = float32(i%1000) / 10000
		key := fmt.Sprintf("filler-%d", i)
		// The store holds the entries (of another workspace, so never answered here); the
		// index holds their vectors, as the follower would load them.
		if err := c.store.Put(ctx, cache.Entry{Key: key, Workspace: "filler", Partition: part, Body: []byte(`{}`),
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			b.Fatal(err)
		}
		c.index.Add(part, key, vec, now.Add(time.Hour))
	}
}

// embeddingDims is text-embedding-3-small's.
const embeddingDims = 1536

func benchUnit(a float64) []float32 {
	v := make([]float32, embeddingDims)
	v[0], v[1] = float32(math.Cos(a)), float32(math.Sin(a))
	return v
}
