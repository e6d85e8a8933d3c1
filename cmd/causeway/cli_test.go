package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

// cliRun is one run of the binary's admin command line.
type cliRun struct {
	code           int
	stdout, stderr string
}

// json decodes what the run printed, failing the test when it is not JSON.
func (r cliRun) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m), "-o json prints JSON: %q", r.stdout)
	return m
}

// cliFor runs the real binary's CLI against the server at url with the admin key; every
// output is kept in printed, to check that no key was ever printed.
func cliFor(t *testing.T, url string, printed *strings.Builder) func(args ...string) cliRun {
	bin := causewayBinary(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAUSEWAY_") {
			env = append(env, kv)
		}
	}
	env = append(env, "CAUSEWAY_URL="+url, "CAUSEWAY_API_KEY="+gatewayKey)
	return func(args ...string) cliRun {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		r := cliRun{stdout: out.String(), stderr: errOut.String()}
		if exit := (*exec.ExitError)(nil); err != nil {
			require.ErrorAs(t, err, &exit, "causeway %q did not run: %v", args, err)
			r.code = exit.ExitCode()
		}
		printed.WriteString(r.stdout + r.stderr)
		return r
	}
}

// TestCLIScenario drives a whole scenario with the CLI, as a script would: the real binary
// serving, and the same binary's admin commands as subprocesses against it; only the model
// provider is a stand-in.
func TestCLIScenario(t *testing.T) {
	standIn := providertest.NewOpenAI(t)
	p := startProcess(t, map[string]string{"CAUSEWAY_DATA_DIR": t.TempDir(), "CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey,
		"CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1"})
	var printed strings.Builder
	cw := cliFor(t, p.url(), &printed)
	ok := func(r cliRun) cliRun {
		t.Helper()
		require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
		return r
	}

	health := ok(cw("health"))
	assert.Regexp(t, `(?m)^status\s+ok$`, health.stdout)
	assert.Regexp(t, `(?m)^eventstore\s+up\s+sqlite`, health.stdout)

	ws := ok(cw("workspaces", "create", "--name", "Team A", "-o", "json")).json(t)
	wsID := ws["id"].(string)
	assert.Equal(t, "team-a", ws["slug"])
	assert.Regexp(t, `(?m)^[0-9a-f-]{36}\s+team-a\s+Team A\s+active`, ok(cw("workspaces", "list")).stdout)

	// The key is printed once, by create; reads show its masked form.
	created := ok(cw("keys", "create", "--workspace", "team-a", "--name", "app",
		"--scopes", "completions.write,logs.list,logs.view,analytics.view"))
	key := regexp.MustCompile(`(?m)^key\s+(cw-\S+)$`).FindStringSubmatch(created.stdout)
	keyID := regexp.MustCompile(`(?m)^id\s+(\S+)$`).FindStringSubmatch(created.stdout)
	require.Len(t, key, 2, created.stdout)
	require.Len(t, keyID, 2, created.stdout)
	assert.Contains(t, created.stderr, "shown this once")
	shown := ok(cw("keys", "get", keyID[1]))
	assert.NotContains(t, shown.stdout, key[1], "a read never shows the key")
	assert.Regexp(t, `(?m)^key\s+cw-\S*\*\*\*\*`+regexp.QuoteMeta(key[1][len(key[1])-4:])+`$`, shown.stdout)
	assert.Regexp(t, `(?m)^workspace_id\s+`+wsID+`$`, shown.stdout, "--workspace by slug became the workspace's id")
	listed := ok(cw("keys", "list", "--workspace", wsID, "-o", "json")).json(t)
	require.Len(t, listed["data"], 1, "the workspace's keys")

	rate := ok(cw("policies", "rate-limits", "create", "--workspace", "team-a", "--type", "requests", "--unit", "rpm",
		"--value", "100", "--condition", "workspace_id="+wsID, "--group-by", "api_key", "-o", "json")).json(t)
	budget := ok(cw("policies", "usage-limits", "create", "--workspace", "team-a", "--type", "tokens", "--credit-limit", "100000",
		"--condition", "workspace_id="+wsID, "--group-by", "api_key", "-o", "json")).json(t)
	assert.Regexp(t, `(?m)^`+rate["id"].(string)+`\s+-\s+requests\s+rpm\s+100\s+`+wsID+`\s+active$`,
		ok(cw("policies", "rate-limits", "list")).stdout)
	assert.Regexp(t, `(?m)^`+budget["id"].(string)+`\s+-\s+tokens\s+100000\s`, ok(cw("policies", "usage-limits", "list")).stdout)

	// A managed provider at the stand-in, and a saved config routing to it.
	ok(cw("providers", "create", "--workspace", "team-a", "--name", "Stand-in", "--slug", "standin", "--provider", "openai",
		"--key", "sk-standin-provider-secret", "--custom-host", standIn.BaseURL()))
	provider := ok(cw("providers", "get", "standin", "--workspace", "team-a", "-o", "json")).json(t)
	assert.Equal(t, "****cret", provider["masked_key"])
	config := ok(cw("configs", "create", "--workspace", "team-a", "--name", "Routing", "--slug", "routing",
		"--config", `{"provider":"@standin"}`, "-o", "json")).json(t)
	assert.Equal(t, "routing", config["data"].(map[string]any)["slug"])
	assert.Regexp(t, `(?m)^config\s+\{"provider":"@standin"\}$`, ok(cw("configs", "get", "routing")).stdout)

	chat := func(apiKey string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, p.url()+"/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-gateway-api-key", apiKey)
		req.Header.Set("x-gateway-config", "routing")
		req.Header.Set("x-gateway-metadata", `{"run":"cli"}`)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, chat(key[1]))
	assert.Equal(t, "Bearer sk-standin-provider-secret", standIn.LastRequest().Header.Get("Authorization"), "through the managed provider")

	// The request in the logs (stored within a second), read with the new key itself.
	var logs cliRun
	require.Eventually(t, func() bool {
		logs = cw("logs", "list", "--workspace", "team-a", "--metadata", "run=cli", "--api-key", key[1])
		return logs.code == 0 && strings.Contains(logs.stdout, "gpt-4o-mini")
	}, 15*time.Second, 200*time.Millisecond, "logs list: %+v", logs)
	assert.Regexp(t, `(?m)^\S+\s+200\s+gpt-4o-mini\s+openai\s+\d+\s`, logs.stdout)
	rows := ok(cw("logs", "list", "-o", "json")).json(t)["data"].([]any)
	require.Len(t, rows, 1)
	logID := rows[0].(map[string]any)["_id"].(string)
	assert.Regexp(t, `(?m)^model\s+gpt-4o-mini$`, ok(cw("logs", "get", logID)).stdout)

	tail := ok(cw("logs", "tail", "--count", "1", "-o", "json"))
	lines := strings.Split(strings.TrimSpace(tail.stdout), "\n")
	require.Len(t, lines, 1, tail.stdout)
	var row map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &row))
	assert.Equal(t, logID, row["_id"])

	// A tail that follows: started before the request, it prints the request's row and stops.
	since := time.Now().UTC().Format(time.RFC3339Nano)
	followed := make(chan cliRun, 1)
	go func() { followed <- cw("logs", "tail", "--from", since, "--count", "1", "--interval", "200ms") }()
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, http.StatusOK, chat(key[1]))
	select {
	case r := <-followed:
		ok(r)
		tailLines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		require.Len(t, tailLines, 2, r.stdout)
		assert.Regexp(t, `^TIME\s+STATUS\s+MODEL`, tailLines[0])
		assert.Regexp(t, `^\S+\s+200\s+gpt-4o-mini\s`, tailLines[1])
		assert.NotContains(t, tailLines[1], logID, "the new row, not the first")
	case <-time.After(30 * time.Second):
		t.Fatal("logs tail --count 1 did not see the new request")
	}

	summary := ok(cw("analytics", "summary", "-o", "json")).json(t)["summary"].(map[string]any)
	assert.EqualValues(t, 2, summary["requests"])
	assert.Regexp(t, `(?m)^requests\s+2$`, ok(cw("analytics", "summary", "--workspace", "team-a")).stdout)
	assert.Regexp(t, `(?m)^gpt-4o-mini\s+2\s`, ok(cw("analytics", "groups", "model", "--columns", "cost")).stdout)

	// Rotate, then revoke: the rotated key is printed once, and the revoked key is refused.
	rotated := ok(cw("keys", "rotate", keyID[1]))
	newKey := regexp.MustCompile(`(?m)^key\s+(cw-\S+)$`).FindStringSubmatch(rotated.stdout)
	require.Len(t, newKey, 2, rotated.stdout)
	assert.NotEqual(t, key[1], newKey[1])
	assert.Regexp(t, `(?m)^deleted\s+true$`, ok(cw("keys", "revoke", keyID[1])).stdout)
	assert.Equal(t, http.StatusUnauthorized, chat(newKey[1]))

	audit := ok(cw("audit", "list", "--resource-type", "api_key", "--resource-id", keyID[1], "--order", "asc"))
	var actions []string
	for _, l := range strings.Split(strings.TrimSpace(audit.stdout), "\n")[1:] {
		actions = append(actions, strings.Fields(l)[1])
	}
	assert.Equal(t, []string{"ApiKeyCreated", "ApiKeyRotated", "ApiKeyDeleted"}, actions, audit.stdout)
	auditJSON := ok(cw("audit", "list", "--resource-type", "rate_limit_policy", "-o", "json")).json(t)
	require.Len(t, auditJSON["data"], 1)
	assert.Equal(t, "RateLimitPolicyCreated", auditJSON["data"].([]any)[0].(map[string]any)["action"])

	// Bad input: the API's refusal names the field (exit 1); a bad command line is exit 2.
	bad := cw("policies", "rate-limits", "create", "--workspace", "team-a", "--type", "requests", "--unit", "rpm",
		"--value", "0", "--condition", "workspace_id="+wsID, "--group-by", "api_key")
	assert.Equal(t, 1, bad.code)
	assert.Contains(t, bad.stderr, "param value")
	assert.Contains(t, bad.stderr, "value must be a whole number")
	usage := cw("policies", "rate-limits", "create", "--value", "lots")
	assert.Equal(t, 2, usage.code)
	assert.Contains(t, usage.stderr, "--value must be a number")
	assert.Equal(t, 2, cw("keys", "frobnicate").code)
	assert.Equal(t, 2, cw("frobnicate").code)

	assert.Equal(t, 1, strings.Count(printed.String(), key[1]), "the key was printed by create, and never again")
	assert.NotContains(t, printed.String(), gatewayKey, "the admin key was printed")
	assert.NotContains(t, printed.String(), "sk-standin-provider-secret", "the provider key was printed")
}

