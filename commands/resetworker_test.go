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

// The reset worker starts the next period of every policy and workspace whose period ended,
// once, as the system actor.
func TestResetWorkerStartsDuePeriodsOnce(t *testing.T) {
	d := testDeps(t)
	now := d.Now()
	clock := now
	d.Now = func() time.Time { return clock }
	ctx := WithRequest(context.Background(), Request{Actor: domain.System("org")})
	next := now.Add(time.Hour)
	weekly := "weekly"
	_, err := appendEvents(ctx, d, domain.Stream(domain.UsageLimitPolicyPrefix, "p-1"), eventstore.NoStream, []domain.Event{
		domain.UsageLimitPolicyCreated{PolicyID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Type: "cost", CreditLimit: 10,
			Conditions: []domain.Condition{{Key: "api_key", Value: "k"}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			PeriodicReset: &weekly, NextUsageResetAt: &next, At: now}})
	require.NoError(t, err)
	_, err = appendEvents(ctx, d, domain.Stream(domain.WorkspacePrefix, "ws-1"), eventstore.NoStream, []domain.Event{
		domain.WorkspaceCreated{WorkspaceID: "ws-1", OrganisationID: "org", Name: "A", Slug: "a", PeriodicReset: &weekly,
			NextUsageResetAt: &next, At: now}})
	require.NoError(t, err)

	read := memory.New(d.Registry)
	fold := func() {
		evs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), read.Position(), 1000)
		require.NoError(t, err)
		for _, ev := range evs {
			require.NoError(t, read.Apply(ev))
		}
	}
	fold()
	w, err := NewResetWorker(d, read)
	require.NoError(t, err)
	var _ DueResets = read

	require.NoError(t, w.Tick(context.Background()))
	assert.Zero(t, eventTypes(t, d)["UsageLimitPolicyPeriodReset"], "nothing is due yet")

	clock = now.Add(2 * time.Hour)
	require.NoError(t, w.Tick(context.Background()))
	fold()
	require.NoError(t, w.Tick(context.Background()), "a second pass over the same state")
	fold()
	types := eventTypes(t, d)
	assert.Equal(t, 1, types["UsageLimitPolicyPeriodReset"])
	assert.Equal(t, 1, types["WorkspaceUsageReset"])

	policies, workspaces, err := read.UsageResetsDue(context.Background(), clock)
	require.NoError(t, err)
	assert.Empty(t, policies, "the next reset moved a week on")
	assert.Empty(t, workspaces)
	evs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), eventstore.Start, 100)
	require.NoError(t, err)
	for _, ev := range evs {
		if ev.Type == "UsageLimitPolicyPeriodReset" || ev.Type == "WorkspaceUsageReset" {
			assert.Equal(t, eventstore.ActorSystem, ev.Metadata.ActorKind)
		}
	}
}
