package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/gateway/providers/providertest"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// cached is a governed gateway whose requests go through a config with a cache.
type cached struct {
	*governed
	key string
}

func newCached(t *testing.T, m *Main) *cached {
	g := newGoverned(t, m)
	_, key := g.key(nil)
	return &cached{governed: g, key: key}
}

// config is an inline config to the OpenAI stand-in with cache set to the given JSON.
func (c *cached) config(cache string) string {
	return fmt.Sprintf(`{"provider":"openai","api_key":"sk-provider-key","custom_host":%q,"cache":%s}`, c.oa.BaseURL(), cache)
}

// call posts body to path through the gateway with config and headers, and answers the
// response, its body, and its cache status.
func (c *cached) call(key, path, config, body string, headers map[string]string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.m.URL()+path, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-gateway-api-key", key)
	req.Header.Set("x-gateway-config", config)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp, raw
}

// chats counts the chat completions the stand-in answered.
func (c *cached) chats() int { return countPath(c.oa.Requests(), "/chat/completions") }

func countPath(reqs []providertest.Request, suffix string) int {
	n := 0
	for _, r := range reqs {
		if strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

// expectStatus sends a chat and requires an answer of 200 with the given cache status.
func (c *cached) expectStatus(config, body string, headers map[string]string, want string) []byte {
	c.t.Helper()
	resp, raw := c.call(c.key, "/chat/completions", config, body, headers)
	require.Equal(c.t, http.StatusOK, resp.StatusCode, "%s", raw)
	require.Equal(c.t, want, resp.Header.Get("x-gateway-cache-status"), "%s", raw)
	return raw
}

const cacheChat = `{"model":"gpt-4o-mini","max_tokens":4,"messages":[{"role":"user","content":"What is the capital of France?"}]}`

// The simple cache through the real binary: a repeat is answered without calling the
// provider, whatever the order of its JSON keys or the fields that cannot change the answer;
// force-refresh calls the provider and replaces the entry; a namespace partitions; another
// workspace never reads the entry; a streamed request is answered from the entry as a
// well-formed stream ending in [DONE]; errors and sampled requests are not cached; a purge
// empties a namespace and is audited.
func TestCacheSimple(t *testing.T) {
	c := newCached(t, startGateway(t))
	cfg := c.config(`{"mode":"simple","max_age":600}`)

	first := c.expectStatus(cfg, cacheChat, nil, "MISS")
	require.Equal(t, 1, c.chats())
	reordered := `{"messages":[{"content":"What is the capital of France?","role":"user"}], "user":"ann", "max_tokens":4.0, "model":"gpt-4o-mini"}`
	hit := c.expectStatus(cfg, reordered, nil, "HIT")
	assert.Equal(t, 1, c.chats(), "a hit does not call the provider")
	assert.JSONEq(t, string(first), string(hit), "a hit answers the stored answer")

	c.expectStatus(cfg, cacheChat, map[string]string{"x-gateway-cache-force-refresh": "true"}, "REFRESH")
	assert.Equal(t, 2, c.chats(), "force-refresh calls the provider")
	c.expectStatus(cfg, cacheChat, nil, "HIT")
	assert.Equal(t, 2, c.chats())

	ns := map[string]string{"x-gateway-cache-namespace": "team-b"}
	c.expectStatus(cfg, cacheChat, ns, "MISS")
	c.expectStatus(cfg, cacheChat, ns, "HIT")
	assert.Equal(t, 3, c.chats(), "a namespace partitions the cache")

	t.Run("another workspace never reads the entry", func(t *testing.T) {
		other := newGoverned(t, c.m)
		other.oa = c.oa
		_, key := other.key(nil)
		resp, raw := c.call(key, "/chat/completions", cfg, cacheChat, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, "MISS", resp.Header.Get("x-gateway-cache-status"))
		assert.Equal(t, 4, c.chats())
	})

	t.Run("a streamed request is answered from the entry", func(t *testing.T) {
		before := c.chats()
		streamed := strings.Replace(cacheChat, `"max_tokens":4`, `"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}`, 1)
		resp, raw := c.call(c.key, "/chat/completions", cfg, streamed, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		assert.Equal(t, "HIT", resp.Header.Get("x-gateway-cache-status"))
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		text, done, usage := readStream(t, raw)
		assert.True(t, done, "the stream ends in [DONE]")
		assert.True(t, usage, "with the usage chunk include_usage asks for")
		assert.Equal(t, providertest.Reply, text)
		assert.Equal(t, before, c.chats())
	})

	t.Run("a streamed miss is stored and answers a plain request", func(t *testing.T) {
		body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Stream me."}]}`
		resp, raw := c.call(c.key, "/chat/completions", cfg, body, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "MISS", resp.Header.Get("x-gateway-cache-status"))
		streamedText, done, _ := readStream(t, raw)
		require.True(t, done)
		var answer map[string]any
		require.Eventually(t, func() bool {
			plain := strings.Replace(body, `"stream":true,`, "", 1)
			resp, raw := c.call(c.key, "/chat/completions", cfg, plain, nil)
			if resp.Header.Get("x-gateway-cache-status") != "HIT" {
				return false
			}
			return json.Unmarshal(raw, &answer) == nil
		}, 5*time.Second, 20*time.Millisecond, "the stream's answer is stored off the request path")
		msg := answer["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		assert.Equal(t, streamedText, msg["content"], "the answer is the stream's, assembled")
	})

	t.Run("errors are not cached", func(t *testing.T) {
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Fail first."}]}`
		c.oa.Script(providertest.Answer{Status: http.StatusInternalServerError,
			Body: `{"error":{"message":"boom","type":"server_error"}}`})
		resp, _ := c.call(c.key, "/chat/completions", cfg, body, nil)
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		before := c.chats()
		c.expectStatus(cfg, body, nil, "MISS")
		assert.Equal(t, before+1, c.chats(), "the error was not stored: the provider is called again")
	})

	t.Run("sampled requests are not cached unless the config opts in", func(t *testing.T) {
		body := `{"model":"gpt-4o-mini","temperature":0.7,"messages":[{"role":"user","content":"Be creative."}]}`
		c.expectStatus(cfg, body, nil, "DISABLED")
		c.expectStatus(cfg, body, nil, "DISABLED")
		opted := c.config(`{"mode":"simple","cache_sampled":true}`)
		c.expectStatus(opted, body, nil, "MISS")
		require.Eventually(t, func() bool {
			resp, _ := c.call(c.key, "/chat/completions", opted, body, nil)
			return resp.Header.Get("x-gateway-cache-status") == "HIT"
		}, 5*time.Second, 20*time.Millisecond)
	})

	t.Run("tool-call answers are not cached when the config says so", func(t *testing.T) {
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Weather in Paris?"}],
			"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],
			"tool_choice":"required"}`
		noTools := c.config(`{"mode":"simple","cache_tool_calls":false}`)
		c.expectStatus(noTools, body, nil, "MISS")
		time.Sleep(100 * time.Millisecond) // a put would have landed by now
		c.expectStatus(noTools, body, nil, "MISS")
	})

	t.Run("a purge empties one namespace and is audited", func(t *testing.T) {
		out := c.admin(http.MethodDelete, "/workspaces/"+c.ws+"/cache?namespace=team-b", nil)
		assert.Equal(t, "cache-purge", out["object"])
		assert.EqualValues(t, 1, out["deleted"])
		c.expectStatus(cfg, cacheChat, ns, "MISS")
		c.expectStatus(cfg, cacheChat, nil, "HIT")
		audit := c.admin(http.MethodGet, "/audit-logs?resource_id="+c.ws, nil)
		found := false
		for _, r := range audit["data"].([]any) {
			found = found || r.(map[string]any)["action"] == "WorkspaceCachePurged"
		}
		assert.True(t, found, "%v", audit)

		status, refused := c.adminStatus(http.MethodDelete, "/workspaces/"+c.ws+"/cache?namespace="+strings.Repeat("n", 129), nil)
		assert.Equal(t, http.StatusBadRequest, status, "%v", refused)
	})

	t.Run("bad cache headers are refused", func(t *testing.T) {
		resp, raw := c.call(c.key, "/chat/completions", cfg, cacheChat, map[string]string{"x-gateway-cache-force-refresh": "yes"})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, string(raw), "x-gateway-cache-force-refresh")
		resp, raw = c.call(c.key, "/chat/completions", cfg, cacheChat, map[string]string{"x-gateway-cache-namespace": strings.Repeat("n", 129)})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, string(raw), "x-gateway-cache-namespace")
	})
}

// An entry expires after max_age.
func TestCacheMaxAge(t *testing.T) {
	c := newCached(t, startGateway(t))
	cfg := c.config(`{"mode":"simple","max_age":1}`)
	c.expectStatus(cfg, cacheChat, nil, "MISS")
	require.Eventually(t, func() bool {
		resp, _ := c.call(c.key, "/chat/completions", cfg, cacheChat, nil)
		return resp.Header.Get("x-gateway-cache-status") == "HIT"
	}, 5*time.Second, 20*time.Millisecond)
	time.Sleep(1100 * time.Millisecond)
	c.expectStatus(cfg, cacheChat, nil, "MISS")
}

// readStream reads an SSE body: the content it carried, whether it ended in [DONE], and
// whether a usage chunk came.
func readStream(t *testing.T, raw []byte) (text string, done, usage bool) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(raw))
	var b strings.Builder
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		require.False(t, done, "nothing after [DONE]")
		if data == "[DONE]" {
			done = true
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &chunk), data)
		for _, ch := range chunk.Choices {
			b.WriteString(ch.Delta.Content)
		}
		usage = usage || chunk.Usage != nil
	}
	return b.String(), done, usage
}

// unit is a unit vector of 8 dimensions at angle a (radians) from the first axis, in the plane
// of the first two: cos(a) is its similarity to unit(0).
func unit(a float64) []float32 {
	v := make([]float32, 8)
	v[0], v[1] = float32(math.Cos(a)), float32(math.Sin(a))
	return v
}

// The semantic cache: the exact lookup first; on a miss the last user message is embedded
// (by a stand-in embeddings endpoint answering controlled vectors) and the nearest entry of
// the partition answers when it is similar enough; an unrelated prompt misses.
func TestCacheSemantic(t *testing.T) {
	c := newCached(t, startGateway(t))
	c.oa.SetEmbeddings(map[string][]float32{
		"What is the capital of France?":  unit(0),
		"Tell me France's capital city.":  unit(0.2),  // cos 0.98
		"How do I bake sourdough bread?":  unit(1.2),  // cos 0.36
		"What is the capital of Germany?": unit(0.45), // cos 0.90: below the threshold 0.95
	})
	cfg := c.config(`{"mode":"semantic","threshold":0.95,"embedding":{"model":"text-embedding-3-small"}}`)
	ask := func(q string) string {
		return fmt.Sprintf(`{"model":"gpt-4o-mini","max_tokens":4,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":%q}]}`, q)
	}
	c.expectStatus(cfg, ask("What is the capital of France?"), nil, "MISS")
	require.Equal(t, 1, c.chats())
	require.Eventually(t, func() bool {
		resp, _ := c.call(c.key, "/chat/completions", cfg, ask("What is the capital of France?"), nil)
		return resp.Header.Get("x-gateway-cache-status") == "HIT"
	}, 5*time.Second, 20*time.Millisecond, "the exact lookup comes first")

	c.expectStatus(cfg, ask("Tell me France's capital city."), nil, "SEMANTIC HIT")
	assert.Equal(t, 1, c.chats(), "a paraphrase is answered from the cache")
	c.expectStatus(cfg, ask("How do I bake sourdough bread?"), nil, "MISS")
	c.expectStatus(cfg, ask("What is the capital of Germany?"), nil, "MISS")
	assert.Equal(t, 3, c.chats(), "unrelated prompts call the provider")
	assert.Positive(t, countPath(c.oa.Requests(), "/embeddings"), "the embedding model was called")

	t.Run("several turns are exact-only unless the config opts in", func(t *testing.T) {
		turns := `{"model":"gpt-4o-mini","max_tokens":4,"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"Tell me France's capital city."}]}`
		c.expectStatus(cfg, turns, nil, "MISS")
		opted := c.config(`{"mode":"semantic","threshold":0.95,"semantic_tools_and_turns":true,"embedding":{"model":"text-embedding-3-small"}}`)
		c.expectStatus(opted, ask("What is the capital of France?"), nil, "MISS") // another config: another partition
		require.Eventually(t, func() bool {
			resp, _ := c.call(c.key, "/chat/completions", opted, turns, nil)
			return resp.Header.Get("x-gateway-cache-status") == "SEMANTIC HIT"
		}, 5*time.Second, 20*time.Millisecond)
	})
}

// Two instances share the cache, on their PostgreSQL or on a Redis that CAUSEWAY_CACHE_URL
// names: an answer stored by one is a hit on the other, exact and semantic.
func TestCacheSharedAcrossInstances(t *testing.T) {
	t.Run("postgres", func(t *testing.T) { testCacheShared(t, nil) })
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv("TEST_REDIS_URL")
		if url == "" {
			migrationstest.Unavailable(t, "TEST_REDIS_URL is unset")
		}
		testCacheShared(t, map[string]string{"CAUSEWAY_CACHE_URL": url})
	})
}

func testCacheShared(t *testing.T, extra map[string]string) {
	pg := migrationstest.PostgresURL(t)
	env := serverEnv(pg)
	env["CAUSEWAY_BOOTSTRAP_ADMIN_KEY"] = gatewayKey
	env["CAUSEWAY_ALLOWED_HOSTS"] = "127.0.0.1"
	for k, v := range extra {
		env[k] = v
	}
	a := startMain(t, env)
	b := startMain(t, env)
	// Entries are keyed by the workspace, new in every run: a Redis kept between runs holds
	// nothing this test can hit.
	c := newCached(t, a)
	c.oa.SetEmbeddings(map[string][]float32{"What is the capital of France?": unit(0), "Tell me France's capital city.": unit(0.2)})
	cfg := c.config(`{"mode":"semantic","threshold":0.95,"embedding":{"model":"text-embedding-3-small"}}`)
	onB := &cached{governed: &governed{t: t, m: b, oa: c.oa, ws: c.ws}, key: c.key}
	require.Eventually(t, func() bool {
		resp, _ := onB.call(c.key, "/chat/completions", cfg, `{"model":"x","temperature":1,"messages":[{"role":"user","content":"ping"}]}`, nil)
		return resp.StatusCode == http.StatusOK // and not cached: its temperature is above 0
	}, 5*time.Second, 10*time.Millisecond, "the key reaches instance B")

	before := c.chats()
	c.expectStatus(cfg, cacheChat, nil, "MISS")
	// B's index learns of A's entry by following the store; until then a paraphrase sent to B
	// would miss and be stored itself, so the test waits for the index rather than retrying.
	// A stores its answer off the request path: B asks once it is in the shared store.
	var stored cache.Entry
	require.Eventually(t, func() bool {
		for cur := cache.Cursor(0); ; {
			entries, next, err := b.AnswerCache.Changes(context.Background(), cur, 1000)
			require.NoError(t, err)
			for _, e := range entries {
				if e.Workspace == c.ws {
					stored = e
					return true
				}
			}
			if len(entries) == 0 {
				return false
			}
			cur = next
		}
	}, 5*time.Second, 10*time.Millisecond, "A's entry reaches the shared store")
	onB.expectStatus(cfg, cacheChat, nil, "HIT")
	require.Eventually(t, func() bool {
		m, ok := b.Cache.Index.(semanticIndex).ix.Nearest(stored.Partition, unit(0), time.Now())
		return ok && m.Key == stored.Key
	}, 5*time.Second, 10*time.Millisecond, "B's semantic index follows the shared store")
	paraphrase := strings.Replace(cacheChat, "What is the capital of France?", "Tell me France's capital city.", 1)
	onB.expectStatus(cfg, paraphrase, nil, "SEMANTIC HIT")
	assert.Equal(t, before+1, c.chats(), "one provider call served the three requests")

	out := onB.admin(http.MethodDelete, "/workspaces/"+c.ws+"/cache", nil)
	assert.EqualValues(t, 1, out["deleted"], "a purge on B deletes A's entry: %v", out)
	c.expectStatus(cfg, cacheChat, nil, "MISS")
}

// A hit is charged nothing, and the analytics report the hits and what they saved: the
// cache_hit_rate group column, the hit-rate graph, and summary/cache.
func TestCacheAnalytics(t *testing.T) {
	c := newCached(t, startGateway(t))
	cfg := c.config(`{"mode":"simple"}`)
	budgetModel := `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`
	c.expectStatus(cfg, budgetModel, map[string]string{"x-gateway-trace-id": "cache-miss"}, "MISS")
	miss := c.logRow("cache-miss")["metrics"].(map[string]any)
	require.InDelta(t, 0.10, miss["cost"], 1e-9, "%v", miss)
	for i := 0; i < 3; i++ {
		require.Eventually(t, func() bool {
			resp, _ := c.call(c.key, "/chat/completions", cfg, budgetModel, map[string]string{"x-gateway-trace-id": fmt.Sprintf("cache-hit-%d", i)})
			return resp.Header.Get("x-gateway-cache-status") == "HIT"
		}, 5*time.Second, 20*time.Millisecond)
	}
	hitRow := c.logRow("cache-hit-0")["metrics"].(map[string]any)
	assert.Equal(t, "HIT", hitRow["cache_status"])
	assert.EqualValues(t, 0, hitRow["cost"], "a hit costs nothing")
	assert.InDelta(t, 0.10, hitRow["cache_saved_cost"], 1e-9, "%v", hitRow)

	slug := c.admin(http.MethodGet, "/workspaces/"+c.ws, nil)["slug"].(string)
	require.Eventually(t, func() bool {
		sum := c.admin(http.MethodGet, "/analytics/summary/cache?workspace_slug="+slug, nil)["summary"].(map[string]any)
		return sum["hits"] == float64(3)
	}, 10*time.Second, 50*time.Millisecond)
	sum := c.admin(http.MethodGet, "/analytics/summary/cache?workspace_slug="+slug, nil)["summary"].(map[string]any)
	assert.EqualValues(t, 4, sum["total_requests"])
	assert.InDelta(t, 0.30, sum["cost_saved"], 1e-9, "%v", sum)
	assert.EqualValues(t, 3, sum["simple_hits"], "%v", sum)
	assert.Positive(t, sum["latency_saved_ms"], "%v", sum)
	graph := c.admin(http.MethodGet, "/analytics/graphs/cache/hit-rate?workspace_slug="+slug, nil)
	gsum := graph["summary"].(map[string]any)
	assert.EqualValues(t, 3, gsum["total"], "%v", graph)
	assert.EqualValues(t, 0.75, gsum["rate"], "%v", graph) // rates are shares, as everywhere in Causeway
	assert.InDelta(t, 0.30, gsum["cumulative_simple_cache_savings"], 1e-9, "%v", graph)
	groups := c.admin(http.MethodGet, "/analytics/groups/model?columns=cache_hit_rate&workspace_slug="+slug, nil)
	require.NotEmpty(t, groups["data"], "%v", groups)
	lat := c.admin(http.MethodGet, "/analytics/graphs/cache/latency?workspace_slug="+slug, nil)
	points := lat["data_points"].([]any)
	assert.Positive(t, points[len(points)-1].(map[string]any)["avg"], "the hits' latency: %v", lat)
	assert.EqualValues(t, 0.75, groups["data"].([]any)[0].(map[string]any)["cache_hit_rate"], "%v", groups)
}

// A hit is still a request to the rate limits: a key of 3 requests a minute is refused its
// fourth, cached or not.
func TestCacheHitsCountAgainstRateLimits(t *testing.T) {
	c := newCached(t, startGateway(t))
	_, key := c.governed.key(map[string]any{"rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 3}}})
	freshMinute(t)
	cfg := c.config(`{"mode":"simple"}`)
	resp, _ := c.call(key, "/chat/completions", cfg, cacheChat, nil)
	require.Equal(t, "MISS", resp.Header.Get("x-gateway-cache-status"))
	require.Eventually(t, func() bool {
		resp, _ := c.call(key, "/chat/completions", cfg, cacheChat, nil)
		return resp.Header.Get("x-gateway-cache-status") == "HIT"
	}, 5*time.Second, 20*time.Millisecond)
	for resp.StatusCode == http.StatusOK {
		resp, _ = c.call(key, "/chat/completions", cfg, cacheChat, nil)
	}
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the limit counts hits")
	assert.Equal(t, 1, c.chats(), "one provider call: the rest were hits")
}

// Embedded, the cache is written behind to DATA_DIR/cache.db: a restart keeps its entries.
func TestCacheSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": dir, "CAUSEWAY_STARTUP_TIMEOUT": "5s",
		"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1"}
	start := func() *Main {
		cfg, err := LoadConfig(env(vars))
		require.NoError(t, err)
		m := NewMain(cfg, io.Discard, "test")
		require.NoError(t, m.Run(context.Background()))
		return m
	}
	first := start()
	c := newCached(t, first)
	cfg := c.config(`{"mode":"simple"}`)
	c.expectStatus(cfg, cacheChat, nil, "MISS")
	require.Eventually(t, func() bool {
		resp, _ := c.call(c.key, "/chat/completions", cfg, cacheChat, nil)
		return resp.Header.Get("x-gateway-cache-status") == "HIT"
	}, 5*time.Second, 20*time.Millisecond)
	require.NoError(t, first.Close())

	second := start()
	t.Cleanup(func() { require.NoError(t, second.Close()) })
	c.m = second
	c.expectStatus(cfg, cacheChat, nil, "HIT")
	assert.Equal(t, 1, c.chats())
}

// The semantic cache's embedding call is a provider call like any other: its managed provider
// admits it (rate limits, budgets), it is charged to the request's budgets and the provider's,
// and it is logged as a row of its own under the request's trace. A provider that refuses it
// leaves the lookup exact, and the request is still served.
func TestCacheSemanticEmbeddingIsGoverned(t *testing.T) {
	freshMinute(t)
	c := newCached(t, startGateway(t))
	keyID, key := c.governed.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 100}})
	// An embedding token costs a cent: the stand-in counts a word a token.
	c.admin(http.MethodPut, "/model-configs/pricing/openai/text-embedding-3-small",
		map[string]any{"pay_as_you_go": map[string]any{"request_token": map[string]any{"price": 1}, "response_token": map[string]any{"price": 0}}})
	c.admin(http.MethodPost, "/integrations", map[string]any{"name": "emb", "slug": "emb", "ai_provider_id": "openai",
		"key": "sk-embeddings", "workspace_id": c.ws, "configurations": map[string]any{"custom_host": c.oa.BaseURL()}})
	prov := c.admin(http.MethodPut, "/providers/emb?workspace_id="+c.ws, map[string]any{
		"rate_limits":  []map[string]any{{"type": "requests", "unit": "rpm", "value": 2}},
		"usage_limits": map[string]any{"type": "cost", "credit_limit": 50}})
	c.oa.SetEmbeddings(map[string][]float32{
		"What is the capital of France?": unit(0),
		"Tell me France's capital city.": unit(0.2),
		"How do I bake sourdough bread?": unit(1.2),
	})
	cfg := c.config(`{"mode":"semantic","threshold":0.95,"embedding":{"provider":"@emb","model":"text-embedding-3-small"}}`)
	ask := func(q string) string {
		return fmt.Sprintf(`{"model":"gpt-4o-mini","max_tokens":4,"messages":[{"role":"user","content":%q}]}`, q)
	}
	send := func(q, want string) string {
		t.Helper()
		resp, raw := c.call(key, "/chat/completions", cfg, ask(q), nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		require.Equal(t, want, resp.Header.Get("x-gateway-cache-status"), "%s", raw)
		return resp.Header.Get("x-gateway-trace-id")
	}

	trace := send("What is the capital of France?", "MISS")
	rows := c.traceRows(trace, 2)
	emb, main := rows["semantic cache embedding"], rows[""]
	require.NotNil(t, emb, "the embedding call has its own row: %v", rows)
	require.NotNil(t, main, "%v", rows)
	em, mm := emb["metrics"].(map[string]any), main["metrics"].(map[string]any)
	assert.Equal(t, "@emb", em["provider"])
	assert.Equal(t, "text-embedding-3-small", em["ai_model"])
	assert.Equal(t, "embed", em["endpoint"])
	assert.EqualValues(t, 6, em["req_units"], "six words, six tokens: %v", em)
	assert.InDelta(t, 0.06, em["cost"].(float64), 1e-9, "%v", em)
	assert.Contains(t, fmt.Sprint(emb["provenance"]), prov["id"], "charged to the provider's budget")
	mainCost := mm["cost"].(float64)
	charged := main["provenance"].(map[string]any)["charged"].([]any)
	require.Len(t, charged, 1, "%v", main["provenance"])
	assert.Equal(t, keyID, charged[0].(map[string]any)["id"])
	assert.InDelta(t, mainCost+0.06, charged[0].(map[string]any)["amount"].(float64), 1e-9, "the key is charged the answer and the embedding")
	require.Eventually(t, func() bool { return math.Abs(c.keyUsage(keyID)-(mainCost+0.06)) < 1e-9 }, 5*time.Second, 20*time.Millisecond,
		"the key's budget is charged the answer and the embedding: %v", c.keyUsage(keyID))
	require.Eventually(t, func() bool {
		p := c.admin(http.MethodGet, "/providers/emb?workspace_id="+c.ws, nil)
		ul, _ := p["usage_limits"].(map[string]any)
		return ul != nil && math.Abs(ul["current_usage"].(float64)-0.06) < 1e-9
	}, 5*time.Second, 20*time.Millisecond, "the provider's budget is charged the embedding")

	send("Tell me France's capital city.", "SEMANTIC HIT")
	assert.Equal(t, 2, countPath(c.oa.Requests(), "/embeddings"))

	// The provider's two requests a minute are spent: the lookup stays exact, the chat is served.
	send("How do I bake sourdough bread?", "MISS")
	assert.Equal(t, 2, countPath(c.oa.Requests(), "/embeddings"), "the provider's rate limit held the third embedding")
}

// traceRows waits for n log rows of a trace and answers them by span name, whole.
func (c *cached) traceRows(trace string, n int) map[string]map[string]any {
	c.t.Helper()
	var ids []string
	require.Eventually(c.t, func() bool {
		status, page := c.adminStatus(http.MethodGet, "/logs?trace_id="+trace, nil)
		data, _ := page["data"].([]any)
		if status != http.StatusOK || len(data) < n {
			return false
		}
		ids = ids[:0]
		for _, d := range data {
			ids = append(ids, d.(map[string]any)["_id"].(string))
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "fewer than %d rows for trace %s", n, trace)
	out := map[string]map[string]any{}
	for _, id := range ids {
		row := c.admin(http.MethodGet, "/logs/"+id, nil)
		metrics, _ := row["metrics"].(map[string]any)
		name, _ := metrics["span_name"].(string)
		out[name] = row
	}
	return out
}
