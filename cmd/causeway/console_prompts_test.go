package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// signIn signs the browser in with key, typed into the sign-in form.
func (b *browser) signIn(key string) {
	b.t.Helper()
	b.run(chromedp.Navigate(b.origin + "/"))
	b.wait(`location.pathname === '/console/' && !!document.querySelector('#api-key')`)
	b.run(chromedp.SendKeys(`#api-key`, key, chromedp.ByQuery), chromedp.KeyEvent("\r"))
	b.page("Overview")
}

// click clicks the first element the XPath names.
func (b *browser) click(xpath string) {
	b.t.Helper()
	b.run(chromedp.Click(xpath, chromedp.BySearch))
}

// fieldError is the error shown beside the form field of selector (its aria-describedby).
func (b *browser) fieldError(selector string) string {
	b.t.Helper()
	b.wait(fmt.Sprintf(`!!document.querySelector(%q + '[aria-invalid=true]')`, selector))
	return b.text(fmt.Sprintf(`document.getElementById(document.querySelector(%q).getAttribute('aria-describedby').split(' ').pop()).textContent`, selector))
}

// The console's pages for what came after it, in a real headless Chromium against the real
// binary: a webhook made in the console, its signing secret shown once (and the secret it
// showed is the one the receiver's calls verify with), rotated and shown once again, changed
// and deleted; a key rotation's notification with its delivery to that webhook; a workspace's
// answer cache purged by namespace; and prompts: a collection, a partial, a prompt refused for
// its template beside the field, rendered without a variable (the 400 beside the variables)
// and with all (the messages), a new version made the default, a label pointed at a version,
// and the prompt as it was before, read-only.
func TestConsolePromptsAndWebhooks(t *testing.T) {
	chromium(t) // skip before starting anything when there is no browser
	rc := newReceiver(t)
	m := startMain(t, notifyEnv())
	c := newCached(t, m)
	workspace := "Governed " + t.Name()
	rotating, _ := c.governed.key(map[string]any{"name": "rotating-app"})
	c.admin(http.MethodPost, "/providers", map[string]any{"name": "Console LLM", "slug": "console-llm", "workspace_id": c.ws,
		"ai_provider_id": "openai", "key": "sk-console-llm-0123456789"})

	b := newBrowser(t, strings.TrimSuffix(m.URL(), "/v1"))
	b.signIn(gatewayKey)

	var hook, secret string
	t.Run("a webhook's signing secret is shown once", func(t *testing.T) {
		b.t = t
		b.nav("Webhooks", "Webhooks")
		b.wait(`!!document.querySelector('main .empty')`)
		form := `//section[@aria-label="Create a webhook"]`
		b.run(chromedp.SendKeys(form+`//input[@name="name"]`, "Ops hook", chromedp.BySearch),
			chromedp.SendKeys(form+`//input[@name="url"]`, "ftp://"+strings.TrimPrefix(rc.srv.URL, "http://")+"/hooks", chromedp.BySearch),
			chromedp.Click(`input[name=kinds][value="`+domain.NotifyKeyRotated+`"]`, chromedp.ByQuery))
		b.click(form + `//button[normalize-space(.)="Create webhook"]`)
		assert.Contains(t, b.fieldError(`input[name=url]`), "url must be an http or https URL", "the API's refusal beside the field")
		b.focused(`document.querySelector('input[name=url]')`, "focus goes to the field the API named")
		b.run(chromedp.SetValue(form+`//input[@name="url"]`, rc.srv.URL+"/hooks", chromedp.BySearch))
		b.click(form + `//button[normalize-space(.)="Create webhook"]`)
		b.wait(`document.querySelector('dialog[open] #secret-value') && document.querySelector('#secret-value').value.startsWith('whsec_')`)
		secret = b.text(`document.querySelector('#secret-value').value`)
		dialog := b.text(`document.querySelector('dialog[open]').textContent`)
		assert.Contains(t, dialog, "Webhook “Ops hook” created")
		assert.Contains(t, dialog, "you will not see it again")
		assert.Equal(t, "Signing secret", b.text(`document.querySelector('dialog[open] label[for=secret-value]').textContent`))
		b.shot("webhook-secret-once")
		b.click(`//dialog[@open]//button[normalize-space(.)="I have copied it: close"]`)
		b.wait(`!document.querySelector('dialog[open]')`)
		b.gone(secret, "the secret leaves the page with the dialog")
		b.wait(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('Ops hook')`)
		b.run(chromedp.Reload())
		b.page("Webhooks")
		b.wait(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('Ops hook')`)
		assert.False(t, b.shows(secret), "not shown after a reload")
		assert.Contains(t, b.text(`document.querySelector('main table tbody tr').textContent`), domain.NotifyKeyRotated)
		b.shot("webhooks")
		hook = b.text(`new URL([...document.querySelectorAll('main table a')].find((a) => a.textContent === 'Ops hook').href).pathname.split('/').pop()`)
		rc.set(secret, 0) // the receiver verifies every call with the secret the console showed
	})

	t.Run("a key rotation's notification and its delivery", func(t *testing.T) {
		b.t = t
		c.admin(http.MethodPost, "/api-keys/"+rotating+"/rotate", map[string]any{})
		id := c.notification(domain.NotifyKeyRotated, rotating)
		c.settled(id)
		b.nav("Notifications", "Notifications")
		row := `[...document.querySelectorAll('main table tbody tr')].find((r) => r.textContent.includes('rotating-app'))`
		b.wait(row + ` && ` + row + `.textContent.includes('delivered') && ` + row + `.textContent.includes('Ops hook')`)
		line := b.text(row + `.querySelector('ul.deliveries li').textContent`)
		assert.Regexp(t, `^\s*webhook Ops hook\s+delivered · 1 attempt\s*$`, line, "its delivery: channel, the webhook by name, status, attempts")
		assert.True(t, b.truth(row+`.querySelector('ul.deliveries a').getAttribute('href') === '/console/webhooks/`+hook+`'`))
		b.shot("notifications")

		// The kind filter: no budget was exhausted.
		b.run(chromedp.SetValue(`select[name=kind]`, domain.NotifyUsageExhausted, chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Apply filter"]`)
		b.wait(`location.search.includes('kind=usage.exhausted') && document.querySelector('main .empty') && document.querySelector('main .empty').textContent.includes('of this kind')`)
		b.run(chromedp.SetValue(`select[name=kind]`, domain.NotifyKeyRotated, chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Apply filter"]`)
		b.wait(`location.search.includes('kind=api_key.rotated') && document.querySelector('main table') && document.querySelector('main table').textContent.includes('rotating-app')`)

		b.click(`//main//table//a[contains(., "rotating-app")]`)
		b.page("Notification: API key rotating-app was rotated")
		b.wait(`document.querySelector('table.deliveries-table tbody tr') && document.querySelector('table.deliveries-table').textContent.includes('Ops hook')`)
		var cells []string
		b.eval(`[...[...document.querySelectorAll('table.deliveries-table tbody tr')].find((r) => r.textContent.includes('Ops hook')).children].map((c) => c.textContent.trim())`, &cells)
		require.Len(t, cells, 7, "channel, target, status, attempts, last error, next attempt, delivered")
		assert.Equal(t, []string{"webhook", "Ops hook", "delivered", "1", "—", "—"}, cells[:6])
		assert.NotEqual(t, "—", cells[6], "when it was delivered")
		assert.Equal(t, "/console/notifications/"+id, b.text(`location.pathname`))
		b.shot("notification-deliveries")
		calls := rc.of(id)
		require.Len(t, calls, 1)
		assert.True(t, calls[0].Valid, "signed with the secret the console showed")
	})

	t.Run("change, rotate and delete the webhook", func(t *testing.T) {
		b.t = t
		b.nav("Webhooks", "Webhooks")
		b.click(`//main//table//a[normalize-space(.)="Ops hook"]`)
		b.page("Webhook Ops hook")
		b.wait(`!!document.querySelector('input[name=disabled]')`)
		b.run(chromedp.Click(`input[name=disabled]`, chromedp.ByQuery),
			chromedp.Click(`input[name=kinds][value="`+domain.NotifyUsageExhausted+`"]`, chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Save changes"]`)
		b.wait(`document.querySelector('dl.facts').textContent.includes('disabled') && document.querySelector('dl.facts').textContent.includes('usage.exhausted')`)
		got := c.admin(http.MethodGet, "/webhooks/"+hook, nil)
		assert.Equal(t, true, got["disabled"])
		assert.ElementsMatch(t, []any{domain.NotifyKeyRotated, domain.NotifyUsageExhausted}, got["kinds"])

		b.click(`//button[normalize-space(.)="Rotate secret"]`)
		b.wait(`document.querySelector('dialog[open]') && document.querySelector('dialog[open]').textContent.includes('Rotate the secret of “Ops hook”')`)
		b.click(`//dialog[@open]//button[normalize-space(.)="Rotate secret"]`)
		b.wait(`document.querySelector('dialog[open] #secret-value') && document.querySelector('#secret-value').value.startsWith('whsec_')`)
		again := b.text(`document.querySelector('#secret-value').value`)
		require.NotEqual(t, secret, again)
		assert.Contains(t, b.text(`document.querySelector('dialog[open]').textContent`), "you will not see it again")
		b.click(`//dialog[@open]//button[normalize-space(.)="I have copied it: close"]`)
		b.wait(`!document.querySelector('dialog[open]')`)
		b.gone(again, "the new secret leaves the page with the dialog")
		b.wait(`document.querySelector('#history-h + table') && document.querySelector('#history-h + table').textContent.includes('WebhookSecretRotated')`)
		assert.Contains(t, b.text(`document.querySelector('#history-h + table').textContent`), "WebhookUpdated")
		assert.False(t, b.shows(secret) || b.shows(again))
		b.shot("webhook")

		b.click(`//button[normalize-space(.)="Delete webhook"]`)
		b.wait(`document.querySelector('dialog[open]') && document.querySelector('dialog[open]').textContent.includes('Delete “Ops hook”')`)
		b.click(`//dialog[@open]//button[normalize-space(.)="Delete webhook"]`)
		b.page("Webhooks")
		b.wait(`!!document.querySelector('main .empty')`)
		status, _ := c.adminStatus(http.MethodGet, "/webhooks/"+hook, nil)
		assert.Equal(t, http.StatusNotFound, status)
	})

	t.Run("purge a workspace's answer cache", func(t *testing.T) {
		b.t = t
		cfg := c.config(`{"mode":"simple","max_age":600}`)
		ns := map[string]string{"x-gateway-cache-namespace": "support"}
		c.expectStatus(cfg, cacheChat, ns, "MISS")
		require.Eventually(t, func() bool { // the answer is stored off the request path
			resp, _ := c.call(c.key, "/chat/completions", cfg, cacheChat, ns)
			return resp.Header.Get("x-gateway-cache-status") == "HIT"
		}, 10*time.Second, 50*time.Millisecond)

		b.nav("Workspaces", "Workspaces")
		b.click(`//main//table//a[normalize-space(.)="` + workspace + `"]`)
		b.page("Workspace " + workspace)
		b.click(`//button[normalize-space(.)="Purge answer cache"]`)
		b.wait(`document.querySelector('dialog[open]') && document.activeElement === document.querySelector('dialog[open] input[name=namespace]')`)
		b.run(chromedp.SendKeys(`dialog[open] input[name=namespace]`, strings.Repeat("n", 129), chromedp.ByQuery))
		b.click(`//dialog[@open]//button[normalize-space(.)="Purge"]`)
		assert.Contains(t, b.fieldError(`dialog[open] input[name=namespace]`), "namespace must be at most 128 characters")
		b.shot("workspace-cache-purge")
		b.run(chromedp.SetValue(`dialog[open] input[name=namespace]`, "support", chromedp.ByQuery))
		b.click(`//dialog[@open]//button[normalize-space(.)="Purge"]`)
		b.wait(`!document.querySelector('dialog[open]') && document.querySelector('p.purged').textContent !== ''`)
		assert.Equal(t, "Purged 1 entry from the namespace “support”.", b.text(`document.querySelector('p.purged').textContent`))
		c.expectStatus(cfg, cacheChat, ns, "MISS")
	})

	var promptID string
	var firstVersion time.Time
	t.Run("prompts: a collection, a partial, a prompt, rendered", func(t *testing.T) {
		b.t = t
		b.nav("Prompts", "Prompts")
		colForm := `//section[@aria-label="Create a collection"]`
		b.wait(`!!document.querySelector('select[name=workspace_id] option[value="` + c.ws + `"]')`)
		b.run(chromedp.SetValue(colForm+`//select[@name="workspace_id"]`, c.ws, chromedp.BySearch),
			chromedp.SendKeys(colForm+`//input[@name="name"]`, "Support desk", chromedp.BySearch),
			chromedp.SendKeys(colForm+`//input[@name="slug"]`, "support-desk", chromedp.BySearch))
		b.click(colForm + `//button[normalize-space(.)="Create collection"]`)
		b.wait(`[...document.querySelectorAll('main table code')].some((x) => x.textContent === 'support-desk')`)

		b.click(`//nav[@aria-label="Prompts"]//a[normalize-space(.)="Partials"]`)
		b.page("Prompt partials")
		b.wait(`!!document.querySelector('select[name=workspace_id] option[value="` + c.ws + `"]')`)
		b.run(chromedp.SetValue(`select[name=workspace_id]`, c.ws, chromedp.ByQuery),
			chromedp.SendKeys(`input[name=name]`, "Tone", chromedp.ByQuery),
			chromedp.SendKeys(`input[name=slug]`, "tone", chromedp.ByQuery),
			chromedp.SetValue(`textarea[name=string]`, "Answer in a {{tone}} tone.", chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Create partial"]`)
		b.wait(`[...document.querySelectorAll('main table code')].some((x) => x.textContent === 'tone')`)
		b.shot("prompt-partials")

		b.click(`//nav[@aria-label="Prompts"]//a[normalize-space(.)="Prompts and collections"]`)
		b.page("Prompts")
		form := `//section[@aria-label="Create a prompt"]`
		b.wait(`[...document.querySelectorAll('select[name=collection_id] option')].some((o) => o.textContent.startsWith('Support desk'))`)
		b.run(chromedp.SendKeys(form+`//input[@name="name"]`, "Support answer", chromedp.BySearch),
			chromedp.SendKeys(form+`//input[@name="slug"]`, "support-answer", chromedp.BySearch),
			chromedp.SendKeys(form+`//input[@name="model"]`, "test-model", chromedp.BySearch),
			chromedp.SendKeys(form+`//input[@name="virtual_key"]`, "console-llm", chromedp.BySearch),
			chromedp.SetValue(form+`//textarea[@name="parameters"]`, `{"temperature": 0.2}`, chromedp.BySearch),
			chromedp.SetValue(form+`//textarea[@name="string"]`, `[{"role":"system","content":"{{#open}}{{> tone}}"},{"role":"user","content":"{{question}}"}]`, chromedp.BySearch))
		b.eval(`(() => { const s = document.querySelector('select[name=collection_id]'); s.value = [...s.options].find((o) => o.textContent.startsWith('Support desk')).value; })()`, nil)
		b.click(form + `//button[normalize-space(.)="Create prompt"]`)
		assert.Contains(t, b.fieldError(`textarea[name=string]`), "string[0].content", "a template that does not parse is refused beside it")
		b.run(chromedp.SetValue(form+`//textarea[@name="string"]`, `[{"role":"system","content":"{{> tone}}"},{"role":"user","content":"{{question}}"}]`, chromedp.BySearch))
		b.click(form + `//button[normalize-space(.)="Create prompt"]`)
		b.page("Prompt Support answer")
		b.focused(`document.querySelector('main h1')`, "the new prompt's page takes focus")
		promptID = b.text(`location.pathname.split('/').pop()`)
		firstVersion = time.Now()

		// Rendered without a variable the partial needs: the gateway's 400 beside the variables.
		b.wait(`!!document.querySelector('textarea[name=variables]')`)
		assert.JSONEq(t, `{"question":""}`, b.text(`document.querySelector('textarea[name=variables]').value`), "starts from the template's variables")
		b.run(chromedp.SetValue(`textarea[name=variables]`, `{"question":"Where is my order?"}`, chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Render"]`)
		assert.Contains(t, b.fieldError(`textarea[name=variables]`), "tone")
		assert.Contains(t, b.text(`document.querySelector('section[aria-labelledby=render-h] [role=alert]').textContent`), "variables")
		b.shot("prompt-render-error")

		b.run(chromedp.SetValue(`textarea[name=variables]`, `{"question":"Where is my order?","tone":"warm"}`, chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Render"]`)
		b.wait(`document.querySelectorAll('ol.messages li').length === 2`)
		assert.False(t, b.truth(`document.querySelector('textarea[name=variables][aria-invalid=true]')`), "the error is gone")
		roles := b.text(`[...document.querySelectorAll('ol.messages .role')].map((x) => x.textContent).join(',')`)
		assert.Equal(t, "system,user", roles)
		contents := b.text(`[...document.querySelectorAll('ol.messages pre.content')].map((x) => x.textContent).join('|')`)
		assert.Equal(t, "Answer in a warm tone.|Where is my order?", contents)
		assert.Contains(t, b.text(`document.querySelector('p.rendered-status').textContent`), "2 messages for test-model")
		b.shot("prompt-render")
	})

	t.Run("a new version made the default, a label pointed at the first", func(t *testing.T) {
		b.t = t
		b.nav("Prompts", "Prompts")
		b.wait(`[...document.querySelectorAll('main table th a')].some((a) => a.textContent === 'Support answer')`)
		b.click(`//main//table//a[starts-with(normalize-space(.), "Support desk")]`)
		b.wait(`location.search.includes('collection_id=') && document.querySelector('#prompts-h').textContent === 'Prompts in “Support desk”' &&
			[...document.querySelectorAll('main table th a')].some((a) => a.textContent === 'Support answer')`)
		b.shot("prompts")
		b.click(`//nav[@aria-label="Prompts"]//a[normalize-space(.)="Labels"]`)
		b.page("Prompt labels")
		b.run(chromedp.SendKeys(`input[name=name]`, "production", chromedp.ByQuery),
			chromedp.SendKeys(`input[name=color_code]`, "teal", chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Create label"]`)
		assert.Contains(t, b.fieldError(`input[name=color_code]`), "color_code must be a hex colour")
		b.run(chromedp.SetValue(`input[name=color_code]`, "#1f8a70", chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Create label"]`)
		b.wait(`document.querySelector('main table') && document.querySelector('main table').textContent.includes('production')`)
		b.shot("prompt-labels")

		b.run(chromedp.Navigate(b.origin + "/console/prompts/" + promptID))
		b.page("Prompt Support answer")
		edit := `//section[@aria-label="Save a new version"]`
		b.wait(`!!document.querySelector('section[aria-label="Save a new version"] input[name=model]')`)
		b.run(chromedp.SetValue(edit+`//input[@name="model"]`, "test-model-2", chromedp.BySearch),
			chromedp.SendKeys(edit+`//input[@name="version_description"]`, "A newer model", chromedp.BySearch))
		b.click(edit + `//button[normalize-space(.)="Save a new version"]`)
		b.wait(`document.querySelectorAll('table.versions-table tbody tr').length === 2`)
		version := func(n int) string {
			return fmt.Sprintf(`[...document.querySelectorAll('table.versions-table tbody tr')].find((r) => r.querySelector('th').textContent === '%d')`, n)
		}
		assert.Contains(t, b.text(version(2)+`.textContent`), "test-model-2")
		assert.Contains(t, b.text(version(1)+`.textContent`), "default", "a new version is not the default until it is made so")
		b.click(`//table[contains(@class,"versions-table")]//tr[th[normalize-space(.)="2"]]//button[starts-with(normalize-space(.), "Make default")]`)
		b.wait(version(2) + `.textContent.includes('default') && document.querySelector('p.acted').textContent.includes('Version 2 is now the default')`)
		assert.Equal(t, float64(2), c.admin(http.MethodGet, "/prompts/"+promptID, nil)["default_version"])

		label := `//section[@aria-label="Point a label at a version"]`
		b.wait(`[...document.querySelectorAll('section[aria-label="Point a label at a version"] select[name=label_id] option')].some((o) => o.textContent === 'production')`)
		b.run(chromedp.SetValue(label+`//select[@name="target_version"]`, "1", chromedp.BySearch))
		b.click(label + `//button[normalize-space(.)="Set label"]`)
		b.wait(version(1) + `.textContent.includes('production')`)
		assert.Equal(t, "test-model", c.admin(http.MethodGet, "/prompts/"+promptID+"@production", nil)["model"])

		// Rendered by its label: the first version's model.
		b.run(chromedp.SetValue(`select[name=version]`, "production", chromedp.ByQuery),
			chromedp.SetValue(`textarea[name=variables]`, `{"question":"Hi","tone":"calm"}`, chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Render"]`)
		b.wait(`document.querySelector('p.rendered-status').textContent.includes('version production') && document.querySelector('p.rendered-status').textContent.includes('for test-model.')`)
		b.shot("prompt")
	})

	t.Run("the prompt as it was, read-only", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.origin + "/console/prompts/" + promptID + "?as_of=" + url.QueryEscape(firstVersion.UTC().Format(time.RFC3339Nano))))
		b.page("Prompt Support answer")
		b.wait(`document.querySelectorAll('table.versions-table tbody tr').length === 1`)
		assert.Contains(t, b.text(`document.querySelector('dl.facts').textContent`), "test-model")
		assert.Contains(t, b.text(`document.querySelector('.historical[role=status]').textContent`), "Historical view")
		assert.False(t, b.truth(`[...document.querySelectorAll('main button')].some((x) => x.textContent.startsWith('Make default') || x.textContent === 'Render')`), "no writes, no render")
		assert.Contains(t, b.text(`document.querySelector('section[aria-labelledby=render-h]').textContent`), "return to the present")
		b.click(`//div[contains(@class,"historical")]//button`)
		b.wait(`!location.search.includes('as_of') && document.querySelectorAll('table.versions-table tbody tr').length === 2`)
	})

	t.Run("a partial's new version made the default; a label deleted", func(t *testing.T) {
		b.t = t
		b.nav("Prompts", "Prompts")
		b.click(`//nav[@aria-label="Prompts"]//a[normalize-space(.)="Partials"]`)
		b.page("Prompt partials")
		b.click(`//main//table//a[normalize-space(.)="Tone"]`)
		b.page("Partial Tone")
		b.wait(`document.querySelectorAll('table.versions-table tbody tr').length === 1`)
		b.run(chromedp.SetValue(`textarea[name=string]`, "Answer in a {{tone}}, brief tone.", chromedp.ByQuery),
			chromedp.SendKeys(`input[name=version_description]`, "Brief", chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Save a new version"]`)
		b.wait(`document.querySelectorAll('table.versions-table tbody tr').length === 2`)
		assert.Equal(t, "", b.text(`document.querySelector('input[name=version_description]').value`), "the description went with the version it described")
		b.click(`//table[contains(@class,"versions-table")]//tr[th[normalize-space(.)="2"]]//button[starts-with(normalize-space(.), "Make default")]`)
		b.wait(`document.querySelector('p.acted').textContent.includes('Version 2 is now the default') &&
			[...document.querySelectorAll('table.versions-table tbody tr')].find((r) => r.querySelector('th').textContent === '2').textContent.includes('default')`)
		b.wait(`document.querySelector('pre.json').textContent.includes('brief tone')`)
		b.shot("prompt-partial")

		// The prompt renders the partial's new default.
		b.run(chromedp.Navigate(b.origin + "/console/prompts/" + promptID))
		b.page("Prompt Support answer")
		b.wait(`!!document.querySelector('textarea[name=variables]')`)
		b.run(chromedp.SetValue(`textarea[name=variables]`, `{"question":"Hi","tone":"kind"}`, chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Render"]`)
		b.wait(`document.querySelectorAll('ol.messages li').length === 2`)
		assert.Equal(t, "Answer in a kind, brief tone.", b.text(`document.querySelector('ol.messages pre.content').textContent`))

		b.click(`//nav[@aria-label="Prompts"]//a[normalize-space(.)="Labels"]`)
		b.page("Prompt labels")
		b.run(chromedp.SendKeys(`input[name=name]`, "staging", chromedp.ByQuery))
		b.click(`//button[normalize-space(.)="Create label"]`)
		b.wait(`[...document.querySelectorAll('main table th')].some((x) => x.textContent === 'staging')`)
		b.click(`//tr[th[normalize-space(.)="staging"]]//button[starts-with(normalize-space(.), "Delete")]`)
		b.wait(`document.querySelector('dialog[open]') && document.querySelector('dialog[open]').textContent.includes('Delete the label “staging”')`)
		b.click(`//dialog[@open]//button[normalize-space(.)="Delete label"]`)
		b.wait(`!document.querySelector('dialog[open]') && ![...document.querySelectorAll('main table th')].some((x) => x.textContent === 'staging')`)
		assert.True(t, b.truth(`[...document.querySelectorAll('main table th')].some((x) => x.textContent === 'production')`), "the other label stays")
	})

	b.t = t
	b.noFaults()
}
