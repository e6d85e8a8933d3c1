package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers/providertest"
)

const consoleAdminKey = "console-test-admin-key-00000000001"

// chromium finds the browser the console tests drive: CHROMIUM_PATH, else Debian's chromium
// (scripts/services.sh installs it when it can). Without one the test skips, or fails in CI.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium (chromium, or CHROMIUM_PATH): the console tests need one in CI (scripts/services.sh installs it as root)")
	}
	t.Skip("no Chromium (chromium, or CHROMIUM_PATH): skipping the console tests")
	return ""
}

// browser is a headless Chromium tab on the console, failing the test on any script error or
// Content-Security-Policy violation the page reports.
type browser struct {
	t      *testing.T
	ctx    context.Context
	origin string // http://127.0.0.1:port
	shots  string // CONSOLE_SCREENSHOTS: where PNGs of the pages go
	mu     sync.Mutex
	faults []string
}

func newBrowser(t *testing.T, origin string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("lang", "en-US"))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's sandbox refuses to run as root
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// chromedp logs the events of the CDP it does not know (the dialogs' top layer); not errors.
	quiet := chromedp.WithErrorf(func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !strings.Contains(msg, "unhandled node event") {
			t.Logf("chromedp: %s", msg)
		}
	})
	ctx, cancelTab := chromedp.NewContext(alloc, quiet)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, origin: origin, shots: os.Getenv("CONSOLE_SCREENSHOTS")}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.faults = append(b.faults, "script error: "+e.ExceptionDetails.Text+" "+describe(e.ExceptionDetails.Exception))
		case *cdplog.EventEntryAdded:
			if strings.Contains(e.Entry.Text, "Content Security Policy") || e.Entry.Source == cdplog.SourceJavascript {
				b.faults = append(b.faults, "console: "+e.Entry.Text)
			}
		}
	})
	// The browser reads times in UTC, as the test writes them.
	b.run(cdplog.Enable(), emulation.SetTimezoneOverride("UTC"))
	if b.shots != "" {
		require.NoError(t, os.MkdirAll(b.shots, 0o755))
	}
	return b
}

func describe(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	return o.Description
}

func (b *browser) run(actions ...chromedp.Action) {
	b.t.Helper()
	require.NoError(b.t, chromedp.Run(b.ctx, actions...))
}

// wait polls a JavaScript expression until it is true.
func (b *browser) wait(expr string) {
	b.t.Helper()
	require.NoError(b.t, chromedp.Run(b.ctx, chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(15*time.Second))), "waiting for %s", expr)
}

func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	b.run(chromedp.Evaluate(expr, out))
}

func (b *browser) text(expr string) string {
	b.t.Helper()
	var s string
	b.eval(expr, &s)
	return s
}

func (b *browser) truth(expr string) bool {
	b.t.Helper()
	var ok bool
	b.eval("!!("+expr+")", &ok)
	return ok
}

// page waits for the page whose title is h1.
func (b *browser) page(h1 string) {
	b.t.Helper()
	b.wait(fmt.Sprintf(`(document.querySelector('main h1') || {}).textContent === %q`, h1))
}

// nav follows a link of the navigation, as a reader would.
func (b *browser) nav(name, h1 string) {
	b.t.Helper()
	b.run(chromedp.Click(fmt.Sprintf(`//nav[@aria-label="Console"]//a[normalize-space(.)=%q]`, name), chromedp.BySearch))
	b.page(h1)
}

// shows reports whether s is anywhere in the page: its markup or a field's value.
func (b *browser) shows(s string) bool {
	b.t.Helper()
	return b.truth(fmt.Sprintf(`document.documentElement.outerHTML.includes(%[1]q) ||
		[...document.querySelectorAll('input, textarea')].some((e) => e.value.includes(%[1]q))`, s))
}

func (b *browser) activeIs(expr string) bool {
	b.t.Helper()
	return b.truth("document.activeElement === (" + expr + ")")
}

