package commands

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// noMemberships stands in for the read model's membership index and collection contents.
type noMemberships struct{}

func (noMemberships) MemberWorkspaceIDs(context.Context, string, string) ([]string, error) {
	return nil, nil
}

// PromptCollectionContents: the read model's count of what a collection holds, as an empty
// model answers it.
func (noMemberships) PromptCollectionContents(context.Context, string, string) (domain.CollectionContents, error) {
	return domain.CollectionContents{}, nil
}

// NewApp builds every handler once, or refuses, with the constructor's error, when a
// dependency is missing.
func TestNewApp(t *testing.T) {
	d := testDeps(t)
	secret := bytes.Repeat([]byte("s"), 32)
	app, err := NewApp(AppDeps{Deps: d, Secret: secret, Memberships: noMemberships{}, Collections: noMemberships{}})
	require.NoError(t, err)
	assert.NotNil(t, app.CreateWorkspace)
	assert.NotNil(t, app.AcceptInvite)

	for name, deps := range map[string]AppDeps{
		"no memberships":         {Deps: d, Secret: secret, Collections: noMemberships{}},
		"no collection contents": {Deps: d, Secret: secret, Memberships: noMemberships{}},
		"a short secret":         {Deps: d, Secret: secret[:16], Memberships: noMemberships{}, Collections: noMemberships{}},
		"no event store":         {Deps: Deps{Registry: d.Registry, Now: d.Now}, Secret: secret, Memberships: noMemberships{}, Collections: noMemberships{}},
	} {
		app, err := NewApp(deps)
		assert.Error(t, err, name)
		assert.Nil(t, app, name)
	}
}
