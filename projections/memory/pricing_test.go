package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

func TestModelPricingOverrideQueries(t *testing.T) {
	m := New(domain.NewRegistry())
	prices := domain.ModelPrices{RequestToken: &domain.TokenPrice{Price: 0.0002}}
	set := func(pos int, org, ws, provider, model string) string {
		id := domain.ModelPricingOverrideID(org, ws, provider, model)
		require.NoError(t, m.Apply(recorded(t, eventstore.Position(pos), domain.Stream(domain.ModelPricingPrefix, id),
			domain.ModelPricingOverrideSet{OverrideID: id, OrganisationID: org, WorkspaceID: ws, Provider: provider,
				Model: model, PayAsYouGo: prices, At: time.Now()})))
		return id
	}
	orgWide := set(1, "org", "", "openai", "gpt-4o")
	set(2, "org", "ws-1", "openai", "gpt-4o")
	set(3, "org-2", "", "openai", "gpt-4o")

	ctx := context.Background()
	o, ok := m.Overrides().ModelPricingOverride("org", "", "OpenAI", "GPT-4o")
	require.True(t, ok, "names match as the domain normalises them")
	assert.Equal(t, orgWide, o.ID)
	ws, ok, err := m.ModelPricingOverride(ctx, "org", "ws-1", "openai", "gpt-4o")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "ws-1", ws.WorkspaceID)
	_, ok = m.Overrides().ModelPricingOverride("org", "ws-2", "openai", "gpt-4o")
	assert.False(t, ok, "a workspace without its own override has none here")
	all, err := m.ModelPricingOverrides(ctx, "org")
	require.NoError(t, err)
	assert.Len(t, all, 2)

	require.NoError(t, m.Apply(recorded(t, 4, domain.Stream(domain.ModelPricingPrefix, orgWide),
		domain.ModelPricingOverrideRemoved{OverrideID: orgWide, At: time.Now()})))
	_, ok, err = m.ModelPricingOverride(ctx, "org", "", "openai", "gpt-4o")
	require.NoError(t, err)
	assert.False(t, ok, "a removed override is not in force")
	all, err = m.ModelPricingOverrides(ctx, "org")
	require.NoError(t, err)
	assert.Len(t, all, 1)
}
