package metrics

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/causeway/causeway/analytics"
)

// Options bounds the label values; the zero value takes the defaults.
type Options struct {
	// MaxModels, MaxProviders and MaxWorkspaces are how many distinct values each label
	// keeps (the first seen); later ones are counted as Other. Defaults 100, 50 and 500.
	MaxModels     int
	MaxProviders  int
	MaxWorkspaces int
	// MaxLabelSets caps the combinations of operation, provider, model, workspace and status
	// class; past it a new combination is counted with its model and workspace as Other.
	// Default 2000 (each set is some 90 series when every metric has seen it).
	MaxLabelSets int
}

func (o Options) withDefaults() Options {
	if o.MaxModels <= 0 {
		o.MaxModels = 100
	}
	if o.MaxProviders <= 0 {
		o.MaxProviders = 50
	}
	if o.MaxWorkspaces <= 0 {
		o.MaxWorkspaces = 500
	}
	if o.MaxLabelSets <= 0 {
		o.MaxLabelSets = 2000
	}
	return o
}

// Label names.
const (
	labelOperation   = "gen_ai_operation_name"
	labelProvider    = "gen_ai_provider_name"
	labelModel       = "gen_ai_request_model"
	labelWorkspace   = "workspace"
	labelStatusClass = "status_class"
	labelTokenType   = "gen_ai_token_type"
)

var baseLabels = []string{labelOperation, labelProvider, labelModel, labelWorkspace}

// Buckets: the GenAI semantic conventions' advice for their instruments, and for the
// gateway's own overhead, which is in microseconds to milliseconds, finer ones.
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	ttftBuckets     = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	tpotBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	overheadBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
)

// Metrics is the process's registry and the request metrics in it. Observe (through Sink)
// is safe for concurrent use.
type Metrics struct {
	reg  *prometheus.Registry
	opts Options

	models, providers, workspaces *bounded

	duration, ttft, tpot, tokenUsage, overhead *prometheus.HistogramVec
	tokens, cost, refusals, cache, verdicts    *prometheus.CounterVec
	retries, fallbacks                         *prometheus.CounterVec
	deliveries                                 *prometheus.CounterVec // notifications, not requests
	prompts                                    *prometheus.CounterVec // prompt renders and completions

	// series holds each label set's children, created on first use. It is keyed by label
	// values, and the request path looks a record up by its own values first: when they are
	// their labels (the common case), that one lookup finds the children.
	mu     sync.RWMutex
	series map[key]*series
}

// key is one label set of the request metrics.
type key struct {
	op, provider, model, workspace string
	class                          uint8
}

// New builds a registry with the Go and process collectors and the request metrics.
func New(opts Options) *Metrics {
	opts = opts.withDefaults()
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg, opts: opts,
		models: newBounded(opts.MaxModels), providers: newBounded(opts.MaxProviders), workspaces: newBounded(opts.MaxWorkspaces),
		series: map[key]*series{},
	}
	hist := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	with := func(extra ...string) []string { return append(append([]string(nil), baseLabels...), extra...) }
	m.duration = hist("gen_ai_server_request_duration_seconds",
		"Time from the gateway receiving a request to its answer's end, refused and failed requests included.",
		durationBuckets, with(labelStatusClass)...)
	m.ttft = hist("gen_ai_server_time_to_first_token_seconds",
		"Time from the gateway receiving a streamed request to its first chunk.", ttftBuckets, baseLabels...)
	m.tpot = hist("gen_ai_server_time_per_output_token_seconds",
		"Time per output token after the first of a stream: (duration - time to first token) / (output tokens - 1).",
		tpotBuckets, baseLabels...)
	m.tokenUsage = hist("gen_ai_client_token_usage", "Tokens a request used, by type (input, output).",
		tokenBuckets, with(labelTokenType)...)
	m.tokens = counter("causeway_tokens_total", "Tokens used, by type (input, output).", with(labelTokenType)...)
	m.cost = counter("causeway_cost_usd_total", "Cost of the requests in USD, as the gateway priced them.", baseLabels...)
	m.overhead = hist("causeway_gateway_overhead_seconds",
		"The gateway's own time in a request: its duration less the time in provider calls (all of it when no provider was called).",
		overheadBuckets, labelOperation, labelProvider)
	m.refusals = counter("causeway_refusals_total", "Requests the gateway refused, by reason (rate_limit, budget, guardrail, auth, other).",
		"reason", labelOperation, labelWorkspace)
	m.cache = counter("causeway_cache_requests_total", "Requests by answer cache status (HIT, SEMANTIC HIT, MISS, REFRESH, DISABLED); refused requests are not counted.",
		"status", labelOperation, labelModel, labelWorkspace)
	m.verdicts = counter("causeway_guardrail_verdicts_total", "Guardrail verdicts, by hook (before, after) and verdict (pass, fail, error).",
		"hook", "verdict", labelWorkspace)
	m.retries = counter("causeway_retries_total", "Retries of provider calls.", baseLabels...)
	m.fallbacks = counter("causeway_fallbacks_total", "Requests served by a fallback target after others failed.", baseLabels...)
	m.deliveries = counter("causeway_notification_deliveries_total",
		"Notification delivery attempts, by channel (email, webhook) and outcome (delivered, retried, failed: the last attempt).",
		"channel", "outcome")
	m.prompts = counter("causeway_prompt_requests_total",
		"Prompt renders and completions (a completion is also counted as the chat it is), by operation (render, completions) and status class.",
		"operation", labelStatusClass)

	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.duration, m.ttft, m.tpot, m.tokenUsage, m.tokens, m.cost, m.overhead, m.refusals, m.cache, m.verdicts,
		m.retries, m.fallbacks, m.deliveries, m.prompts)
	labelValues := prometheus.NewDesc("causeway_metrics_label_values",
		"Distinct values a bounded label holds; at its bound, later values are counted as \"other\".", []string{"label"}, nil)
	reg.MustRegister(collectorFunc{desc: labelValues, collect: func(ch chan<- prometheus.Metric) {
		for _, b := range []struct {
			name string
			b    *bounded
		}{{labelModel, m.models}, {labelProvider, m.providers}, {labelWorkspace, m.workspaces}} {
			ch <- prometheus.MustNewConstMetric(labelValues, prometheus.GaugeValue, float64(b.b.len()), b.name)
		}
		ch <- prometheus.MustNewConstMetric(labelValues, prometheus.GaugeValue, float64(m.labelSets()), "label_sets")
	}})
	return m
}

