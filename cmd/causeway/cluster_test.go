package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/cluster"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// startCluster runs n instances on one PostgreSQL event store, read model and ledger, each
// with a data directory of its own.
func startCluster(t *testing.T, n int) []*Main {
	t.Helper()
	pg := migrationstest.PostgresURL(t)
	out := make([]*Main, n)
	for i := range out {
		vars := serverEnv(pg)
		vars["CAUSEWAY_BOOTSTRAP_ADMIN_KEY"], vars["CAUSEWAY_ALLOWED_HOSTS"] = gatewayKey, "127.0.0.1"
		out[i] = startMain(t, vars)
	}
	return out
}

// everywhere waits until every instance routes the key.
func everywhere(t *testing.T, ms []*Main, secret string) {
	t.Helper()
	for _, m := range ms {
		require.Eventually(t, func() bool { _, ok := m.Index.Route(domain.HashKey(secret)); return ok },
			5*time.Second, 5*time.Millisecond)
	}
}

// eventsOf counts the events of type typ in stream, as m's event store holds them.
func eventsOf(t *testing.T, m *Main, stream, typ string) int {
	t.Helper()
	recs, err := m.Store.ReadStream(context.Background(), stream, eventstore.Forwards, 0, 1000)
	require.NoError(t, err)
	n := 0
	for _, r := range recs {
		if r.Type == typ {
			n++
		}
	}
	return n
}

// spread sends counts[i] chats to instance i, all at once, and answers how many were served.
func spread(t *testing.T, g *governed, ms []*Main, counts []int, key string) (served int) {
	t.Helper()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for i, m := range ms {
		for range counts[i] {
			wg.Go(func() {
				resp, _ := chatThrough(t, m, key, g.oa.BaseURL(),
					`{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`, nil)
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				}
			})
		}
	}
	wg.Wait()
	return int(ok.Load())
}

// Three instances on one database: a key limited to 30 requests a minute is served exactly 30
// of 90 requests however they are spread, and a budget that fits 20 requests serves at most 20
// of 200 concurrent ones, with its usage at most the limit.
func TestClusterLimitsAreExact(t *testing.T) {
	ms := startCluster(t, 3)
	g := newGoverned(t, ms[0])
	for _, tc := range []struct {
		name   string
		counts []int
	}{
		{"spread evenly", []int{30, 30, 30}},
		{"all on one", []int{90, 0, 0}},
		{"skewed 80/10/10", []int{72, 9, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g.t = t
			// Not across a minute's end, where a second window would open.
			freshMinute(t)
			_, key := g.key(map[string]any{"rate_limits": []map[string]any{{"type": "requests", "unit": "rpm", "value": 30}}})
			everywhere(t, ms, key)
			require.Equal(t, 30, spread(t, g, ms, tc.counts, key))
		})
	}
	t.Run("budget", func(t *testing.T) {
		g.t = t
		// $2 fits 20 chats of $0.10 (their worst case is their cost).
		id, key := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 2}})
		everywhere(t, ms, key)
		served := spread(t, g, ms, []int{67, 67, 66}, key)
		require.LessOrEqual(t, served, 20)
		require.GreaterOrEqual(t, served, 19, "the budget is not starved by leases held idle")
		require.Eventually(t, func() bool { return g.keyUsage(id) >= float64(served)*0.1-1e-9 }, 5*time.Second, 20*time.Millisecond)
		require.LessOrEqual(t, g.keyUsage(id), 2.0+1e-9)
	})
}

