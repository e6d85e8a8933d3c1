package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/guardrails"
)

// families gathers m's registry by metric name.
func families(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// scraped returns the metrics of family name whose labels include want.
func scraped(t *testing.T, m *Metrics, name string, want map[string]string) []*dto.Metric {
	t.Helper()
	var out []*dto.Metric
	f := families(t, m)[name]
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

// sum adds the value (counter, gauge) or the sample sum (histogram) of the matching series.
func sum(t *testing.T, m *Metrics, name string, want map[string]string) float64 {
	t.Helper()
	var s float64
	for _, mt := range scraped(t, m, name, want) {
		switch {
		case mt.Counter != nil:
			s += mt.Counter.GetValue()
		case mt.Gauge != nil:
			s += mt.Gauge.GetValue()
		case mt.Histogram != nil:
			s += mt.Histogram.GetSampleSum()
		}
	}
	return s
}

// count adds the sample counts of the matching histogram series.
func count(t *testing.T, m *Metrics, name string, want map[string]string) uint64 {
	t.Helper()
	var n uint64
	for _, mt := range scraped(t, m, name, want) {
		n += mt.GetHistogram().GetSampleCount()
	}
	return n
}

// labelValues lists the distinct values label takes in family name.
func labelValues(t *testing.T, m *Metrics, name, label string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, mt := range scraped(t, m, name, nil) {
		for _, l := range mt.GetLabel() {
			if l.GetName() == label && !seen[l.GetValue()] {
				seen[l.GetValue()] = true
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}

func chatRecord(model, workspace string) analytics.LogRecord {
	return analytics.LogRecord{Endpoint: "chatComplete", AIService: "openai", Model: model, WorkspaceID: workspace,
		StatusCode: 200, PromptTokens: 12, CompletionTokens: 5, Cost: 0.001, LatencyMS: 250, UpstreamMS: 240, CacheStatus: "MISS"}
}

func TestNormalize(t *testing.T) {
	long := strings.Repeat("é", MaxLabelLength) // two bytes each: cut inside the run
	for _, tc := range []struct {
		name, in string
		same     bool
	}{
		{"empty", "", false},
		{"plain", "gpt-4o-mini", true},
		{"invalid UTF-8", "gpt-\xff\xfe", false},
		{"long", long, false},
		{"at the bound", strings.Repeat("a", MaxLabelLength), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, same := normalize(tc.in)
			assert.Equal(t, tc.same, same)
			assert.True(t, utf8.ValidString(out))
			assert.LessOrEqual(t, len(out), MaxLabelLength)
			assert.NotEmpty(t, out)
			if tc.same {
				assert.Equal(t, tc.in, out)
			}
		})
	}
	out, _ := normalize("")
	assert.Equal(t, Unknown, out)
	out, _ = normalize(long)
	assert.Equal(t, strings.Repeat("é", MaxLabelLength/2), out, "cut at a character's boundary")
	out, _ = normalize("gpt-\xff")
	assert.Equal(t, "gpt-\uFFFD", out)
}

// The first MaxModels models keep their names, every later one is "other"; the workspaces
// likewise, each label on its own bound; every request is still counted.
func TestLabelsAreBounded(t *testing.T) {
	m := New(Options{MaxModels: 3, MaxWorkspaces: 2})
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec := chatRecord(fmt.Sprintf("model-%d", i%10), fmt.Sprintf("ws-%d", i%5))
			m.Tee(sinkFunc(func(analytics.LogRecord) {})).Log(rec)
		})
	}
	wg.Wait()

	models := labelValues(t, m, "gen_ai_server_request_duration_seconds", labelModel)
	assert.Len(t, models, 4, "three models and other: %v", models)
	assert.Contains(t, models, Other)
	workspaces := labelValues(t, m, "gen_ai_server_request_duration_seconds", labelWorkspace)
	assert.Len(t, workspaces, 3, "two workspaces and other: %v", workspaces)
	assert.Equal(t, uint64(n), count(t, m, "gen_ai_server_request_duration_seconds", nil), "every request counted")
	assert.Equal(t, float64(n*12), sum(t, m, "causeway_tokens_total", map[string]string{labelTokenType: "input"}))
	assert.Equal(t, 3.0, sum(t, m, "causeway_metrics_label_values", map[string]string{"label": labelModel}))
	assert.Equal(t, 2.0, sum(t, m, "causeway_metrics_label_values", map[string]string{"label": labelWorkspace}))

	// A model admitted early keeps its name after the bound is reached.
	first := models[0]
	if first == Other {
		first = models[1]
	}
	before := count(t, m, "gen_ai_server_request_duration_seconds", map[string]string{labelModel: first})
	m.Observe(new(chatRecord(first, "ws-new")))
	assert.Equal(t, before+1, count(t, m, "gen_ai_server_request_duration_seconds", map[string]string{labelModel: first}))
}

// Past MaxLabelSets, new combinations of labels that are each within their bound are counted
// with model and workspace "other", and still counted.
func TestLabelSetsAreCapped(t *testing.T) {
	m := New(Options{MaxModels: 100, MaxWorkspaces: 100, MaxLabelSets: 10})
	const n = 400
	for i := range n {
		m.Observe(new(chatRecord(fmt.Sprintf("model-%d", i%20), fmt.Sprintf("ws-%d", i%20/2))))
	}
	assert.LessOrEqual(t, len(scraped(t, m, "gen_ai_server_request_duration_seconds", nil)), 11, "ten sets and the overflow set")
	assert.NotEmpty(t, scraped(t, m, "gen_ai_server_request_duration_seconds", map[string]string{labelModel: Other, labelWorkspace: Other}))
	assert.Equal(t, uint64(n), count(t, m, "gen_ai_server_request_duration_seconds", nil))
}

// Long, invalid and empty values become valid, short labels; an unknown endpoint is "other".
func TestLabelValuesAreNormalized(t *testing.T) {
	m := New(Options{})
	rec := chatRecord(strings.Repeat("m", 1000)+"\xff", "")
	rec.Endpoint = "somethingNew"
	rec.AIService = ""
	m.Observe(&rec)
	mts := scraped(t, m, "gen_ai_server_request_duration_seconds", nil)
	require.Len(t, mts, 1)
	labels := map[string]string{}
	for _, l := range mts[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	assert.Equal(t, strings.Repeat("m", MaxLabelLength), labels[labelModel])
	assert.Equal(t, Unknown, labels[labelWorkspace])
	assert.Equal(t, Unknown, labels[labelProvider])
	assert.Equal(t, Other, labels[labelOperation])
	assert.Equal(t, "2xx", labels[labelStatusClass])
}

// One streamed chat: every metric it feeds, with the values its record gives.
func TestObserveAStream(t *testing.T) {
	m := New(Options{})
	rec := analytics.LogRecord{Endpoint: "chatComplete", AIService: "anthropic", Model: "claude", WorkspaceID: "ws-1",
		StatusCode: 200, Stream: true, PromptTokens: 40, CompletionTokens: 31, Cost: 0.0125, LatencyMS: 2000, TTFTMS: 500,
		UpstreamMS: 1990, RetryCount: 2, FallbackTarget: "targets.1", CacheStatus: "MISS",
		Metadata: map[string]string{"user": "u-1"}}
	m.Tee(sinkFunc(func(analytics.LogRecord) {})).Log(rec)

	base := map[string]string{labelOperation: "chat", labelProvider: "anthropic", labelModel: "claude", labelWorkspace: "ws-1"}
	with := func(k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range base {
			out[k] = v
		}
		return out
	}
	assert.Equal(t, rec.LatencyMS/1000, sum(t, m, "gen_ai_server_request_duration_seconds", with(labelStatusClass, "2xx")))
	assert.Equal(t, rec.TTFTMS/1000, sum(t, m, "gen_ai_server_time_to_first_token_seconds", base))
	assert.InDelta(t, (rec.LatencyMS-rec.TTFTMS)/1000/float64(rec.CompletionTokens-1),
		sum(t, m, "gen_ai_server_time_per_output_token_seconds", base), 1e-12)
	assert.Equal(t, float64(rec.PromptTokens), sum(t, m, "gen_ai_client_token_usage", with(labelTokenType, "input")))
	assert.Equal(t, float64(rec.CompletionTokens), sum(t, m, "gen_ai_client_token_usage", with(labelTokenType, "output")))
	assert.Equal(t, float64(rec.PromptTokens), sum(t, m, "causeway_tokens_total", with(labelTokenType, "input")))
	assert.Equal(t, float64(rec.CompletionTokens), sum(t, m, "causeway_tokens_total", with(labelTokenType, "output")))
	assert.Equal(t, rec.Cost, sum(t, m, "causeway_cost_usd_total", base))
	assert.InDelta(t, (rec.LatencyMS-rec.UpstreamMS)/1000, sum(t, m, "causeway_gateway_overhead_seconds", nil), 1e-12)
	assert.Equal(t, float64(rec.RetryCount), sum(t, m, "causeway_retries_total", base))
	assert.Equal(t, 1.0, sum(t, m, "causeway_fallbacks_total", base))
	assert.Equal(t, 1.0, sum(t, m, "causeway_cache_requests_total", map[string]string{"status": "MISS", labelModel: "claude"}))
	assert.Empty(t, scraped(t, m, "causeway_refusals_total", nil))

	// Nothing is labelled by metadata.
	for name, f := range families(t, m) {
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				assert.NotEqual(t, "u-1", l.GetValue(), "%s has a metadata value as a label", name)
			}
		}
	}
}

