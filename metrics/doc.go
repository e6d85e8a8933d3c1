// Package metrics is the gateway's Prometheus metrics: one registry per process (never a
// package-level one), holding the Go and process collectors, the request metrics fed by a
// tee in front of the request-log sink (Sink: each analytics.LogRecord is observed, then
// passed on), and gauges read at scrape time from the log pipeline's Stats and the
// projections' lag (no polling goroutine). Handler serves the registry, behind a bearer
// token when one is set.
//
// Names follow the OpenTelemetry GenAI semantic conventions translated to Prometheus
// (gen_ai_server_request_duration_seconds, gen_ai_client_token_usage, ...); what the
// conventions do not cover is causeway_*. Label values are bounded: models, providers and
// workspaces keep the first N distinct values each and count the rest as "other", and the
// label sets as a whole are capped, so no label grows with user input; metadata never
// becomes a label.
//
// It reads analytics.LogRecord and the pipeline's Stats; everything else (the projections'
// lag) comes through the small interfaces declared here, wired by cmd/. It must never import
// http/, commands/, gateway/, projections/, queries/ or a database driver (make lint checks
// it): it runs on the request path of the gateway and links nothing the gateway does not.
package metrics