// Three instances list each other with their applied positions; one that stops cleanly drops
// from the list at once, and a write is applied everywhere soon after.
func TestClusterInstancesListEachOther(t *testing.T) {
	ms := startCluster(t, 3)
	require.Eventually(t, func() bool {
		list, err := ms[0].Cluster.List(context.Background(), cluster.Alive)
		return err == nil && len(list) == 3
	}, 5*time.Second, 10*time.Millisecond)
	g := newGoverned(t, ms[1])
	_, key := g.key(nil)
	everywhere(t, ms, key)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, cluster.WaitApplied(ctx, ms[2].Cluster, uint64(ms[1].Read.Position())))

	require.NoError(t, ms[2].Close())
	list, err := ms[0].Cluster.List(context.Background(), cluster.Alive)
	require.NoError(t, err)
	ids := []string{}
	for _, i := range list {
		ids = append(ids, i.ID)
	}
	require.ElementsMatch(t, []string{ms[0].Instance.ID, ms[1].Instance.ID}, ids)
}

// Key expiry runs on every instance, and is recorded once: each worker's write carries an
// idempotency key derived from the key and the moment, so the second and third find it done.
func TestClusterExpiryAndResetsHappenOnce(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	ms := make([]*Main, 3)
	for i := range ms {
		vars := serverEnv(pg)
		vars["CAUSEWAY_BOOTSTRAP_ADMIN_KEY"], vars["CAUSEWAY_ALLOWED_HOSTS"] = gatewayKey, "127.0.0.1"
		vars["CAUSEWAY_ADDR"], vars["CAUSEWAY_DATA_DIR"], vars["CAUSEWAY_STARTUP_TIMEOUT"] = "127.0.0.1:0", t.TempDir(), "5s"
		cfg, err := LoadConfig(env(vars))
		require.NoError(t, err)
		m := NewMain(cfg, io.Discard, "test")
		m.WorkerInterval = 50 * time.Millisecond
		require.NoError(t, m.Run(context.Background()))
		t.Cleanup(func() { require.NoError(t, m.Close()) })
		ms[i] = m
	}
	g := newGoverned(t, ms[0])
	expires := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	id, key := g.key(map[string]any{"expires_at": expires})
	everywhere(t, ms, key)

	expired := func() int { return eventsOf(t, ms[1], domain.Stream(domain.APIKeyPrefix, id), "ApiKeyExpired") }
	require.Eventually(t, func() bool { return expired() == 1 }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // six more passes on each instance
	require.Equal(t, 1, expired(), "recorded once")
	for _, m := range ms {
		resp, _ := chatThrough(t, m, key, g.oa.BaseURL(), `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`, nil)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "an expired key is refused everywhere")
	}

	// A periodic usage reset falls due: every instance's reset worker sees it, one resets.
	due := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	budgeted, _ := g.key(map[string]any{"usage_limits": map[string]any{"type": "cost", "credit_limit": 10,
		"periodic_reset_days": 1, "next_usage_reset_at": due}})
	resets := func() int {
		return eventsOf(t, ms[2], domain.Stream(domain.APIKeyPrefix, budgeted), "ApiKeyUsageReset")
	}
	require.Eventually(t, func() bool { return resets() == 1 }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 1, resets(), "reset once")
}

// propagationBound is what propagation is held to. make test-cluster sets
// CAUSEWAY_CLUSTER_STRICT and runs these tests without the race detector: then the bound of
// 100 ms is held to. Under -race (make test), with every package's tests sharing the CPUs,
// the figures are logged and held only to 5 s, which a propagation that does not work still
// fails (it never arrives), and a loaded CI machine does not.
func propagationBound() time.Duration {
	if os.Getenv("CAUSEWAY_CLUSTER_STRICT") != "" {
		return 100 * time.Millisecond
	}
	return 5 * time.Second
}

// p99 of a few samples: the largest but one in a hundred (with 20 samples, the largest).
func p99(samples []time.Duration) time.Duration {
	s := slices.Clone(samples)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}

