package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/sqlite"
	"github.com/causeway/causeway/projections/memory"
)

var _ commands.DueKeys = (*memory.Model)(nil)

// workerWorld is a store, its read model and a clock the test moves.
type workerWorld struct {
	t     *testing.T
	store eventstore.Store
	read  *memory.Model
	deps  commands.Deps

	mu  sync.Mutex
	now time.Time
}

var workerSecret = bytes.Repeat([]byte("k"), 32)

func newWorkerWorld(t *testing.T) *workerWorld {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	reg := domain.NewRegistry()
	w := &workerWorld{t: t, store: store, read: memory.New(reg),
		now: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
	w.deps = commands.Deps{Store: store, Registry: reg, Now: w.Now}
	return w
}

func (w *workerWorld) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *workerWorld) Advance(d time.Duration) {
	w.mu.Lock()
	w.now = w.now.Add(d)
	w.mu.Unlock()
}

// events folds what is new into the read model and returns every stored event.
func (w *workerWorld) events() []eventstore.RecordedEvent {
	w.t.Helper()
	evs, err := w.store.ReadAll(context.Background(), eventstore.Start, 10000)
	require.NoError(w.t, err)
	for _, ev := range evs {
		require.NoError(w.t, w.read.Apply(ev))
	}
	return evs
}

// createKey creates an organisation key as the system and returns its id.
func (w *workerWorld) createKey(name string, expiresAt *time.Time, policy *domain.RotationPolicy, emails ...string) string {
	w.t.Helper()
	h, err := commands.NewCreateAPIKeyHandler(w.deps, workerSecret)
	require.NoError(w.t, err)
	ctx := commands.WithRequest(context.Background(), commands.Request{Actor: domain.System("org-1"), RequestID: "test-" + name})
	res, err := h.Handle(ctx, commands.CreateAPIKey{Type: "organisation", SubType: "service", Name: name,
		Scopes: []string{"completions.write"}, ExpiresAt: expiresAt, RotationPolicy: policy, AlertEmails: emails})
	require.NoError(w.t, err)
	w.events()
	return res.ID
}

func (w *workerWorld) notifications(kind, keyID string) []domain.NotificationRecorded {
	var out []domain.NotificationRecorded
	for _, ev := range w.events() {
		if ev.Type != "NotificationRecorded" {
			continue
		}
		var n domain.NotificationRecorded
		require.NoError(w.t, json.Unmarshal(ev.Data, &n))
		if n.Kind == kind && n.ResourceID == keyID {
			out = append(out, n)
		}
	}
	return out
}

func (w *workerWorld) eventsOf(typ, keyID string) []eventstore.RecordedEvent {
	var out []eventstore.RecordedEvent
	for _, ev := range w.events() {
		if ev.Type == typ && ev.Stream == domain.Stream(domain.APIKeyPrefix, keyID) {
			out = append(out, ev)
		}
	}
	return out
}

// tick makes a pass and folds its events, so the next pass reads what this one wrote.
func (w *workerWorld) tick(worker *commands.KeyWorker) int {
	w.t.Helper()
	before := len(w.events())
	require.NoError(w.t, worker.Tick(context.Background()))
	return len(w.events()) - before
}

func TestNewKeyWorkerRefusesMissingDependencies(t *testing.T) {
	w := newWorkerWorld(t)
	_, err := commands.NewKeyWorker(w.deps, nil, workerSecret)
	assert.Error(t, err)
	_, err = commands.NewKeyWorker(w.deps, w.read, []byte("short"))
	assert.Error(t, err)
	_, err = commands.NewKeyWorker(commands.Deps{}, w.read, workerSecret)
	assert.Error(t, err)
}

func TestKeyWorkerExpiresKeysAndWarnsOnce(t *testing.T) {
	w := newWorkerWorld(t)
	expires := w.Now().Add(30 * time.Hour)
	id := w.createKey("expiring", &expires, nil, "ops@example.com")
	worker, err := commands.NewKeyWorker(w.deps, w.read, workerSecret)
	require.NoError(t, err)

	assert.Zero(t, w.tick(worker), "nothing is due 30 hours ahead")
	w.Advance(6*time.Hour - time.Second)
	assert.Zero(t, w.tick(worker), "a second more than 24 hours ahead")
	w.Advance(time.Second)
	assert.Equal(t, 1, w.tick(worker), "24 hours ahead: the expiry warning")
	warned := w.notifications(domain.NotifyKeyExpirySoon, id)
	require.Len(t, warned, 1)
	assert.Equal(t, []string{"ops@example.com"}, warned[0].Recipients)
	w.Advance(time.Hour)
	assert.Zero(t, w.tick(worker), "the warning is raised once")

	w.Advance(23 * time.Hour)
	assert.Equal(t, 2, w.tick(worker), "the expiry and its notification")
	expired := w.eventsOf("ApiKeyExpired", id)
	require.Len(t, expired, 1)
	assert.Equal(t, "system", expired[0].Metadata.ActorID)
	assert.Equal(t, eventstore.ActorSystem, expired[0].Metadata.ActorKind)
	assert.Equal(t, "org-1", expired[0].Metadata.OrganisationID)
	require.Len(t, w.notifications(domain.NotifyKeyExpired, id), 1)
	k, ok, err := w.read.APIKey(context.Background(), "org-1", id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, domain.KeyExpired, k.Status)

	w.Advance(time.Hour)
	assert.Zero(t, w.tick(worker), "an expired key is expired once")
}