// focused waits until the element of expr has focus: pages move it after they render.
func (b *browser) focused(expr, why string) {
	b.t.Helper()
	err := chromedp.Run(b.ctx, chromedp.Poll("document.activeElement === ("+expr+")", nil, chromedp.WithPollingTimeout(5*time.Second)))
	assert.NoError(b.t, err, why)
}

// gone waits until s has left the page (it renders after the event that removes it).
func (b *browser) gone(s, why string) {
	b.t.Helper()
	err := chromedp.Run(b.ctx, chromedp.Poll(fmt.Sprintf(`!document.documentElement.outerHTML.includes(%[1]q) &&
		![...document.querySelectorAll('input, textarea')].some((e) => e.value.includes(%[1]q))`, s), nil, chromedp.WithPollingTimeout(5*time.Second)))
	assert.NoError(b.t, err, why)
}

// shot saves the page as a PNG when CONSOLE_SCREENSHOTS names a directory: the whole page,
// or with a dialog open, the window (the dialog's backdrop covers only the window).
func (b *browser) shot(name string) {
	b.t.Helper()
	if b.shots == "" {
		return
	}
	var png []byte
	if b.truth(`document.querySelector('dialog[open]')`) {
		b.run(chromedp.CaptureScreenshot(&png))
	} else {
		b.run(chromedp.FullScreenshot(&png, 100))
	}
	require.NoError(b.t, os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644))
}

func (b *browser) noFaults() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Empty(b.t, b.faults, "the console reported script errors or CSP violations")
}

// runMainAt runs the real Main on dir with its clock at now() (nil: the wall clock).
func runMainAt(t *testing.T, vars map[string]string, now func() time.Time) *Main {
	t.Helper()
	cfg, err := LoadConfig(env(vars))
	require.NoError(t, err)
	m := NewMain(cfg, io.Discard, "test")
	if now != nil {
		m.Now = now
	}
	require.NoError(t, m.Run(context.Background()))
	return m
}

// moveHistoryBack moves every event of an embedded event store back by d, as if the process
// that wrote them had run then. The event store stamps events with the wall clock, which no
// option moves; rewriting the file between two runs keeps that production code as it is.
func moveHistoryBack(t *testing.T, dataDir string, d time.Duration) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dataDir, "events.db"))
	require.NoError(t, err)
	defer db.Close()
	res, err := db.Exec(`UPDATE es_events SET recorded_at = recorded_at - ?`, d.Nanoseconds())
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Positive(t, n)
}

func put(t *testing.T, url, key string, body any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(raw))
	req.Header.Set("x-gateway-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", out)
}

