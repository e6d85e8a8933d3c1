package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/cache"
	"github.com/causeway/causeway/cluster"
	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/open"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/egress"
	"github.com/causeway/causeway/gateway/pricing"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	httpapi "github.com/causeway/causeway/http"
	"github.com/causeway/causeway/ledger"
	ledgerpg "github.com/causeway/causeway/ledger/postgres"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
	pgmodel "github.com/causeway/causeway/projections/postgres"
	"github.com/causeway/causeway/workers"
)

// Main is the whole product in one value: main() and the end-to-end tests both build one,
// Run it and Close it.
type Main struct {
	Config  Config
	Logger  *slog.Logger
	Version string

	Store     eventstore.Store
	Read      *memory.Model       // routing tables, in memory
	Index     *gateway.Index      // the gateway's routing index, fed by Read's fold
	Ledger    *ledger.Ledger      // the budgets' counters
	Instance  *instance           // this process's claim on DATA_DIR, and its instance id
	Cluster   cluster.Registry    // the instances on the shared database (server mode)
	leases    *ledgerpg.Store     // the shared ledger's leases (server mode)
	Postgres  *pgmodel.Model      // the PostgreSQL read model, with DATABASE_URL
	Analytics analytics.Store     // request logs: ClickHouse or SQLite
	Pipeline  *analytics.Pipeline // the gateway's request logs → Analytics, spooling to disk while it is down
	// AnswerCache keeps cached answers and Cache is the gateway's view of it, with this
	// instance's semantic index; both nil with CAUSEWAY_CACHE=OFF.
	AnswerCache cache.Store
	Cache       *gateway.Cache
	// Guardrails runs the guardrails; nil with GUARDRAILS_ENABLED=OFF.
	Guardrails *gateway.Guardrails
	runner     *projections.Runner
	Bootstrap  commands.BootstrapResult
	// Now is the clock of the control plane (tests set it).
	Now func() time.Time
	// WorkerInterval is how often the background workers look for due work (tests shorten
	// it); 0: workerInterval.
	WorkerInterval time.Duration

	// Metrics is the Prometheus registry and the request metrics; nil with CAUSEWAY_METRICS=OFF.
	Metrics         *metrics.Metrics
	metricsListener net.Listener // CAUSEWAY_METRICS_ADDR's, when set
	// rateLimitAlerts turns rate-limit refusals into notifications (notifications.go).
	rateLimitAlerts *workers.RateLimitAlerts

	stderr   io.Writer
	healthMu sync.Mutex
	lostSeen int64              // rows lost when health last looked
	lostAt   time.Time          // when health first saw the latest loss
	bg       context.Context    // background work's context
	stop     context.CancelFunc // ends background work
	closers  []func() error     // run in reverse order by Close
	server   *http.Server
	listener net.Listener
	serveErr chan error
}