func TestKeyWorkerRotatesOnSchedule(t *testing.T) {
	w := newWorkerWorld(t)
	weekly := domain.RotateWeekly
	transition := int64(time.Hour / time.Millisecond)
	id := w.createKey("rotating", nil, &domain.RotationPolicy{RotationPeriod: &weekly, KeyTransitionPeriodMS: &transition})
	before, _, err := w.read.APIKey(context.Background(), "org-1", id)
	require.NoError(t, err)
	due := *before.RotationPolicy.NextRotationAt
	worker, err := commands.NewKeyWorker(w.deps, w.read, workerSecret)
	require.NoError(t, err)

	w.Advance(6 * 24 * time.Hour)
	assert.Equal(t, 1, w.tick(worker), "a day ahead: the upcoming rotation notice")
	require.Len(t, w.notifications(domain.NotifyKeyRotationSoon, id), 1)
	assert.Zero(t, w.tick(worker))

	w.Advance(24 * time.Hour)
	// Two workers, as in two processes, make the same pass at once: one rotation.
	other, err := commands.NewKeyWorker(w.deps, w.read, workerSecret)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for _, kw := range []*commands.KeyWorker{worker, other} {
		wg.Add(1)
		go func() { defer wg.Done(); assert.NoError(t, kw.Tick(context.Background())) }()
	}
	wg.Wait()
	rotated := w.eventsOf("ApiKeyRotated", id)
	require.Len(t, rotated, 1)
	assert.Equal(t, "system", rotated[0].Metadata.ActorID)
	var ev domain.APIKeyRotated
	require.NoError(t, json.Unmarshal(rotated[0].Data, &ev))
	assert.True(t, ev.Scheduled)
	assert.Equal(t, w.Now().Add(time.Hour), ev.PreviousValidUntil, "the policy's transition")
	assert.Equal(t, w.Now().AddDate(0, 0, 7), *ev.NextRotationAt)
	notes := w.notifications(domain.NotifyKeyRotated, id)
	require.Len(t, notes, 1)
	assert.Empty(t, notes[0].Recipients, "a key without alert e-mails: recorded with no recipients")
	assert.Equal(t, "true", notes[0].Data["scheduled"])

	after, _, err := w.read.APIKey(context.Background(), "org-1", id)
	require.NoError(t, err)
	assert.NotEqual(t, before.Hash, after.Hash)
	assert.Equal(t, before.Hash, after.PreviousHash)
	assert.True(t, after.RotationPolicy.NextRotationAt.After(due))
	assert.Zero(t, w.tick(worker), "the next rotation is a week away")
}

func TestScheduledRotationIsTheSchedulersAlone(t *testing.T) {
	w := newWorkerWorld(t)
	id := w.createKey("k", nil, nil)
	h, err := commands.NewRotateAPIKeyHandler(w.deps, workerSecret)
	require.NoError(t, err)
	ctx := commands.WithRequest(context.Background(), commands.Request{
		Actor: domain.Actor{Kind: domain.ActorAPIKey, ID: "k2", OrganisationID: "org-1", OrgRole: domain.RoleAdmin, Scopes: domain.AllScopes()}})
	_, err = h.Handle(ctx, commands.RotateAPIKey{KeyID: id, Scheduled: true, DueAt: w.Now()})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
}

func TestKeyWorkerRun(t *testing.T) {
	w := newWorkerWorld(t)
	expires := w.Now().Add(time.Minute)
	id := w.createKey("short", &expires, nil)
	worker, err := commands.NewKeyWorker(w.deps, w.read, workerSecret)
	require.NoError(t, err)
	assert.Error(t, worker.Run(context.Background(), 0))

	w.Advance(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, 10*time.Millisecond) }()
	require.Eventually(t, func() bool { return len(w.eventsOf("ApiKeyExpired", id)) == 1 }, 5*time.Second, 10*time.Millisecond)
	cancel()
	assert.NoError(t, <-done)
}
