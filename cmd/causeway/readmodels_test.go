package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/migrations/migrationstest"
)

func post(t *testing.T, url, key string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("x-gateway-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", out)
	return out
}

func del(t *testing.T, url, key string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("x-gateway-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

const serverAdminKey = "server-mode-admin-key-000000000001"

// serverEnv is the configuration of a serving process in server mode on one PostgreSQL
// schema: events and read models.
func serverEnv(pg string) map[string]string {
	return map[string]string{"EVENTSTORE_URL": pg, "DATABASE_URL": pg, "CAUSEWAY_BOOTSTRAP_ADMIN_KEY": serverAdminKey,
		"CAUSEWAY_SECRET_KEY": strings.Repeat("s", 32)}
}

// Create a key and use it at once; revoke it on one serving process, and a second process
// sharing the event store and database refuses it within the propagation bound.
func TestRevokedKeyIsRefusedEverywhere(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	a := startMain(t, serverEnv(pg))
	b := startMain(t, serverEnv(pg))

	created := post(t, a.URL()+"/api-keys/organisation/service", serverAdminKey, map[string]any{"name": "short-lived", "scopes": []string{"organisation_service_api_keys.list", "organisation_service_api_keys.read"}})
	key := created["key"].(string)
	assert.Equal(t, http.StatusOK, get(t, a.URL()+"/api-keys", key), "the new key works at once on the process that made it")
	require.Eventually(t, func() bool { return get(t, b.URL()+"/api-keys", key) == http.StatusOK }, propagationBound(), 5*time.Millisecond,
		"and on the other process within the propagation bound")

	del(t, a.URL()+"/api-keys/"+created["id"].(string), serverAdminKey)
	revoked := time.Now()
	assert.Equal(t, http.StatusUnauthorized, get(t, a.URL()+"/api-keys", key), "refused at once where it was revoked")
	require.Eventually(t, func() bool { return get(t, b.URL()+"/api-keys", key) == http.StatusUnauthorized }, propagationBound(), 2*time.Millisecond,
		"refused by the second process within the propagation bound")
	t.Logf("the second process refused the revoked key %s after the revocation", time.Since(revoked).Round(time.Millisecond))

	// Admin reads in server mode come from PostgreSQL, and a write can be read back at once.
	assert.NotNil(t, a.Postgres)
	ws := post(t, b.URL()+"/workspaces", serverAdminKey, map[string]any{"name": "Read it back"})
	assert.Equal(t, http.StatusOK, get(t, a.URL()+"/workspaces/"+ws["id"].(string), serverAdminKey))
}

func TestReplayVerifyAndSwap(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	vars := serverEnv(pg)
	m := startMain(t, vars)
	for i := 0; i < 5; i++ {
		post(t, m.URL()+"/api-keys/organisation/service", serverAdminKey, map[string]any{"name": "k", "scopes": []string{"logs.view"}})
	}
	post(t, m.URL()+"/workspaces", serverAdminKey, map[string]any{"name": "Team"})

	runReplay := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"replay"}, args...), env(vars), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	code, out := runReplay("--verify")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "events/s")
	assert.Contains(t, out, "verify: the rebuild equals the live tables")

	pool, err := pgxpool.New(context.Background(), pg)
	require.NoError(t, err)
	defer pool.Close()
	tag, err := pool.Exec(context.Background(), `UPDATE rm_documents SET doc = jsonb_set(doc, '{name}', '"changed by hand"')
		WHERE kind = 'apikey' AND id = (SELECT id FROM rm_documents WHERE kind = 'apikey' ORDER BY id LIMIT 1)`)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	code, out = runReplay("--verify")
	assert.Equal(t, 1, code, "a row changed by hand is found")
	assert.Contains(t, out, "documents apikey/")
	assert.Contains(t, out, "changed by hand")

	code, out = runReplay("--swap")
	require.Equal(t, 0, code, out)
	code, out = runReplay("--verify")
	assert.Equal(t, 0, code, "after the swap the live tables are the rebuild: %s", out)
	assert.Equal(t, http.StatusOK, get(t, m.URL()+"/api-keys", serverAdminKey), "reads work after the swap")

	code, out = runReplay("--models", "memory")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "memory:")
	code, _ = runReplay("--models", "nonsense")
	assert.Equal(t, 2, code)
}

func TestMigrateCommand(t *testing.T) {
	pg := migrationstest.PostgresURL(t)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"migrate"}, env(map[string]string{"DATABASE_URL": pg}), &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "schema at version")
	assert.Equal(t, 2, run([]string{"migrate"}, env(nil), &out, &errOut), "nothing to migrate in embedded mode")
}