// NewMain returns a Main for cfg that logs to stderr.
func NewMain(cfg Config, stderr io.Writer, version string) *Main {
	return &Main{Config: cfg, Logger: newLogger(cfg, stderr), Version: version, stderr: stderr, Now: time.Now}
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Run opens every backend, then starts serving and returns; Err reports if serving stops.
// On failure it closes whatever it had opened.
func (m *Main) Run(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = m.Close()
		}
	}()
	cfg := m.Config
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	m.Instance, err = claimDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	m.closers = append(m.closers, m.Instance.Close)

	startCtx, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	m.Store, err = openWithRetry(startCtx, m.Logger, "event store", func(ctx context.Context) (eventstore.Store, error) {
		return open.Open(ctx, cfg.EventStoreURL)
	})
	if err != nil {
		return fmt.Errorf("event store %s: %w", eventstore.Redact(cfg.EventStoreURL), err)
	}
	m.closers = append(m.closers, m.Store.Close)

	readModels, err := openReadModels(startCtx, cfg)
	if err != nil {
		return err
	}
	m.closers = append(m.closers, readModels.close)
	guard, err := egressGuard(cfg)
	if err != nil {
		return err
	}
	admin, err := m.startControlPlane(ctx, startCtx, readModels.pool, guard)
	if err != nil {
		return err
	}
	var analyticsBackend backend
	m.Analytics, analyticsBackend, err = openAnalytics(startCtx, cfg, m.Logger)
	if err != nil {
		return err
	}
	m.closers = append(m.closers, analyticsBackend.close)
	admin.Analytics = m.Analytics
	if err := m.startLogExports(admin); err != nil {
		return err
	}
	gw, err := m.startGateway(admin, guard)
	if err != nil {
		return err
	}
	// After the gateway, whose start builds the metrics the deliveries are counted in.
	if err := m.startNotifications(admin, guard); err != nil {
		return err
	}

	health := &httpapi.Health{
		Version: m.Version,
		Started: time.Now(),
		Checks: []httpapi.Check{
			{Name: "eventstore", Backend: eventStoreBackend(cfg.EventStoreURL), Ping: m.Store.Ping},
			readModels.check,
			{Name: "projections", Backend: readModels.check.Backend, Ping: m.runner.Healthy, ShowError: true},
			analyticsBackend.check,
			{Name: "log_pipeline", Backend: analyticsBackend.check.Backend, Ping: m.pipelineHealthy, ShowError: true},
		},
		Stats: map[string]func() any{"log_pipeline": func() any { return m.Pipeline.Stats() }},
	}
	health.Stats["notifications"] = m.notificationStats
	if m.AnswerCache != nil {
		store := m.AnswerCache
		health.Checks = append(health.Checks, httpapi.Check{Name: "answer_cache", Backend: m.cacheBackend(),
			// One lookup by key (an index read), not Stats, which counts the table.
			Ping: func(ctx context.Context) error {
				_, _, err := store.Get(ctx, "health", "health", time.Now())
				return err
			}})
	}
	handler := httpapi.NewRouter(httpapi.Deps{Logger: m.Logger, Health: health, Version: m.Version, Admin: admin, Gateway: gw,
		CORSOrigins: cfg.CORSOrigins, Metrics: m.mainPortMetrics(), Console: m.console()})
	if err := m.serveMetrics(); err != nil {
		return err
	}

	m.listener, err = net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	m.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	m.serveErr = make(chan error, 1)
	go func() {
		if err := m.server.Serve(m.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.serveErr <- err
		}
		close(m.serveErr)
	}()
	m.Logger.Info("causeway serving", "addr", m.listener.Addr().String(), "base_path", httpapi.BasePath,
		"eventstore", eventstore.Redact(cfg.EventStoreURL), "readmodels", readModels.check.Backend,
		"analytics", analyticsBackend.check.Backend, "version", m.Version)
	return nil
}

// egressGuard is the check of the hosts that requests leave for: custom hosts on the gateway,
// and the base URLs admins set on integrations, providers and configs.
func egressGuard(cfg Config) (*egress.Guard, error) {
	allowed, err := egress.ParseAllowList(cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("CAUSEWAY_ALLOWED_HOSTS: %w", err)
	}
	guard, err := egress.New(allowed)
	if err != nil {
		return nil, fmt.Errorf("CAUSEWAY_ALLOWED_HOSTS: %w", err)
	}
	return guard, nil
}

