package commands

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

const budgetOrg = "org-1"

func budgetSystem() context.Context {
	return WithRequest(context.Background(), Request{Actor: domain.System(budgetOrg), RequestID: "ledger"})
}

func seedStream(t *testing.T, d Deps, stream string, events ...domain.Event) {
	t.Helper()
	_, err := appendEvents(budgetSystem(), d, stream, eventstore.Any, events)
	require.NoError(t, err)
}

// budgetEvents lists, in order, the events of the store that are not notifications, and the
// notifications apart.
func budgetEvents(t *testing.T, d Deps) (types []string, notes []domain.NotificationRecorded) {
	t.Helper()
	recs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), eventstore.Start, 1000)
	require.NoError(t, err)
	for _, rec := range recs {
		ev, err := d.Registry.Decode(rec.Type, rec.Data)
		require.NoError(t, err)
		if n, ok := ev.(domain.NotificationRecorded); ok {
			notes = append(notes, n)
			continue
		}
		types = append(types, rec.Type)
	}
	return types, notes
}

func noteKinds(notes []domain.NotificationRecorded) []string {
	out := []string{}
	for _, n := range notes {
		out = append(out, n.Kind)
	}
	return out
}

func TestRecordBudgetUsageOfAnAPIKey(t *testing.T) {
	d := testDeps(t)
	h, err := NewRecordBudgetUsageHandler(d)
	require.NoError(t, err)
	stream := domain.Stream(domain.APIKeyPrefix, "k-1")
	seedStream(t, d, stream, domain.APIKeyCreated{KeyID: "k-1", Name: "ci", Type: domain.KeyWorkspaceService,
		OrganisationID: budgetOrg, WorkspaceID: "ws-1", Scopes: []string{"completions.write"}, Masked: "cw-0123****abcd",
		AlertEmails: []string{"ops@example.com"}, At: d.Now(),
		UsageLimits: &domain.UsageLimits{Type: domain.UsageCost, CreditLimit: ptrTo(10.0), AlertThreshold: ptrTo(8.0)}})
	report := func(period string, usage float64) (Result, error) {
		return h.Handle(budgetSystem(), RecordBudgetUsage{Kind: BudgetAPIKey, ID: "k-1", Period: period, Usage: usage})
	}

	res, err := report("0", 5)
	require.NoError(t, err)
	assert.Zero(t, res.Position, "under the threshold nothing is written")

	res, err = report("0", 8.5)
	require.NoError(t, err)
	assert.NotZero(t, res.Position)
	types, notes := budgetEvents(t, d)
	assert.Equal(t, []string{"ApiKeyCreated", "ApiKeyUsageThresholdReached"}, types)
	require.Len(t, notes, 1)
	n := notes[0]
	assert.Equal(t, domain.NotifyUsageThreshold, n.Kind)
	assert.Equal(t, budgetNotificationID(domain.NotifyUsageThreshold, "api_key", "k-1", "", "0", 8), n.NotificationID)
	assert.Equal(t, []string{"organisation:admins", "workspace:ws-1:admins", "workspace:ws-1:managers", "ops@example.com"}, n.Recipients)
	assert.Equal(t, "k-1", n.ResourceID)
	assert.Equal(t, "ws-1", n.WorkspaceID)
	assert.Equal(t, map[string]string{"key": "cw-0123****abcd", "current_usage": "8.5", "alert_threshold": "8", "period": "0", "type": "cost"}, n.Data)
	assert.Equal(t, `API key "ci" reached its alert threshold (8.5 of 8)`, n.Subject)
	assert.Equal(t, lastPosition(t, d), res.Position, "the result covers the notification")

	// The same report again, or a lower figure: nothing.
	for _, usage := range []float64{8.5, 9} {
		res, err = report("0", usage)
		require.NoError(t, err)
		types, notes = budgetEvents(t, d)
		assert.Len(t, types, 2)
		assert.Len(t, notes, 1)
	}

	_, err = report("0", 10.25)
	require.NoError(t, err)
	types, notes = budgetEvents(t, d)
	assert.Equal(t, "ApiKeyExhausted", types[len(types)-1])
	assert.Equal(t, []string{domain.NotifyUsageThreshold, domain.NotifyUsageExhausted}, noteKinds(notes))
	assert.Equal(t, "10", notes[1].Data["credit_limit"])
	k, err := Load(context.Background(), d, stream, newAPIKey)
	require.NoError(t, err)
	assert.Equal(t, domain.KeyExhausted, k.Status)
	assert.Equal(t, 10.25, k.CurrentUsage)

	// A reset starts period 1: a report of period 0 is stale.
	seedStream(t, d, stream, domain.APIKeyUsageReset{KeyID: "k-1", At: d.Now()})
	res, err = report("0", 50)
	require.NoError(t, err)
	assert.Zero(t, res.Position)
	_, err = report("1", 9)
	require.NoError(t, err)
	types, notes = budgetEvents(t, d)
	assert.Equal(t, "ApiKeyUsageThresholdReached", types[len(types)-1])
	assert.Len(t, notes, 3, "the new period's alert is a new notification")
	assert.Equal(t, "1", notes[2].Data["period"])
}