// The web console in a real headless Chromium against the real binary: sign in with the
// keyboard; create a key and see it once (not after a reload), rotate it; a chat with it shows
// in the request logs (with its bodies) and in analytics, and its usage in a policy's bar; an
// audit record's diff; the API's validation error next to a form; no provider secret after
// it is saved; and a policy as it was yesterday, when it was created, before today's change.
func TestConsole(t *testing.T) {
	chromium(t) // skip before starting anything when there is no browser
	dir := t.TempDir()
	vars := map[string]string{"CAUSEWAY_ADDR": "127.0.0.1:0", "CAUSEWAY_DATA_DIR": dir, "CAUSEWAY_STARTUP_TIMEOUT": "5s",
		"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": consoleAdminKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1"}

	// Yesterday: a workspace and a rate-limit policy of 3 requests a minute, made by a process
	// whose clock was a day behind, whose events are then moved to yesterday.
	const day = 24 * time.Hour
	created := time.Now().Add(-day)
	before := runMainAt(t, vars, func() time.Time { return time.Now().Add(-day) })
	ws := post(t, before.URL()+"/workspaces", consoleAdminKey, map[string]any{"name": "Console team"})["id"].(string)
	policy := post(t, before.URL()+"/policies/rate-limits", consoleAdminKey, map[string]any{"workspace_id": ws, "type": "requests",
		"unit": "rpm", "value": 3, "conditions": []map[string]string{{"key": "workspace_id", "value": ws}},
		"group_by": []map[string]string{{"key": "api_key"}}})["id"].(string)
	require.NoError(t, before.Close())
	moveHistoryBack(t, dir, day)

	// Today: the policy goes to 10 requests a minute; a budget policy counts tokens by key.
	m := runMainAt(t, vars, nil)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	put(t, m.URL()+"/policies/rate-limits/"+policy, consoleAdminKey, map[string]any{"value": 10})
	post(t, m.URL()+"/policies/usage-limits", consoleAdminKey, map[string]any{"name": "Token budget", "workspace_id": ws,
		"type": "tokens", "credit_limit": 1000, "conditions": []map[string]string{{"key": "workspace_id", "value": ws}},
		"group_by": []map[string]string{{"key": "api_key"}}})
	post(t, m.URL()+"/guardrails", consoleAdminKey, map[string]any{"name": "No passwords", "workspace_id": ws,
		"checks":  []map[string]any{{"id": "default.regexMatch", "parameters": map[string]any{"rule": "password", "not": true}}},
		"actions": map[string]any{"deny": true}})
	oa := providertest.NewOpenAI(t)

	b := newBrowser(t, strings.TrimSuffix(m.URL(), "/v1"))

	t.Run("sign in with the keyboard", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.origin + "/"))
		b.wait(`location.pathname === '/console/' && !!document.querySelector('#api-key')`)
		b.shot("sign-in")
		b.run(chromedp.KeyEvent("\t"))
		require.True(t, b.activeIs(`document.querySelector('a.skip')`), "the first Tab reaches the skip link")
		for i := 0; i < 5 && !b.activeIs(`document.querySelector('#api-key')`); i++ {
			b.run(chromedp.KeyEvent("\t"))
		}
		require.True(t, b.activeIs(`document.querySelector('#api-key')`), "Tab reaches the key field")
		b.run(chromedp.KeyEvent(consoleAdminKey), chromedp.KeyEvent("\r"))
		b.page("Overview")
		b.focused(`document.querySelector('main h1')`, "the new page's title takes focus")
		assert.False(t, b.shows(consoleAdminKey), "the key is not on the page once signed in")
		assert.Equal(t, consoleAdminKey, b.text(`sessionStorage.getItem('causeway.console.apiKey')`), "kept in sessionStorage")
		assert.Equal(t, "0", b.text(`String(localStorage.length)`), "nothing in localStorage")
		assert.Equal(t, "", b.text(`document.cookie`), "no cookie")
		// The skip link moves focus to the page's title.
		b.run(chromedp.Focus(`a.skip`, chromedp.ByQuery), chromedp.KeyEvent("\r"))
		b.focused(`document.querySelector('main h1')`, "the skip link moves focus to the page")
		b.nav("Workspaces", "Workspaces")
		b.wait(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('Console team')`)
		b.shot("workspaces")
	})

	var key, rotated string
	t.Run("a created key is shown once", func(t *testing.T) {
		b.t = t
		b.nav("API keys", "API keys")
		b.wait(`!!document.querySelector('select[name=workspace_id] option[value="` + ws + `"]')`)
		b.run(chromedp.SendKeys(`input[name=name]`, "console-app", chromedp.ByQuery),
			chromedp.SetValue(`select[name=workspace_id]`, ws, chromedp.ByQuery),
			chromedp.Click(`input[name=scopes][value="logs.list"]`, chromedp.ByQuery),
			chromedp.Click(`input[name=scopes][value="logs.view"]`, chromedp.ByQuery),
			chromedp.Click(`input[name=scopes][value="analytics.view"]`, chromedp.ByQuery),
			chromedp.Click(`//button[normalize-space(.)="Create key"]`, chromedp.BySearch))
		b.wait(`document.querySelector('dialog[open] #secret-value') && document.querySelector('#secret-value').value.startsWith('cw-')`)
		key = b.text(`document.querySelector('#secret-value').value`)
		assert.Contains(t, b.text(`document.querySelector('dialog[open]').textContent`), "you will not see it again")
		assert.True(t, b.truth(`[...document.querySelectorAll('dialog[open] button')].some((x) => x.textContent.trim() === 'Copy')`), "a copy button")
		b.shot("api-key-once")
		// Tab stays within the dialog.
		for i := 0; i < 6; i++ {
			b.run(chromedp.KeyEvent("\t"))
			require.True(t, b.truth(`document.querySelector('dialog[open]').contains(document.activeElement)`), "focus left the dialog")
		}
		b.run(chromedp.KeyEvent(kb.Escape))
		b.wait(`!document.querySelector('dialog[open]')`)
		b.focused(`[...document.querySelectorAll('button')].find((x) => x.textContent.trim() === 'Create key')`,
			"focus returns to what opened the dialog")
		b.gone(key, "the key leaves the page with the dialog")
		b.wait(`document.querySelector('main table').textContent.includes('console-app')`)
		b.run(chromedp.Reload())
		b.page("API keys")
		b.wait(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('console-app')`)
		assert.False(t, b.shows(key), "not shown after a reload")
		assert.True(t, b.shows(key[:7]+"****"+key[len(key)-4:]), "only masked")
	})

	t.Run("rotate it", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Click(`//tr[th[normalize-space(.)="console-app"]]//button[starts-with(normalize-space(.), "Rotate")]`, chromedp.BySearch))
		b.wait(`document.querySelector('dialog[open]') && document.querySelector('dialog[open]').textContent.includes('Rotate “console-app”')`)
		b.run(chromedp.Click(`//dialog[@open]//button[normalize-space(.)="Rotate key"]`, chromedp.BySearch))
		b.wait(`document.querySelector('dialog[open] #secret-value') && document.querySelector('#secret-value').value.startsWith('cw-')`)
		rotated = b.text(`document.querySelector('#secret-value').value`)
		require.NotEqual(t, key, rotated)
		assert.Contains(t, b.text(`document.querySelector('dialog[open]').textContent`), "keeps working until")
		b.run(chromedp.Click(`//dialog[@open]//button[normalize-space(.)="I have copied it: close"]`, chromedp.BySearch))
		b.wait(`!document.querySelector('dialog[open]')`)
		b.gone(rotated, "the new key leaves the page with the dialog")
		assert.False(t, b.shows(key))
	})

	t.Run("a chat with it in the logs and analytics", func(t *testing.T) {
		b.t = t
		req, _ := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions",
			strings.NewReader(`{"model":"test-model","max_tokens":20,"messages":[{"role":"user","content":"Hello from the console test"}]}`))
		req.Header.Set("x-gateway-api-key", rotated)
		req.Header.Set("x-gateway-provider", "openai")
		req.Header.Set("x-gateway-custom-host", oa.BaseURL())
		req.Header.Set("x-gateway-trace-id", "console-trace-1")
		req.Header.Set("Authorization", "Bearer sk-provider-key")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

		b.nav("Logs", "Request logs")
		// Logs are stored in batches, within a second: refresh until the row is there.
		deadline := time.Now().Add(15 * time.Second)
		for !b.truth(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('console-trace-1')`) {
			require.True(t, time.Now().Before(deadline), "the chat's log never showed")
			time.Sleep(300 * time.Millisecond)
			b.run(chromedp.Click(`//button[normalize-space(.)="Refresh"]`, chromedp.BySearch))
			b.wait(`!document.querySelector('main .loading')`)
		}
		b.shot("logs")
		b.run(chromedp.Click(`//tr[td[contains(., "console-trace-1")]]//th//a`, chromedp.BySearch))
		b.page("Request log")
		b.wait(`document.querySelectorAll('pre.json').length >= 2`)
		reqBody := b.text(`document.querySelector('pre.json[aria-label="Request body, as JSON"]').textContent`)
		assert.Contains(t, reqBody, "\"messages\": [\n", "the body formatted as JSON")
		assert.Contains(t, reqBody, "Hello from the console test")
		assert.Contains(t, b.text(`document.querySelector('pre.json[aria-label="Response body, as JSON"]').textContent`), "\"choices\": [")
		assert.False(t, b.shows(rotated), "the key that made the request is not in its log")
		b.shot("log-detail")

		b.nav("Analytics", "Analytics")
		b.wait(`document.querySelector('#sum-requests') && document.querySelector('#sum-requests').textContent === '1'`)
		b.wait(`[...document.querySelectorAll('main table th[scope=row]')].some((x) => x.textContent === 'test-model')`)
		assert.Contains(t, b.text(`document.querySelector('figure.chart svg[role=img]').getAttribute('aria-label')`), "Requests")
		b.shot("analytics")
		// Filters: another model has no traffic; the address keeps the filter.
		b.run(chromedp.SendKeys(`input[name=models]`, "other-model", chromedp.ByQuery),
			chromedp.Click(`//button[normalize-space(.)="Apply filters"]`, chromedp.BySearch))
		b.wait(`location.search.includes('models=other-model') && document.querySelector('#sum-requests') && document.querySelector('#sum-requests').textContent === '0'`)

		b.nav("Policies", "Policies")
		b.wait(`[...document.querySelectorAll('[role=meter]')].some((x) => Number(x.getAttribute('aria-valuenow')) > 0)`)
		assert.Contains(t, b.text(`document.querySelector('[role=meter]').getAttribute('aria-valuetext')`), "of 1,000")
		assert.Equal(t, "key “console-app”", b.text(`document.querySelector('[role=meter]').getAttribute('aria-label')`), "the entity named by its key")
		b.shot("policies")
	})

	t.Run("revoke it", func(t *testing.T) {
		b.t = t
		b.nav("API keys", "API keys")
		b.run(chromedp.Click(`//tr[th[normalize-space(.)="console-app"]]//button[starts-with(normalize-space(.), "Revoke")]`, chromedp.BySearch))
		b.wait(`document.querySelector('dialog[open]') && document.querySelector('dialog[open]').textContent.includes('Revoke “console-app”')`)
		b.run(chromedp.Click(`//dialog[@open]//button[normalize-space(.)="Revoke key"]`, chromedp.BySearch))
		b.wait(`!document.querySelector('dialog[open]') && !document.querySelector('main table').textContent.includes('console-app')`)
		req, _ := http.NewRequest(http.MethodGet, m.URL()+"/logs", nil)
		req.Header.Set("x-gateway-api-key", rotated)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a revoked key is refused")
	})

	t.Run("an audit record's diff", func(t *testing.T) {
		b.t = t
		b.nav("Audit log", "Audit log")
		b.run(chromedp.SetValue(`select[name=resource_type]`, "rate_limit_policy", chromedp.ByQuery),
			chromedp.Click(`//button[normalize-space(.)="Apply filters"]`, chromedp.BySearch))
		b.wait(`location.search.includes('resource_type=rate_limit_policy') && document.querySelector('main table') &&
			document.querySelector('main table').textContent.includes('RateLimitPolicyUpdated')`)
		b.run(chromedp.Click(`//tr[th[normalize-space(.)="RateLimitPolicyUpdated"]]//a`, chromedp.BySearch))
		b.page("Audit record: RateLimitPolicyUpdated")
		b.wait(`!!document.querySelector('table.diff-table')`)
		row := `[...document.querySelectorAll('table.diff-table tr')].find((r) => r.querySelector('th code') && r.querySelector('th code').textContent === 'value')`
		assert.Equal(t, "changed", b.text(row+`.querySelector('.badge').textContent`))
		assert.Equal(t, "3", b.text(row+`.querySelector('td.before').textContent`))
		assert.Equal(t, "10", b.text(row+`.querySelector('td.after').textContent`))
		b.shot("audit-diff")
	})

	t.Run("the API's validation error next to the form", func(t *testing.T) {
		b.t = t
		b.nav("Configs", "Configs")
		b.wait(`!!document.querySelector('select[name=workspace_id] option[value="` + ws + `"]')`)
		b.run(chromedp.SendKeys(`input[name=name]`, "broken", chromedp.ByQuery),
			chromedp.SetValue(`textarea[name=config]`, `{"strategy":{"mode":"sideways"},"targets":[{"provider":"openai"}]}`, chromedp.ByQuery),
			chromedp.Click(`//button[normalize-space(.)="Create config"]`, chromedp.BySearch))
		b.wait(`!!document.querySelector('textarea[name=config][aria-invalid=true]')`)
		errID := b.text(`document.querySelector('textarea[name=config]').getAttribute('aria-describedby').split(' ').pop()`)
		assert.Contains(t, b.text(`document.getElementById('`+errID+`').textContent`), "strategy.mode must be single, fallback or loadbalance")
		assert.Contains(t, b.text(`document.querySelector('main [role=alert]').textContent`), "config.strategy.mode", "announced, naming the field")
		b.focused(`document.querySelector('textarea[name=config]')`, "focus goes to the field")
		b.shot("configs-error")
	})

	t.Run("no provider secret after it is saved", func(t *testing.T) {
		b.t = t
		const secret = "sk-console-secret-0123456789"
		b.nav("Providers", "Providers")
		form := `//section[@aria-label="Add an integration"]`
		b.run(chromedp.SendKeys(form+`//input[@name="name"]`, "Console OpenAI", chromedp.BySearch),
			chromedp.SendKeys(form+`//input[@name="slug"]`, "console-openai", chromedp.BySearch),
			chromedp.SendKeys(form+`//input[@name="key"]`, secret, chromedp.BySearch),
			chromedp.Click(form+`//button[normalize-space(.)="Add integration"]`, chromedp.BySearch))
		b.wait(`[...document.querySelectorAll('main table code')].some((x) => x.textContent === 'console-openai')`)
		assert.False(t, b.shows(secret), "the provider key is not on the page once saved")
		b.run(chromedp.Reload())
		b.page("Providers")
		b.wait(`[...document.querySelectorAll('main table code')].some((x) => x.textContent === 'console-openai')`)
		assert.False(t, b.shows(secret))
		b.shot("providers")
		b.nav("Guardrails", "Guardrails")
		b.wait(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('No passwords')`)
		b.shot("guardrails")
		b.run(chromedp.Click(`//a[normalize-space(.)="No passwords"]`, chromedp.BySearch))
		b.page("Guardrail No passwords")
		b.wait(`document.querySelector('pre.json') && document.querySelector('pre.json').textContent.includes('default.regexMatch')`)
		b.run(chromedp.SetValue(`textarea[name=checks]`, `[{"id":"default.noSuchCheck"}]`, chromedp.ByQuery),
			chromedp.Click(`//button[normalize-space(.)="Save a new version"]`, chromedp.BySearch))
		b.wait(`!!document.querySelector('textarea[name=checks][aria-invalid=true]')`)
		assert.Contains(t, b.text(`document.querySelector('main [role=alert]').textContent`), "checks[0].id")
	})

	t.Run("a policy as of yesterday", func(t *testing.T) {
		b.t = t
		b.nav("Policies", "Policies")
		b.run(chromedp.Click(`//a[starts-with(normalize-space(.), "Policy `+policy[:8]+`")]`, chromedp.BySearch))
		b.page("Rate-limit policy " + policy[:8])
		b.wait(`document.querySelector('.limit') && document.querySelector('.limit').textContent === '10 requests per minute'`)
		assert.False(t, b.truth(`document.querySelector('.historical')`))

		// A minute after it was created, yesterday, typed as a reader would and sent with Enter.
		at := created.Add(time.Minute).UTC()
		b.run(chromedp.SetValue(`#as-of`, at.Format("2006-01-02T15:04:05"), chromedp.ByQuery),
			chromedp.Focus(`#as-of`, chromedp.ByQuery), chromedp.KeyEvent("\r"))
		b.wait(`location.search.includes('as_of=') && document.querySelector('.limit') && document.querySelector('.limit').textContent === '3 requests per minute'`)
		assert.Contains(t, b.text(`document.querySelector('.historical[role=status]').textContent`), "Historical view")
		assert.True(t, b.truth(`document.querySelector('header.top.past')`), "the frame marks the past")
		assert.Contains(t, b.text(`document.querySelector('main').textContent`), "Writes are off in a historical view")
		assert.False(t, b.truth(`[...document.querySelectorAll('main button')].some((x) => x.textContent.trim() === 'Save changes')`))
		asOf, err := time.Parse(time.RFC3339, b.text(`new URLSearchParams(location.search).get('as_of')`))
		require.NoError(t, err)
		assert.WithinDuration(t, at, asOf, time.Second)
		b.shot("policy-as-of-yesterday")

		// The as_of rides along: the list, too, is yesterday's.
		b.nav("Policies", "Policies")
		assert.Contains(t, b.text(`location.search`), "as_of=")
		b.wait(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('3 requests per minute')`)
		assert.False(t, b.truth(`document.querySelector('main').textContent.includes('Token budget')`), "created today: not there yesterday")

		b.run(chromedp.Click(`//div[contains(@class,"historical")]//button`, chromedp.BySearch))
		b.wait(`!location.search.includes('as_of') && document.querySelector('main table') && document.querySelector('main table').textContent.includes('10 requests per minute')`)
		assert.False(t, b.truth(`document.querySelector('.historical')`))
	})

	t.Run("sign out", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Click(`//button[normalize-space(.)="Sign out"]`, chromedp.BySearch))
		b.wait(`!!document.querySelector('#api-key')`)
		assert.Equal(t, "", b.text(`sessionStorage.getItem('causeway.console.apiKey') || ''`))
	})
	b.t = t
	b.noFaults()
}