// The binary's own commands keep their dispatch; every other command is the CLI's.
func TestRunHandsAdminCommandsToTheCLI(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run([]string{"help"}, env(nil), &out, &errOut))
	for _, c := range []string{"serve", "migrate", "replay", "version", "workspaces", "keys", "policies", "logs", "analytics", "audit"} {
		assert.Contains(t, out.String(), "\n  "+c+" ", "help lists %s", c)
	}
	out.Reset()
	assert.Equal(t, 0, run([]string{"help", "keys"}, env(nil), &out, &errOut))
	assert.Contains(t, out.String(), "rotate", "help <command> is the command's help")
	errOut.Reset()
	assert.Equal(t, 2, run([]string{"keys"}, env(nil), &out, &errOut))
	assert.Contains(t, errOut.String(), "needs a subcommand")
	errOut.Reset()
	assert.Equal(t, 1, run([]string{"health", "--url", "http://127.0.0.1:1/v1", "--timeout", "2s"}, env(nil), &out, &errOut))
	assert.Contains(t, errOut.String(), "connection refused")
	errOut.Reset()
	assert.Equal(t, 1, run([]string{"-o", "json", "--url", "http://127.0.0.1:1/v1", "health"}, env(nil), &out, &errOut),
		"global flags before the command")
	assert.Contains(t, errOut.String(), "connection refused")
}

