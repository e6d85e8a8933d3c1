package cli

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	hookID     = "9a1c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11"
	hookSecret = "whsec_c2VjcmV0LWJ5dGVzLW9mLXRoZS13ZWJob29rLTAwMQ=="
	newSecret  = "whsec_bmV3LXNlY3JldC1ieXRlcy1vZi10aGUtd2ViaG9vaw=="
)

// hookJSON is a webhook as the API answers it, with extra fields (a secret, as create and
// rotate answer) when given.
func hookJSON(extra string) string {
	return `{"id":"` + hookID + `","object":"webhook","organisation_id":"0b1e9a43-1111-4c43-9d1a-5a7e0b6c2d11",` +
		`"workspace_id":"7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11","name":"Ops","url":"https://hooks.example.com/in",` +
		`"kinds":["api_key.rotated","usage.exhausted"],"disabled":false,"status":"active",` +
		`"secret_rotated_at":"2026-01-02T03:04:05Z","created_at":"2026-01-02T03:04:05Z","last_updated_at":"2026-01-02T03:04:05Z"` + extra + `}`
}

// The webhook commands send the routes' paths and bodies; the signing secret that create and
// rotate-secret answer is printed once, with a note on stderr, and no read prints one.
func TestWebhookCommands(t *testing.T) {
	a := newAPI(t)
	a.answer("GET /workspaces/team-a", http.StatusOK, workspaceJSON)
	a.answer("POST /webhooks", http.StatusOK, hookJSON(`,"secret":"`+hookSecret+`"`))
	a.answer("POST /webhooks/"+hookID+"/rotate-secret", http.StatusOK, hookJSON(`,"secret":"`+newSecret+`"`))
	// A read that (wrongly) held a secret still would not print it: reads show chosen columns.
	a.answer("GET /webhooks/"+hookID, http.StatusOK, hookJSON(`,"secret":"`+hookSecret+`"`))
	a.answer("GET /webhooks", http.StatusOK, `{"object":"list","total":1,"data":[`+hookJSON(`,"secret":"`+hookSecret+`"`)+`]}`)
	a.answer("PUT /webhooks/"+hookID, http.StatusOK, hookJSON(""))
	a.answer("DELETE /webhooks/"+hookID, http.StatusOK, `{"id":"`+hookID+`","object":"webhook","status":"archived"}`)
	env := envFor(a)

	r := run(t, env, "", "webhooks", "create", "--name", "Ops", "--hook-url", "https://hooks.example.com/in",
		"--kinds", "api_key.rotated", "--kinds", "usage.exhausted", "--workspace", "team-a")
	require.Equal(t, 0, r.code, r.stderr)
	got := a.last(t)
	assert.Equal(t, http.MethodPost, got.method)
	assert.Equal(t, "/v1/webhooks", got.path)
	assert.Equal(t, map[string]any{"name": "Ops", "url": "https://hooks.example.com/in",
		"kinds": []any{"api_key.rotated", "usage.exhausted"}, "workspace_id": "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11"}, got.json(t),
		"the workspace named by its slug is sent as its id")
	assert.Regexp(t, `(?m)^secret\s+`+regexp.QuoteMeta(hookSecret)+`$`, r.stdout)
	assert.Regexp(t, `(?m)^id\s+`+hookID+`$`, r.stdout)
	assert.Equal(t, 1, strings.Count(r.stdout, hookSecret))
	assert.Contains(t, r.stderr, "signing secret is shown this once")
	assert.NotContains(t, r.stderr, hookSecret)

	r = run(t, env, "", "webhooks", "rotate-secret", hookID)
	require.Equal(t, 0, r.code, r.stderr)
	got = a.last(t)
	assert.Equal(t, "POST /v1/webhooks/"+hookID+"/rotate-secret", got.method+" "+got.path)
	assert.Empty(t, got.body, "a rotation sends no body")
	assert.Regexp(t, `(?m)^secret\s+`+regexp.QuoteMeta(newSecret)+`$`, r.stdout)
	assert.Contains(t, r.stderr, "shown this once")

	for _, args := range [][]string{{"webhooks", "get", hookID}, {"webhooks", "list"}, {"webhooks", "update", hookID, "--name", "x"}} {
		r = run(t, env, "", args...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.NotContains(t, r.stdout+r.stderr, "whsec_", "%q printed a secret", args)
		assert.Contains(t, r.stdout, "https://hooks.example.com/in")
	}
	r = run(t, env, "", "webhooks", "get", hookID)
	assert.Regexp(t, `(?m)^kinds\s+api_key.rotated,usage.exhausted$`, r.stdout)
	assert.Regexp(t, `(?m)^disabled\s+false$`, r.stdout)

	r = run(t, env, "", "webhooks", "list", "--workspace", "team-a", "--status", "active,archived", "--page-size", "5")
	require.Equal(t, 0, r.code, r.stderr)
	q := a.last(t).query
	assert.Equal(t, "7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", q.Get("workspace_id"))
	assert.Equal(t, "active,archived", q.Get("status"))
	assert.Equal(t, "5", q.Get("page_size"))
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2, r.stdout)
	assert.Equal(t, []string{"ID", "NAME", "URL", "KINDS", "WORKSPACE", "DISABLED", "STATUS", "SECRET", "ROTATED"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{hookID, "Ops", "https://hooks.example.com/in", "api_key.rotated,usage.exhausted",
		"7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11", "false", "active", "2026-01-02T03:04:05Z"}, strings.Fields(lines[1]))

	// Every kind again (an empty list), and enabled: the flags' zero values are sent, not left out.
	r = run(t, env, "", "webhooks", "update", hookID, "--kinds", "", "--disabled=false", "--hook-url", "https://hooks.example.com/v2")
	require.Equal(t, 0, r.code, r.stderr)
	got = a.last(t)
	assert.Equal(t, "PUT /v1/webhooks/"+hookID, got.method+" "+got.path)
	assert.Equal(t, map[string]any{"kinds": []any{}, "disabled": false, "url": "https://hooks.example.com/v2"}, got.json(t))

	r = run(t, env, "", "webhooks", "delete", hookID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "DELETE /v1/webhooks/"+hookID, a.last(t).method+" "+a.last(t).path)
	assert.Regexp(t, `(?m)^status\s+archived$`, r.stdout)

	// -o json is the API's answer, the secret with it: a script reads it from there.
	r = run(t, env, "", "webhooks", "create", "--name", "Ops", "--hook-url", "https://hooks.example.com/in", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"secret": "`+hookSecret+`"`)
	assert.Equal(t, map[string]any{"name": "Ops", "url": "https://hooks.example.com/in"}, a.last(t).json(t))

	before := len(a.requests())
	for _, args := range [][]string{{"webhooks", "rotate-secret"}, {"webhooks", "create", "--disabled=maybe"}, {"webhooks", "ping"}} {
		r = run(t, env, "", args...)
		assert.Equal(t, 2, r.code, "%q: %s", args, r.stderr)
	}
	assert.Len(t, a.requests(), before, "a usage error sends nothing")
}

// notifications get shows the status and each delivery: channel, target, status, attempts,
// last error and next attempt.
func TestNotificationGetShowsDeliveries(t *testing.T) {
	a := newAPI(t)
	const id = "5b0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11"
	a.answer("GET /notifications/"+id, http.StatusOK, `{"id":"`+id+`","organisation_id":"o1","kind":"api_key.rotated",`+
		`"recipients":["ann@example.com"],"subject":"API key app was rotated","resource_type":"api_key","resource_id":"k1",`+
		`"data":{"previous_key_valid_until":"2026-01-02T04:04:05Z"},"created_at":"2026-01-02T03:04:05Z","status":"pending",`+
		`"deliveries_planned_at":"2026-01-02T03:04:06Z","deliveries":[`+
		`{"channel":"email","target":"ann@example.com","status":"delivered","attempts":1,"delivered_at":"2026-01-02T03:04:07Z"},`+
		`{"channel":"webhook","target":"`+hookID+`","status":"pending","attempts":2,"last_error":"the webhook answered HTTP 503","next_attempt_at":"2026-01-02T03:05:00Z"}],`+
		`"object":"notification"}`)
	a.answer("GET /notifications/"+hookID, http.StatusOK, `{"id":"`+hookID+`","kind":"workspace.invite","status":"skipped",`+
		`"deliveries_planned_at":"2026-01-02T03:04:06Z","deliveries":[],"object":"notification"}`)
	a.answer("GET /notifications", http.StatusOK, `{"object":"list","total":1,"data":[{"id":"`+id+`","kind":"api_key.rotated",`+
		`"status":"pending","subject":"API key app was rotated","recipients":[],"resource_type":"api_key","resource_id":"k1","created_at":"2026-01-02T03:04:05Z"}]}`)
	env := envFor(a)

	r := run(t, env, "", "notifications", "get", id)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "/v1/notifications/"+id, a.last(t).path)
	assert.Regexp(t, `(?m)^status\s+pending$`, r.stdout)
	assert.Regexp(t, `(?m)^kind\s+api_key.rotated$`, r.stdout)
	assert.Regexp(t, `(?m)^data\s+\{"previous_key_valid_until":"2026-01-02T04:04:05Z"\}$`, r.stdout)
	_, table, found := strings.Cut(r.stdout, "\n\n")
	require.True(t, found, "the deliveries follow the fields: %s", r.stdout)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 3, table)
	assert.Regexp(t, `^CHANNEL\s+TARGET\s+STATUS\s+ATTEMPTS\s+LAST ERROR\s+NEXT ATTEMPT\s+DELIVERED$`, lines[0])
	assert.Equal(t, []string{"email", "ann@example.com", "delivered", "1", "-", "-", "2026-01-02T03:04:07Z"}, strings.Fields(lines[1]))
	assert.Regexp(t, `^webhook\s+`+hookID+`\s+pending\s+2\s+the webhook answered HTTP 503\s+2026-01-02T03:05:00Z\s+-$`, lines[2])

	r = run(t, env, "", "notifications", "get", hookID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no deliveries: nothing to deliver it to")

	r = run(t, env, "", "notifications", "list", "--kind", "api_key.rotated")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "api_key.rotated", a.last(t).query.Get("kind"))
	assert.Regexp(t, `(?m)^2026-01-02T03:04:05Z\s+api_key.rotated\s+pending\s+API key app`, r.stdout, "the list shows each one's status")
}

// cache purge deletes the workspace's entries of one namespace, the default one unless
// --namespace names another.
func TestCachePurge(t *testing.T) {
	a := newAPI(t)
	a.answer("DELETE /workspaces/team-a/cache", http.StatusOK,
		`{"object":"cache-purge","workspace_id":"7f0c1a52-3b8e-4c43-9d1a-5a7e0b6c2d11","namespace":"team-b","deleted":3}`)
	env := envFor(a)

	r := run(t, env, "", "cache", "purge", "--workspace", "team-a", "--namespace", "team-b")
	require.Equal(t, 0, r.code, r.stderr)
	got := a.last(t)
	assert.Equal(t, "DELETE /v1/workspaces/team-a/cache", got.method+" "+got.path)
	assert.Equal(t, "team-b", got.query.Get("namespace"))
	assert.Len(t, a.requests(), 1, "the route takes a slug: no lookup")
	assert.Regexp(t, `(?m)^deleted\s+3$`, r.stdout)
	assert.Regexp(t, `(?m)^namespace\s+team-b$`, r.stdout)

	r = run(t, env, "", "cache", "purge", "--workspace", "team-a")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, a.last(t).query, "namespace", "the default namespace: none sent")

	r = run(t, env, "", "cache", "purge")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--workspace")
	assert.Len(t, a.requests(), 2, "nothing was sent")
}

// No command's flag shadows a global one: a webhook's URL as --url would have sent the
// command to the webhook's host instead of the admin API.
func TestNoFlagShadowsAGlobalFlag(t *testing.T) {
	root := (&app{}).root()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			assert.Nil(t, root.PersistentFlags().Lookup(f.Name), "%s --%s shadows the global flag", c.CommandPath(), f.Name)
			if f.Shorthand != "" {
				assert.Nil(t, root.PersistentFlags().ShorthandLookup(f.Shorthand), "%s -%s shadows a global flag", c.CommandPath(), f.Shorthand)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
