package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// scrape reads url in Prometheus' text format, with token as a bearer token when set.
func scrape(t *testing.T, url, token string) scraped {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	require.NoError(t, err)
	return scraped(fams)
}

// scraped is one scrape's metric families, by name.
type scraped map[string]*dto.MetricFamily

// matching returns the series of family name whose labels include want.
func (s scraped) matching(name string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	f := s[name]
	if f == nil {
		return nil
	}
next:
	for _, mt := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range mt.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		out = append(out, mt)
	}
	return out
}

// value adds the counters or gauges of the matching series, or their histograms' sums.
func (s scraped) value(name string, want map[string]string) float64 {
	var v float64
	for _, mt := range s.matching(name, want) {
		v += mt.GetCounter().GetValue() + mt.GetGauge().GetValue() + mt.GetUntyped().GetValue() + mt.GetHistogram().GetSampleSum()
	}
	return v
}

// count adds the sample counts of the matching histogram series.
func (s scraped) count(name string, want map[string]string) int {
	n := 0
	for _, mt := range s.matching(name, want) {
		n += int(mt.GetHistogram().GetSampleCount())
	}
	return n
}

// labelValues lists the distinct values of label in family name.
func (s scraped) labelValues(name, label string) map[string]bool {
	out := map[string]bool{}
	for _, mt := range s.matching(name, nil) {
		for _, l := range mt.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] = true
			}
		}
	}
	return out
}

// requestSeries is every series of the request metrics, by name and labels: what a label
// that grows with user input would add to.
func (s scraped) requestSeries() map[string]bool {
	out := map[string]bool{}
	for name, f := range s {
		if !strings.HasPrefix(name, "gen_ai_") && !strings.HasPrefix(name, "causeway_") {
			continue
		}
		for _, mt := range f.GetMetric() {
			var b strings.Builder
			b.WriteString(name)
			for _, l := range mt.GetLabel() {
				fmt.Fprintf(&b, ",%s=%q", l.GetName(), l.GetValue())
			}
			out[b.String()] = true
		}
	}
	return out
}

// storedRows waits until the analytics store holds n request logs of m's organisation and
// returns them.
func storedRows(t *testing.T, m *Main, n int) []analytics.LogRecord {
	t.Helper()
	var rows []analytics.LogRecord
	require.Eventually(t, func() bool {
		rows = rows[:0]
		err := m.Analytics.ScanLogs(context.Background(), analytics.Filter{OrganisationID: m.Bootstrap.OrganisationID},
			func(r analytics.LogRecord) error { rows = append(rows, r); return nil })
		return err == nil && len(rows) >= n
	}, 15*time.Second, 50*time.Millisecond, "stored %d of %d rows", len(rows), n)
	require.Len(t, rows, n)
	return rows
}