func TestRecordBudgetUsageRefusesWhatIsNotTheLedgers(t *testing.T) {
	d := testDeps(t)
	h, err := NewRecordBudgetUsageHandler(d)
	require.NoError(t, err)
	seedStream(t, d, domain.Stream(domain.APIKeyPrefix, "k-1"), domain.APIKeyCreated{KeyID: "k-1", Name: "ci",
		Type: domain.KeyOrganisationService, OrganisationID: budgetOrg, Scopes: []string{"completions.write"}, At: d.Now(),
		UsageLimits: &domain.UsageLimits{Type: domain.UsageCost, CreditLimit: ptrTo(10.0)}})
	seedStream(t, d, domain.Stream(domain.WorkspacePrefix, "ws-1"), domain.WorkspaceCreated{WorkspaceID: "ws-1",
		OrganisationID: budgetOrg, Name: "A", Slug: "a", At: d.Now()})
	seedStream(t, d, domain.Stream(domain.UsageLimitPolicyPrefix, "p-1"), domain.UsageLimitPolicyCreated{PolicyID: "p-1",
		OrganisationID: budgetOrg, WorkspaceID: "ws-1", Type: domain.UsageCost, CreditLimit: 10, At: d.Now()})
	c := RecordBudgetUsage{Kind: BudgetAPIKey, ID: "k-1", Period: "0", Usage: 20}
	otherOrg := WithRequest(context.Background(), Request{Actor: domain.System("org-2")})
	for name, tc := range map[string]struct {
		ctx   context.Context
		c     RecordBudgetUsage
		code  domain.Code
		param string
	}{
		"an admin key":             {adminCtx(budgetOrg), c, domain.CodeForbidden, ""},
		"another organisation":     {otherOrg, c, domain.CodeNotFound, ""},
		"an unknown key":           {budgetSystem(), RecordBudgetUsage{Kind: BudgetAPIKey, ID: "k-9", Period: "0", Usage: 20}, domain.CodeNotFound, ""},
		"an unknown kind":          {budgetSystem(), RecordBudgetUsage{Kind: "team", ID: "k-1", Period: "0"}, domain.CodeInvalid, "kind"},
		"a sub for a key":          {budgetSystem(), RecordBudgetUsage{Kind: BudgetAPIKey, ID: "k-1", Sub: "x", Period: "0"}, domain.CodeInvalid, "sub"},
		"no workspace":             {budgetSystem(), RecordBudgetUsage{Kind: BudgetIntegrationWorkspace, ID: "i-1", Period: "0"}, domain.CodeInvalid, "sub"},
		"negative usage":           {budgetSystem(), RecordBudgetUsage{Kind: BudgetAPIKey, ID: "k-1", Period: "0", Usage: -1}, domain.CodeInvalid, "usage"},
		"a workspace limit type":   {budgetSystem(), RecordBudgetUsage{Kind: BudgetWorkspace, ID: "ws-1", Sub: "euros", Period: "0"}, domain.CodeInvalid, "limit_type"},
		"a policy without a value": {budgetSystem(), RecordBudgetUsage{Kind: BudgetUsageLimitPolicy, ID: "p-1", Period: "0.0"}, domain.CodeInvalid, "value_key"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.Handle(tc.ctx, tc.c)
			require.Error(t, err)
			assert.Equal(t, tc.code, domain.ErrorCode(err), err.Error())
			if tc.param != "" {
				var appErr *domain.Error
				require.ErrorAs(t, err, &appErr)
				assert.Equal(t, tc.param, appErr.Param)
			}
		})
	}
	types, notes := budgetEvents(t, d)
	assert.Equal(t, []string{"ApiKeyCreated", "WorkspaceCreated", "UsageLimitPolicyCreated"}, types)
	assert.Empty(t, notes)
}

