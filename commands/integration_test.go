package commands

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// fakeURLCheck refuses the hosts it is given, standing in for the gateway's egress guard.
type fakeURLCheck struct{ refused []string }

func (f fakeURLCheck) CheckURL(raw string) error {
	for _, r := range f.refused {
		if strings.Contains(raw, r) {
			return errors.New("refused by the test")
		}
	}
	return nil
}

func adminCtx(orgID string) context.Context {
	return WithRequest(context.Background(), Request{Actor: domain.Actor{Kind: domain.ActorAPIKey, ID: "k-1",
		OrganisationID: orgID, KeyType: domain.KeyOrganisationService, OrgRole: domain.RoleAdmin, Scopes: domain.AllScopes()}})
}

func seedWorkspace(t *testing.T, d Deps, orgID, wsID string) {
	t.Helper()
	ctx := WithRequest(context.Background(), Request{Actor: domain.System(orgID)})
	_, err := appendEvents(ctx, d, domain.Stream(domain.WorkspacePrefix, wsID), eventstore.NoStream, []domain.Event{
		domain.WorkspaceCreated{WorkspaceID: wsID, OrganisationID: orgID, Name: "ws", Slug: "ws", At: d.Now()}})
	require.NoError(t, err)
}

func TestHandlersRefuseMissingDependencies(t *testing.T) {
	d := testDeps(t)
	s, err := NewAESSealer(make([]byte, 32))
	require.NoError(t, err)
	u := StaticURLCheck{}
	for name, err := range map[string]error{
		"create integration without a sealer":     second(NewCreateIntegrationHandler(d, nil, u)),
		"create integration without a checker":    second(NewCreateIntegrationHandler(d, s, nil)),
		"create integration without a store":      second(NewCreateIntegrationHandler(Deps{}, s, u)),
		"update integration without a sealer":     second(NewUpdateIntegrationHandler(d, nil, u)),
		"integration workspaces without a sealer": second(NewUpdateIntegrationWorkspacesHandler(d, nil)),
		"archive integration without a store":     second(NewArchiveIntegrationHandler(Deps{})),
		"create provider without a checker":       second(NewCreateProviderHandler(d, s, nil)),
		"update provider without a sealer":        second(NewUpdateProviderHandler(d, nil, u)),
		"archive provider without a store":        second(NewArchiveProviderHandler(Deps{})),
		"create config without a checker":         second(NewCreateSavedConfigHandler(d, nil)),
		"update config without a checker":         second(NewUpdateSavedConfigHandler(d, nil)),
		"archive config without a store":          second(NewArchiveSavedConfigHandler(Deps{})),
	} {
		assert.Error(t, err, name)
	}
}

func second[A any](_ A, err error) error { return err }

// The key an admin sends is stored sealed, bound to its integration, and opens again with the
// sealer derived from the same secret, as the gateway will open it.
func TestIntegrationKeyIsSealedAndOpens(t *testing.T) {
	d := testDeps(t)
	sealer, err := NewSealerFromSecret([]byte("the-server-secret-of-32-bytes-or-more"))
	require.NoError(t, err)
	h, err := NewCreateIntegrationHandler(d, sealer, fakeURLCheck{refused: []string{"internal.corp"}})
	require.NoError(t, err)
	ctx := adminCtx("org-1")
	key := "sk-plaintext-key-0123456789"
	res, err := h.Handle(ctx, CreateIntegration{Name: "Prod", AIProviderID: "bedrock", Key: &key,
		Configurations: map[string]any{"aws_region": "eu-west-1", "aws_secret_access_key": "aws-plain-secret-XYZ"}})
	require.NoError(t, err)

	i, err := Load(ctx, d, domain.Stream(domain.IntegrationPrefix, res.ID), newIntegration)
	require.NoError(t, err)
	stream := domain.Stream(domain.IntegrationPrefix, res.ID)
	plain, err := sealer.Open(i.Sealed.Key, domain.CredentialAAD(stream, "key"))
	require.NoError(t, err)
	assert.Equal(t, key, string(plain))
	secret, err := sealer.Open(i.Sealed.Secrets["aws_secret_access_key"], domain.CredentialAAD(stream, "configurations.aws_secret_access_key"))
	require.NoError(t, err)
	assert.Equal(t, `"aws-plain-secret-XYZ"`, string(secret), "a secret field's plaintext is its JSON value")
	_, err = sealer.Open(i.Sealed.Key, domain.CredentialAAD(domain.Stream(domain.IntegrationPrefix, "another"), "key"))
	assert.ErrorIs(t, err, ErrSealedCorrupt, "a sealed key moved to another integration does not open")

	_, err = h.Handle(ctx, CreateIntegration{Name: "Internal", AIProviderID: "openai",
		Configurations: map[string]any{"custom_host": "https://llm.internal.corp/v1"}})
	var appErr *domain.Error
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, "configurations.custom_host", appErr.Param, "the host check's refusal names the field")
}

// A retried create (same idempotency key) of a workspace integration with its default
// provider writes nothing twice.
func TestWorkspaceIntegrationCreateIsIdempotent(t *testing.T) {
	d := testDeps(t)
	seedWorkspace(t, d, "org-1", "ws-1")
	sealer, err := NewAESSealer(make([]byte, 32))
	require.NoError(t, err)
	h, err := NewCreateIntegrationHandler(d, sealer, StaticURLCheck{})
	require.NoError(t, err)
	ctx := WithRequest(adminCtx("org-1"), Request{Actor: RequestFrom(adminCtx("org-1")).Actor, RequestID: "r-1", IdempotencyKey: "idem-1"})
	c := CreateIntegration{Name: "Claude", AIProviderID: "anthropic", WorkspaceID: "ws-1"}
	first, err := h.Handle(ctx, c)
	require.NoError(t, err)
	before := eventTypes(t, d)
	again, err := h.Handle(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, before, eventTypes(t, d), "a retry writes nothing")
	assert.Equal(t, 1, before["IntegrationCreated"])
	assert.Equal(t, 1, before["ProviderCreated"])
}

func TestStaticURLCheck(t *testing.T) {
	for _, ok := range []string{"https://api.openai.com/v1", "http://llm.example.com:8000", "https://8.8.8.8/v1", "https://[2606:4700::1111]/",
		"https://a1.de", "https://cafe.be"} {
		assert.NoError(t, StaticURLCheck{}.CheckURL(ok), ok)
	}
	for _, bad := range []string{"http://127.0.0.1", "http://127.1.2.3:8080", "http://10.0.0.1", "http://172.16.5.4", "http://192.168.0.1",
		"http://169.254.169.254/latest/meta-data", "http://100.64.0.1", "http://0.0.0.0", "http://[::1]/", "http://[::ffff:127.0.0.1]/",
		"http://[::ffff:a9fe:a9fe]/", "http://[fe80::1%25eth0]/", "http://[fd00::1]/", "http://224.0.0.1", "http://255.255.255.255",
		"http://localhost:11434", "http://api.localhost", "http://metadata.google.internal/", "http://2130706433/", "http://0x7f.1/",
		"http://0177.0.0.1/", "http://[64:ff9b::7f00:1]/", "not a url", "http://"} {
		assert.Error(t, StaticURLCheck{}.CheckURL(bad), bad)
	}
}
