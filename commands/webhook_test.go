package commands

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

var serverSecret = []byte("the-server-secret-of-32-bytes-or-more")

func webhookApp(t *testing.T) (Deps, *App) {
	t.Helper()
	d := testDeps(t)
	seedWorkspace(t, d, "org-1", "ws-1")
	seedWorkspace(t, d, "org-1", "ws-2")
	app, err := NewApp(AppDeps{Deps: d, Secret: serverSecret, Memberships: noMemberships{}, Collections: noMemberships{}})
	require.NoError(t, err)
	return d, app
}

// Who may write which webhook, as with integrations: organisation webhooks organisation
// admins alone; workspace webhooks also their workspace's managers; nobody without the
// integrations scopes.
func TestWebhookAuthorisation(t *testing.T) {
	_, app := webhookApp(t)
	actors := guardrailActors()
	admin := as(actors["admin"])
	orgHook, err := app.CreateWebhook.Handle(admin, CreateWebhook{Name: "Org", URL: "https://hooks.example.com/org"})
	require.NoError(t, err)
	wsHook, err := app.CreateWebhook.Handle(admin, CreateWebhook{WorkspaceID: "ws-1", Name: "Team", URL: "https://hooks.example.com/team"})
	require.NoError(t, err)
	unscoped := actors["no scope"]
	unscoped.Scopes = []string{"integrations.read", "integrations.list"}
	actors["no scope"] = unscoped
	cases := []struct {
		actor string
		org   bool
		want  domain.Code
	}{
		{"admin", true, ""}, {"admin", false, ""},
		{"manager", true, domain.CodeForbidden}, {"manager", false, ""},
		{"member", true, domain.CodeForbidden}, {"member", false, domain.CodeForbidden},
		{"other workspace", true, domain.CodeForbidden}, {"other workspace", false, domain.CodeForbidden},
		{"no scope", true, domain.CodeForbidden}, {"no scope", false, domain.CodeForbidden},
	}
	for _, tc := range cases {
		name := tc.actor + map[bool]string{true: " on the organisation's", false: " on the workspace's"}[tc.org]
		t.Run(name, func(t *testing.T) {
			ctx := as(actors[tc.actor])
			id := wsHook.ID
			create := CreateWebhook{WorkspaceID: "ws-1", Name: "New", URL: "https://hooks.example.com/new"}
			if tc.org {
				id, create.WorkspaceID = orgHook.ID, ""
			}
			_, err := app.UpdateWebhook.Handle(ctx, UpdateWebhook{WebhookID: id, Name: ptrTo("Renamed")})
			assert.Equal(t, tc.want, codeOf(err), "update: %v", err)
			_, err = app.RotateWebhookSecret.Handle(ctx, RotateWebhookSecret{WebhookID: id})
			assert.Equal(t, tc.want, codeOf(err), "rotate: %v", err)
			if tc.org && actors[tc.actor].KeyType != domain.KeyOrganisationService {
				// A workspace key that names no workspace creates in its own: it has no way
				// to ask for an organisation webhook.
				return
			}
			_, err = app.CreateWebhook.Handle(ctx, create)
			assert.Equal(t, tc.want, codeOf(err), "create: %v", err)
		})
	}
}

// With managersWriteWsIntegrations off, workspace managers may not write the workspace's
// webhooks either.
func TestWebhookManagersFollowTheIntegrationsSetting(t *testing.T) {
	d, app := webhookApp(t)
	ctx := WithRequest(context.Background(), Request{Actor: domain.System("org-1")})
	off := false
	_, err := appendEvents(ctx, d, domain.Stream(domain.WorkspacePrefix, "ws-1"), eventstore.Any, []domain.Event{
		domain.WorkspaceSecurityUpdated{WorkspaceID: "ws-1", Security: domain.SecurityOverrides{ManagersWriteWsIntegrations: &off}, At: d.Now()}})
	require.NoError(t, err)
	_, err = app.CreateWebhook.Handle(as(guardrailActors()["manager"]), CreateWebhook{Name: "Team", URL: "https://hooks.example.com/team"})
	assert.Equal(t, domain.CodeForbidden, codeOf(err), "%v", err)
}

