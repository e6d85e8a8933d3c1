package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/gateway/pricing"
)

// Config is everything Causeway reads from its environment. Defaults give the embedded mode:
// no servers, SQLite files in the data directory, in-memory read models.
type Config struct {
	Addr          string // CAUSEWAY_ADDR
	DataDir       string // CAUSEWAY_DATA_DIR
	EventStoreURL string // EVENTSTORE_URL; default sqlite://DATA_DIR/events.db
	DatabaseURL   string // DATABASE_URL; empty: read models in memory
	ClickHouseURL string // CLICKHOUSE_URL; empty: analytics in SQLite in the data directory

	// Bootstrap: on the first start, one organisation, its owner and an admin key.
	BootstrapAdminKey     string // CAUSEWAY_BOOTSTRAP_ADMIN_KEY: at least 20 characters; else generated
	BootstrapOrganisation string // CAUSEWAY_BOOTSTRAP_ORGANISATION
	BootstrapOwnerEmail   string // CAUSEWAY_BOOTSTRAP_OWNER_EMAIL
	// SecretKey (CAUSEWAY_SECRET_KEY, at least 32 characters) keys what the server derives:
	// the plaintext of retried key creations. Generated into DATA_DIR/secret.key when unset;
	// every instance of one deployment must share it.
	SecretKey string
	// PublicURL (CAUSEWAY_PUBLIC_URL) is the address clients use, for links such as invites.
	PublicURL string
	// AllowedHosts (CAUSEWAY_ALLOWED_HOSTS): host names, IPs and CIDR ranges that custom hosts
	// may reach although private, for self-hosted models on a private network.
	AllowedHosts string
	// MaxBodyBytes (CAUSEWAY_MAX_BODY_BYTES) bounds a gateway request body: larger ones get 413.
	MaxBodyBytes int64
	// CORSOrigins (CAUSEWAY_CORS_ORIGINS, comma-separated) are the browser origins allowed to
	// call the API, each scheme://host[:port], or * for any. Empty: CORS is off.
	CORSOrigins []string
	// LogSpoolBytes (CAUSEWAY_LOG_SPOOL_BYTES) bounds the disk spool request logs wait in
	// while the analytics store is down; rows beyond it are counted and reported in health.
	LogSpoolBytes int64
	// CacheURL (CAUSEWAY_CACHE_URL) names a Redis (redis:// or rediss://) that keeps the
	// answer cache; empty: PostgreSQL in server mode, DATA_DIR/cache.db embedded.
	CacheURL string
	// CacheBytes (CAUSEWAY_CACHE_BYTES) bounds the answer cache's size; 0: the store's
	// default (256 MiB embedded, 1 GiB shared).
	CacheBytes int64
	// Cache (CAUSEWAY_CACHE, ON unless OFF) switches the answer cache: off, configs that ask
	// for a cache are served uncached, with the status DISABLED.
	Cache bool
	// Metrics (CAUSEWAY_METRICS, ON unless OFF) serves Prometheus metrics at GET /metrics,
	// on the main port, or only on MetricsAddr (CAUSEWAY_METRICS_ADDR, host:port) when set.
	// MetricsToken (CAUSEWAY_METRICS_TOKEN, at least 16 characters) makes a scrape carry
	// Authorization: Bearer <token>. The label bounds: distinct models and workspaces kept
	// (CAUSEWAY_METRICS_MAX_MODELS, default 100; CAUSEWAY_METRICS_MAX_WORKSPACES, 500) and
	// label sets (CAUSEWAY_METRICS_MAX_LABEL_SETS, 2000); past them values count as "other".
	Metrics              bool
	MetricsAddr          string
	MetricsToken         string
	MetricsMaxModels     int
	MetricsMaxWorkspaces int
	MetricsMaxLabelSets  int
	// Console (CAUSEWAY_CONSOLE, on unless off) serves the web console at /console/.
	Console bool

	ShutdownTimeout time.Duration // CAUSEWAY_SHUTDOWN_TIMEOUT
	StartupTimeout  time.Duration // CAUSEWAY_STARTUP_TIMEOUT: how long to wait for backends at start
	LogLevel        string        // CAUSEWAY_LOG_LEVEL: debug, info, warn, error
	LogFormat       string        // CAUSEWAY_LOG_FORMAT: text or json

	// The specification's self-hosting variables, under their own names.
	Features                Features
	LogRetentionDisplay     int    // LOG_RETENTION_DISPLAY, days
	MetricsRetentionDisplay int    // METRICS_RETENTION_DISPLAY, days
	DBSSL                   string // DB_SSL, applied to DATABASE_URL
	DBSSLCA                 string // DB_SSL_CA
	DBSSLCert               string // DB_SSL_CERT
	DBSSLKey                string // DB_SSL_KEY
	// Notify is how notifications are delivered: SMTP_* and CAUSEWAY_NOTIFY_* (notifications.go).
	Notify NotifyConfig
	// Pricing is where model prices come from: MODEL_CONFIGS_PROXY_FETCH_ENABLED,
	// MODEL_CONFIGS_PROXY_URL, MODEL_CONFIGS_PRICING_LOG_STORE_PATH,
	// MODEL_CONFIGS_PRICING_LOCAL_PATH (see gateway/pricing).
	Pricing pricing.Config
	// Tracing is where request traces go: OpenTelemetry's OTEL_* variables (tracing.go).
	Tracing TracingConfig
}

