package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/metrics"
)

// metricsLagTimeout bounds the projections' lag read at a scrape (a checkpoint and one read
// of the event store): a store that does not answer leaves the lag out of that scrape.
const metricsLagTimeout = 5 * time.Second

// startMetrics builds the process's metrics unless CAUSEWAY_METRICS is OFF: the registry,
// the tee that counts each request's log record before the pipeline takes it, and the
// figures read at each scrape (the pipeline's, the projections' lag). It returns the sink
// the gateway logs to: the tee in front of next (the sinks that lead to the pipeline), or next
// itself when the metrics are off.
func (m *Main) startMetrics(pipeline *analytics.Pipeline, next analytics.LogSink) analytics.LogSink {
	if !m.Config.Metrics {
		return next
	}
	m.Metrics = metrics.New(metrics.Options{MaxModels: m.Config.MetricsMaxModels,
		MaxWorkspaces: m.Config.MetricsMaxWorkspaces, MaxLabelSets: m.Config.MetricsMaxLabelSets})
	m.Metrics.WatchPipeline(pipeline)
	runner := m.runner
	m.Metrics.WatchProjections(func(ctx context.Context) ([]metrics.ProjectionLag, error) {
		// The wall clock, not m.Now: events are stamped by the store's.
		lags, err := runner.Lag(ctx, time.Now())
		if err != nil {
			return nil, err
		}
		out := make([]metrics.ProjectionLag, len(lags))
		for i, l := range lags {
			out[i] = metrics.ProjectionLag{Projection: l.Projection, Events: l.Events, Waiting: l.Waiting, Stopped: l.Stopped}
		}
		return out, nil
	}, metricsLagTimeout)
	return m.Metrics.Tee(next)
}

// mainPortMetrics is the /metrics handler of the main port: nil when the metrics are off or
// served on their own address.
func (m *Main) mainPortMetrics() http.Handler {
	if m.Metrics == nil || m.Config.MetricsAddr != "" {
		return nil
	}
	return m.Metrics.Handler(m.Config.MetricsToken, m.Logger)
}

// serveMetrics serves GET /metrics alone on CAUSEWAY_METRICS_ADDR, when it is set: a port
// that a firewall keeps to the scrapers. Close shuts it down.
func (m *Main) serveMetrics() error {
	if m.Metrics == nil || m.Config.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.Config.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on CAUSEWAY_METRICS_ADDR %s: %w", m.Config.MetricsAddr, err)
	}
	m.metricsListener = ln
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Metrics.Handler(m.Config.MetricsToken, m.Logger))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"this address serves only GET /metrics","type":"invalid_request_error","param":null,"code":"not_found"}}`))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Logger.Error("metrics server stopped", "error", err)
		}
	}()
	m.closers = append(m.closers, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
		defer cancel()
		return srv.Shutdown(ctx)
	})
	m.Logger.Info("metrics serving", "addr", ln.Addr().String(), "path", "/metrics", "token", m.Config.MetricsToken != "")
	return nil
}

// MetricsURL is the address of /metrics: on its own address when CAUSEWAY_METRICS_ADDR is
// set, else on the main port.
func (m *Main) MetricsURL() string {
	ln := m.listener
	if m.metricsListener != nil {
		ln = m.metricsListener
	}
	return "http://" + loopbackAddr(ln) + "/metrics"
}

// loopbackAddr is ln's address as a client on this machine dials it.
func loopbackAddr(ln net.Listener) string {
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, fmt.Sprint(addr.Port))
}
