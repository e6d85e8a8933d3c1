package projections_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/sqlite"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
)

// named gives a projection another name, so that two in-memory models can share a runner.
type named struct {
	projections.Projection
	name string
}

func (n named) Name() string { return n.name }

// Lag counts the events stored past each projection's checkpoint and how long the oldest of
// them has waited: three behind, one behind, caught up; a projection that stopped says so.
func TestRunnerLag(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	defer store.Close()
	for range 3 {
		data, err := json.Marshal(domain.RateLimitPolicyCreated{PolicyID: uuid.NewString(), OrganisationID: "org", WorkspaceID: "ws",
			Conditions: []domain.Condition{{Key: "api_key", Value: "k"}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			Type: "requests", Unit: "rpm", Value: 10, At: time.Now()})
		require.NoError(t, err)
		_, err = store.Append(ctx, "ratelimitpolicy-"+uuid.NewString(), eventstore.NoStream,
			eventstore.EventData{ID: uuid.New(), Type: domain.RateLimitPolicyCreated{}.EventType(), SchemaVersion: 1, Data: data})
		require.NoError(t, err)
	}
	evs, err := store.ReadAll(ctx, eventstore.Start, 10)
	require.NoError(t, err)
	require.Len(t, evs, 3)

	reg := domain.NewRegistry()
	behind, partial, current := memory.New(reg), memory.New(reg), memory.New(reg)
	require.NoError(t, partial.ApplyBatch(ctx, eventstore.Start, evs[:2]))
	require.NoError(t, current.ApplyBatch(ctx, eventstore.Start, evs))
	r := &projections.Runner{Store: store, Projections: []projections.Projection{
		named{behind, "behind"}, named{partial, "partial"}, named{current, "current"}}}

	now := evs[2].RecordedAt.Add(time.Minute)
	lags, err := r.Lag(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, []projections.Lag{
		{Projection: "behind", Events: 3, Waiting: now.Sub(evs[0].RecordedAt)},
		{Projection: "partial", Events: 1, Waiting: now.Sub(evs[2].RecordedAt)},
		{Projection: "current"},
	}, lags)

	// An event no model can fold stops the one that meets it.
	_, err = store.Append(ctx, "apikey-k", eventstore.NoStream, eventstore.EventData{ID: uuid.New(), Type: "NoSuchEvent", Data: json.RawMessage(`{}`)})
	require.NoError(t, err)
	failing := &projections.Runner{Store: store, Projections: []projections.Projection{current}, Retries: 1}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = failing.Run(rctx) }()
	require.Eventually(t, func() bool { return len(failing.Failures()) == 1 }, 5*time.Second, 10*time.Millisecond)
	cancel()
	<-done
	lags, err = failing.Lag(ctx, time.Now())
	require.NoError(t, err)
	require.Len(t, lags, 1)
	assert.True(t, lags[0].Stopped)
	assert.Equal(t, 1, lags[0].Events, "the event it stopped at is still ahead of it")
	assert.Positive(t, lags[0].Waiting)
}
