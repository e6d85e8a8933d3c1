package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWebhookDecisions(t *testing.T) {
	later := t0.Add(time.Minute)
	spec := CreateWebhook{WebhookID: "wh-1", OrganisationID: "org-1", WorkspaceID: "ws-1", Name: "Ops", URL: "https://hooks.example.com/in?team=a",
		Kinds: []string{NotifyUsageThreshold, NotifyKeyRotated}, SealedSecret: "v1:sealed", By: "u-1"}
	created := WebhookCreated{WebhookID: "wh-1", OrganisationID: "org-1", WorkspaceID: "ws-1", Name: "Ops",
		URL: "https://hooks.example.com/in?team=a", Kinds: []string{NotifyKeyRotated, NotifyUsageThreshold}, SealedSecret: "v1:sealed", By: "u-1", At: t0}
	create := func(change func(*CreateWebhook)) func(*Webhook) ([]Event, error) {
		return func(w *Webhook) ([]Event, error) {
			c := spec
			change(&c)
			return w.Create(c, t0)
		}
	}
	deleted := WebhookDeleted{WebhookID: "wh-1", By: "u-1", At: t0}
	runScenarios(t, func() *Webhook { return &Webhook{} }, []scenario[*Webhook]{
		{name: "create, its kinds sorted", when: create(func(*CreateWebhook) {}), then: []Event{created}},
		{name: "create twice", given: []Event{created}, when: create(func(*CreateWebhook) {}), wantCode: CodeConflict},
		{name: "no name", when: create(func(c *CreateWebhook) { c.Name = " " }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "a long name", when: create(func(c *CreateWebhook) { c.Name = strings.Repeat("n", MaxNameLength+1) }),
			wantCode: CodeInvalid, wantParam: "name"},
		{name: "no url", when: create(func(c *CreateWebhook) { c.URL = "" }), wantCode: CodeInvalid, wantParam: "url"},
		{name: "a long url", when: create(func(c *CreateWebhook) {
			c.URL = "https://example.com/" + strings.Repeat("p", MaxWebhookURLLength)
		}), wantCode: CodeInvalid, wantParam: "url"},
		{name: "not http", when: create(func(c *CreateWebhook) { c.URL = "ftp://example.com/x" }), wantCode: CodeInvalid, wantParam: "url"},
		{name: "credentials in the url", when: create(func(c *CreateWebhook) { c.URL = "https://user:pw@example.com/x" }),
			wantCode: CodeInvalid, wantParam: "url"},
		{name: "a fragment", when: create(func(c *CreateWebhook) { c.URL = "https://example.com/x#y" }), wantCode: CodeInvalid, wantParam: "url"},
		{name: "an unknown kind", when: create(func(c *CreateWebhook) { c.Kinds = []string{NotifyInvite, "usage.nope"} }),
			wantCode: CodeInvalid, wantParam: "kinds[1]"},
		{name: "a kind twice", when: create(func(c *CreateWebhook) { c.Kinds = []string{NotifyInvite, NotifyInvite} }),
			wantCode: CodeInvalid, wantParam: "kinds[1]"},
		{name: "too many kinds", when: create(func(c *CreateWebhook) { c.Kinds = append(NotificationKinds(), NotifyInvite) }),
			wantCode: CodeInvalid, wantParam: "kinds"},
		{name: "every kind", when: create(func(c *CreateWebhook) { c.Kinds = nil }),
			then: []Event{func() Event { e := created; e.Kinds = []string{}; return e }()}},
		{name: "update", given: []Event{created},
			when: func(w *Webhook) ([]Event, error) {
				return w.Update(UpdateWebhook{Name: ptr("New"), Kinds: &[]string{NotifyInvite}, Disabled: ptr(true), By: "u-2"}, later)
			},
			then: []Event{WebhookUpdated{WebhookID: "wh-1", Name: ptr("New"), Kinds: &[]string{NotifyInvite}, Disabled: ptr(true), By: "u-2", At: later}}},
		{name: "update nothing", given: []Event{created},
			when:     func(w *Webhook) ([]Event, error) { return w.Update(UpdateWebhook{By: "u-2"}, later) },
			wantCode: CodeInvalid},
		{name: "update to a bad url", given: []Event{created},
			when:     func(w *Webhook) ([]Event, error) { return w.Update(UpdateWebhook{URL: ptr("not a url")}, later) },
			wantCode: CodeInvalid, wantParam: "url"},
		{name: "update a deleted one", given: []Event{created, deleted},
			when:     func(w *Webhook) ([]Event, error) { return w.Update(UpdateWebhook{Name: ptr("x")}, later) },
			wantCode: CodeNotFound},
		{name: "rotate", given: []Event{created},
			when: func(w *Webhook) ([]Event, error) { return w.RotateSecret("v1:new", "u-2", later) },
			then: []Event{WebhookSecretRotated{WebhookID: "wh-1", SealedSecret: "v1:new", By: "u-2", At: later}}},
		{name: "delete", given: []Event{created},
			when: func(w *Webhook) ([]Event, error) { return w.Delete("u-1", t0) }, then: []Event{deleted}},
		{name: "delete twice", given: []Event{created, deleted},
			when: func(w *Webhook) ([]Event, error) { return w.Delete("u-1", t0) }, wantCode: CodeNotFound},
	})
}

// A webhook hears the notifications of its organisation (a workspace webhook, of its
// workspace only), of its kinds, while it is enabled and not deleted.
func TestWebhookMatches(t *testing.T) {
	n := Notification{ID: "n-1", OrganisationID: "org-1", WorkspaceID: "ws-1", Kind: NotifyUsageThreshold}
	org := Webhook{ID: "wh-1", OrganisationID: "org-1", Status: StatusActive}
	ws := org
	ws.WorkspaceID = "ws-1"
	other := org
	other.WorkspaceID = "ws-2"
	kinds := org
	kinds.Kinds = []string{NotifyInvite}
	disabled := org
	disabled.Disabled = true
	deleted := org
	deleted.Status = StatusArchived
	foreign := org
	foreign.OrganisationID = "org-2"
	assert.True(t, org.Matches(n))
	assert.True(t, ws.Matches(n))
	for name, w := range map[string]Webhook{"another workspace": other, "other kinds": kinds, "disabled": disabled,
		"deleted": deleted, "another organisation": foreign} {
		assert.False(t, w.Matches(n), name)
	}
	orgNote := n
	orgNote.WorkspaceID = ""
	assert.False(t, ws.Matches(orgNote), "a workspace webhook hears nothing of the organisation's own")
}

func TestWebhookKeepsItsSealedSecretOutOfItsJSON(t *testing.T) {
	w := Webhook{}
	w.Apply(WebhookCreated{WebhookID: "wh-1", OrganisationID: "org-1", Name: "x", URL: "https://example.com", SealedSecret: "v1:sealed", At: t0})
	assert.Equal(t, "v1:sealed", w.SealedSecret)
	raw, err := json.Marshal(w)
	assert.NoError(t, err)
	assert.NotContains(t, string(raw), "v1:sealed")
}
