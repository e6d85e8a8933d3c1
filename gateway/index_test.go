package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// The index follows the aggregates it is fed: a key's route carries its actor, which changes
// with its workspace and user; policies are listed per workspace, active only, oldest first;
// slugs follow providers.
func TestIndexFollowsTheAggregates(t *testing.T) {
	x := NewIndex()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ws := domain.Workspace{ID: "ws", OrganisationID: "org", Status: domain.StatusActive, Members: map[string]domain.Role{"u": domain.RoleMember}}
	x.Put(&ws, 1)
	x.Put(&domain.User{ID: "u", OrganisationID: "org", Role: domain.RoleMember, Status: domain.StatusActive}, 1)
	key := domain.APIKey{ID: "k", OrganisationID: "org", WorkspaceID: "ws", UserID: "u", Type: domain.KeyWorkspaceUser,
		Status: domain.KeyActive, Hash: "h1", Scopes: []string{"completions.write"}}
	x.Put(&key, 1)

	r, ok := x.Route("h1")
	require.True(t, ok)
	require.NoError(t, r.ActorErr)
	assert.Equal(t, domain.RoleMember, r.Actor.WorkspaceRoles["ws"])
	assert.EqualValues(t, 1, r.KeyVersion)
	_, ok = x.Route("nope")
	assert.False(t, ok)

	// A rotation: both hashes find the key; the route is the new version.
	key.PreviousHash, key.Hash = "h1", "h2"
	x.Put(&key, 2)
	for _, h := range []string{"h1", "h2"} {
		r, ok := x.Route(h)
		require.True(t, ok, h)
		assert.EqualValues(t, 2, r.KeyVersion)
	}

	// The user leaves the workspace: the key cannot act any more.
	ws.Members = map[string]domain.Role{}
	x.Put(&ws, 2)
	r, _ = x.Route("h2")
	assert.Error(t, r.ActorErr)
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(r.ActorErr))

	// Policies: per workspace, active only, oldest first.
	for i, id := range []string{"p2", "p1"} {
		x.Put(&domain.RateLimitPolicy{ID: id, OrganisationID: "org", WorkspaceID: "ws", Status: domain.StatusActive,
			CreatedAt: t0.Add(time.Duration(1-i) * time.Minute)}, 1)
	}
	x.Put(&domain.RateLimitPolicy{ID: "other", OrganisationID: "org", WorkspaceID: "ws2", Status: domain.StatusActive}, 1)
	x.Put(&domain.RateLimitPolicy{ID: "gone", OrganisationID: "org", WorkspaceID: "ws", Status: domain.StatusArchived}, 3)
	r, _ = x.Route("h2")
	require.Len(t, r.RatePolicies, 2)
	assert.Equal(t, "p1", r.RatePolicies[0].Value.ID)
	assert.Equal(t, "p2", r.RatePolicies[1].Value.ID)
	assert.EqualValues(t, 2, r.WorkspaceVersion, "the workspace's version survives a policy change")

	// Deleted: gone from the index.
	key.Status = domain.KeyDeleted
	x.Put(&key, 3)
	_, ok = x.Route("h2")
	assert.False(t, ok)

	// Slugs: the live providers holding one, newest first; a renamed or archived one leaves it.
	x.Put(&domain.Provider{ID: "a", OrganisationID: "org", WorkspaceID: "ws", Slug: "main", Status: domain.StatusActive, CreatedAt: t0}, 1)
	x.Put(&domain.Provider{ID: "b", OrganisationID: "org", WorkspaceID: "ws2", Slug: "main", Status: domain.StatusActive, CreatedAt: t0.Add(time.Hour)}, 1)
	got := x.ManagedProviders("org", "main")
	require.Len(t, got, 2)
	assert.Equal(t, "b", got[0].Provider.Value.ID)
	x.Put(&domain.Provider{ID: "b", OrganisationID: "org", WorkspaceID: "ws2", Slug: "main", Status: domain.StatusArchived, CreatedAt: t0.Add(time.Hour)}, 2)
	got = x.ManagedProviders("org", "main")
	require.Len(t, got, 1)
	assert.Equal(t, "a", got[0].Provider.Value.ID)
	assert.Empty(t, x.ManagedProviders("other-org", "main"))

	// Saved configs by id and by the slug a live one holds.
	x.Put(&domain.SavedConfig{ID: "c1", OrganisationID: "org", Slug: "prod", Status: domain.StatusActive}, 1)
	c, ok := x.SavedConfig("org", "prod")
	require.True(t, ok)
	assert.Equal(t, "c1", c.Value.ID)
	x.Put(&domain.SavedConfig{ID: "c1", OrganisationID: "org", Slug: "prod", Status: domain.StatusArchived}, 2)
	_, ok = x.SavedConfig("org", "prod")
	assert.False(t, ok, "an archived config gives its slug up")
	_, ok = x.SavedConfig("org", "c1")
	assert.True(t, ok, "and stays readable by id")
	assert.Equal(t, "org", x.Organisation("provider", "a"))
}

func TestDeliveredTextCountsContentOnly(t *testing.T) {
	var d deliveredText
	d.add([]byte(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello \"you\""}}]}`))
	d.add([]byte(`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"a\":1}"}}]}}]}`))
	d.add([]byte(`{"choices":[{"text":"abc"}]}`))
	assert.Equal(t, len(`Hello \"you\"`)+len(`{\"a\":1}`)+3, d.n)
}