// Over 20 trials, while the three instances serve 200 requests a second and A takes 20 admin
// writes a second: a key created on A is served on B and C, and a key revoked on A is refused
// on B and C, within the bound.
func TestClusterPropagation(t *testing.T) {
	ms := startCluster(t, 3)
	g := newGoverned(t, ms[0])
	_, busyKey := g.key(nil)
	everywhere(t, ms, busyKey)
	// Load: 200 chats a second spread over the three instances, and 20 admin writes a second
	// on A, each event of which every instance applies.
	stop := make(chan struct{})
	var load sync.WaitGroup
	for i := range 4 {
		every := 15 * time.Millisecond // three loaders of ~67 chats a second
		if i == 3 {
			every = 50 * time.Millisecond
		}
		load.Go(func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if i == 3 {
					g.adminStatus(http.MethodPost, "/api-keys/workspace/service",
						map[string]any{"name": "churn", "workspace_id": g.ws, "scopes": []string{"completions.write"}})
					continue
				}
				chatThrough(t, ms[i], busyKey, g.oa.BaseURL(), `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`, nil)
			}
		})
	}
	defer func() { close(stop); load.Wait() }()

	status := func(m *Main, key string) int {
		resp, _ := chatThrough(t, m, key, g.oa.BaseURL(), `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`, nil)
		return resp.StatusCode
	}
	// until answers how long after start every one of ms answers want for key.
	until := func(start time.Time, key string, want int) time.Duration {
		var worst time.Duration
		for _, m := range ms[1:] {
			for status(m, key) != want {
				require.Less(t, time.Since(start), 10*time.Second, "never propagated")
				time.Sleep(time.Millisecond)
			}
			worst = max(worst, time.Since(start))
		}
		return worst
	}
	var created, revoked []time.Duration
	for range 20 {
		start := time.Now()
		id, key := g.key(nil)
		created = append(created, until(start, key, http.StatusOK))
		start = time.Now()
		g.admin(http.MethodDelete, "/api-keys/"+id, nil)
		revoked = append(revoked, until(start, key, http.StatusUnauthorized))
	}
	t.Logf("under load, p99 over 20 trials: created on A to served on B and C %s, revoked on A to refused on B and C %s",
		p99(created), p99(revoked))
	require.Less(t, p99(created), propagationBound())
	require.Less(t, p99(revoked), propagationBound())
}