// Reports of one figure from many processes at once: one alert, one notification.
func TestRecordBudgetUsageConcurrentReportsAlertOnce(t *testing.T) {
	d := testDeps(t)
	h, _ := NewRecordBudgetUsageHandler(d)
	seedStream(t, d, domain.Stream(domain.ProviderPrefix, "p-1"), domain.ProviderCreated{ProviderID: "p-1", OrganisationID: budgetOrg,
		WorkspaceID: "ws-1", Slug: "main", Name: "Main", IntegrationID: "i-1", AIProviderID: "openai", At: d.Now(),
		UsageLimits: &domain.UsageLimits{Type: domain.UsageTokens, CreditLimit: ptrTo(1000.0), AlertThreshold: ptrTo(800.0)}})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Handle(budgetSystem(), RecordBudgetUsage{Kind: BudgetProvider, ID: "p-1", Period: "0", Usage: 1200})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	types, notes := budgetEvents(t, d)
	assert.Equal(t, []string{"ProviderCreated", "ProviderUsageThresholdReached", "ProviderBudgetExhausted"}, types)
	assert.Equal(t, []string{domain.NotifyUsageThreshold, domain.NotifyUsageExhausted}, noteKinds(notes))
	p, err := Load(context.Background(), d, domain.Stream(domain.ProviderPrefix, "p-1"), newProvider)
	require.NoError(t, err)
	assert.Equal(t, domain.ProviderExhausted, p.StatusAt(d.Now()))
	assert.Equal(t, "Provider @main is exhausted (1200 of 1000)", notes[1].Subject)
	assert.Equal(t, "tokens", notes[1].Data["type"])
	assert.Equal(t, domain.UsageAlertRecipients("ws-1"), notes[1].Recipients)
}

// An alert appended whose notification was not recorded (a crash in between) is notified by
// the next report of the period, once.
func TestRecordBudgetUsageRecoversAMissingNotification(t *testing.T) {
	d := testDeps(t)
	h, _ := NewRecordBudgetUsageHandler(d)
	stream := domain.Stream(domain.ProviderPrefix, "p-1")
	seedStream(t, d, stream, domain.ProviderCreated{ProviderID: "p-1", OrganisationID: budgetOrg, WorkspaceID: "ws-1",
		Slug: "main", Name: "Main", IntegrationID: "i-1", AIProviderID: "openai", At: d.Now(),
		UsageLimits: &domain.UsageLimits{Type: domain.UsageCost, CreditLimit: ptrTo(10.0), AlertThreshold: ptrTo(8.0)}},
		domain.ProviderUsageThresholdReached{ProviderID: "p-1", Usage: 8.5, AlertThreshold: 8, At: d.Now()})
	for i := 0; i < 2; i++ {
		res, err := h.Handle(budgetSystem(), RecordBudgetUsage{Kind: BudgetProvider, ID: "p-1", Period: "0", Usage: 9})
		require.NoError(t, err)
		if i == 0 {
			assert.NotZero(t, res.Position, "the notification was written")
		}
	}
	types, notes := budgetEvents(t, d)
	assert.Equal(t, []string{"ProviderCreated", "ProviderUsageThresholdReached"}, types)
	require.Len(t, notes, 1)
	assert.Equal(t, "8.5", notes[0].Data["current_usage"], "the alert's own figure")

	// A stale report recovers nothing; an alert followed by a change is not recovered.
	seedStream(t, d, stream, domain.ProviderBudgetExhausted{ProviderID: "p-1", Usage: 10, CreditLimit: 10, At: d.Now()},
		domain.ProviderUpdated{ProviderID: "p-1", Name: ptrTo("renamed"), At: d.Now()})
	_, err := h.Handle(budgetSystem(), RecordBudgetUsage{Kind: BudgetProvider, ID: "p-1", Period: "0", Usage: 11})
	require.NoError(t, err)
	_, notes = budgetEvents(t, d)
	assert.Len(t, notes, 1)
}