// Scripted traffic through the real binary, then one scrape of /metrics: every request is
// counted by status class; tokens and cost add up to the request logs the same records
// became; the stream has its time to first token and per output token; the refusals have
// their reasons (a rate limit, a budget, a guardrail, an unknown key); the cache hit, the
// retry and the fallback, the guardrail's verdicts, the pipeline's and the projections'
// figures are there.
func TestMetricsOfScriptedTraffic(t *testing.T) {
	m := startGateway(t)
	g := newGuarded(t, m)
	stand := g.oa.BaseURL()
	plain := fmt.Sprintf(`{"provider":"openai","api_key":"sk-provider-key","custom_host":%q}`, stand)
	chat := `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`
	statuses := map[int]int{}
	send := func(key, config, body string, want int) *http.Response {
		t.Helper()
		resp, raw := g.call(key, "/chat/completions", config, body, nil)
		require.Equal(t, want, resp.StatusCode, "%s", raw)
		statuses[resp.StatusCode]++
		return resp
	}

	for range 3 {
		send(g.key, plain, chat, http.StatusOK)
	}
	send(g.key, plain, `{"model":"budget-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"count"}]}`, http.StatusOK)

	cached := g.config(`{"mode":"simple"}`)
	assert.Equal(t, "MISS", send(g.key, cached, cacheChat, http.StatusOK).Header.Get("x-gateway-cache-status"))
	assert.Equal(t, "HIT", send(g.key, cached, cacheChat, http.StatusOK).Header.Get("x-gateway-cache-status"))

	down := providertest.Answer{Status: http.StatusServiceUnavailable, Body: `{"error":{"message":"down"}}`}
	g.oa.Script(down)
	retry := fmt.Sprintf(`{"provider":"openai","api_key":"sk-provider-key","custom_host":%q,"retry":{"attempts":1,"on_status_codes":[503]}}`, stand)
	assert.Equal(t, "1", send(g.key, retry, chat, http.StatusOK).Header.Get("x-gateway-retry-count"))
	g.oa.Script(down)
	fallback := fmt.Sprintf(`{"strategy":{"mode":"fallback"},"targets":[%s,%s]}`, plain, plain)
	assert.Equal(t, "0.1", send(g.key, fallback, chat, http.StatusOK).Header.Get("x-gateway-target"))

	g.guardrail("no-secrets", "default.regexMatch", map[string]any{"rule": "password", "not": true}, true)
	guarded := g.withGuardrails(`"input_guardrails":["no-secrets"]`)
	send(g.key, guarded, `{"model":"budget-model","max_tokens":4,"messages":[{"role":"user","content":"my password is hunter2"}]}`, 446)
	send(g.key, guarded, chat, http.StatusOK)

	limitedID, limited := g.governed.key(nil)
	freshMinute(t)
	g.admin(http.MethodPost, "/policies/rate-limits", map[string]any{"workspace_id": g.ws, "type": "requests", "unit": "rpm", "value": 1,
		"conditions": []map[string]string{{"key": "api_key", "value": limitedID}}, "group_by": []map[string]string{{"key": "api_key"}}})
	send(limited, plain, chat, http.StatusOK)
	send(limited, plain, chat, http.StatusTooManyRequests)

	_, capped := g.governed.key(map[string]any{"usage_limits": map[string]any{"type": "tokens", "credit_limit": 1}})
	send(capped, plain, chat, http.StatusForbidden)
	send("cw-not-a-key-0000000000000000", plain, chat, http.StatusUnauthorized)

	total := 0
	for _, n := range statuses {
		total += n
	}
	rows := storedRows(t, m, total)
	s := scrape(t, m.MetricsURL(), "")

	const duration = "gen_ai_server_request_duration_seconds"
	assert.Equal(t, total, s.count(duration, nil), "every request is counted")
	assert.Equal(t, statuses[200], s.count(duration, map[string]string{"status_class": "2xx"}))
	assert.Equal(t, total-statuses[200], s.count(duration, map[string]string{"status_class": "4xx"}))
	assert.Equal(t, total-1, s.count(duration, map[string]string{"workspace": g.ws}), "all but the unknown key's")
	assert.Equal(t, 1, s.count(duration, map[string]string{"workspace": "unknown"}))
	assert.True(t, s.labelValues(duration, "gen_ai_request_model")["budget-model"])
	assert.True(t, s.labelValues(duration, "gen_ai_provider_name")["openai"])
	assert.Equal(t, total, s.count(duration, map[string]string{"gen_ai_operation_name": "chat"}))

	var in, out, withUsage int
	var cost float64
	var noProvider int
	for _, r := range rows {
		in, out, cost = in+r.PromptTokens, out+r.CompletionTokens, cost+r.Cost
		if r.PromptTokens > 0 || r.CompletionTokens > 0 {
			withUsage++
		}
		if r.AIService == "" || r.CacheStatus == analytics.CacheHit {
			noProvider++
		}
	}
	require.Positive(t, in)
	require.Positive(t, out)
	require.Positive(t, cost, "budget-model is priced")
	assert.Equal(t, float64(in), s.value("causeway_tokens_total", map[string]string{"gen_ai_token_type": "input"}))
	assert.Equal(t, float64(out), s.value("causeway_tokens_total", map[string]string{"gen_ai_token_type": "output"}))
	assert.Equal(t, float64(in), s.value("gen_ai_client_token_usage", map[string]string{"gen_ai_token_type": "input"}))
	assert.Equal(t, withUsage, s.count("gen_ai_client_token_usage", map[string]string{"gen_ai_token_type": "output"}))
	assert.InDelta(t, cost, s.value("causeway_cost_usd_total", nil), 1e-9)

	assert.Equal(t, 1, s.count("gen_ai_server_time_to_first_token_seconds", nil), "the stream")
	assert.Equal(t, 1, s.count("gen_ai_server_time_per_output_token_seconds", nil))
	overhead := s.count("causeway_gateway_overhead_seconds", nil)
	assert.GreaterOrEqual(t, overhead, noProvider, "refusals and the cache hit are the gateway's time alone")
	assert.LessOrEqual(t, overhead, total)

	for reason, n := range map[string]float64{"rate_limit": 1, "budget": 1, "guardrail": 1, "auth": 1, "other": 0} {
		assert.Equal(t, n, s.value("causeway_refusals_total", map[string]string{"reason": reason}), reason)
	}
	assert.Equal(t, 1.0, s.value("causeway_cache_requests_total", map[string]string{"status": "HIT"}))
	assert.Equal(t, 1.0, s.value("causeway_cache_requests_total", map[string]string{"status": "MISS"}))
	assert.Equal(t, float64(total-4), s.value("causeway_cache_requests_total", nil), "every request not refused")
	assert.Equal(t, 1.0, s.value("causeway_retries_total", nil))
	assert.Equal(t, 1.0, s.value("causeway_fallbacks_total", nil))
	assert.Equal(t, 1.0, s.value("causeway_guardrail_verdicts_total", map[string]string{"hook": "before", "verdict": "fail", "workspace": g.ws}))
	assert.Equal(t, 1.0, s.value("causeway_guardrail_verdicts_total", map[string]string{"hook": "before", "verdict": "pass"}))

	assert.GreaterOrEqual(t, s.value("causeway_log_pipeline_inserted_rows_total", nil), float64(total))
	assert.Zero(t, s.value("causeway_log_pipeline_lost_rows_total", nil))
	require.NotEmpty(t, s.matching("causeway_projection_lag_events", map[string]string{"projection": "memory"}))
	assert.Zero(t, s.value("causeway_projection_lag_events", nil), "writes answer once the read models have them")
	assert.Zero(t, s.value("causeway_projection_stopped", nil))
	assert.NotEmpty(t, s.matching("go_goroutines", nil))
	assert.NotEmpty(t, s.matching("process_cpu_seconds_total", nil))

	// No secret reaches a label: not the keys, nor the provider's.
	body := scrapeText(t, m.MetricsURL(), "")
	for _, secret := range []string{g.key, limited, capped, gatewayKey, "sk-provider-key"} {
		assert.NotContains(t, body, secret)
	}
}

