package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// countEvents counts the events that change state (refusals recorded for the audit log are
// not state).
func countEvents(t *testing.T, s eventstore.Store) int {
	t.Helper()
	n := 0
	var from eventstore.Position
	for {
		evs, err := s.ReadAll(context.Background(), from, 500)
		require.NoError(t, err)
		for _, ev := range evs {
			if ev.Stream != domain.AuditStream {
				n++
			}
		}
		if len(evs) < 500 {
			return n
		}
		from = evs[len(evs)-1].Position
	}
}

func get(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("x-gateway-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// The first start creates the organisation, its owner and an admin key, prints the key once
// and saves it with mode 0600; a restart creates nothing and prints nothing.
func TestBootstrapGeneratesAKeyOnceAndARestartCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	start := func() (*Main, string) {
		cfg, err := LoadConfig(env(map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": dir}))
		require.NoError(t, err)
		var stderr bytes.Buffer
		m := NewMain(cfg, &stderr, "test")
		require.NoError(t, m.Run(context.Background()))
		return m, stderr.String()
	}
	m, out := start()
	keyPath := filepath.Join(dir, "bootstrap-admin-key")
	raw, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	key := strings.TrimSpace(string(raw))
	info, err := os.Stat(keyPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	assert.Contains(t, out, key, "the generated key is printed once to stderr")
	assert.Equal(t, http.StatusOK, get(t, m.URL()+"/api-keys", key))
	assert.Equal(t, http.StatusUnauthorized, get(t, m.URL()+"/api-keys", key+"x"))
	events := countEvents(t, m.Store)
	org := m.Bootstrap.OrganisationID
	require.NoError(t, m.Close())

	m, out = start()
	defer m.Close()
	assert.NotContains(t, out, key, "a restart does not print the key again")
	assert.Equal(t, events, countEvents(t, m.Store), "a restart creates nothing")
	assert.Equal(t, org, m.Bootstrap.OrganisationID)
	assert.Equal(t, http.StatusOK, get(t, m.URL()+"/api-keys", key), "the key still works after a restart")
}

func TestBootstrapUsesTheConfiguredKey(t *testing.T) {
	const key = "my-operator-chosen-admin-key-0001"
	m := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": key})
	assert.Equal(t, http.StatusOK, get(t, m.URL()+"/api-keys", key))
	assert.NoFileExists(t, filepath.Join(m.Config.DataDir, "bootstrap-admin-key"), "a configured key is not written to disk")

	_, err := LoadConfig(env(map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": "too-short-19-chars!"}))
	require.ErrorContains(t, err, "at least 20 characters")
	_, err = LoadConfig(env(map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": "exactly-twenty-chars"}))
	require.NoError(t, err)
}

// The specification's self-hosting flags turn admin areas off.
func TestFeatureFlagsTurnAreasOff(t *testing.T) {
	const key = "feature-flag-test-admin-key-00001"
	cases := []struct {
		flag, path string
	}{
		{"API_ACCESS_ENABLED", "/api-keys"},
		{"POLICY_ENABLED", "/policies/rate-limits"},
		{"AUDIT_LOGS_ENABLED", "/audit-logs"},
	}
	for _, tc := range cases {
		t.Run(tc.flag, func(t *testing.T) {
			on := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": key})
			assert.Equal(t, http.StatusOK, get(t, on.URL()+tc.path, key))
			off := startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": key, tc.flag: "OFF"})
			assert.Equal(t, http.StatusForbidden, get(t, off.URL()+tc.path, key))
			assert.Equal(t, http.StatusOK, get(t, off.URL()+"/health", ""), "health stays up")
		})
	}
}