func TestRecordBudgetUsageOfAWorkspace(t *testing.T) {
	d := testDeps(t)
	h, _ := NewRecordBudgetUsageHandler(d)
	seedStream(t, d, domain.Stream(domain.WorkspacePrefix, "ws-1"), domain.WorkspaceCreated{WorkspaceID: "ws-1",
		OrganisationID: budgetOrg, Name: "Team A", Slug: "team-a", At: d.Now(), UsageLimits: []domain.UsageLimits{
			{Type: domain.UsageCost, CreditLimit: ptrTo(100.0), AlertThreshold: ptrTo(80.0)},
			{Type: domain.UsageTokens, CreditLimit: ptrTo(5000.0)}}})
	report := func(typ string, usage float64) {
		t.Helper()
		_, err := h.Handle(budgetSystem(), RecordBudgetUsage{Kind: BudgetWorkspace, ID: "ws-1", Sub: typ, Period: "0", Usage: usage})
		require.NoError(t, err)
	}
	report(domain.UsageCost, 85)
	report(domain.UsageCost, 90)
	report(domain.UsageTokens, 5000)
	report(domain.UsageTokens, 6000)
	types, notes := budgetEvents(t, d)
	assert.Equal(t, []string{"WorkspaceCreated", "WorkspaceUsageThresholdReached", "WorkspaceBudgetExhausted"}, types)
	assert.Equal(t, []string{domain.NotifyUsageThreshold, domain.NotifyUsageExhausted}, noteKinds(notes))
	assert.Equal(t, `Workspace "Team A" (tokens) is exhausted (5000 of 5000)`, notes[1].Subject)
	assert.Equal(t, domain.WorkspacePrefix, notes[1].ResourceType)
	assert.Equal(t, budgetNotificationID(domain.NotifyUsageExhausted, domain.WorkspacePrefix, "ws-1", domain.UsageTokens, "0", 5000),
		notes[1].NotificationID)
	w, err := Load(context.Background(), d, domain.Stream(domain.WorkspacePrefix, "ws-1"), newWorkspace)
	require.NoError(t, err)
	assert.True(t, w.BudgetExhausted)
	assert.Equal(t, domain.UsageTokens, w.ExhaustedLimit)
}

func TestRecordBudgetUsageOfAnIntegrationWorkspace(t *testing.T) {
	d := testDeps(t)
	h, _ := NewRecordBudgetUsageHandler(d)
	stream := domain.Stream(domain.IntegrationPrefix, "i-1")
	seedStream(t, d, stream, domain.IntegrationCreated{IntegrationID: "i-1", OrganisationID: budgetOrg, Slug: "prod",
		Name: "Prod", AIProviderID: "openai", At: d.Now()},
		domain.IntegrationWorkspacesUpdated{IntegrationID: "i-1", At: d.Now(), Workspaces: []domain.IntegrationWorkspace{
			{ID: "ws-1", Enabled: true, UsageLimits: []domain.UsageLimits{{Type: domain.UsageCost, CreditLimit: ptrTo(10.0), AlertThreshold: ptrTo(5.0)}}},
			{ID: "ws-2", Enabled: true, UsageLimits: []domain.UsageLimits{{Type: domain.UsageCost, CreditLimit: ptrTo(10.0)}}}}})
	for _, c := range []RecordBudgetUsage{
		{Kind: BudgetIntegrationWorkspace, ID: "i-1", Sub: "ws-1", Period: "0", Usage: 6},
		{Kind: BudgetIntegrationWorkspace, ID: "i-1", Sub: "ws-1", Period: "0", Usage: 6},
		{Kind: BudgetIntegrationWorkspace, ID: "i-1", Sub: "ws-2", Period: "0", Usage: 10},
		{Kind: BudgetIntegrationWorkspace, ID: "i-1", Sub: "ws-2", Period: "0", Usage: 12},
		{Kind: BudgetIntegrationWorkspace, ID: "i-1", Sub: "ws-9", Period: "0", Usage: 12},
	} {
		_, err := h.Handle(budgetSystem(), c)
		require.NoError(t, err)
	}
	types, notes := budgetEvents(t, d)
	assert.Equal(t, []string{"IntegrationCreated", "IntegrationWorkspacesUpdated", "IntegrationWorkspaceUsageThresholdReached",
		"IntegrationWorkspaceBudgetExhausted"}, types)
	require.Len(t, notes, 2)
	assert.Equal(t, "ws-1", notes[0].WorkspaceID)
	assert.Equal(t, "ws-2", notes[1].WorkspaceID)
	assert.Equal(t, domain.UsageAlertRecipients("ws-2"), notes[1].Recipients)
	assert.Equal(t, `Integration "Prod" in workspace ws-2 is exhausted (10 of 10)`, notes[1].Subject)
	i, err := Load(context.Background(), d, stream, newIntegration)
	require.NoError(t, err)
	assert.True(t, i.Workspaces["ws-2"].BudgetExhausted)
	assert.False(t, i.Workspaces["ws-1"].BudgetExhausted)
}