func TestConsoleConfig(t *testing.T) {
	for value, on := range map[string]bool{"": true, "on": true, "off": false, "OFF": false} {
		c, err := LoadConfig(env(map[string]string{"CAUSEWAY_CONSOLE": value}))
		require.NoError(t, err)
		assert.Equal(t, on, c.Console, "CAUSEWAY_CONSOLE=%q", value)
	}
	_, err := LoadConfig(env(map[string]string{"CAUSEWAY_CONSOLE": "sometimes"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `CAUSEWAY_CONSOLE="sometimes": must be ON or OFF`)
}

// CAUSEWAY_CONSOLE=off: no console, and / is the API's 404 again; on, / goes to the console.
func TestConsoleOff(t *testing.T) {
	m := startMain(t, map[string]string{"CAUSEWAY_CONSOLE": "off"})
	origin := strings.TrimSuffix(m.URL(), "/v1")
	for _, path := range []string{"/", "/console/", "/console/assets/js/main.js"} {
		resp, err := http.Get(origin + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	on := startMain(t, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(strings.TrimSuffix(on.URL(), "/v1") + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusFound, resp.StatusCode)
	assert.Equal(t, "/console/", resp.Header.Get("Location"))
	// Another method is the API's 405, in its error shape.
	resp, err = http.Post(strings.TrimSuffix(on.URL(), "/v1")+"/console/api-keys", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "not_allowed", body.Error.Code)
}