// Features are the specification's feature flags: each on unless set to OFF.
type Features struct {
	Guardrails  bool // GUARDRAILS_ENABLED
	APIAccess   bool // API_ACCESS_ENABLED: the admin API
	DataExports bool // DATA_EXPORTS_ENABLED
	UsageLimits bool // USAGE_LIMITS_ENABLED
	AuditLogs   bool // AUDIT_LOGS_ENABLED
	SCIM        bool // SCIM_ENABLED
	Policy      bool // POLICY_ENABLED
}

// dbSSLModes maps DB_SSL to PostgreSQL's sslmode. BUNDLE (a managed database's CA bundle)
// verifies the server against DB_SSL_CA.
var dbSSLModes = map[string]string{
	"DISABLED":        "disable",
	"PREFERRED":       "prefer",
	"REQUIRED":        "require",
	"VERIFY_CA":       "verify-ca",
	"VERIFY_IDENTITY": "verify-full",
	"BUNDLE":          "verify-full",
}

// LoadConfig reads the configuration from getenv (os.Getenv in production) and validates it.
// The error lists every problem, one per line, so one start-up attempt shows them all.
func LoadConfig(getenv func(string) string) (Config, error) {
	var problems []error
	c := Config{
		Addr:                    envOr(getenv, "CAUSEWAY_ADDR", ":8787"),
		DataDir:                 envOr(getenv, "CAUSEWAY_DATA_DIR", "./data"),
		DatabaseURL:             getenv("DATABASE_URL"),
		ClickHouseURL:           getenv("CLICKHOUSE_URL"),
		LogLevel:                strings.ToLower(envOr(getenv, "CAUSEWAY_LOG_LEVEL", "info")),
		LogFormat:               strings.ToLower(envOr(getenv, "CAUSEWAY_LOG_FORMAT", "text")),
		DBSSL:                   strings.ToUpper(getenv("DB_SSL")),
		DBSSLCA:                 getenv("DB_SSL_CA"),
		DBSSLCert:               getenv("DB_SSL_CERT"),
		DBSSLKey:                getenv("DB_SSL_KEY"),
		LogRetentionDisplay:     90,
		MetricsRetentionDisplay: 365,
		BootstrapAdminKey:       getenv("CAUSEWAY_BOOTSTRAP_ADMIN_KEY"),
		BootstrapOrganisation:   envOr(getenv, "CAUSEWAY_BOOTSTRAP_ORGANISATION", "Default organisation"),
		BootstrapOwnerEmail:     strings.ToLower(envOr(getenv, "CAUSEWAY_BOOTSTRAP_OWNER_EMAIL", "owner@causeway.local")),
		SecretKey:               getenv("CAUSEWAY_SECRET_KEY"),
		PublicURL:               strings.TrimSpace(getenv("CAUSEWAY_PUBLIC_URL")),
		AllowedHosts:            getenv("CAUSEWAY_ALLOWED_HOSTS"),
		CORSOrigins:             splitList(getenv("CAUSEWAY_CORS_ORIGINS")),
		CacheURL:                strings.TrimSpace(getenv("CAUSEWAY_CACHE_URL")),
		MetricsAddr:             strings.TrimSpace(getenv("CAUSEWAY_METRICS_ADDR")),
		MetricsToken:            getenv("CAUSEWAY_METRICS_TOKEN"),
		MetricsMaxModels:        100,
		MetricsMaxWorkspaces:    500,
		MetricsMaxLabelSets:     2000,
		MaxBodyBytes:            25 << 20,
		LogSpoolBytes:           1 << 30,
		ShutdownTimeout:         15 * time.Second,
		StartupTimeout:          30 * time.Second,
	}
	c.Pricing = pricing.Config{
		ProxyFetch:   strings.EqualFold(strings.TrimSpace(getenv("MODEL_CONFIGS_PROXY_FETCH_ENABLED")), "ON"),
		ProxyURL:     strings.TrimSpace(getenv("MODEL_CONFIGS_PROXY_URL")),
		LogStorePath: getenv("MODEL_CONFIGS_PRICING_LOG_STORE_PATH"),
		LocalPath:    getenv("MODEL_CONFIGS_PRICING_LOCAL_PATH"),
	}
	if err := c.Pricing.Validate(); err != nil {
		problems = append(problems, err)
	}
	c.EventStoreURL = envOr(getenv, "EVENTSTORE_URL", "sqlite://"+filepath.Join(c.DataDir, "events.db"))

	flag := func(name string) bool {
		switch v := strings.ToUpper(strings.TrimSpace(getenv(name))); v {
		case "", "ON":
			return true
		case "OFF":
			return false
		default:
			problems = append(problems, fmt.Errorf("%s=%q: must be ON or OFF", name, getenv(name)))
			return true
		}
	}
	c.Cache = flag("CAUSEWAY_CACHE")
	c.Metrics = flag("CAUSEWAY_METRICS")
	count := func(name string, dst *int, most int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > most {
				problems = append(problems, fmt.Errorf("%s=%q: must be a whole number from 1 to %d", name, v, most))
				return
			}
			*dst = n
		}
	}
	count("CAUSEWAY_METRICS_MAX_MODELS", &c.MetricsMaxModels, 10_000)
	count("CAUSEWAY_METRICS_MAX_WORKSPACES", &c.MetricsMaxWorkspaces, 100_000)
	count("CAUSEWAY_METRICS_MAX_LABEL_SETS", &c.MetricsMaxLabelSets, 100_000)
	c.Console = flag("CAUSEWAY_CONSOLE")
	if u := c.CacheURL; u != "" && !strings.HasPrefix(u, "redis://") && !strings.HasPrefix(u, "rediss://") {
		problems = append(problems, errors.New("CAUSEWAY_CACHE_URL: must be a redis:// or rediss:// URL"))
	}
	c.Features = Features{
		Guardrails:  flag("GUARDRAILS_ENABLED"),
		APIAccess:   flag("API_ACCESS_ENABLED"),
		DataExports: flag("DATA_EXPORTS_ENABLED"),
		UsageLimits: flag("USAGE_LIMITS_ENABLED"),
		AuditLogs:   flag("AUDIT_LOGS_ENABLED"),
		SCIM:        flag("SCIM_ENABLED"),
		Policy:      flag("POLICY_ENABLED"),
	}
	days := func(name string, dst *int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), "d"))
			if err != nil || n < 1 || n > 3650 {
				problems = append(problems, fmt.Errorf("%s=%q: must be a whole number of days from 1 to 3650", name, v))
				return
			}
			*dst = n
		}
	}
	days("LOG_RETENTION_DISPLAY", &c.LogRetentionDisplay)
	days("METRICS_RETENTION_DISPLAY", &c.MetricsRetentionDisplay)
	duration := func(name string, dst *time.Duration) {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				problems = append(problems, fmt.Errorf("%s=%q: must be a duration such as 15s", name, v))
				return
			}
			*dst = d
		}
	}
	duration("CAUSEWAY_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout)
	if v := getenv("CAUSEWAY_MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1024 || n > 1<<30 {
			problems = append(problems, fmt.Errorf("CAUSEWAY_MAX_BODY_BYTES=%q: must be a whole number of bytes from 1024 to 1073741824", v))
		} else {
			c.MaxBodyBytes = n
		}
	}
	duration("CAUSEWAY_STARTUP_TIMEOUT", &c.StartupTimeout)
	if v := getenv("CAUSEWAY_LOG_SPOOL_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1<<20 || n > 1<<40 {
			problems = append(problems, fmt.Errorf("CAUSEWAY_LOG_SPOOL_BYTES=%q: must be a whole number of bytes from 1048576 to 1099511627776", v))
		} else {
			c.LogSpoolBytes = n
		}
	}

	if v := getenv("CAUSEWAY_CACHE_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1<<20 || n > 1<<40 {
			problems = append(problems, fmt.Errorf("CAUSEWAY_CACHE_BYTES=%q: must be a whole number of bytes from 1048576 to 1099511627776", v))
		} else {
			c.CacheBytes = n
		}
	}

	var tracingProblems []error
	c.Tracing, tracingProblems = loadTracing(getenv)
	problems = append(problems, tracingProblems...)
	var notifyProblems []error
	c.Notify, notifyProblems = loadNotifyConfig(getenv)
	problems = append(problems, notifyProblems...)

	problems = append(problems, c.Validate())
	if err := errors.Join(problems...); err != nil {
		return c, err
	}
	c.DatabaseURL = c.withDBSSL(c.DatabaseURL)
	return c, nil
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }

	if _, port, err := net.SplitHostPort(c.Addr); err != nil {
		bad("CAUSEWAY_ADDR=%q: must be host:port or :port", c.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("CAUSEWAY_ADDR=%q: port must be a number from 0 to 65535", c.Addr)
	}
	if c.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			bad("CAUSEWAY_METRICS_ADDR=%q: must be host:port or :port", c.MetricsAddr)
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			bad("CAUSEWAY_METRICS_ADDR=%q: port must be a number from 0 to 65535", c.MetricsAddr)
		} else if c.MetricsAddr == c.Addr && n != 0 {
			bad("CAUSEWAY_METRICS_ADDR=%q: is CAUSEWAY_ADDR; leave it unset to serve /metrics on the main port", c.MetricsAddr)
		}
	}
	if t := c.MetricsToken; t != "" && (len(t) < 16 || strings.ContainsAny(t, " \t\r\n")) {
		// The token itself is never quoted: it is a secret.
		bad("CAUSEWAY_METRICS_TOKEN: must be at least 16 characters without spaces (got %d characters)", len(t))
	}
	if strings.TrimSpace(c.DataDir) == "" {
		bad("CAUSEWAY_DATA_DIR: must not be empty")
	}
	checkURL := func(name, raw string, schemes ...string) {
		if raw == "" {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			// The parse error quotes the URL, password included: say only where it is wrong.
			bad("%s: not a URL", name)
			return
		}
		for _, s := range schemes {
			if strings.EqualFold(u.Scheme, s) {
				if s != "sqlite" && u.Host == "" {
					bad("%s=%s: has no host", name, u.Redacted())
				}
				return
			}
		}
		bad("%s=%s: scheme must be one of %s", name, u.Redacted(), strings.Join(schemes, ", "))
	}
	checkURL("EVENTSTORE_URL", c.EventStoreURL, "sqlite", "postgres", "postgresql", "esdb", "esdb+discover",
		"kurrentdb", "kurrentdb+discover", "kurrent", "kurrent+discover")
	if strings.HasPrefix(strings.ToLower(c.EventStoreURL), "sqlite://") && strings.TrimPrefix(c.EventStoreURL[len("sqlite://"):], "/") == "" {
		bad("EVENTSTORE_URL=%q: sqlite needs a file path, as in sqlite://./data/events.db", c.EventStoreURL)
	}
	checkURL("DATABASE_URL", c.DatabaseURL, "postgres", "postgresql")
	checkURL("CLICKHOUSE_URL", c.ClickHouseURL, "clickhouse", "tcp")
	checkURL("CAUSEWAY_PUBLIC_URL", c.PublicURL, "http", "https")

	if c.BootstrapAdminKey != "" && len(c.BootstrapAdminKey) < 20 {
		bad("CAUSEWAY_BOOTSTRAP_ADMIN_KEY: must be at least 20 characters (got %d)", len(c.BootstrapAdminKey))
	}
	if c.SecretKey != "" && len(c.SecretKey) < 32 {
		bad("CAUSEWAY_SECRET_KEY: must be at least 32 characters (got %d)", len(c.SecretKey))
	}
	if !validEmail(c.BootstrapOwnerEmail) {
		bad("CAUSEWAY_BOOTSTRAP_OWNER_EMAIL=%q: must be an e-mail address", c.BootstrapOwnerEmail)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("CAUSEWAY_LOG_LEVEL=%q: must be debug, info, warn or error", c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		bad("CAUSEWAY_LOG_FORMAT=%q: must be text or json", c.LogFormat)
	}
	if c.DBSSL != "" {
		if _, ok := dbSSLModes[c.DBSSL]; !ok {
			bad("DB_SSL=%q: must be DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY or BUNDLE", c.DBSSL)
		}
		if c.DBSSL == "BUNDLE" && c.DBSSLCA == "" {
			bad("DB_SSL=BUNDLE: needs DB_SSL_CA, the provider's certificate bundle")
		}
	}
	for name, path := range map[string]string{"DB_SSL_CA": c.DBSSLCA, "DB_SSL_CERT": c.DBSSLCert, "DB_SSL_KEY": c.DBSSLKey} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			bad("%s=%q: file is not readable", name, path)
		}
	}
	if (c.DBSSLCert == "") != (c.DBSSLKey == "") {
		bad("DB_SSL_CERT and DB_SSL_KEY: set both or neither")
	}
	for _, o := range c.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			bad("CAUSEWAY_CORS_ORIGINS: %q %v", o, err)
		}
	}
	if len(c.CORSOrigins) > 1 && slices.Contains(c.CORSOrigins, "*") {
		bad("CAUSEWAY_CORS_ORIGINS: * allows every origin; set it alone, not with %d others", len(c.CORSOrigins)-1)
	}
	problems = append(problems, c.Notify.validate()...)
	return errors.Join(problems...)
}