func TestRecordBudgetUsageOfAPolicyEntity(t *testing.T) {
	d := testDeps(t)
	h, _ := NewRecordBudgetUsageHandler(d)
	stream := domain.Stream(domain.UsageLimitPolicyPrefix, "p-1")
	seedStream(t, d, stream, domain.UsageLimitPolicyCreated{PolicyID: "p-1", OrganisationID: budgetOrg, WorkspaceID: "ws-1",
		Name: ptrTo("budget"), Conditions: []domain.Condition{{Key: "workspace_id", Value: "ws-1"}},
		GroupBy: []domain.GroupBy{{Key: "api_key"}}, Type: domain.UsageCost, CreditLimit: 100, AlertThreshold: ptrTo(80.0), At: d.Now()})
	report := func(key, period string, usage float64) {
		t.Helper()
		_, err := h.Handle(budgetSystem(), RecordBudgetUsage{Kind: BudgetUsageLimitPolicy, ID: "p-1", Sub: key, Period: period, Usage: usage})
		require.NoError(t, err)
	}
	report("api_key:a", "0.0", 85)
	report("api_key:a", "0.0", 85)
	report("api_key:a", "0.0", 100)
	p, err := Load(context.Background(), d, stream, newUsageLimitPolicy)
	require.NoError(t, err)
	en := p.Entities["api_key:a"]
	assert.Equal(t, domain.UsageEntityExhausted, en.Status, "an entity the policy had not seen is created by its alerts")
	assert.Equal(t, 100.0, en.CurrentUsage)
	types, notes := budgetEvents(t, d)
	assert.Equal(t, []string{"UsageLimitPolicyCreated", "UsageLimitPolicyThresholdReached", "UsageLimitPolicyEntityExhausted"}, types)
	assert.Equal(t, []string{domain.NotifyUsageThreshold, domain.NotifyUsageExhausted}, noteKinds(notes))
	assert.Equal(t, `Usage limit policy "budget": api_key:a is exhausted (100 of 100)`, notes[1].Subject)
	assert.Equal(t, budgetNotificationID(domain.NotifyUsageExhausted, domain.UsageLimitPolicyPrefix, "p-1", "api_key:a", "0.0", 100),
		notes[1].NotificationID)

	// An admin reset of the entity starts its own period 0.1.
	reset, _ := NewResetUsageLimitPolicyEntityHandler(d)
	_, err = reset.Handle(adminCtx(budgetOrg), ResetUsageLimitPolicyEntity{PolicyID: "p-1", Entity: "api_key:a"})
	require.NoError(t, err)
	report("api_key:a", "0.0", 100)
	report("api_key:a", "0.1", 90)
	types, notes = budgetEvents(t, d)
	assert.Equal(t, "UsageLimitPolicyThresholdReached", types[len(types)-1])
	assert.Len(t, notes, 3)
}

// An entity that only the ledger knows is reset by its resolved value key.
func TestResetUsageLimitPolicyEntityByResolvedValueKey(t *testing.T) {
	d := testDeps(t)
	stream := domain.Stream(domain.UsageLimitPolicyPrefix, "p-1")
	seedStream(t, d, stream, domain.UsageLimitPolicyCreated{PolicyID: "p-1", OrganisationID: budgetOrg, WorkspaceID: "ws-1",
		Conditions: []domain.Condition{{Key: "workspace_id", Value: "ws-1"}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
		Type: domain.UsageCost, CreditLimit: 100, At: d.Now()})
	reset, _ := NewResetUsageLimitPolicyEntityHandler(d)
	_, err := reset.Handle(adminCtx(budgetOrg), ResetUsageLimitPolicyEntity{PolicyID: "p-1", Entity: "api_key:new"})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "by reference, an unseen entity is not found")
	_, err = reset.Handle(adminCtx(budgetOrg), ResetUsageLimitPolicyEntity{PolicyID: "p-1", ValueKey: "api_key:new"})
	require.NoError(t, err)
	p, err := Load(context.Background(), d, stream, newUsageLimitPolicy)
	require.NoError(t, err)
	require.Contains(t, p.Entities, "api_key:new")
	assert.Equal(t, "0.1", p.EntityPeriod("api_key:new"))
}

func lastPosition(t *testing.T, d Deps) eventstore.Position {
	t.Helper()
	recs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), eventstore.Start, 1000)
	require.NoError(t, err)
	return recs[len(recs)-1].Position
}