// startControlPlane folds the history into the routing tables, bootstraps the first start, and
// keeps the read models current in the background: the routing tables in memory in every
// process and, with DATABASE_URL, the PostgreSQL read model that admin reads come from. It
// assembles the write side's handlers (commands.App) once, for the admin API.
func (m *Main) startControlPlane(ctx, startCtx context.Context, pool *pgxpool.Pool, guard *egress.Guard) (*httpapi.Admin, error) {
	reg := domain.NewRegistry()
	// In server mode PostgreSQL keeps the audit log; the routing tables need only the state.
	// Every aggregate they fold also feeds the gateway's routing index.
	m.Index = gateway.NewIndex()
	m.Read = memory.New(reg, memory.Options{NoAudit: pool != nil, OnFold: m.Index.Put})
	if err := catchUp(startCtx, m.Store, m.Read); err != nil {
		return nil, err
	}
	deps := commands.Deps{Store: m.Store, Registry: reg, Now: func() time.Time { return m.Now() }}
	var err error
	if m.Bootstrap, err = bootstrap(startCtx, m.Config, deps, m.stderr); err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	if err := catchUp(startCtx, m.Store, m.Read); err != nil {
		return nil, err
	}
	secret, err := loadSecret(m.Config)
	if err != nil {
		return nil, err
	}

	var read httpapi.ReadModel = m.Read
	m.runner = &projections.Runner{Store: m.Store, Projections: []projections.Projection{m.Read}, Log: m.Logger}
	if pool != nil {
		if m.Postgres, err = pgmodel.New(startCtx, pool, reg, "postgres"); err != nil {
			return nil, fmt.Errorf("read models: %w", err)
		}
		m.runner.Projections = append(m.runner.Projections, m.Postgres)
		read = serverReadModel{Model: m.Postgres, routing: m.Read}
	}
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	m.bg, m.stop = bg, stop
	go func() {
		if err := m.runner.Run(bg); err != nil {
			m.Logger.Error("projections stopped", "error", err)
		}
	}()
	if err := m.startWorkers(bg, deps, secret); err != nil {
		return nil, err
	}
	if err := m.startLedger(startCtx, pool, deps); err != nil {
		return nil, err
	}
	if pool != nil {
		if err := m.startCluster(startCtx, bg, pool); err != nil {
			return nil, err
		}
	}
	if err := m.startCache(startCtx, pool); err != nil {
		return nil, err
	}
	var purger commands.CachePurger
	if m.AnswerCache != nil {
		purger = m.AnswerCache
	}
	adminRead := httpapi.WithLiveUsage(read, m.Ledger)
	// Base URLs on integrations, providers and configs are checked as custom hosts are.
	checks, err := m.startGuardrails(guard, secret)
	if err != nil {
		return nil, err
	}
	app, err := commands.NewApp(commands.AppDeps{Deps: deps, Secret: secret, URLCheck: guard, Memberships: adminRead,
		Cache: purger, Checks: checks, Collections: adminRead})
	if err != nil {
		return nil, fmt.Errorf("commands: %w", err)
	}
	f := m.Config.Features
	return &httpapi.Admin{
		Log: m.Logger, Read: adminRead, Commands: app, Deps: deps, Secret: secret, Now: deps.Now,
		Features: httpapi.Features{APIAccess: f.APIAccess, Policy: f.Policy, UsageLimits: f.UsageLimits,
			AuditLogs: f.AuditLogs, DataExports: f.DataExports, Guardrails: f.Guardrails},
		RecordDenial: m.recordDenial, PublicURL: m.Config.PublicURL,
		// One organisation per deployment: refusals of unknown keys are its admins' to see.
		Organisation: m.Bootstrap.OrganisationID,
		// The routing tables in memory see every event in both modes, so they keep the index.
		Idempotency: m.Read,
		Instances:   m.Cluster,
		Retention: httpapi.Retention{
			Logs:    time.Duration(m.Config.LogRetentionDisplay) * 24 * time.Hour,
			Metrics: time.Duration(m.Config.MetricsRetentionDisplay) * 24 * time.Hour,
		},
		ExportDir: filepath.Join(m.Config.DataDir, "exports"),
	}, nil
}

// startGateway builds the data plane: provider adapters, the engine that runs configs, the
// rate limiter, the egress guard for custom hosts, and the request log pipeline. It reads only
// the in-memory routing tables.
func (m *Main) startGateway(admin *httpapi.Admin, guard *egress.Guard) (*httpapi.Gateway, error) {
	adapters := all.Default()
	pipeline, err := m.startLogPipeline()
	if err != nil {
		return nil, err
	}
	alerts, err := m.withRateLimitAlerts(pipeline, admin)
	if err != nil {
		return nil, err
	}
	sink := m.startMetrics(pipeline, alerts)
	sealer, err := commands.NewSealerFromSecret(admin.Secret)
	if err != nil {
		return nil, err
	}
	// Each request's cost is computed as it settles, from the routing tables' overrides and the
	// cached price sources: no database or network I/O on the way.
	book, err := pricing.New(m.Config.Pricing, pricing.Options{Now: m.Now, Overrides: m.Read.Overrides(), Log: m.Logger})
	if err != nil {
		return nil, fmt.Errorf("model pricing: %w", err)
	}
	m.closers = append(m.closers, book.Close)
	admin.Pricing = book
	tracer, err := m.startTracing()
	if err != nil {
		return nil, err
	}
	client := guard.Client(0)
	// The data plane reads only memory: the routing index, the provider directory (the same
	// index, which alone holds the sealed credentials) and the usage ledger.
	svc := &gateway.Service{
		Index: m.Index, Directory: m.Index, Opener: sealer, Ledger: m.Ledger, Prices: book, Logs: sink,
		Limiter: gateway.NewLimiter(m.Now, m.Ledger), Egress: guard, CustomHostClient: client,
		Engine: &gateway.Engine{Providers: providers.NewRegistry(adapters), MaxBackoff: 10 * time.Second},
		Now:    func() time.Time { return m.Now() }, MaxBody: m.Config.MaxBodyBytes,
		Organisation: admin.Organisation, Cache: m.Cache, Guardrails: m.Guardrails, Tracer: tracer,
	}
	gw := &httpapi.Gateway{Log: m.Logger, Service: svc, MaxBody: m.Config.MaxBodyBytes}
	if m.Metrics != nil {
		gw.OnPromptRender = m.Metrics.PromptRender
	}
	return gw, nil
}