// checkOrigin accepts * or an origin as browsers send it: http or https, a host, an optional
// port, and nothing else (no path, not even a trailing slash, which would never match).
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		return errors.New("is not an origin: must be * or http(s)://host[:port]")
	case u.Host == "" || u.Hostname() == "":
		return errors.New("has no host: must be http(s)://host[:port]")
	case u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#"):
		return errors.New("must be only scheme://host[:port], with no path (not even a trailing /), query or user")
	case strings.Contains(u.Host, "*"):
		return errors.New("has a wildcard host: list each origin, or use * alone")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return errors.New("has a port that is not a number from 1 to 65535")
		}
	}
	return nil
}

// splitList splits a comma-separated variable, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// withDBSSL applies the DB_SSL settings to a PostgreSQL URL. Settings already in the URL win.
func (c Config) withDBSSL(raw string) string {
	if raw == "" || c.DBSSL == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	set := func(k, v string) {
		if v != "" && q.Get(k) == "" {
			q.Set(k, v)
		}
	}
	set("sslmode", dbSSLModes[c.DBSSL])
	set("sslrootcert", c.DBSSLCA)
	set("sslcert", c.DBSSLCert)
	set("sslkey", c.DBSSLKey)
	u.RawQuery = q.Encode()
	return u.String()
}

func validEmail(e string) bool {
	local, dom, ok := strings.Cut(e, "@")
	return ok && local != "" && strings.Contains(dom, ".")
}

func envOr(getenv func(string) string, name, def string) string {
	if v := strings.TrimSpace(getenv(name)); v != "" {
		return v
	}
	return def
}