func scrapeText(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(raw)
}

// Labels never grow with user input: 10,000 requests each with its own metadata add no
// series, and 10,000 distinct model names leave the model label at its bound and "other".
func TestMetricsCardinalityIsBounded(t *testing.T) {
	const n, maxModels = 10_000, 25
	m := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1",
		"CAUSEWAY_METRICS_MAX_MODELS": fmt.Sprint(maxModels)})
	oa := providertest.NewOpenAI(t)
	// Many requests from a few clients: a pool that keeps its connections.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	parallel := func(n int, req func(i int) (model, metadata string)) {
		t.Helper()
		var next, failed atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					model, md := req(i)
					r, _ := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions",
						strings.NewReader(fmt.Sprintf(`{"model":%q,"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`, model)))
					r.Header.Set("x-gateway-api-key", gatewayKey)
					r.Header.Set("x-gateway-provider", "openai")
					r.Header.Set("x-gateway-custom-host", oa.BaseURL())
					r.Header.Set("Authorization", "Bearer sk-provider-key")
					if md != "" {
						r.Header.Set("x-gateway-metadata", md)
					}
					resp, err := client.Do(r)
					if err != nil {
						failed.Add(1)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		require.Zero(t, failed.Load(), "requests that failed")
	}

	parallel(1, func(int) (string, string) { return "gpt-4o-mini", `{"user":"warm-up"}` })
	before := scrape(t, m.MetricsURL(), "")
	parallel(n, func(i int) (string, string) {
		return "gpt-4o-mini", fmt.Sprintf(`{"user":"user-%d","session":"s-%d"}`, i, i)
	})
	after := scrape(t, m.MetricsURL(), "")
	assert.Equal(t, before.requestSeries(), after.requestSeries(), "metadata adds no series")
	assert.Equal(t, n+1, after.count("gen_ai_server_request_duration_seconds", nil))

	parallel(n, func(i int) (string, string) { return fmt.Sprintf("model-%05d", i), "" })
	s := scrape(t, m.MetricsURL(), "")
	models := s.labelValues("gen_ai_server_request_duration_seconds", "gen_ai_request_model")
	assert.Len(t, models, maxModels+1, "the first %d models and other", maxModels)
	assert.True(t, models["other"])
	assert.Equal(t, 2*n+1, s.count("gen_ai_server_request_duration_seconds", nil), "every request still counted")
	assert.Equal(t, float64(maxModels), s.value("causeway_metrics_label_values", map[string]string{"label": "gen_ai_request_model"}))
	assert.LessOrEqual(t, len(s.requestSeries()), 2*len(before.requestSeries())*(maxModels+1),
		"series grow with the bound, not with the %d models", n)
}

