package pricing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/pricing"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/projections/memory"
)

// The read model is where the gateway finds overrides.
var _ pricing.Overrides = memory.PricingOverrides{}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// overrides stands in for the read model: overrides by org/workspace/provider/model.
type overrides map[string]domain.ModelPricingOverride

func (o overrides) ModelPricingOverride(orgID, workspaceID, provider, model string) (domain.ModelPricingOverride, bool) {
	v, ok := o[orgID+"/"+workspaceID+"/"+domain.NormaliseProvider(provider)+"/"+model]
	return v, ok
}

func prices(in, out float64) domain.ModelPrices {
	return domain.ModelPrices{RequestToken: &domain.TokenPrice{Price: in}, ResponseToken: &domain.TokenPrice{Price: out}}
}

func entry(in, out float64) map[string]any {
	return map[string]any{"pay_as_you_go": prices(in, out), "currency": "USD"}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}

// proxy is the outside world's pricing service: it answers what prices holds, counts calls per
// path, and can fail.
type proxy struct {
	*httptest.Server
	mu     sync.Mutex
	prices map[string]any // path → body
	status int            // when set, every answer
	calls  map[string]int
	block  chan struct{} // when set, answers wait for it
}

func newProxy(t *testing.T) *proxy {
	p := &proxy{prices: map[string]any{}, calls: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.calls[r.URL.EscapedPath()]++
		body, ok := p.prices[r.URL.EscapedPath()]
		status, block := p.status, p.block
		p.mu.Unlock()
		if block != nil {
			<-block
		}
		switch {
		case status != 0:
			w.WriteHeader(status)
		case !ok:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"Model not found"}`))
		default:
			_ = json.NewEncoder(w).Encode(body)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *proxy) set(path string, body any) {
	p.mu.Lock()
	p.prices[path] = body
	p.mu.Unlock()
}

func (p *proxy) callsTo(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[path]
}

func newBook(t testing.TB, cfg pricing.Config, opts pricing.Options) *pricing.Book {
	t.Helper()
	b, err := pricing.New(cfg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestShippedPricesCoverEveryProvider(t *testing.T) {
	b := newBook(t, pricing.Config{}, pricing.Options{})
	names := map[string]bool{}
	for n := range providers.Default() {
		names[n] = true
	}
	for n := range providers.More() {
		names[n] = true
	}
	require.NotEmpty(t, names)
	// One model each of every adapter, and of the clouds the reference names; self-hosted
	// servers have no list price.
	sample := map[string]string{"openai": "gpt-4o", "azure-openai": "gpt-4o", "anthropic": "claude-sonnet-4-5",
		"google": "gemini-2.5-flash", "groq": "llama-3.3-70b-versatile", "mistral-ai": "mistral-small-latest",
		"together-ai": "meta-llama/Llama-3.3-70B-Instruct-Turbo", "fireworks-ai": "accounts/fireworks/models/deepseek-v3",
		"deepseek": "deepseek-chat", "openrouter": "openai/gpt-4o", "cohere": "command-r-plus",
		"bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0", "vertex-ai": "gemini-2.5-pro"}
	for name := range names {
		if name == "vllm" || name == "ollama" {
			continue
		}
		model, ok := sample[name]
		require.True(t, ok, "no sample model for adapter %s: add its prices to data/", name)
		q, found := b.Lookup(context.Background(), "", "", name, model)
		require.True(t, found, "%s/%s", name, model)
		assert.Equal(t, pricing.SourceShipped, q.Source)
		assert.Positive(t, q.Pricing.PayAsYouGo.RequestToken.Price, "%s/%s", name, model)
	}
	for name, model := range sample {
		_, found := b.Lookup(context.Background(), "", "", name, model)
		assert.True(t, found, "%s/%s", name, model)
	}
}

func TestShippedPricesAreListPrices(t *testing.T) {
	b := newBook(t, pricing.Config{}, pricing.Options{})
	cases := []struct {
		provider, model, matched string
		in, out                  float64 // USD per million tokens
	}{
		{"openai", "gpt-4o", "gpt-4o", 2.50, 10},
		{"openai", "gpt-4o-2024-08-06", "gpt-4o", 2.50, 10},
		{"openai", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13", 5, 15},
		{"OpenAI", "GPT-4o-mini", "gpt-4o-mini", 0.15, 0.60},
		{"openai", "gpt-5", "gpt-5", 1.25, 10},
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", 3, 15},
		{"anthropic", "claude-3-5-haiku-20241022", "claude-3-5-haiku-20241022", 0.80, 4},
		{"google", "gemini-2.5-pro", "gemini-2.5-pro", 1.25, 10},
		{"gemini", "gemini-2.5-flash", "gemini-2.5-flash", 0.30, 2.50},
		{"mistral", "mistral-small-latest", "mistral-small-latest", 0.10, 0.30},
		{"bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0", 3, 15},
		{"vertex-ai", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5@20250929", 3, 15},
		{"deepseek", "deepseek-reasoner", "deepseek-reasoner", 0.28, 0.42},
	}
	for _, tc := range cases {
		q, ok := b.Lookup(context.Background(), "", "", tc.provider, tc.model)
		require.True(t, ok, "%s/%s", tc.provider, tc.model)
		assert.Equal(t, tc.matched, q.Model)
		assert.InDelta(t, tc.in/10_000, q.Pricing.PayAsYouGo.RequestToken.Price, 1e-15, "%s/%s in", tc.provider, tc.model)
		assert.InDelta(t, tc.out/10_000, q.Pricing.PayAsYouGo.ResponseToken.Price, 1e-15, "%s/%s out", tc.provider, tc.model)
		assert.Equal(t, "USD", q.Pricing.Currency)
	}
	_, ok := b.Lookup(context.Background(), "", "", "openai", "no-such-model")
	assert.False(t, ok)
	_, ok = b.Lookup(context.Background(), "", "", "openai", "default")
	assert.False(t, ok, "default is not a model")
}

// The sources answer in the specification's order: overrides, memory, proxy, log store, local
// files, shipped prices; each one that does not know the model (or fails) hands on to the next.
func TestSourceOrder(t *testing.T) {
	px := newProxy(t)
	logStore := t.TempDir()
	localDir := t.TempDir()
	const model = "gpt-4o"
	px.set("/pricing/openai/"+model, entry(0.1, 0.2))
	writeJSON(t, filepath.Join(logStore, "openai.json"), map[string]any{model: entry(0.3, 0.4)})
	writeJSON(t, filepath.Join(localDir, "openai.json"), map[string]any{model: map[string]any{"pricing_config": entry(0.5, 0.6)}})
	ov := overrides{}
	cfg := pricing.Config{ProxyFetch: true, ProxyURL: px.URL, LogStorePath: logStore, LocalPath: localDir}

	fresh := func() *pricing.Book { return newBook(t, cfg, pricing.Options{Overrides: ov}) }
	lookup := func(b *pricing.Book, ws string) pricing.Quote {
		t.Helper()
		q, ok := b.Lookup(context.Background(), "org", ws, "openai", model)
		require.True(t, ok)
		return q
	}

	q := lookup(fresh(), "")
	assert.Equal(t, pricing.SourceProxy, q.Source)
	assert.Equal(t, 0.1, q.Pricing.PayAsYouGo.RequestToken.Price)
	// The proxy's answer went into the log store (TestLogStore); give the log store a price of its own.
	writeJSON(t, filepath.Join(logStore, "openai.json"), map[string]any{model: entry(0.3, 0.4)})

	px.mu.Lock()
	px.status = http.StatusInternalServerError
	px.mu.Unlock()
	q = lookup(fresh(), "")
	assert.Equal(t, pricing.SourceLogStore, q.Source, "a failing proxy hands on to the log store")
	assert.Equal(t, 0.3, q.Pricing.PayAsYouGo.RequestToken.Price)

	require.NoError(t, os.Remove(filepath.Join(logStore, "openai.json")))
	q = lookup(fresh(), "")
	assert.Equal(t, pricing.SourceLocal, q.Source)
	assert.Equal(t, 0.5, q.Pricing.PayAsYouGo.RequestToken.Price, "wrapped pricing_config entries are read")

	require.NoError(t, os.Remove(filepath.Join(localDir, "openai.json")))
	q = lookup(fresh(), "")
	assert.Equal(t, pricing.SourceShipped, q.Source)
	assert.Equal(t, 0.00025, q.Pricing.PayAsYouGo.RequestToken.Price)

	ov["org//openai/"+model] = domain.ModelPricingOverride{Provider: "openai", Model: model, PayAsYouGo: prices(0.7, 0.8)}
	b := fresh()
	q = lookup(b, "ws-1")
	assert.Equal(t, pricing.SourceOrganisationOverride, q.Source, "an override comes before every source")
	assert.Equal(t, 0.7, q.Pricing.PayAsYouGo.RequestToken.Price)
	ov["org/ws-1/openai/"+model] = domain.ModelPricingOverride{Provider: "openai", Model: model, WorkspaceID: "ws-1", PayAsYouGo: prices(0.9, 1)}
	q = lookup(b, "ws-1")
	assert.Equal(t, pricing.SourceWorkspaceOverride, q.Source, "a workspace's override before its organisation's, at once")
	assert.Equal(t, pricing.SourceOrganisationOverride, lookup(b, "ws-2").Source)
	assert.Equal(t, pricing.SourceShipped, func() pricing.Quote {
		q, _ := b.Lookup(context.Background(), "other-org", "", "openai", model)
		return q
	}().Source, "an organisation's override is its own")

	// A proxy that does not answer in time is passed over too.
	slow := newProxy(t)
	slow.block = make(chan struct{})
	defer close(slow.block)
	sb := newBook(t, pricing.Config{ProxyFetch: true, ProxyURL: slow.URL, ProxyTimeout: 50 * time.Millisecond}, pricing.Options{})
	start := time.Now()
	q, ok := sb.Lookup(context.Background(), "", "", "openai", model)
	require.True(t, ok)
	assert.Equal(t, pricing.SourceShipped, q.Source)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// An answer is kept for an hour: the proxy is not asked again before, and is after.
func TestCacheExpiresAfterAnHour(t *testing.T) {
	px := newProxy(t)
	clk := newClock()
	const path = "/pricing/anthropic/claude-sonnet-4-5"
	px.set(path, entry(0.0003, 0.0015))
	b := newBook(t, pricing.Config{ProxyFetch: true, ProxyURL: px.URL}, pricing.Options{Now: clk.Now})
	price := func() float64 {
		q, ok := b.Lookup(context.Background(), "", "", "anthropic", "claude-sonnet-4-5")
		require.True(t, ok)
		return q.Pricing.PayAsYouGo.RequestToken.Price
	}
	assert.Equal(t, 0.0003, price())
	px.set(path, entry(0.0002, 0.001))
	clk.Advance(59 * time.Minute)
	assert.Equal(t, 0.0003, price(), "the cache answers within the hour")
	assert.Equal(t, 1, px.callsTo(path))
	clk.Advance(time.Minute)
	assert.Equal(t, 0.0002, price(), "after an hour the proxy is asked again")
	assert.Equal(t, 2, px.callsTo(path))

	// A model the proxy does not know is asked about once an hour too.
	for range 3 {
		_, ok := b.Lookup(context.Background(), "", "", "openai", "gpt-4o")
		assert.True(t, ok, "the shipped price answers")
	}
	assert.Equal(t, 1, px.callsTo("/pricing/openai/gpt-4o"))
	_, ok := b.Lookup(context.Background(), "", "", "openai", "not-a-model")
	assert.False(t, ok)
	_, _ = b.Lookup(context.Background(), "", "", "openai", "not-a-model")
	assert.Equal(t, 1, px.callsTo("/pricing/openai/not-a-model"), "an unknown model is remembered as unknown")
	clk.Advance(time.Hour)
	_, _ = b.Lookup(context.Background(), "", "", "openai", "not-a-model")
	assert.Equal(t, 2, px.callsTo("/pricing/openai/not-a-model"))
}

// Cost never waits for the proxy: a cold model is priced from the local sources while the
// proxy is asked in the background, and the proxy's price serves the requests after.
func TestCostNeverWaitsForTheProxy(t *testing.T) {
	px := newProxy(t)
	release := make(chan struct{})
	px.block = release
	px.set("/pricing/openai/gpt-4o", entry(0.001, 0.001))
	b := newBook(t, pricing.Config{ProxyFetch: true, ProxyURL: px.URL, ProxyTimeout: time.Minute}, pricing.Options{})
	u := pricing.Usage{PromptTokens: 1000}

	done := make(chan float64)
	go func() { done <- b.Cost("org", "openai", "gpt-4o", u) }()
	select {
	case got := <-done:
		assert.InDelta(t, 1000*0.00025/100, got, 1e-12, "the shipped price, while the proxy is asked")
	case <-time.After(5 * time.Second):
		t.Fatal("Cost waited for the proxy")
	}
	assert.InDelta(t, 1000*0.00025/100, b.Cost("org", "openai", "gpt-4o", u), 1e-12)
	close(release)
	require.Eventually(t, func() bool {
		return b.Cost("org", "openai", "gpt-4o", u) == 1000*0.001/100
	}, 5*time.Second, 5*time.Millisecond, "the proxy's price serves once it came")
	assert.Equal(t, 1, px.callsTo("/pricing/openai/gpt-4o"), "one background fetch, however many requests")
}

// Prices the proxy answers are written to the log store directory, so that a later run
// without the proxy finds them; a single log store file is read as well.
func TestLogStore(t *testing.T) {
	px := newProxy(t)
	dir := t.TempDir()
	px.set("/pricing/together-ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", entry(0.00009, 0.00009))
	first := newBook(t, pricing.Config{ProxyFetch: true, ProxyURL: px.URL, LogStorePath: dir}, pricing.Options{})
	q, ok := first.Lookup(context.Background(), "", "", "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo")
	require.True(t, ok)
	assert.Equal(t, pricing.SourceProxy, q.Source)
	assert.Equal(t, "together-ai", q.Provider, "the alias is resolved")

	later := newBook(t, pricing.Config{LogStorePath: dir}, pricing.Options{})
	q, ok = later.Lookup(context.Background(), "", "", "together-ai", "meta-llama/Llama-3.3-70B-Instruct-Turbo")
	require.True(t, ok)
	assert.Equal(t, pricing.SourceLogStore, q.Source)
	assert.Equal(t, 0.00009, q.Pricing.PayAsYouGo.RequestToken.Price)

	file := filepath.Join(t.TempDir(), "prices.json")
	writeJSON(t, file, map[string]any{"my-host": map[string]any{"my-model": entry(0.01, 0.02), "broken": map[string]any{"pay_as_you_go": prices(-1, 0)}}})
	fb := newBook(t, pricing.Config{LogStorePath: file}, pricing.Options{})
	q, ok = fb.Lookup(context.Background(), "", "", "my-host", "my-model")
	require.True(t, ok)
	assert.Equal(t, pricing.SourceLogStore, q.Source)
	_, ok = fb.Lookup(context.Background(), "", "", "my-host", "broken")
	assert.False(t, ok, "an invalid entry is passed over")
}

func TestCostAgainstHandComputedValues(t *testing.T) {
	ov := overrides{"org//openai/o-custom": {Provider: "openai", Model: "o-custom", PayAsYouGo: domain.ModelPrices{
		RequestToken: &domain.TokenPrice{Price: 0.0001}, ResponseToken: &domain.TokenPrice{Price: 0.0004},
		AdditionalUnits: map[string]domain.TokenPrice{"thinking_token": {Price: 0.0002}}}}}
	b := newBook(t, pricing.Config{}, pricing.Options{Overrides: ov})
	cases := []struct {
		name, provider, model string
		u                     pricing.Usage
		usd                   float64
	}{
		// 800 uncached × $2.50/M + 200 cached × $1.25/M + 500 out × $10/M.
		{"gpt-4o with cached input", "openai", "gpt-4o", pricing.Usage{PromptTokens: 1000, CompletionTokens: 500, CacheReadTokens: 200},
			800*2.5e-6 + 200*1.25e-6 + 500*10e-6},
		// 7000 × $3/M + 2000 read × $0.30/M + 1000 written × $3.75/M + 1000 out × $15/M.
		{"claude sonnet 4.5 with cache reads and writes", "anthropic", "claude-sonnet-4-5",
			pricing.Usage{PromptTokens: 10_000, CompletionTokens: 1000, CacheReadTokens: 2000, CacheWriteTokens: 1000},
			7000*3e-6 + 2000*0.3e-6 + 1000*3.75e-6 + 1000*15e-6},
		// Reasoning is output: 300 out × $2.50/M, whatever part of it is thinking.
		{"gemini 2.5 flash reasoning billed as output", "google", "gemini-2.5-flash",
			pricing.Usage{PromptTokens: 1000, CompletionTokens: 300, ReasoningTokens: 200}, 1000*0.3e-6 + 300*2.5e-6},
		{"embeddings have no output price", "openai", "text-embedding-3-small", pricing.Usage{PromptTokens: 1000}, 1000 * 0.02e-6},
		// A model without a cache price bills cached input at the request price.
		{"llama on groq without cache prices", "groq", "llama-3.3-70b-versatile",
			pricing.Usage{PromptTokens: 2000, CompletionTokens: 100, CacheReadTokens: 500}, 2000*0.59e-6 + 100*0.79e-6},
		// 1000 in × $1/M + 100 visible × $4/M + 400 thinking × $2/M.
		{"a separate reasoning price", "openai", "o-custom",
			pricing.Usage{PromptTokens: 1000, CompletionTokens: 500, ReasoningTokens: 400}, 1000*1e-6 + 100*4e-6 + 400*2e-6},
		{"deepseek cache hit", "deepseek", "deepseek-chat", pricing.Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000, CacheReadTokens: 1_000_000},
			0.028 + 0.42},
		{"an unknown model costs nothing", "openai", "gpt-unknown", pricing.Usage{PromptTokens: 1000, CompletionTokens: 1000}, 0},
		{"an unknown provider costs nothing", "nobody", "gpt-4o", pricing.Usage{PromptTokens: 1000}, 0},
		{"negative counts count as none", "openai", "gpt-4o", pricing.Usage{PromptTokens: -5, CompletionTokens: -1}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.usd, b.Cost("org", tc.provider, tc.model, tc.u), 1e-12)
		})
	}
}

func TestUsageCost(t *testing.T) {
	ov := overrides{"org/ws-1/openai/gpt-4o": {Provider: "openai", Model: "gpt-4o", WorkspaceID: "ws-1", PayAsYouGo: prices(0.001, 0.002)}}
	book := newBook(t, pricing.Config{}, pricing.Options{Overrides: ov})
	u := providers.Usage{PromptTokens: 1000, CompletionTokens: 100, CachedTokens: 400}
	assert.InDelta(t, 600*2.5e-6+400*1.25e-6+100*10e-6, book.UsageCost("org", "", "openai", "gpt-4o", u), 1e-12, "shipped prices")
	assert.InDelta(t, (1000*0.001+100*0.002)/100, book.UsageCost("org", "ws-1", "openai", "gpt-4o", u), 1e-12, "the workspace's override")
	assert.InDelta(t, 600*1e-6+400*0.1e-6+100*5e-6, book.UsageCost("org", "", "anthropic", "claude-haiku-4-5", u), 1e-12, "another provider's model")
	assert.Zero(t, book.UsageCost("org", "", "openai", "mystery", u), "an unknown model costs nothing known")
	assert.Zero(t, book.UsageCost("org", "", "@prod-openai", "gpt-4o", u), "a managed provider's slug is no adapter")
}

func TestConfigValidate(t *testing.T) {
	assert.NoError(t, pricing.Config{}.Validate())
	assert.NoError(t, pricing.Config{ProxyFetch: true, ProxyURL: "https://api.portkey.ai/model-configs", LocalPath: t.TempDir()}.Validate())
	err := pricing.Config{ProxyFetch: true, LocalPath: "/does/not/exist", CacheTTL: -1, ProxyTimeout: -1}.Validate()
	require.Error(t, err)
	for _, want := range []string{"MODEL_CONFIGS_PROXY_URL is empty", "MODEL_CONFIGS_PRICING_LOCAL_PATH", "TTL", "timeout"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.ErrorContains(t, pricing.Config{ProxyURL: "ftp://x"}.Validate(), "http or https")
	_, err = pricing.New(pricing.Config{ProxyURL: "not a url"}, pricing.Options{})
	assert.Error(t, err)
}

// Concurrent costs and lookups on a cold book are safe (run with -race).
func TestConcurrentUse(t *testing.T) {
	px := newProxy(t)
	px.set("/pricing/openai/gpt-4o", entry(0.001, 0.001))
	b := newBook(t, pricing.Config{ProxyFetch: true, ProxyURL: px.URL, LogStorePath: t.TempDir()}, pricing.Options{})
	var wg sync.WaitGroup
	var total atomic.Int64
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, _ = b.Lookup(context.Background(), "org", "", "openai", "gpt-4o")
			}
			if b.Cost("org", "openai", "gpt-4o", pricing.Usage{PromptTokens: 10}) > 0 {
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(16), total.Load())
}