// TestCLIScenarioWebhooksCacheAndPrompts drives, with the CLI against the real binary, what
// came after the first scenario: a webhook whose signing secret is printed once and rotated
// (the receiver, standing in for the outside world, checks the deliveries are signed with the
// secret printed), a notification's deliveries, a purge of a workspace's answer cache, and a
// prompt in a collection including a partial, rendered and run (whole and streamed) against
// the stand-in provider, versioned, labelled, and found in the logs.
func TestCLIScenarioWebhooksCacheAndPrompts(t *testing.T) {
	standIn := providertest.NewOpenAI(t)
	rc := newReceiver(t)
	p := startProcess(t, notifyEnv(map[string]string{"CAUSEWAY_DATA_DIR": t.TempDir()}))
	var printed strings.Builder
	cw := cliFor(t, p.url(), &printed)
	ok := func(r cliRun) cliRun {
		t.Helper()
		require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.stderr, r.stdout)
		return r
	}
	field := func(r cliRun, name string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + name + `\s+(\S+)$`).FindStringSubmatch(r.stdout)
		require.Len(t, m, 2, "%s in %s", name, r.stdout)
		return m[1]
	}
	wsID := ok(cw("workspaces", "create", "--name", "Support", "-o", "json")).json(t)["id"].(string)

	// A webhook: its secret printed once by create, a new one once by rotate-secret.
	created := ok(cw("webhooks", "create", "--name", "Ops", "--hook-url", rc.srv.URL+"/hooks", "--kinds", "api_key.rotated"))
	hookID, secret := field(created, "id"), field(created, "secret")
	assert.True(t, strings.HasPrefix(secret, "whsec_"), secret)
	assert.Contains(t, created.stderr, "shown this once")
	shown := ok(cw("webhooks", "get", hookID))
	assert.Regexp(t, `(?m)^url\s+`+regexp.QuoteMeta(rc.srv.URL)+`/hooks$`, shown.stdout)
	assert.Regexp(t, `(?m)^kinds\s+api_key.rotated$`, shown.stdout)
	assert.NotContains(t, shown.stdout, "whsec_", "a read never shows the secret")
	assert.Regexp(t, `(?m)^`+hookID+`\s+Ops\s+`, ok(cw("webhooks", "list")).stdout)
	rotatedHook := ok(cw("webhooks", "rotate-secret", hookID))
	newSecret := field(rotatedHook, "secret")
	assert.NotEqual(t, secret, newSecret)
	rc.set(newSecret, 0)

	// A key rotation is notified to the webhook, signed with the secret rotate-secret printed.
	key := ok(cw("keys", "create", "--workspace", "support", "--name", "app",
		"--scopes", "completions.write,prompts.render,logs.list,logs.view"))
	appKey, keyID := field(key, "key"), field(key, "id")
	ok(cw("keys", "rotate", keyID, "--transition", "1h"))
	var notificationID string
	require.Eventually(t, func() bool {
		list := cw("notifications", "list", "--kind", "api_key.rotated", "-o", "json")
		if list.code != 0 {
			return false
		}
		rows, _ := list.json(t)["data"].([]any)
		if len(rows) != 1 {
			return false
		}
		notificationID = rows[0].(map[string]any)["id"].(string)
		return true
	}, 15*time.Second, 100*time.Millisecond, "the rotation is notified")
	var n cliRun
	require.Eventually(t, func() bool {
		n = ok(cw("notifications", "get", notificationID))
		return regexp.MustCompile(`(?m)^status\s+delivered$`).MatchString(n.stdout)
	}, 15*time.Second, 100*time.Millisecond, "the notification is delivered: %s", n.stdout)
	assert.Regexp(t, `(?m)^resource_id\s+`+keyID+`$`, n.stdout)
	assert.Regexp(t, `(?m)^CHANNEL\s+TARGET\s+STATUS\s+ATTEMPTS\s+LAST ERROR\s+NEXT ATTEMPT`, n.stdout)
	assert.Regexp(t, `(?m)^webhook\s+`+hookID+`\s+delivered\s+1\s+-\s+-\s+\S+$`, n.stdout)
	calls := rc.of(notificationID)
	require.Len(t, calls, 1)
	assert.True(t, calls[0].Valid, "signed with the secret rotate-secret printed")
	assert.Regexp(t, `(?m)^\S+\s+api_key.rotated\s+delivered\s+`, ok(cw("notifications", "list")).stdout)

	// The answer cache: a repeated request is a hit until the workspace's cache is purged.
	ok(cw("providers", "create", "--workspace", "support", "--name", "Stand-in", "--slug", "standin", "--provider", "openai",
		"--key", "sk-standin-provider-secret", "--custom-host", standIn.BaseURL()))
	ok(cw("configs", "create", "--workspace", "support", "--name", "Cached", "--slug", "cached",
		"--config", `{"provider":"@standin","cache":{"mode":"simple"}}`))
	chat := func() string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, p.url()+"/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"What is the capital of France?"}]}`))
		req.Header.Set("x-gateway-api-key", appKey)
		req.Header.Set("x-gateway-config", "cached")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return resp.Header.Get("x-gateway-cache-status")
	}
	assert.Equal(t, "MISS", chat())
	require.Eventually(t, func() bool { return chat() == "HIT" }, 10*time.Second, 100*time.Millisecond, "the answer is cached")
	purged := ok(cw("cache", "purge", "--workspace", "support"))
	assert.Regexp(t, `(?m)^workspace_id\s+`+wsID+`$`, purged.stdout)
	assert.Regexp(t, `(?m)^deleted\s+1$`, purged.stdout)
	assert.Equal(t, "MISS", chat(), "purged")
	assert.Regexp(t, `(?m)^deleted\s+0$`, ok(cw("cache", "purge", "--workspace", wsID, "--namespace", "other")).stdout)

	// A collection, a partial, and a prompt that includes it, sent through the managed provider.
	collection := ok(cw("collections", "create", "--workspace", "support", "--name", "Help desk", "--slug", "help", "-o", "json")).json(t)
	assert.Equal(t, "help", collection["slug"])
	partial := ok(cw("prompts", "partials", "create", "--workspace", "support", "--name", "Tone",
		"--string", "Answer in a {{tone}} tone.", "-o", "json")).json(t)
	assert.Equal(t, "tone", partial["slug"])
	prompt := ok(cw("prompts", "create", "--workspace", "support", "--collection", "help", "--name", "Support", "--slug", "support",
		"--string", `[{"role":"system","content":"{{> tone}}"},{"role":"user","content":"{{question}}"}]`,
		"--parameters", `{"temperature":0}`, "--model", "gpt-4o-mini", "--virtual-key", "standin", "-o", "json")).json(t)
	promptID := prompt["id"].(string)
	assert.Regexp(t, `(?m)^`+promptID+`\s+support\s+Support\s+gpt-4o-mini\s+`+collection["id"].(string)+`\s+`+wsID+`\s+active\s`,
		ok(cw("prompts", "list", "--workspace", "support")).stdout)
	assert.Regexp(t, `(?m)^`+partial["id"].(string)+`\s+tone\s+Tone\s`, ok(cw("prompts", "partials", "list", "--workspace", "support")).stdout)
	assert.Regexp(t, `(?m)^prompts\s+1$`, ok(cw("collections", "get", "help", "--workspace", "support")).stdout)

	rendered := ok(cw("prompts", "render", "support", "--var", "tone=warm", "--var", "question=Where is my order?", "--api-key", appKey))
	assert.Regexp(t, `(?m)^model\s+gpt-4o-mini$`, rendered.stdout)
	assert.Regexp(t, `(?m)^system\s+Answer in a warm tone\.$`, rendered.stdout)
	assert.Regexp(t, `(?m)^user\s+Where is my order\?$`, rendered.stdout)

	answered := ok(cw("prompts", "run", "support", "--variables", `{"tone":"warm","question":"Where is my order?"}`,
		"--data", `{"max_tokens":20}`, "--metadata", "run=cli-prompt", "--api-key", appKey))
	assert.Equal(t, providertest.Reply+"\n", answered.stdout, "the answer's text")
	sent := standIn.LastRequest()
	assert.Equal(t, "Bearer sk-standin-provider-secret", sent.Header.Get("Authorization"), "through the version's managed provider")
	body := sent.JSON()
	assert.EqualValues(t, 20, body["max_tokens"])
	assert.Equal(t, "Answer in a warm tone.", body["messages"].([]any)[0].(map[string]any)["content"])
	streamed := ok(cw("prompts", "run", "support", "--var", "tone=calm", "--var", "question=And now?", "--stream", "--api-key", appKey))
	assert.Equal(t, providertest.StreamText(5)+"\n", streamed.stdout, "the streamed text")
	assert.Equal(t, true, standIn.LastRequest().JSON()["stream"])

	// Both runs are logged as the prompt's.
	var rows []any
	require.Eventually(t, func() bool {
		logs := cw("logs", "list", "--prompt", "support", "-o", "json", "--api-key", appKey)
		if logs.code != 0 {
			return false
		}
		rows, _ = logs.json(t)["data"].([]any)
		return len(rows) == 2
	}, 15*time.Second, 200*time.Millisecond, "the prompt's rows in the logs")
	for _, row := range rows {
		m := row.(map[string]any)["metrics"].(map[string]any)
		assert.Equal(t, promptID, m["prompt_id"])
		assert.EqualValues(t, 1, m["prompt_version"])
	}
	assert.Regexp(t, `(?m)^\S+\s+200\s+gpt-4o-mini\s+openai\s`, ok(cw("logs", "list", "--prompt", "support")).stdout)
	logID := rows[0].(map[string]any)["_id"].(string)
	assert.Regexp(t, `(?m)^prompt_id\s+`+promptID+`$`, ok(cw("logs", "get", logID)).stdout)

	// A second version, served once a label points at it or once it is the default.
	ok(cw("prompts", "update", "support", "--patch", "--model", "gpt-4o", "--version-description", "bigger"))
	versions := ok(cw("prompts", "versions", "support"))
	assert.Regexp(t, `(?m)^2\s+false\s+-\s+gpt-4o\s+bigger\s`, versions.stdout)
	assert.Regexp(t, `(?m)^1\s+true\s+-\s+gpt-4o-mini\s`, versions.stdout)
	ok(cw("labels", "create", "--name", "production", "--color", "#1f883d"))
	assert.Regexp(t, `(?m)^\S+\s+production\s+-\s+#1f883d\s+-\s+true\s+active$`, ok(cw("labels", "list")).stdout)
	ok(cw("prompts", "label", "support", "2", "production"))
	assert.Regexp(t, `(?m)^model\s+gpt-4o$`, ok(cw("prompts", "get", "support@production")).stdout)
	assert.Regexp(t, `(?m)^model\s+gpt-4o-mini$`, ok(cw("prompts", "get", "support")).stdout, "the default is still version 1")
	ok(cw("prompts", "make-default", "support", "2"))
	assert.Regexp(t, `(?m)^model\s+gpt-4o$`, ok(cw("prompts", "version", "support", "2")).stdout)
	assert.Regexp(t, `(?m)^default_version\s+2$`, ok(cw("prompts", "get", "support")).stdout)

	// The API's refusals: a collection holding a live prompt is not deleted; a missing
	// variable is named.
	refused := cw("collections", "delete", "help", "--workspace", "support")
	assert.Equal(t, 1, refused.code, refused.stdout)
	assert.Contains(t, refused.stderr, "HTTP 409")
	missing := cw("prompts", "render", "support", "--var", "tone=warm", "--api-key", appKey)
	assert.Equal(t, 1, missing.code)
	assert.Contains(t, missing.stderr, "param variables")
	assert.Contains(t, missing.stderr, "question")

	assert.Equal(t, 1, strings.Count(printed.String(), secret), "the first secret was printed by create, and never again")
	assert.Equal(t, 1, strings.Count(printed.String(), newSecret), "the rotated secret was printed once")
	assert.NotContains(t, printed.String(), gatewayKey, "the admin key was printed")
	assert.NotContains(t, printed.String(), "sk-standin-provider-secret", "the provider key was printed")
}