// Registerer is where other parts of the process register their own metrics: the circuit
// breaker (issue 19) registers its state gauge here, as causeway_breaker_state.
func (m *Metrics) Registerer() prometheus.Registerer { return m.reg }

// Gatherer is the registry as a scrape reads it.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Observe counts one request's record.
func (m *Metrics) Observe(rec *analytics.LogRecord) {
	s := m.seriesOf(rec)
	latency := rec.LatencyMS / 1000
	s.get(cDuration).o.Observe(latency)

	if rec.PromptTokens > 0 || rec.CompletionTokens > 0 {
		in, out := float64(max(rec.PromptTokens, 0)), float64(max(rec.CompletionTokens, 0))
		s.get(cUsageIn).o.Observe(in)
		s.get(cUsageOut).o.Observe(out)
		s.get(cTokensIn).c.Add(in)
		s.get(cTokensOut).c.Add(out)
	}
	if rec.Cost > 0 && !math.IsInf(rec.Cost, 0) {
		s.get(cCost).c.Add(rec.Cost)
	}
	if rec.Stream && rec.TTFTMS > 0 {
		ttft := rec.TTFTMS / 1000
		s.get(cTTFT).o.Observe(ttft)
		// The conventions' time per output token: the stream after its first chunk, shared
		// by the tokens after the first.
		if rec.CompletionTokens > 1 && latency > ttft {
			s.get(cTPOT).o.Observe((latency - ttft) / float64(rec.CompletionTokens-1))
		}
	}
	switch {
	case rec.UpstreamMS > 0:
		s.get(cOverhead).o.Observe(max(rec.LatencyMS-rec.UpstreamMS, 0) / 1000)
	case rec.AIService == "" || cacheHit(rec.CacheStatus):
		// No provider was called (a refusal, a cache hit): the whole request was the
		// gateway's. A provider call that did not say how long it took is not counted.
		s.get(cOverhead).o.Observe(latency)
	}
	if rec.RetryCount > 0 {
		s.get(cRetries).c.Add(float64(rec.RetryCount))
	}
	if rec.FallbackTarget != "" {
		s.get(cFallbacks).c.Inc()
	}
	if rec.PromptID != "" {
		m.prompts.WithLabelValues("completions", statusClasses[statusClass(rec.StatusCode)]).Inc()
	}
	if reason, refused := refusal(rec); refused {
		s.get(cRefusal + reason).c.Inc()
	} else {
		s.get(cCache + cacheStatus(rec.CacheStatus)).c.Inc()
	}
	if p := rec.Provenance; p != nil && len(p.HookResults) > 0 {
		if counts, ok := guardrailVerdicts(p.HookResults); ok {
			for h := range hooks {
				for v := range verdicts {
					if n := counts[h][v]; n > 0 {
						s.get(cVerdict + h*verdicts + v).c.Add(float64(n))
					}
				}
			}
		}
	}
}

// seriesOf finds the children of rec's label set: by the record's own values first, which
// are its labels in the common case (no allocation, one map lookup), else by its values
// made labels.
func (m *Metrics) seriesOf(rec *analytics.LogRecord) *series {
	raw := key{op: operation(rec.Endpoint), provider: rec.AIService, model: rec.Model, workspace: rec.WorkspaceID,
		class: statusClass(rec.StatusCode)}
	m.mu.RLock()
	s := m.series[raw]
	m.mu.RUnlock()
	if s != nil {
		return s
	}
	return m.slowSeries(raw)
}