// The gateway's overhead: latency less the provider's time; all of it when no provider was
// called (a refusal, a cache hit); nothing when a provider was called and its time is unknown.
func TestOverhead(t *testing.T) {
	m := New(Options{})
	hit := chatRecord("m", "ws")
	hit.UpstreamMS, hit.CacheStatus, hit.LatencyMS = 0, "HIT", 3
	m.Observe(&hit)
	refused := analytics.LogRecord{Endpoint: "chatComplete", StatusCode: 401, LatencyMS: 1}
	m.Observe(&refused)
	unknown := chatRecord("m", "ws")
	unknown.UpstreamMS = 0
	m.Observe(&unknown)
	assert.Equal(t, uint64(2), count(t, m, "causeway_gateway_overhead_seconds", nil))
	assert.InDelta(t, (hit.LatencyMS+refused.LatencyMS)/1000, sum(t, m, "causeway_gateway_overhead_seconds", nil), 1e-12)
}

func TestRefusalReasons(t *testing.T) {
	by := func(kind string) *analytics.Provenance {
		return &analytics.Provenance{RefusedBy: &analytics.Decider{Kind: kind, ID: "x"}}
	}
	for _, tc := range []struct {
		name   string
		status int
		prov   *analytics.Provenance
		want   string // "" : not a refusal
	}{
		{"rate-limit policy", 429, by("rate_limit_policy"), "rate_limit"},
		{"a key's own rate limit", 429, by("api_key"), "rate_limit"},
		{"a key's budget", 403, by("api_key"), "budget"},
		{"a workspace budget", 403, by("workspace"), "budget"},
		{"a usage-limit policy", 403, by("usage_limit_policy"), "budget"},
		{"a provider's budget", 403, by("provider"), "budget"},
		{"a guardrail", 446, by("guardrail"), "guardrail"},
		{"a decider of a new kind", 403, by("something_new"), "other"},
		{"an unknown key", 401, nil, "auth"},
		{"a key without the scope", 403, nil, "auth"},
		{"the provider's own 429", 429, nil, ""},
		{"a provider failure", 502, nil, ""},
		{"served", 200, &analytics.Provenance{Config: &analytics.Decider{Kind: "config", ID: "c"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{})
			rec := analytics.LogRecord{Endpoint: "chatComplete", StatusCode: tc.status, Provenance: tc.prov, CacheStatus: "DISABLED"}
			m.Observe(&rec)
			refusals := scraped(t, m, "causeway_refusals_total", nil)
			if tc.want == "" {
				assert.Empty(t, refusals)
				assert.Equal(t, 1.0, sum(t, m, "causeway_cache_requests_total", nil), "a request that was not refused has a cache status")
				return
			}
			assert.Equal(t, 1.0, sum(t, m, "causeway_refusals_total", map[string]string{"reason": tc.want}))
			assert.Len(t, refusals, 1)
			assert.Empty(t, scraped(t, m, "causeway_cache_requests_total", nil), "a refusal has no cache status")
		})
	}
}

