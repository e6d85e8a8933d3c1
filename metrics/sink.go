package metrics

import "github.com/causeway/causeway/analytics"

// Sink is the tee in front of the request-log sink: it counts each record, then hands it on
// unchanged. It runs on the request's goroutine, so it does no I/O and, for a label set
// already seen, no allocation (see Metrics.seriesOf).
type Sink struct {
	metrics *Metrics
	next    analytics.LogSink
}

var _ analytics.LogSink = (*Sink)(nil)

// Tee returns the sink that counts each record in m, then logs it to next.
func (m *Metrics) Tee(next analytics.LogSink) *Sink {
	return &Sink{metrics: m, next: next}
}

// Log counts rec, then hands it to the next sink.
func (s *Sink) Log(rec analytics.LogRecord) {
	s.metrics.Observe(&rec)
	s.next.Log(rec)
}
