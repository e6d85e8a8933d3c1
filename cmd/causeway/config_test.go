package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigDefaultsAreTheEmbeddedMode(t *testing.T) {
	c, err := LoadConfig(env(nil))
	require.NoError(t, err)
	assert.Equal(t, ":8787", c.Addr)
	assert.Equal(t, "./data", c.DataDir)
	assert.Equal(t, "sqlite://data/events.db", c.EventStoreURL)
	assert.Empty(t, c.DatabaseURL, "read models in memory")
	assert.Empty(t, c.ClickHouseURL, "analytics in SQLite")
	assert.Equal(t, Features{Guardrails: true, APIAccess: true, DataExports: true, UsageLimits: true,
		AuditLogs: true, SCIM: true, Policy: true}, c.Features, "every flag on by default")
	assert.Equal(t, 90, c.LogRetentionDisplay)
	assert.Equal(t, 365, c.MetricsRetentionDisplay)
}

func TestConfigReadsTheEnvironment(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{
		"CAUSEWAY_ADDR":             "127.0.0.1:9000",
		"CAUSEWAY_DATA_DIR":         "/var/lib/causeway",
		"EVENTSTORE_URL":            "esdb://es:2113?tls=false",
		"DATABASE_URL":              "postgres://u:p@db/causeway",
		"CLICKHOUSE_URL":            "clickhouse://ch:9000/default",
		"API_ACCESS_ENABLED":        "OFF",
		"AUDIT_LOGS_ENABLED":        "off",
		"POLICY_ENABLED":            "ON",
		"LOG_RETENTION_DISPLAY":     "30",
		"METRICS_RETENTION_DISPLAY": "400d",
		"DB_SSL":                    "required",
	}))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9000", c.Addr)
	assert.Equal(t, "esdb://es:2113?tls=false", c.EventStoreURL)
	assert.Equal(t, "postgres://u:p@db/causeway?sslmode=require", c.DatabaseURL, "DB_SSL applies to DATABASE_URL")
	assert.False(t, c.Features.APIAccess)
	assert.False(t, c.Features.AuditLogs)
	assert.True(t, c.Features.Policy)
	assert.Equal(t, 30, c.LogRetentionDisplay)
	assert.Equal(t, 400, c.MetricsRetentionDisplay)
}

func TestConfigDataDirSetsTheDefaultEventStore(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{"CAUSEWAY_DATA_DIR": "/srv/cw"}))
	require.NoError(t, err)
	assert.Equal(t, "sqlite:///srv/cw/events.db", c.EventStoreURL)
}

func TestConfigSSLInTheURLWins(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{
		"DATABASE_URL": "postgres://db/x?sslmode=disable", "DB_SSL": "VERIFY_IDENTITY"}))
	require.NoError(t, err)
	assert.Equal(t, "postgres://db/x?sslmode=disable", c.DatabaseURL)
}

// One start-up attempt shows every problem, and none of them leaks a password.
func TestConfigReportsEveryProblemAtOnce(t *testing.T) {
	_, err := LoadConfig(env(map[string]string{
		"CAUSEWAY_ADDR":             "no-port",
		"EVENTSTORE_URL":            "mysql://root:hunter2@db/events",
		"DATABASE_URL":              "postgres://u:hunter2@/x",
		"CLICKHOUSE_URL":            "http://default:hunter2@ch:8123",
		"API_ACCESS_ENABLED":        "maybe",
		"LOG_RETENTION_DISPLAY":     "0",
		"METRICS_RETENTION_DISPLAY": "forever",
		"CAUSEWAY_LOG_LEVEL":        "loud",
		"CAUSEWAY_LOG_FORMAT":       "xml",
		"CAUSEWAY_SHUTDOWN_TIMEOUT": "soon",
		"DB_SSL":                    "SOMETIMES",
		"DB_SSL_CERT":               "/nonexistent/cert.pem",
	}))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"CAUSEWAY_ADDR", "EVENTSTORE_URL", "DATABASE_URL=postgres://u:xxxxx@/x: has no host",
		"CLICKHOUSE_URL", "API_ACCESS_ENABLED", "LOG_RETENTION_DISPLAY", "METRICS_RETENTION_DISPLAY",
		"CAUSEWAY_LOG_LEVEL", "CAUSEWAY_LOG_FORMAT", "CAUSEWAY_SHUTDOWN_TIMEOUT", "DB_SSL=", "DB_SSL_CERT=",
		"DB_SSL_CERT and DB_SSL_KEY",
	} {
		assert.Contains(t, msg, want)
	}
	assert.Equal(t, 13, len(strings.Split(msg, "\n")), "one line per problem:\n%s", msg)
	assert.NotContains(t, msg, "hunter2")
}