// Verdicts are read from hook_results as the guardrail engine writes them.
func TestGuardrailVerdicts(t *testing.T) {
	check := func(verdict bool, mods ...func(*guardrails.CheckResult)) guardrails.CheckResult {
		c := guardrails.CheckResult{ID: "default.regexMatch", Verdict: verdict}
		for _, f := range mods {
			f(&c)
		}
		return c
	}
	erred := func(failOnError bool) func(*guardrails.CheckResult) {
		return func(c *guardrails.CheckResult) {
			c.Error, c.FailOnError = &guardrails.CheckError{Name: "timeout", Message: "took too long"}, failOnError
		}
	}
	cancelled := func(c *guardrails.CheckResult) {
		c.Cancelled, c.Error = true, &guardrails.CheckError{Name: "cancelled", Message: "cancelled: another check denied"}
	}
	guardrail := func(verdict bool, checks ...guardrails.CheckResult) guardrails.GuardrailResult {
		return guardrails.GuardrailResult{ID: "g", Verdict: verdict, Checks: checks, Type: "guardrail"}
	}
	raw, err := json.Marshal(guardrails.NewHookResults(
		guardrails.HookResult{Hook: guardrails.BeforeRequest, Guardrails: []guardrails.GuardrailResult{
			guardrail(true, check(true), check(true)),
			guardrail(false, check(false), check(true, cancelled)),
			guardrail(true, check(true), check(true, erred(false))),
			guardrail(false, check(false, erred(true))),
		}},
		guardrails.HookResult{Hook: guardrails.AfterRequest, Guardrails: []guardrails.GuardrailResult{
			guardrail(true, check(true)),
			guardrail(false, check(false), check(false, erred(true))),
		}},
	))
	require.NoError(t, err)

	counts, ok := guardrailVerdicts(raw)
	require.True(t, ok)
	assert.Equal(t, [hooks][verdicts]int{{1, 1, 2}, {1, 1, 0}}, counts)

	m := New(Options{})
	rec := chatRecord("m", "ws-g")
	rec.Provenance = &analytics.Provenance{HookResults: raw}
	m.Observe(&rec)
	for _, tc := range []struct {
		hook, verdict string
		want          float64
	}{{"before", "pass", 1}, {"before", "fail", 1}, {"before", "error", 2}, {"after", "pass", 1}, {"after", "fail", 1}} {
		assert.Equal(t, tc.want, sum(t, m, "causeway_guardrail_verdicts_total",
			map[string]string{"hook": tc.hook, "verdict": tc.verdict, labelWorkspace: "ws-g"}), "%s %s", tc.hook, tc.verdict)
	}
	assert.Empty(t, scraped(t, m, "causeway_guardrail_verdicts_total", map[string]string{"hook": "after", "verdict": "error"}))

	_, ok = guardrailVerdicts(json.RawMessage(`{"before_request_hooks":"nope"}`))
	assert.False(t, ok, "a body of another shape counts nothing")
}