// slowSeries makes raw's values labels (normalized, bounded), and finds or creates their
// series. Past MaxLabelSets, a new set is counted with model and workspace Other.
func (m *Metrics) slowSeries(raw key) *series {
	k := key{op: raw.op, class: raw.class}
	k.provider = m.label(m.providers, raw.provider)
	k.model = m.label(m.models, raw.model)
	k.workspace = m.label(m.workspaces, raw.workspace)
	m.mu.RLock()
	s := m.series[k]
	m.mu.RUnlock()
	if s != nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.series[k]; s != nil {
		return s
	}
	if len(m.series) >= m.opts.MaxLabelSets {
		k.model, k.workspace = Other, Other
		if s := m.series[k]; s != nil {
			return s
		}
		// The overflow sets are few (operations × providers × classes): they may pass the cap.
	}
	s = &series{m: m, labels: k}
	m.series[k] = s
	return s
}

func (m *Metrics) label(b *bounded, v string) string {
	v, _ = normalize(v)
	v, _ = b.value(v)
	return v
}

func (m *Metrics) labelSets() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.series)
}

// The children of a label set, one per metric and, for refusals, cache statuses and
// verdicts, per value of their own label.
const (
	cDuration = iota
	cTTFT
	cTPOT
	cUsageIn
	cUsageOut
	cTokensIn
	cTokensOut
	cCost
	cOverhead
	cRetries
	cFallbacks
	cCache
	cRefusal  = cCache + len(cacheStatuses)
	cVerdict  = cRefusal + refusalReasons
	nChildren = cVerdict + hooks*verdicts
)

// series is one label set's children, each created at its first observation, so that a
// set exposes only the series it has values for.
type series struct {
	m      *Metrics
	labels key
	kids   [nChildren]atomic.Pointer[child]
}

type child struct {
	o prometheus.Observer
	c prometheus.Counter
}

func (s *series) get(i int) *child {
	if c := s.kids[i].Load(); c != nil {
		return c
	}
	s.kids[i].CompareAndSwap(nil, s.m.child(s.labels, i))
	return s.kids[i].Load()
}

// child resolves child i of label set k from its vector.
func (m *Metrics) child(k key, i int) *child {
	base := []string{k.op, k.provider, k.model, k.workspace}
	switch {
	case i == cDuration:
		return &child{o: m.duration.WithLabelValues(append(base, statusClasses[k.class])...)}
	case i == cTTFT:
		return &child{o: m.ttft.WithLabelValues(base...)}
	case i == cTPOT:
		return &child{o: m.tpot.WithLabelValues(base...)}
	case i == cUsageIn:
		return &child{o: m.tokenUsage.WithLabelValues(append(base, "input")...)}
	case i == cUsageOut:
		return &child{o: m.tokenUsage.WithLabelValues(append(base, "output")...)}
	case i == cTokensIn:
		return &child{c: m.tokens.WithLabelValues(append(base, "input")...)}
	case i == cTokensOut:
		return &child{c: m.tokens.WithLabelValues(append(base, "output")...)}
	case i == cCost:
		return &child{c: m.cost.WithLabelValues(base...)}
	case i == cOverhead:
		return &child{o: m.overhead.WithLabelValues(k.op, k.provider)}
	case i == cRetries:
		return &child{c: m.retries.WithLabelValues(base...)}
	case i == cFallbacks:
		return &child{c: m.fallbacks.WithLabelValues(base...)}
	case i >= cCache && i < cRefusal:
		return &child{c: m.cache.WithLabelValues(cacheStatuses[i-cCache], k.op, k.model, k.workspace)}
	case i >= cRefusal && i < cVerdict:
		return &child{c: m.refusals.WithLabelValues(refusalNames[i-cRefusal], k.op, k.workspace)}
	default:
		v := i - cVerdict
		return &child{c: m.verdicts.WithLabelValues(hookNames[v/verdicts], verdictNames[v%verdicts], k.workspace)}
	}
}

// collectorFunc is a collector of one descriptor whose values are read at scrape time.
type collectorFunc struct {
	desc    *prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }

// Delivery counts a notification delivery attempt by channel (email, webhook) and outcome
// (delivered, retried, failed); any other value counts as "other", so no label can grow.
func (m *Metrics) Delivery(channel, outcome string) {
	m.deliveries.WithLabelValues(oneOf(channel, "email", "webhook"), oneOf(outcome, "delivered", "retried", "failed")).Inc()
}

func oneOf(v string, known ...string) string {
	if slices.Contains(known, v) {
		return v
	}
	return "other"
}

// PromptRender counts a prompt render (POST /prompts/{id}/render) by its answer's status.
func (m *Metrics) PromptRender(status int) {
	m.prompts.WithLabelValues("render", statusClasses[statusClass(status)]).Inc()
}