// CAUSEWAY_METRICS_ADDR serves /metrics on its own address, and then not on the main port;
// CAUSEWAY_METRICS_TOKEN makes a scrape without the token a 401 in the error shape;
// CAUSEWAY_METRICS=OFF serves none.
func TestMetricsAddressTokenAndSwitch(t *testing.T) {
	const token = "metrics-scrape-token-123456"
	status := func(url, auth string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	root := func(m *Main) string { return strings.TrimSuffix(m.URL(), "/v1") }
	refused := func(url, auth string) {
		t.Helper()
		code, raw := status(url, auth)
		require.Equal(t, http.StatusUnauthorized, code, "%s", raw)
		e := decodeError(t, raw)
		assert.Equal(t, "unauthorized", e.Error.Code)
		assert.NotContains(t, string(raw), token)
	}

	t.Run("own address", func(t *testing.T) {
		logs := &syncWriter{}
		cfg, err := LoadConfig(env(map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": t.TempDir(),
			"CAUSEWAY_METRICS_ADDR": "127.0.0.1:0", "CAUSEWAY_METRICS_TOKEN": token}))
		require.NoError(t, err)
		m := NewMain(cfg, logs, "test")
		require.NoError(t, m.Run(context.Background()))
		t.Cleanup(func() { require.NoError(t, m.Close()) })

		require.NotContains(t, m.MetricsURL(), root(m), "another port")
		code, _ := status(root(m)+"/metrics", "Bearer "+token)
		assert.Equal(t, http.StatusNotFound, code, "not on the main port")
		refused(m.MetricsURL(), "")
		refused(m.MetricsURL(), "Bearer not-the-token")
		s := scrape(t, m.MetricsURL(), token)
		assert.NotEmpty(t, s.matching("causeway_log_pipeline_queue_rows", nil))
		code, raw := status(strings.TrimSuffix(m.MetricsURL(), "/metrics")+"/v1/health", "")
		assert.Equal(t, http.StatusNotFound, code, "that address serves /metrics alone")
		assert.Equal(t, "not_found", decodeError(t, raw).Error.Code)
		assert.NotContains(t, logs.String(), token, "the token is never logged")
	})

	t.Run("main port with a token", func(t *testing.T) {
		m := startMain(t, map[string]string{"CAUSEWAY_METRICS_TOKEN": token})
		assert.Equal(t, root(m)+"/metrics", m.MetricsURL())
		refused(m.MetricsURL(), "")
		scrape(t, m.MetricsURL(), token)
		code, _ := status(m.URL()+"/metrics", "Bearer "+token)
		assert.NotEqual(t, http.StatusOK, code, "outside /v1 only")
	})

	t.Run("off", func(t *testing.T) {
		m := startMain(t, map[string]string{"CAUSEWAY_METRICS": "OFF"})
		assert.Nil(t, m.Metrics)
		code, _ := status(root(m)+"/metrics", "")
		assert.Equal(t, http.StatusNotFound, code)
	})
}

// syncWriter lets the server's goroutines log into a buffer the test reads.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