// startLogPipeline starts the request log path: the gateway hands its records to the analytics
// pipeline as Go values (no message bus, see package analytics), which appends each to the
// journal in DATA_DIR/journal before the request's answer counts it handed over (so a crash of
// the process loses no row: the next start stores what the journal holds), then batches them
// into the analytics store, spooling to DATA_DIR/spool while the store is down. Close stops it
// in the order that loses nothing: the server lets its requests finish, the pipeline refuses
// new records and flushes the ones it holds (to the store, or the spool), then the spool, the
// journal and the store close.
func (m *Main) startLogPipeline() (*analytics.Pipeline, error) {
	spool, err := analytics.OpenSpool(filepath.Join(m.Config.DataDir, "spool", "request_logs"), m.Config.LogSpoolBytes)
	if err != nil {
		return nil, err
	}
	m.closers = append(m.closers, spool.Close)
	journal, err := analytics.OpenJournal(filepath.Join(m.Config.DataDir, "journal", "request_logs"))
	if err != nil {
		return nil, err
	}
	m.closers = append(m.closers, journal.Close)
	m.Pipeline, err = analytics.NewPipeline(m.Analytics, spool, analytics.Options{Journal: journal, Log: m.Logger})
	if err != nil {
		return nil, err
	}
	// Not the serving context: the pipeline must outlive the stop of background work, to take
	// the records of the requests the server lets finish.
	go func() {
		if err := m.Pipeline.Run(context.Background()); err != nil {
			m.Logger.Error("log pipeline stopped", "error", err)
		}
	}()
	m.closers = append(m.closers, m.Pipeline.Close)
	return m.Pipeline, nil
}

// pipelineHealthy fails while request logs are being lost: rows dropped by a full spool or
// refused by a full pipeline buffer since the last check that found none.
func (m *Main) pipelineHealthy(context.Context) error {
	st := m.Pipeline.Stats()
	lost := st.Dropped + st.BufferFull
	m.healthMu.Lock()
	defer m.healthMu.Unlock()
	if lost > m.lostSeen {
		m.lostSeen, m.lostAt = lost, m.Now()
	}
	if lost > 0 && m.Now().Sub(m.lostAt) < lossReportWindow {
		return fmt.Errorf("%d request log rows lost since start (spool full or failing: %d, pipeline buffer full: %d); spool holds %d bytes",
			lost, st.Dropped, st.BufferFull, st.SpoolBytes)
	}
	return nil
}

// lossReportWindow is how long health stays degraded after request log rows were lost.
const lossReportWindow = 5 * time.Minute

// serverReadModel is the admin API's read side in server mode: PostgreSQL for reads, the
// in-memory routing tables for authentication, and a write waits for both, so that what a
// client wrote can be read at once and a key it created works at once.
type serverReadModel struct {
	*pgmodel.Model
	routing *memory.Model
}

func (s serverReadModel) Authenticate(presented string, now time.Time) (domain.Actor, error) {
	return s.routing.Authenticate(presented, now)
}

func (s serverReadModel) WaitFor(ctx context.Context, pos eventstore.Position) error {
	if err := s.routing.WaitFor(ctx, pos); err != nil {
		return err
	}
	return s.Model.WaitFor(ctx, pos)
}