// The tee hands the record on unchanged.
func TestSinkPassesTheRecordOn(t *testing.T) {
	m := New(Options{})
	var got []analytics.LogRecord
	rec := chatRecord("m", "ws")
	rec.ID, rec.Metadata = "req-1", map[string]string{"k": "v"}
	m.Tee(sinkFunc(func(r analytics.LogRecord) { got = append(got, r) })).Log(rec)
	require.Len(t, got, 1)
	assert.Equal(t, rec, got[0])
}

// The pipeline's figures are read at each scrape.
func TestPipelineGauges(t *testing.T) {
	m := New(Options{})
	st := analytics.Stats{Queued: 7, Received: 100, Inserted: 90, Spooled: 5, SpoolBytes: 4096, BufferFull: 2, Dropped: 1, Corrupt: 3}
	m.WatchPipeline(statsFunc(func() analytics.Stats { return st }))
	assert.Equal(t, 7.0, sum(t, m, "causeway_log_pipeline_queue_rows", nil))
	assert.Equal(t, 100.0, sum(t, m, "causeway_log_pipeline_received_rows_total", nil))
	assert.Equal(t, 90.0, sum(t, m, "causeway_log_pipeline_inserted_rows_total", nil))
	assert.Equal(t, 5.0, sum(t, m, "causeway_log_spool_rows_total", nil))
	assert.Equal(t, 4096.0, sum(t, m, "causeway_log_spool_bytes", nil))
	assert.Equal(t, 2.0, sum(t, m, "causeway_log_pipeline_lost_rows_total", map[string]string{"reason": "buffer_full"}))
	assert.Equal(t, 1.0, sum(t, m, "causeway_log_pipeline_lost_rows_total", map[string]string{"reason": "spool"}))
	assert.Equal(t, 3.0, sum(t, m, "causeway_log_pipeline_lost_rows_total", map[string]string{"reason": "corrupt"}))
	st.Queued = 0
	assert.Equal(t, 0.0, sum(t, m, "causeway_log_pipeline_queue_rows", nil), "read again at the next scrape")
}

type statsFunc func() analytics.Stats

func (f statsFunc) Stats() analytics.Stats { return f() }

// With a token, a scrape without it, or with another, is 401 in the API's error shape.
func TestHandlerToken(t *testing.T) {
	m := New(Options{})
	m.Observe(new(chatRecord("m", "ws")))
	get := func(h http.Handler, auth string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		return rec.Code, string(body)
	}
	open := m.Handler("", nil)
	code, body := get(open, "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "gen_ai_server_request_duration_seconds_bucket")
	assert.Contains(t, body, "go_goroutines")

	const token = "scrape-token-0123456789"
	guarded := m.Handler(token, nil)
	for _, auth := range []string{"", "Bearer wrong-token", "Basic " + token, "Bearer " + token + "x", "Bearer"} {
		code, body := get(guarded, auth)
		assert.Equal(t, http.StatusUnauthorized, code, auth)
		var e struct {
			Error struct{ Message, Type, Param, Code string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		assert.Equal(t, "unauthorized", e.Error.Code)
		assert.Equal(t, "Authorization", e.Error.Param)
		assert.NotContains(t, body, token, "the answer never quotes the token")
	}
	code, body = get(guarded, "Bearer "+token)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "causeway_tokens_total")
}

type sinkFunc func(analytics.LogRecord)

func (f sinkFunc) Log(rec analytics.LogRecord) { f(rec) }
