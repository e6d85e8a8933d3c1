package metrics

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/analytics"
)

// benchRecords is a gateway's mix: 20 models, 10 workspaces, two providers, a third of the
// requests streamed, one in twenty refused by a rate limit, cache hits and misses.
func benchRecords() []analytics.LogRecord {
	recs := make([]analytics.LogRecord, 256)
	for i := range recs {
		r := analytics.LogRecord{Endpoint: "chatComplete", AIService: []string{"openai", "anthropic"}[i%2],
			Model: fmt.Sprintf("model-%d", i%20), WorkspaceID: fmt.Sprintf("6f1c2f0e-0000-4000-8000-%012d", i%10),
			StatusCode: 200, PromptTokens: 200 + i, CompletionTokens: 50 + i%30, Cost: 0.0004, LatencyMS: 800, UpstreamMS: 795,
			CacheStatus: []string{"MISS", "DISABLED", "HIT"}[i%3], Metadata: map[string]string{"user": fmt.Sprint("u-", i)},
			ID: fmt.Sprintf("0190f5a4-0000-7000-8000-%012d", i)}
		if i%3 == 1 {
			r.Stream, r.TTFTMS = true, 120
		}
		if i%20 == 7 {
			r.StatusCode, r.AIService, r.PromptTokens, r.CompletionTokens, r.Cost, r.UpstreamMS = 429, "", 0, 0, 0, 0
			r.Provenance = &analytics.Provenance{RefusedBy: &analytics.Decider{Kind: "rate_limit_policy", ID: "p"}}
		}
		recs[i] = r
	}
	return recs
}

type countSink struct{ n atomic.Int64 }

func (c *countSink) Log(analytics.LogRecord) { c.n.Add(1) }

// discard is a store that keeps nothing: the pipeline's own work, not a database's, is what
// the pipeline variants measure.
type discard struct{}

func (discard) Insert(context.Context, []analytics.LogRecord) error { return nil }

// pipeline runs the log pipeline as cmd/causeway does (a journal, a spool), into discard.
func pipeline(b *testing.B) *analytics.Pipeline {
	spool, err := analytics.OpenSpool(b.TempDir(), 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	journal, err := analytics.OpenJournal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	p, err := analytics.NewPipeline(discard{}, spool, analytics.Options{Journal: journal})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = p.Run(context.Background()) }()
	b.Cleanup(func() {
		_ = p.Close()
		_ = journal.Close()
		_ = spool.Close()
	})
	return p
}

// BenchmarkSink is what the metrics tee adds to each request's hand-off of its log record:
// the baseline hands the record to the next sink alone (one that counts, so that the figures
// are the tee's own); tee counts it first, with each label set's children cached;
// tee-uncached resolves every child with WithLabelValues, as a tee without the cache would;
// tee-parallel is the tee from every core at once; pipeline and tee-pipeline are the
// hand-off to the real log pipeline (journal and all), without and with the tee. One op is
// one record.
func BenchmarkSink(b *testing.B) {
	recs := benchRecords()
	report := func(b *testing.B, start time.Time) {
		el := time.Since(start)
		b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/record")
		b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
	}
	run := func(b *testing.B, log func(analytics.LogRecord)) {
		for i := range len(recs) {
			log(recs[i]) // every label set seen once, as in a gateway that has run a while
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			log(recs[i%len(recs)])
		}
		report(b, start)
	}
	b.Run("baseline-next", func(b *testing.B) {
		next := &countSink{}
		run(b, next.Log)
	})
	b.Run("tee", func(b *testing.B) {
		run(b, New(Options{}).Tee(&countSink{}).Log)
	})
	b.Run("pipeline", func(b *testing.B) {
		run(b, pipeline(b).Log)
	})
	b.Run("tee-pipeline", func(b *testing.B) {
		run(b, New(Options{}).Tee(pipeline(b)).Log)
	})
	b.Run("tee-uncached", func(b *testing.B) {
		m, next := New(Options{}), &countSink{}
		run(b, func(rec analytics.LogRecord) {
			m.observeUncached(&rec)
			next.Log(rec)
		})
	})
	b.Run("tee-parallel", func(b *testing.B) {
		sink := New(Options{}).Tee(&countSink{})
		for i := range recs {
			sink.Log(recs[i])
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				sink.Log(recs[next.Add(1)%int64(len(recs))])
			}
		})
		report(b, start)
	})
}

// observeUncached is Observe without the cache of children: labels made and every child
// looked up in its vector (hashing its label values) on each record. It exists to measure
// what the cache saves.
func (m *Metrics) observeUncached(rec *analytics.LogRecord) {
	op, class := operation(rec.Endpoint), statusClasses[statusClass(rec.StatusCode)]
	provider, model, ws := m.label(m.providers, rec.AIService), m.label(m.models, rec.Model), m.label(m.workspaces, rec.WorkspaceID)
	latency := rec.LatencyMS / 1000
	m.duration.WithLabelValues(op, provider, model, ws, class).Observe(latency)
	if rec.PromptTokens > 0 || rec.CompletionTokens > 0 {
		m.tokenUsage.WithLabelValues(op, provider, model, ws, "input").Observe(float64(rec.PromptTokens))
		m.tokenUsage.WithLabelValues(op, provider, model, ws, "output").Observe(float64(rec.CompletionTokens))
		m.tokens.WithLabelValues(op, provider, model, ws, "input").Add(float64(rec.PromptTokens))
		m.tokens.WithLabelValues(op, provider, model, ws, "output").Add(float64(rec.CompletionTokens))
	}
	if rec.Cost > 0 && !math.IsInf(rec.Cost, 0) {
		m.cost.WithLabelValues(op, provider, model, ws).Add(rec.Cost)
	}
	if rec.Stream && rec.TTFTMS > 0 {
		ttft := rec.TTFTMS / 1000
		m.ttft.WithLabelValues(op, provider, model, ws).Observe(ttft)
		if rec.CompletionTokens > 1 && latency > ttft {
			m.tpot.WithLabelValues(op, provider, model, ws).Observe((latency - ttft) / float64(rec.CompletionTokens-1))
		}
	}
	switch {
	case rec.UpstreamMS > 0:
		m.overhead.WithLabelValues(op, provider).Observe(max(rec.LatencyMS-rec.UpstreamMS, 0) / 1000)
	case rec.AIService == "" || cacheHit(rec.CacheStatus):
		m.overhead.WithLabelValues(op, provider).Observe(latency)
	}
	if reason, refused := refusal(rec); refused {
		m.refusals.WithLabelValues(refusalNames[reason], op, ws).Inc()
	} else {
		m.cache.WithLabelValues(cacheStatuses[cacheStatus(rec.CacheStatus)], op, model, ws).Inc()
	}
}
