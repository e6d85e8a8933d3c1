package memory

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
)

func recorded(t *testing.T, pos eventstore.Position, stream string, ev domain.Event) eventstore.RecordedEvent {
	t.Helper()
	data, err := json.Marshal(ev)
	require.NoError(t, err)
	return eventstore.RecordedEvent{ID: uuid.New(), Stream: stream, Position: pos, Type: ev.EventType(), Data: data,
		RecordedAt: time.Now(), Metadata: eventstore.Metadata{ActorID: "a", ActorKind: eventstore.ActorSystem, OrganisationID: "org"}}
}

func TestMemoryFoldsOncePerPositionAndWaits(t *testing.T) {
	m := New(domain.NewRegistry())
	stream := domain.Stream(domain.APIKeyPrefix, "k-1")
	created := recorded(t, 1, stream, domain.APIKeyCreated{KeyID: "k-1", Name: "a", Type: domain.KeyOrganisationService,
		OrganisationID: "org", Scopes: []string{"logs.view"}, Hash: domain.HashKey("secret-key"), Masked: "x", At: time.Now()})
	require.NoError(t, m.Apply(created))
	require.NoError(t, m.Apply(created), "a replayed event is skipped")
	assert.Len(t, m.AuditLog(projections.AuditFilter{OrganisationID: "org"}), 1, "and not recorded twice")

	actor, err := m.Authenticate("secret-key", time.Now())
	require.NoError(t, err)
	assert.Equal(t, "k-1", actor.ID)
	assert.Equal(t, domain.RoleAdmin, actor.OrgRole)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, m.WaitFor(ctx, 2), context.DeadlineExceeded, "position 2 is not reached")
	done := make(chan error, 1)
	go func() { done <- m.WaitFor(context.Background(), 2) }()
	require.NoError(t, m.Apply(recorded(t, 2, stream, domain.APIKeyDeleted{KeyID: "k-1", At: time.Now()})))
	require.NoError(t, <-done)
	_, err = m.Authenticate("secret-key", time.Now())
	assert.Equal(t, domain.CodeUnauthorized, domain.ErrorCode(err), "a deleted key stops working")
}

// An event that cannot be folded stops the model: it is never skipped, Failed names it, and
// a write waiting for a later position is told rather than left hanging.
func TestMemoryStopsOnAnEventItCannotFold(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	defer store.Close()
	_, err = store.Append(ctx, "apikey-k", eventstore.NoStream, eventstore.EventData{ID: uuid.New(), Type: "NoSuchEvent", Data: json.RawMessage(`{}`)})
	require.NoError(t, err)
	res, err := store.Append(ctx, "apikey-k", eventstore.Any, eventstore.EventData{ID: uuid.New(), Type: "ApiKeyDeleted", Data: json.RawMessage(`{}`)})
	require.NoError(t, err)

	m := New(domain.NewRegistry())
	r := &projections.Runner{Store: store, Projections: []projections.Projection{m}, Retries: 2}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(rctx) }()
	require.Eventually(t, func() bool { return m.Failed() != nil }, 5*time.Second, 10*time.Millisecond)
	cancel()
	<-done
	assert.ErrorContains(t, m.Failed(), "NoSuchEvent")
	assert.ErrorContains(t, m.Failed(), "position 1")
	assert.ErrorContains(t, r.Healthy(ctx), "projection memory stopped", "health names the projection")
	assert.Equal(t, eventstore.Start, m.Position(), "nothing after the failed event was folded")
	assert.Error(t, m.WaitFor(ctx, res.Position), "a waiting write hears of the failure")
}