// recordDenial appends a refused attempt to the audit stream without holding up the answer.
func (m *Main) recordDenial(ctx context.Context, d domain.AccessDenied, md eventstore.Metadata) {
	data, err := json.Marshal(d)
	if err != nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := m.Store.Append(ctx, domain.AuditStream, eventstore.Any, eventstore.EventData{
			ID: uuid.New(), Type: d.EventType(), SchemaVersion: 1, Data: data, Metadata: md}); err != nil {
			m.Logger.Warn("could not record a refused request in the audit log", "error", err)
		}
	}()
}

// URL is the base URL the server answers on, e.g. http://127.0.0.1:8787/v1.
func (m *Main) URL() string {
	addr := m.listener.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port)) + httpapi.BasePath
}

// Err delivers an error if the server stops serving by itself; it is closed on shutdown.
func (m *Main) Err() <-chan error { return m.serveErr }

// Close stops serving (letting requests in flight finish, up to the shutdown timeout) and
// closes every backend.
func (m *Main) Close() error {
	var errs []error
	if m.stop != nil {
		m.stop()
	}
	if m.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
		errs = append(errs, m.server.Shutdown(ctx))
		cancel()
	}
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i]())
	}
	m.closers = nil
	return errors.Join(errs...)
}

// openWithRetry opens a backend, retrying while it is unavailable (a server still starting)
// until ctx ends; a configuration error fails at once.
func openWithRetry[T any](ctx context.Context, log *slog.Logger, what string, open func(context.Context) (T, error)) (T, error) {
	backoff := 200 * time.Millisecond
	for {
		v, err := open(ctx)
		if err == nil || !errors.Is(err, eventstore.ErrUnavailable) {
			return v, err
		}
		log.Warn("backend not ready, retrying", "backend", what, "error", err, "in", backoff)
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 3*time.Second)
	}
}

// exportWorkerInterval is how often the export worker picks up started exports and notices
// cancelled ones.
const exportWorkerInterval = time.Second

// startLogExports runs the export worker (DATA_EXPORTS_ENABLED) until background work ends:
// it writes started exports from the analytics store to DATA_DIR/exports.
func (m *Main) startLogExports(admin *httpapi.Admin) error {
	if !admin.Features.DataExports {
		return nil
	}
	w, err := workers.NewLogExportWorker(admin.Deps, m.Read, m.Analytics, admin.ExportDir)
	if err != nil {
		return err
	}
	w.Retention = admin.Retention.Logs
	w.OnError = func(err error) { m.Logger.Error("log export failed", "error", err) }
	// On servers every instance runs the worker, and each export is run by the one that
	// claims it (an instance that dies lets its claims lapse, and another resumes).
	if claims, ok := m.Cluster.(cluster.Claims); ok {
		w.Claims, w.Holder = claims, m.Instance.ID
	}
	go func() { _ = w.Run(m.bg, exportWorkerInterval) }()
	// Close stops background work first; the analytics store must outlive the exports running.
	m.closers = append(m.closers, func() error { w.Wait(); return nil })
	return nil
}

// workerInterval is how often the background workers look for due work by default: key
// expiry and scheduled rotation, and usage periods that ended. Expiry is also enforced at
// authentication, so this bounds only when the event is written.
const workerInterval = time.Minute

// startWorkers runs the background workers until bg ends. Every process runs them; their
// writes are idempotent, so two processes do each thing once.
func (m *Main) startWorkers(bg context.Context, deps commands.Deps, secret []byte) error {
	keys, err := commands.NewKeyWorker(deps, m.Read, secret)
	if err != nil {
		return err
	}
	keys.OnError = func(err error) { m.Logger.Error("key worker pass failed", "error", err) }
	resets, err := commands.NewResetWorker(deps, m.Read)
	if err != nil {
		return err
	}
	resets.OnError = func(err error) { m.Logger.Error("reset worker pass failed", "error", err) }
	every := m.WorkerInterval
	if every <= 0 {
		every = workerInterval
	}
	go func() { _ = keys.Run(bg, every) }()
	go func() { _ = resets.Run(bg, every) }()
	return nil
}