// The signing secret is answered on create and rotate, sealed in the events (never in
// plaintext, never in the aggregate's JSON), and opens again for the delivery worker; a
// retried create answers the same secret and writes nothing.
func TestWebhookSecretIsSealedAndAnsweredOnce(t *testing.T) {
	d, app := webhookApp(t)
	admin := RequestFrom(adminCtx("org-1")).Actor
	ctx := WithRequest(context.Background(), Request{Actor: admin, RequestID: "r-1", IdempotencyKey: "idem-1"})
	created, err := app.CreateWebhook.Handle(ctx, CreateWebhook{Name: "Ops", URL: "https://hooks.example.com/in", Kinds: []string{domain.NotifyInvite}})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(created.Secret, WebhookSecretPrefix), created.Secret)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(created.Secret, WebhookSecretPrefix))
	require.NoError(t, err)
	assert.Len(t, raw, 32)

	again, err := app.CreateWebhook.Handle(ctx, CreateWebhook{Name: "Ops", URL: "https://hooks.example.com/in", Kinds: []string{domain.NotifyInvite}})
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, created.ID, again.ID)
	assert.Equal(t, created.Secret, again.Secret, "a retry answers the secret it sealed")
	assert.Equal(t, 1, eventTypes(t, d)["WebhookCreated"])

	endpoints, err := NewWebhookEndpoints(d, serverSecret)
	require.NoError(t, err)
	w, key, err := endpoints.Endpoint(context.Background(), created.ID)
	require.NoError(t, err)
	assert.Equal(t, raw, key)
	assert.Equal(t, "https://hooks.example.com/in", w.URL)

	rotated, err := app.RotateWebhookSecret.Handle(adminCtx("org-1"), RotateWebhookSecret{WebhookID: created.ID})
	require.NoError(t, err)
	assert.NotEqual(t, created.Secret, rotated.Secret)
	_, key, err = endpoints.Endpoint(context.Background(), created.ID)
	require.NoError(t, err)
	newRaw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(rotated.Secret, WebhookSecretPrefix))
	assert.Equal(t, newRaw, key, "deliveries sign with the new secret")

	evs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), eventstore.Start, 1000)
	require.NoError(t, err)
	for _, ev := range evs {
		for _, secret := range []string{created.Secret, rotated.Secret, strings.TrimPrefix(created.Secret, WebhookSecretPrefix)} {
			assert.NotContains(t, string(ev.Data), secret, "%s holds a secret in plaintext", ev.Type)
		}
	}
	_, _, err = endpoints.Endpoint(context.Background(), "no-such")
	assert.ErrorIs(t, err, ErrNoWebhook)
}

// Bad fields are refused naming the field; a URL the egress check refuses is refused naming
// url, before anything is written.
func TestWebhookValidationNamesTheField(t *testing.T) {
	d := testDeps(t)
	seedWorkspace(t, d, "org-1", "ws-1")
	app, err := NewApp(AppDeps{Deps: d, Secret: serverSecret, Memberships: noMemberships{}, Collections: noMemberships{}, URLCheck: fakeURLCheck{refused: []string{"internal"}}})
	require.NoError(t, err)
	admin := adminCtx("org-1")
	for param, c := range map[string]CreateWebhook{
		"name":         {URL: "https://hooks.example.com"},
		"url":          {Name: "x", URL: "https://hooks.internal/x"},
		"kinds[0]":     {Name: "x", URL: "https://hooks.example.com", Kinds: []string{"nope"}},
		"workspace_id": {Name: "x", URL: "https://hooks.example.com", WorkspaceID: "ws-9"},
	} {
		_, err := app.CreateWebhook.Handle(admin, c)
		assert.Equal(t, param, paramOf(err), "%v", err)
	}
	static, err := NewApp(AppDeps{Deps: d, Secret: serverSecret, Memberships: noMemberships{}, Collections: noMemberships{}})
	require.NoError(t, err)
	_, err = static.CreateWebhook.Handle(admin, CreateWebhook{Name: "x", URL: "http://10.0.0.5/hook"})
	assert.Equal(t, "url", paramOf(err), "the static check refuses a private address: %v", err)
	assert.Zero(t, eventTypes(t, d)["WebhookCreated"])

	created, err := app.CreateWebhook.Handle(admin, CreateWebhook{Name: "x", URL: "https://hooks.example.com"})
	require.NoError(t, err)
	_, err = app.UpdateWebhook.Handle(admin, UpdateWebhook{WebhookID: created.ID, URL: ptrTo("https://hooks.internal/y")})
	assert.Equal(t, "url", paramOf(err))
	_, err = app.UpdateWebhook.Handle(admin, UpdateWebhook{WebhookID: created.ID, Kinds: &[]string{domain.NotifyInvite, domain.NotifyInvite}})
	assert.Equal(t, "kinds[1]", paramOf(err))
	_, err = app.DeleteWebhook.Handle(admin, DeleteWebhook{WebhookID: created.ID})
	require.NoError(t, err)
	_, err = app.UpdateWebhook.Handle(admin, UpdateWebhook{WebhookID: created.ID, Name: ptrTo("y")})
	assert.Equal(t, domain.CodeNotFound, codeOf(err), "a deleted webhook is gone")
	_, err = app.DeleteWebhook.Handle(adminCtx("org-2"), DeleteWebhook{WebhookID: created.ID})
	assert.Equal(t, domain.CodeNotFound, codeOf(err))
}

func TestWebhookHandlersRefuseMissingDependencies(t *testing.T) {
	d := testDeps(t)
	s, err := NewAESSealer(make([]byte, 32))
	require.NoError(t, err)
	for name, err := range map[string]error{
		"create without a sealer":    second(NewCreateWebhookHandler(d, nil, StaticURLCheck{}, serverSecret)),
		"create without a checker":   second(NewCreateWebhookHandler(d, s, nil, serverSecret)),
		"update without a checker":   second(NewUpdateWebhookHandler(d, nil)),
		"rotate without a sealer":    second(NewRotateWebhookSecretHandler(d, nil, serverSecret)),
		"delete without a store":     second(NewDeleteWebhookHandler(Deps{})),
		"endpoints with a short key": second(NewWebhookEndpoints(d, []byte("short"))),
	} {
		assert.Error(t, err, name)
	}
}
