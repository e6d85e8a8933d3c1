package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/causeway/causeway/gateway"
)

// Request traces go to an OpenTelemetry collector over OTLP, configured by OpenTelemetry's own
// variables only. Tracing is off unless an OTLP endpoint is named. Causeway reads what decides
// whether and where to export (the endpoint, the protocol, OTEL_SDK_DISABLED) and checks the
// sampler at start-up with the rest of its configuration; the SDK and the exporter read the
// others from the process environment themselves (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// _COMPRESSION, _CERTIFICATE, OTEL_TRACES_SAMPLER and _ARG, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*). Spans are batched off the request path; Close
// flushes them.

// TracingConfig is where request traces go.
type TracingConfig struct {
	// Endpoint is the OTLP traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
	// OTEL_EXPORTER_OTLP_ENDPOINT (with /v1/traces after it for http/protobuf, as the
	// specification says). Empty: tracing is off.
	Endpoint string
	// Protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL:
	// grpc or http/protobuf (the default).
	Protocol string
	// Disabled is OTEL_SDK_DISABLED=true: no tracing, whatever the endpoint.
	Disabled bool
}

// On reports whether requests are traced.
func (c TracingConfig) On() bool { return !c.Disabled && c.Endpoint != "" }

// The OTLP protocols Causeway exports with.
const (
	otlpGRPC = "grpc"
	otlpHTTP = "http/protobuf"
)

// loadTracing reads the tracing variables and lists their problems.
func loadTracing(getenv func(string) string) (TracingConfig, []error) {
	var problems []error
	c := TracingConfig{Disabled: strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true")}
	c.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	protocolVar := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if c.Protocol == "" {
		c.Protocol, protocolVar = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	if c.Protocol == "" {
		c.Protocol = otlpHTTP
	}
	endpointVar, raw := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	signal := raw != ""
	if !signal {
		endpointVar, raw = "OTEL_EXPORTER_OTLP_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	if c.Disabled || raw == "" {
		return c, nil
	}
	switch c.Protocol {
	case otlpGRPC, otlpHTTP:
	default:
		problems = append(problems, fmt.Errorf("%s=%q: must be grpc or http/protobuf", protocolVar, c.Protocol))
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// The parse error quotes the URL, which may carry a credential: say only where it is wrong.
		problems = append(problems, fmt.Errorf("%s: not a URL", endpointVar))
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		problems = append(problems, fmt.Errorf("%s=%s: must be an http:// or https:// URL with a host", endpointVar, u.Redacted()))
	default:
		c.Endpoint = raw
		if !signal && c.Protocol == otlpHTTP {
			c.Endpoint = strings.TrimSuffix(raw, "/") + "/v1/traces"
		}
	}
	problems = append(problems, checkSampler(getenv)...)
	return c, problems
}

// checkSampler checks OTEL_TRACES_SAMPLER and its argument, which the SDK reads itself and
// would otherwise replace, when wrong, by its default with a line on stderr.
func checkSampler(getenv func(string) string) []error {
	name := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	switch name {
	case "", "always_on", "always_off", "parentbased_always_on", "parentbased_always_off":
		return nil
	case "traceidratio", "parentbased_traceidratio":
		if arg == "" {
			return nil
		}
		if r, err := strconv.ParseFloat(arg, 64); err != nil || r < 0 || r > 1 {
			return []error{fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: must be a ratio from 0 to 1", arg)}
		}
		return nil
	}
	return []error{fmt.Errorf("OTEL_TRACES_SAMPLER=%q: must be always_on, always_off, traceidratio, parentbased_always_on, "+
		"parentbased_always_off or parentbased_traceidratio", name)}
}

// startTracing starts the exporter and the batching tracer provider, or answers nil when
// tracing is off. Close flushes what is batched.
func (m *Main) startTracing() (trace.Tracer, error) {
	c := m.Config.Tracing
	if !c.On() {
		return nil, nil
	}
	ctx := context.Background()
	var (
		exp sdktrace.SpanExporter
		err error
	)
	if c.Protocol == otlpGRPC {
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(c.Endpoint))
	} else {
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.Endpoint))
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "causeway"), attribute.String("service.version", m.Version)}
	if m.Instance != nil {
		attrs = append(attrs, attribute.String("service.instance.id", m.Instance.ID))
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES come after Causeway's own, so they win.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		m.Logger.Warn("tracing: part of the resource could not be read; spans carry the rest", "error", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(gateway.TraceIDs{}))
	// The SDK reports export failures to OpenTelemetry's process-wide handler, by default a
	// line on stderr for each failed batch: route them to this server's log, at most one a
	// minute.
	otel.SetErrorHandler(&exportErrors{log: m.Logger, every: time.Minute})
	m.closers = append(m.closers, func() error {
		sctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
		defer cancel()
		// Traces are best-effort: a collector gone at shutdown costs the last spans, not the stop.
		if err := tp.Shutdown(sctx); err != nil {
			m.Logger.Warn("tracing: the last spans could not be exported", "error", err)
		}
		return nil
	})
	m.Logger.Info("tracing requests", "endpoint", redactURL(c.Endpoint), "protocol", c.Protocol)
	return tp.Tracer(gateway.TraceScope, trace.WithInstrumentationVersion(m.Version)), nil
}

// redactURL is a URL without its password, for the log.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Redacted()
}

// exportErrors logs OpenTelemetry's errors, a warning at most every so often, with how many
// it left out since the last.
type exportErrors struct {
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	last    time.Time
	skipped int
}

func (h *exportErrors) Handle(err error) {
	h.mu.Lock()
	now := time.Now()
	if !h.last.IsZero() && now.Sub(h.last) < h.every {
		h.skipped++
		h.mu.Unlock()
		return
	}
	skipped := h.skipped
	h.last, h.skipped = now, 0
	h.mu.Unlock()
	if errors.Is(err, context.Canceled) {
		return
	}
	h.log.Warn("tracing: spans could not be exported", "error", err, "errors_left_out", skipped)
}