// GET /instances lists the three with their lag; a write that asks to wait for every instance
// answers once they have applied it. An instance that stops applying (a frozen process, its
// heartbeat still fresh) makes a waiting write answer 504 naming it; once its heartbeat stops
// it drops from the list, and writes wait for the live ones only.
func TestClusterWatermark(t *testing.T) {
	ms := startCluster(t, 3)
	g := newGoverned(t, ms[0])
	require.Eventually(t, func() bool {
		return len(g.admin(http.MethodGet, "/instances", nil)["data"].([]any)) == 3
	}, 5*time.Second, 10*time.Millisecond)
	list := g.admin(http.MethodGet, "/instances", nil)["data"].([]any)
	for _, raw := range list {
		inst := raw.(map[string]any)
		require.Contains(t, inst, "lag_events")
		require.Contains(t, inst, "applied_position")
		require.Equal(t, "test", inst["version"])
	}

	write := func(timeout string) (int, map[string]any) {
		g.t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ms[0].URL()+"/api-keys/workspace/service", strings.NewReader(
			`{"name":"waited","workspace_id":"`+g.ws+`","scopes":["completions.write"]}`))
		req.Header.Set("x-gateway-api-key", gatewayKey)
		req.Header.Set("x-gateway-wait-for", "all-instances")
		req.Header.Set("x-gateway-wait-timeout", timeout)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode == http.StatusOK {
			pos, _ := strconv.ParseUint(resp.Header.Get("x-gateway-position"), 10, 64)
			for _, m := range ms {
				require.GreaterOrEqual(t, uint64(m.Read.Position()), pos, "answered after every instance applied it")
			}
		}
		return resp.StatusCode, body
	}
	status, body := write("5000")
	require.Equal(t, http.StatusOK, status, "%v", body)

	// A frozen instance: listed (its heartbeat goes on) but applying nothing.
	frozen := cluster.Instance{ID: "frozen-instance", Version: "test", StartedAt: time.Now()}
	ctx, stopBeating := context.WithCancel(context.Background())
	beat := make(chan struct{})
	go func() {
		defer close(beat)
		for ctx.Err() == nil {
			_, _ = ms[0].Cluster.Beat(context.Background(), frozen)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	require.Eventually(t, func() bool {
		return len(g.admin(http.MethodGet, "/instances", nil)["data"].([]any)) == 4
	}, 5*time.Second, 10*time.Millisecond)
	status, body = write("300")
	require.Equal(t, http.StatusGatewayTimeout, status, "%v", body)
	require.Contains(t, body["error"].(map[string]any)["message"], "still behind: frozen-instance (at 0)")

	stopBeating() // killed: its heartbeat stops, and it drops from the list within cluster.Alive
	<-beat
	require.Eventually(t, func() bool {
		return len(g.admin(http.MethodGet, "/instances", nil)["data"].([]any)) == 3
	}, 3*cluster.Alive, 50*time.Millisecond)
	status, body = write("5000")
	require.Equal(t, http.StatusOK, status, "%v", body)
}

// 50 plain PUTs of one policy at once, spread over the three instances, all land (2xx) and
// the audit stream holds 50 updates; ten PUTs that carry one ETag as If-Match land once, and
// the other nine answer 412. Afterwards every instance has applied everything, and a replay
// of the events equals the live read model (replay --verify).
func TestClusterRacingWrites(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	vars := serverEnv(pg)
	vars["CAUSEWAY_BOOTSTRAP_ADMIN_KEY"], vars["CAUSEWAY_ALLOWED_HOSTS"] = gatewayKey, "127.0.0.1"
	ms := make([]*Main, 3)
	for i := range ms {
		ms[i] = startMain(t, vars)
	}
	g := newGoverned(t, ms[0])
	created := g.admin(http.MethodPost, "/policies/rate-limits", map[string]any{"name": "raced", "workspace_id": g.ws,
		"type": "requests", "unit": "rpm", "value": 1000, "conditions": []map[string]string{{"key": "workspace_id", "value": g.ws}},
		"group_by": []map[string]string{{"key": "api_key"}}})
	id := created["id"].(string)

	put := func(m *Main, value int, ifMatch string) int {
		req, _ := http.NewRequest(http.MethodPut, m.URL()+"/policies/rate-limits/"+id, strings.NewReader(fmt.Sprintf(`{"value":%d}`, value)))
		req.Header.Set("x-gateway-api-key", gatewayKey)
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range 50 {
		wg.Go(func() { statuses[i] = put(ms[i%3], 2000+i, "") })
	}
	wg.Wait()
	for i, s := range statuses {
		require.Equal(t, http.StatusOK, s, "plain write %d", i)
	}
	updates := func() int {
		return eventsOf(t, ms[0], domain.Stream(domain.RateLimitPolicyPrefix, id), "RateLimitPolicyUpdated")
	}
	require.Equal(t, 50, updates(), "every plain write is in the audit stream")

	req, _ := http.NewRequest(http.MethodGet, ms[1].URL()+"/policies/rate-limits/"+id, nil)
	req.Header.Set("x-gateway-api-key", gatewayKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)
	for i := range 10 {
		wg.Go(func() { statuses[i] = put(ms[i%3], 3000+i, etag) })
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses[:10] {
		counts[s]++
	}
	require.Equal(t, map[int]int{http.StatusOK: 1, http.StatusPreconditionFailed: 9}, counts)
	require.Equal(t, 51, updates())

	head := ms[0].Read.Position()
	for _, m := range ms {
		require.Eventually(t, func() bool { return m.Read.Position() >= head }, 5*time.Second, 10*time.Millisecond)
	}
	var out, errOut strings.Builder
	require.Equal(t, 0, replay([]string{"--verify"}, env(vars), &out, &errOut), "%s%s", out.String(), errOut.String())
	require.Contains(t, out.String(), "verify: the rebuild equals the live tables")
}
