package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/causeway/causeway/analytics"
)

// PipelineStats is the request-log pipeline as the metrics read it (analytics.Pipeline).
type PipelineStats interface {
	Stats() analytics.Stats
}

// WatchPipeline exposes p's figures, read at each scrape.
func (m *Metrics) WatchPipeline(p PipelineStats) {
	m.reg.MustRegister(pipelineCollector{p: p})
}

var (
	pipelineQueued = prometheus.NewDesc("causeway_log_pipeline_queue_rows",
		"Request log rows logged and waiting for the pipeline to take them.", nil, nil)
	pipelineReceived = prometheus.NewDesc("causeway_log_pipeline_received_rows_total",
		"Request log rows the pipeline took.", nil, nil)
	pipelineInserted = prometheus.NewDesc("causeway_log_pipeline_inserted_rows_total",
		"Request log rows stored, directly or from the spool.", nil, nil)
	pipelineSpooled = prometheus.NewDesc("causeway_log_spool_rows_total",
		"Request log rows put in the spool because the store failed.", nil, nil)
	pipelineSpoolBytes = prometheus.NewDesc("causeway_log_spool_bytes",
		"Bytes of request log rows waiting in the spool.", nil, nil)
	pipelineLost = prometheus.NewDesc("causeway_log_pipeline_lost_rows_total",
		"Request log rows lost, by reason: buffer_full (the pipeline's buffer refused them), spool (the spool was full or failing), corrupt (spool lines unreadable after a crash).",
		[]string{"reason"}, nil)
)

type pipelineCollector struct{ p PipelineStats }

func (c pipelineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pipelineQueued, pipelineReceived, pipelineInserted, pipelineSpooled, pipelineSpoolBytes, pipelineLost} {
		ch <- d
	}
}

func (c pipelineCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.p.Stats()
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(pipelineQueued, st.Queued)
	counter(pipelineReceived, st.Received)
	counter(pipelineInserted, st.Inserted)
	counter(pipelineSpooled, st.Spooled)
	gauge(pipelineSpoolBytes, st.SpoolBytes)
	counter(pipelineLost, st.BufferFull, "buffer_full")
	counter(pipelineLost, st.Dropped, "spool")
	counter(pipelineLost, st.Corrupt, "corrupt")
}

// ProjectionLag is how far one projection is behind the event store.
type ProjectionLag struct {
	Projection string
	// Events is how many events the store holds past the projection's checkpoint (counted
	// up to a bound, see projections.Runner.Lag).
	Events int
	// Waiting is how long the oldest of them has been stored: 0 when the projection is
	// caught up.
	Waiting time.Duration
	// Stopped: the projection failed and stopped (health names why).
	Stopped bool
}

// LagFunc reads the projections' lag (projections.Runner.Lag, adapted by cmd/).
type LagFunc func(ctx context.Context) ([]ProjectionLag, error)

// WatchProjections exposes the projections' lag, read at each scrape within timeout.
func (m *Metrics) WatchProjections(lag LagFunc, timeout time.Duration) {
	m.reg.MustRegister(lagCollector{lag: lag, timeout: timeout})
}

var (
	lagEvents = prometheus.NewDesc("causeway_projection_lag_events",
		"Events stored past the projection's checkpoint.", []string{"projection"}, nil)
	lagSeconds = prometheus.NewDesc("causeway_projection_lag_seconds",
		"How long the oldest event the projection has not handled has been stored; 0 when caught up.", []string{"projection"}, nil)
	lagStopped = prometheus.NewDesc("causeway_projection_stopped",
		"1 when the projection failed and stopped.", []string{"projection"}, nil)
)

type lagCollector struct {
	lag     LagFunc
	timeout time.Duration
}

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- lagEvents
	ch <- lagSeconds
	ch <- lagStopped
}

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	lags, err := c.lag(ctx)
	if err != nil {
		// The scrape goes on without the lag (the handler continues on errors and logs it).
		ch <- prometheus.NewInvalidMetric(lagEvents, err)
		return
	}
	for _, l := range lags {
		ch <- prometheus.MustNewConstMetric(lagEvents, prometheus.GaugeValue, float64(l.Events), l.Projection)
		ch <- prometheus.MustNewConstMetric(lagSeconds, prometheus.GaugeValue, l.Waiting.Seconds(), l.Projection)
		stopped := 0.0
		if l.Stopped {
			stopped = 1
		}
		ch <- prometheus.MustNewConstMetric(lagStopped, prometheus.GaugeValue, stopped, l.Projection)
	}
}
