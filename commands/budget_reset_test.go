package commands

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections/memory"
)

// seedScheduledBudgets writes a key, a provider and an integration workspace whose usage
// resets every week, the first at next, each exhausted.
func seedScheduledBudgets(t *testing.T, d Deps, next time.Time) {
	t.Helper()
	weekly := func() *domain.UsageLimits {
		return &domain.UsageLimits{Type: domain.UsageCost, CreditLimit: ptrTo(10.0), PeriodicReset: ptrTo("weekly"), NextUsageResetAt: &next}
	}
	seedStream(t, d, domain.Stream(domain.APIKeyPrefix, "k-1"),
		domain.APIKeyCreated{KeyID: "k-1", Name: "ci", Type: domain.KeyOrganisationService, OrganisationID: budgetOrg,
			Scopes: []string{"completions.write"}, UsageLimits: weekly(), At: d.Now()},
		domain.APIKeyExhausted{KeyID: "k-1", Usage: 10, CreditLimit: 10, At: d.Now()})
	seedStream(t, d, domain.Stream(domain.ProviderPrefix, "p-1"),
		domain.ProviderCreated{ProviderID: "p-1", OrganisationID: budgetOrg, WorkspaceID: "ws-1", Slug: "main", Name: "Main",
			IntegrationID: "i-1", AIProviderID: "openai", UsageLimits: weekly(), At: d.Now()},
		domain.ProviderBudgetExhausted{ProviderID: "p-1", Usage: 10, CreditLimit: 10, At: d.Now()})
	seedStream(t, d, domain.Stream(domain.IntegrationPrefix, "i-1"),
		domain.IntegrationCreated{IntegrationID: "i-1", OrganisationID: budgetOrg, Slug: "prod", Name: "Prod", AIProviderID: "openai", At: d.Now()},
		domain.IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: d.Now(), Workspaces: []domain.IntegrationWorkspace{
			{ID: "ws-1", Enabled: true, UsageLimits: []domain.UsageLimits{*weekly()}}, {ID: "ws-2", Enabled: true}}},
		domain.IntegrationWorkspaceBudgetExhausted{IntegrationID: "i-1", WorkspaceID: "ws-1", LimitType: domain.UsageCost,
			Usage: 10, CreditLimit: 10, At: d.Now()})
}

func TestResetBudgetUsageIfDue(t *testing.T) {
	d := testDeps(t)
	start := d.Now()
	clock := start
	d.Now = func() time.Time { return clock }
	next := start.Add(time.Hour)
	seedScheduledBudgets(t, d, next)
	h, err := NewResetBudgetUsageIfDueHandler(d)
	require.NoError(t, err)
	all := []ResetBudgetUsageIfDue{{Kind: BudgetAPIKey, ID: "k-1"}, {Kind: BudgetProvider, ID: "p-1"},
		{Kind: BudgetIntegrationWorkspace, ID: "i-1", Sub: "ws-1"}, {Kind: BudgetIntegrationWorkspace, ID: "i-1", Sub: "ws-2"}}
	run := func() {
		t.Helper()
		for _, c := range all {
			_, err := h.Handle(budgetSystem(), c)
			require.NoError(t, err, c)
		}
	}
	before, _ := budgetEvents(t, d)
	run()
	after, _ := budgetEvents(t, d)
	assert.Equal(t, before, after, "nothing is due yet")

	clock = next
	run()
	run()
	types, _ := budgetEvents(t, d)
	assert.Equal(t, []string{"ApiKeyUsageReset", "ProviderUsageReset", "IntegrationWorkspaceUsageReset"}, types[len(before):],
		"each due budget is reset once")

	k, err := Load(context.Background(), d, domain.Stream(domain.APIKeyPrefix, "k-1"), newAPIKey)
	require.NoError(t, err)
	assert.Equal(t, domain.KeyActive, k.Status)
	assert.Equal(t, "1", k.UsagePeriod())
	assert.Equal(t, next.AddDate(0, 0, 7), *k.UsageLimits.NextUsageResetAt)
	p, err := Load(context.Background(), d, domain.Stream(domain.ProviderPrefix, "p-1"), newProvider)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusActive, p.StatusAt(clock))
	assert.Equal(t, "1", p.UsagePeriod())
	i, err := Load(context.Background(), d, domain.Stream(domain.IntegrationPrefix, "i-1"), newIntegration)
	require.NoError(t, err)
	assert.False(t, i.Workspaces["ws-1"].BudgetExhausted)
	assert.Equal(t, "1", i.WorkspaceUsagePeriod("ws-1"))
	assert.Equal(t, "0", i.WorkspaceUsagePeriod("ws-2"))

	for name, tc := range map[string]struct {
		ctx  context.Context
		c    ResetBudgetUsageIfDue
		code domain.Code
	}{
		"an admin key":         {adminCtx(budgetOrg), ResetBudgetUsageIfDue{Kind: BudgetAPIKey, ID: "k-1"}, domain.CodeForbidden},
		"another organisation": {WithRequest(context.Background(), Request{Actor: domain.System("org-2")}), ResetBudgetUsageIfDue{Kind: BudgetProvider, ID: "p-1"}, domain.CodeNotFound},
		"an unknown kind":      {budgetSystem(), ResetBudgetUsageIfDue{Kind: "team", ID: "k-1"}, domain.CodeInvalid},
		"no workspace":         {budgetSystem(), ResetBudgetUsageIfDue{Kind: BudgetIntegrationWorkspace, ID: "i-1"}, domain.CodeInvalid},
	} {
		_, err := h.Handle(tc.ctx, tc.c)
		assert.Equal(t, tc.code, domain.ErrorCode(err), name)
	}
}