func TestConfigSQLiteNeedsAPath(t *testing.T) {
	_, err := LoadConfig(env(map[string]string{"EVENTSTORE_URL": "sqlite://"}))
	require.ErrorContains(t, err, "sqlite needs a file path")
}

func TestConfigSSLFilesMustExist(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(ca, []byte("x"), 0o600))
	c, err := LoadConfig(env(map[string]string{"DATABASE_URL": "postgres://db/x", "DB_SSL": "BUNDLE", "DB_SSL_CA": ca}))
	require.NoError(t, err)
	assert.Contains(t, c.DatabaseURL, "sslmode=verify-full")
	assert.Contains(t, c.DatabaseURL, "sslrootcert=")

	_, err = LoadConfig(env(map[string]string{"DB_SSL": "BUNDLE"}))
	require.ErrorContains(t, err, "needs DB_SSL_CA")
}

// The metrics are on by default, on the main port, with no token; their variables are read
// and every problem with them is reported at once, without quoting the token.
func TestConfigMetrics(t *testing.T) {
	c, err := LoadConfig(env(nil))
	require.NoError(t, err)
	assert.True(t, c.Metrics)
	assert.Empty(t, c.MetricsAddr, "on the main port")
	assert.Empty(t, c.MetricsToken)
	assert.Equal(t, 100, c.MetricsMaxModels)
	assert.Equal(t, 500, c.MetricsMaxWorkspaces)
	assert.Equal(t, 2000, c.MetricsMaxLabelSets)

	c, err = LoadConfig(env(map[string]string{"CAUSEWAY_METRICS": "off", "CAUSEWAY_METRICS_ADDR": "127.0.0.1:9464",
		"CAUSEWAY_METRICS_TOKEN": "a-scrape-token-of-24-chr", "CAUSEWAY_METRICS_MAX_MODELS": "20",
		"CAUSEWAY_METRICS_MAX_WORKSPACES": "50", "CAUSEWAY_METRICS_MAX_LABEL_SETS": "300"}))
	require.NoError(t, err)
	assert.False(t, c.Metrics)
	assert.Equal(t, "127.0.0.1:9464", c.MetricsAddr)
	assert.Equal(t, "a-scrape-token-of-24-chr", c.MetricsToken)
	assert.Equal(t, 20, c.MetricsMaxModels)
	assert.Equal(t, 50, c.MetricsMaxWorkspaces)
	assert.Equal(t, 300, c.MetricsMaxLabelSets)

	_, err = LoadConfig(env(map[string]string{"CAUSEWAY_METRICS": "sometimes", "CAUSEWAY_METRICS_ADDR": "nowhere",
		"CAUSEWAY_METRICS_TOKEN": "short secret", "CAUSEWAY_METRICS_MAX_MODELS": "0",
		"CAUSEWAY_METRICS_MAX_WORKSPACES": "lots", "CAUSEWAY_METRICS_MAX_LABEL_SETS": "1000000"}))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{"CAUSEWAY_METRICS=", "CAUSEWAY_METRICS_ADDR=\"nowhere\"", "CAUSEWAY_METRICS_TOKEN: must be at least 16",
		"CAUSEWAY_METRICS_MAX_MODELS=\"0\": must be a whole number from 1 to 10000",
		"CAUSEWAY_METRICS_MAX_WORKSPACES=\"lots\"", "CAUSEWAY_METRICS_MAX_LABEL_SETS=\"1000000\": must be a whole number from 1 to 100000"} {
		assert.Contains(t, msg, want)
	}
	assert.Equal(t, 6, len(strings.Split(msg, "\n")), "one line per problem:\n%s", msg)
	assert.NotContains(t, msg, "short secret", "the token is a secret")

	_, err = LoadConfig(env(map[string]string{"CAUSEWAY_ADDR": ":8787", "CAUSEWAY_METRICS_ADDR": ":8787"}))
	assert.ErrorContains(t, err, "CAUSEWAY_METRICS_ADDR=\":8787\": is CAUSEWAY_ADDR")
}