// dueBudgets stands in for the read model's BudgetResetsDue query, over the budgets it is told of.
type dueBudgets struct {
	*memory.Model
	keys, providers, integrations []string
}

func (b dueBudgets) BudgetResetsDue(ctx context.Context, now time.Time) (keys []domain.APIKey, providers []domain.Provider, integrations []domain.Integration, err error) {
	for _, id := range b.keys {
		k, ok, err := b.APIKey(ctx, budgetOrg, id)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok && k.UsageResetDue(now) {
			keys = append(keys, k)
		}
	}
	for _, id := range b.providers {
		p, ok, err := b.ManagedProvider(ctx, budgetOrg, id)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok && p.UsageResetDue(now) {
			providers = append(providers, p)
		}
	}
	for _, id := range b.integrations {
		i, ok, err := b.Integration(ctx, budgetOrg, id)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok && len(i.WorkspaceResetsDue(now)) > 0 {
			integrations = append(integrations, i)
		}
	}
	return keys, providers, integrations, nil
}

// With a read model that finds due budgets, the reset worker resets keys, providers and
// integration workspaces too, once, as the system actor.
func TestResetWorkerResetsEveryKindOfBudget(t *testing.T) {
	d := testDeps(t)
	start := d.Now()
	clock := start
	d.Now = func() time.Time { return clock }
	next := start.Add(time.Hour)
	seedScheduledBudgets(t, d, next)
	read := memory.New(d.Registry)
	fold := func() {
		evs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), read.Position(), 1000)
		require.NoError(t, err)
		for _, ev := range evs {
			require.NoError(t, read.Apply(ev))
		}
	}
	fold()
	due := dueBudgets{Model: read, keys: []string{"k-1"}, providers: []string{"p-1"}, integrations: []string{"i-1"}}
	w, err := NewResetWorker(d, due)
	require.NoError(t, err)
	var _ DueBudgetResets = due

	require.NoError(t, w.Tick(context.Background()))
	types := eventTypes(t, d)
	assert.Zero(t, types["ApiKeyUsageReset"]+types["ProviderUsageReset"]+types["IntegrationWorkspaceUsageReset"], "nothing is due yet")

	clock = next.Add(time.Minute)
	require.NoError(t, w.Tick(context.Background()))
	require.NoError(t, w.Tick(context.Background()), "a second pass over the same, stale, read model")
	fold()
	require.NoError(t, w.Tick(context.Background()))
	types = eventTypes(t, d)
	assert.Equal(t, 1, types["ApiKeyUsageReset"])
	assert.Equal(t, 1, types["ProviderUsageReset"])
	assert.Equal(t, 1, types["IntegrationWorkspaceUsageReset"])
	keys, providers, integrations, err := due.BudgetResetsDue(context.Background(), clock)
	require.NoError(t, err)
	assert.Empty(t, keys, "the next reset moved a week on")
	assert.Empty(t, providers)
	assert.Empty(t, integrations)

	evs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), eventstore.Start, 100)
	require.NoError(t, err)
	for _, ev := range evs {
		switch ev.Type {
		case "ApiKeyUsageReset", "ProviderUsageReset", "IntegrationWorkspaceUsageReset":
			assert.Equal(t, eventstore.ActorSystem, ev.Metadata.ActorKind)
		}
	}
}

// reset_usage on an integration's workspace access starts a new period of that workspace's
// budget, in the same write as the update.
func TestUpdateIntegrationWorkspacesResetsUsage(t *testing.T) {
	d := testDeps(t)
	seedWorkspace(t, d, budgetOrg, "ws-1")
	stream := domain.Stream(domain.IntegrationPrefix, "i-1")
	limits := []domain.UsageLimits{{Type: domain.UsageCost, CreditLimit: ptrTo(10.0)}}
	seedStream(t, d, stream,
		domain.IntegrationCreated{IntegrationID: "i-1", OrganisationID: budgetOrg, Slug: "prod", Name: "Prod", AIProviderID: "openai", At: d.Now()},
		domain.IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: d.Now(), Workspaces: []domain.IntegrationWorkspace{
			{ID: "ws-1", Enabled: true, UsageLimits: limits}}},
		domain.IntegrationWorkspaceBudgetExhausted{IntegrationID: "i-1", WorkspaceID: "ws-1", LimitType: domain.UsageCost,
			Usage: 10, CreditLimit: 10, At: d.Now()})
	sealer, err := NewAESSealer(make([]byte, 32))
	require.NoError(t, err)
	h, err := NewUpdateIntegrationWorkspacesHandler(d, sealer)
	require.NoError(t, err)
	no := false
	_, err = h.Handle(adminCtx(budgetOrg), UpdateIntegrationWorkspaces{IntegrationID: "i-1", CreateDefaultProvider: &no,
		Workspaces: []IntegrationWorkspaceAccess{{IntegrationWorkspace: domain.IntegrationWorkspace{ID: "ws-1", Enabled: true,
			UsageLimits: limits}, ResetUsage: true}}})
	require.NoError(t, err)
	types, _ := budgetEvents(t, d)
	assert.Equal(t, []string{"IntegrationWorkspacesUpdated", "IntegrationWorkspaceUsageReset"}, types[len(types)-2:])
	i, err := Load(context.Background(), d, stream, newIntegration)
	require.NoError(t, err)
	assert.False(t, i.Workspaces["ws-1"].BudgetExhausted)
	assert.Equal(t, "1", i.WorkspaceUsagePeriod("ws-1"))
}
