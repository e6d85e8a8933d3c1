package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/migrations/migrationstest"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/postgres"
	"github.com/causeway/causeway/projections/projectionstest"
)

func openPostgres(t *testing.T, reg *domain.Registry) (*postgres.Model, *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), migrationstest.PostgresURL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	m, err := postgres.New(context.Background(), pool, reg, "postgres")
	require.NoError(t, err)
	return m, pool
}

func TestReadModelContractPostgres(t *testing.T) {
	projectionstest.Run(t, func(t *testing.T, reg *domain.Registry) projections.ReadModel {
		m, _ := openPostgres(t, reg)
		return m
	})
}

// A fault between a batch's rows and its checkpoint rolls both back: nothing of the batch is
// visible, the checkpoint has not moved, and the next attempt writes it whole.
func TestPostgresFaultBetweenRowsAndCheckpointRollsBothBack(t *testing.T) {
	reg := domain.NewRegistry()
	store := projectionstest.Load(t, projectionstest.History(3, time.Now()))
	m, pool := openPostgres(t, reg)
	batch, err := store.ReadAll(context.Background(), eventstore.Start, 1000)
	require.NoError(t, err)

	postgres.SetBeforeCheckpoint(m, func() error { return errors.New("injected fault") })
	err = m.ApplyBatch(context.Background(), eventstore.Start, batch)
	require.ErrorContains(t, err, "injected fault")
	var docs, audit int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM rm_documents`).Scan(&docs))
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM rm_audit`).Scan(&audit))
	assert.Zero(t, docs, "no rows of the failed batch")
	assert.Zero(t, audit)
	assert.Equal(t, eventstore.Start, m.Position(), "and no checkpoint")

	postgres.SetBeforeCheckpoint(m, nil)
	require.NoError(t, m.ApplyBatch(context.Background(), eventstore.Start, batch))
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM rm_audit`).Scan(&audit))
	assert.Equal(t, len(batch), audit)
	assert.Equal(t, batch[len(batch)-1].Position, m.Position())

	require.ErrorIs(t, m.ApplyBatch(context.Background(), eventstore.Start, batch), projections.ErrCheckpointMoved,
		"a second runner starting from the old checkpoint cannot advance it")
}

// The crash test: stop the projector at random points of a 10,000-event replay, 24 times,
// restarting it each time. After every stop the checkpoint is never ahead of the rows, and in
// the end the read model equals a clean rebuild.
func TestPostgresProjectorSurvivesCrashes(t *testing.T) {
	reg := domain.NewRegistry()
	steps := projectionstest.History(1250, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) // ≈ 10,000 events
	store := projectionstest.Load(t, steps)
	head := projectionstest.Head(t, store)
	require.GreaterOrEqual(t, int(head), 10_000)
	m, pool := openPostgres(t, reg)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	// 24 random points across the whole replay; the projector is killed as soon as it passes
	// each, mid-batch or between batches, and restarted.
	targets := make([]int, 24)
	for i := range targets {
		targets[i] = 1 + rand.IntN(int(head)-1)
	}
	sort.Ints(targets)
	var stops []eventstore.Position
	for _, target := range targets {
		ctx, cancel := context.WithCancel(context.Background())
		r := &projections.Runner{Store: store, Projections: []projections.Projection{m}, MaxBatch: 1 + rand.IntN(200), Log: log}
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		require.Eventually(t, func() bool { return m.Position() >= eventstore.Position(target) }, 60*time.Second, time.Millisecond)
		cancel()
		<-done
		if cp := checkpointNeverAhead(t, pool, m); cp < head {
			stops = append(stops, cp)
		}
	}
	t.Logf("stopped mid-replay %d times, at positions %v of %d", len(stops), stops, head)
	require.GreaterOrEqual(t, len(stops), 20, "the projector was stopped at least 20 times during the replay")
	projectionstest.Project(t, store, m) // the last restart runs to the end
	checkpointNeverAhead(t, pool, m)

	clean, _ := openPostgres(t, reg)
	projectionstest.Project(t, store, clean)
	got, want := dump(t, m), dump(t, clean)
	if got != want {
		_ = os.WriteFile(filepath.Join(os.TempDir(), "crash-got.txt"), []byte(got), 0o600)
		_ = os.WriteFile(filepath.Join(os.TempDir(), "crash-want.txt"), []byte(want), 0o600)
	}
	assert.True(t, got == want, "the read model equals a clean rebuild (dumps in %s)", os.TempDir())
}

// checkpointNeverAhead: every event up to the checkpoint has its audit row, and none after it
// has (rows and checkpoint are written together). Checkpoint and rows are read in one
// statement, one snapshot: a batch whose commit lands after its runner was stopped is seen
// whole or not at all.
func checkpointNeverAhead(t *testing.T, pool *pgxpool.Pool, m *postgres.Model) eventstore.Position {
	t.Helper()
	var cp, rows, maxPos int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT (SELECT position FROM rm_checkpoints WHERE name = $1),
		count(*), coalesce(max(position), 0) FROM rm_audit`, m.Name()).Scan(&cp, &rows, &maxPos))
	assert.Equal(t, cp, maxPos, "the checkpoint is exactly the last row written")
	assert.Equal(t, cp, rows, "and every event up to it has its row")
	return eventstore.Position(cp)
}

// dump is a model's every answer worth comparing, as JSON.
func dump(t *testing.T, m projections.Reader) string {
	t.Helper()
	ctx := context.Background()
	val := func(v any, err error) any {
		t.Helper()
		require.NoError(t, err)
		return v
	}
	org := projectionstest.Org
	all := map[string]bool{domain.StatusActive: true, domain.StatusArchived: true}
	b, err := json.MarshalIndent([]any{
		val(m.Workspaces(ctx, projections.WorkspaceFilter{OrganisationID: org, Statuses: all})),
		val(m.APIKeys(ctx, projections.KeyFilter{OrganisationID: org})),
		val(m.RateLimitPolicies(ctx, projections.PolicyFilter{OrganisationID: org, Statuses: all})),
		val(m.UsageLimitPolicies(ctx, projections.PolicyFilter{OrganisationID: org, Statuses: all}, "")),
		val(m.Users(ctx, projections.UserFilter{OrganisationID: org})),
		val(m.Guardrails(ctx, projections.GuardrailFilter{OrganisationID: org, Statuses: all})),
		len(projectionstest.AuditLog(t, m, projections.AuditFilter{OrganisationID: org})),
	}, "", " ")
	require.NoError(t, err)
	return string(b)
}

// Two runners of one projection (two processes) run at once: the checkpoint's compare-and-set
// lets one advance it at a time, neither fails, and the result equals a clean rebuild with
// every event folded once.
func TestTwoRunnersOfOneProjection(t *testing.T) {
	reg := domain.NewRegistry()
	store := projectionstest.Load(t, projectionstest.History(150, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)))
	url := migrationstest.PostgresURL(t)
	open := func() *postgres.Model {
		pool, err := pgxpool.New(context.Background(), url)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		m, err := postgres.New(context.Background(), pool, reg, "postgres")
		require.NoError(t, err)
		return m
	}
	a, b := open(), open()
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runners := []*projections.Runner{
		{Store: store, Projections: []projections.Projection{a}, MaxBatch: 7, Log: log},
		{Store: store, Projections: []projections.Projection{b}, MaxBatch: 11, Log: log},
	}
	done := make(chan struct{}, 2)
	for _, r := range runners {
		go func() { _ = r.Run(ctx); done <- struct{}{} }()
	}
	head := projectionstest.Head(t, store)
	require.Eventually(t, func() bool { return a.Position() == head }, 60*time.Second, 5*time.Millisecond)
	cancel()
	<-done
	<-done
	for _, r := range runners {
		assert.NoError(t, r.Healthy(context.Background()), "a moved checkpoint is not a failure")
	}
	clean, _ := openPostgres(t, reg)
	projectionstest.Project(t, store, clean)
	assert.Equal(t, dump(t, clean), dump(t, a))
	assert.Equal(t, head, checkpointNeverAhead(t, poolOf(t, url), a))
}

func poolOf(t *testing.T, url string) *pgxpool.Pool {
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// A read that PostgreSQL cannot answer is an error wrapping projections.ErrUnavailable, never
// "not found" or an empty list.
func TestPostgresReadsThatFailAreUnavailableNotNotFound(t *testing.T) {
	reg := domain.NewRegistry()
	m, pool := openPostgres(t, reg)
	ctx := context.Background()
	_, ok, err := m.Workspace(ctx, projectionstest.Org, "ws-00")
	require.NoError(t, err)
	assert.False(t, ok, "while the database answers, a missing workspace is not found")
	pool.Close()
	_, ok, err = m.Workspace(ctx, projectionstest.Org, "ws-00")
	assert.ErrorIs(t, err, projections.ErrUnavailable)
	assert.False(t, ok)
	list, err := m.Workspaces(ctx, projections.WorkspaceFilter{OrganisationID: projectionstest.Org})
	assert.ErrorIs(t, err, projections.ErrUnavailable)
	assert.Nil(t, list)
	_, _, err = m.AuditRecords(ctx, projections.AuditFilter{OrganisationID: projectionstest.Org}, 0, 10)
	assert.ErrorIs(t, err, projections.ErrUnavailable)
	_, _, err = m.AuditRecord(ctx, projectionstest.Org, "x")
	assert.ErrorIs(t, err, projections.ErrUnavailable)
	_, err = m.Checkpoint(ctx)
	assert.ErrorIs(t, err, projections.ErrUnavailable)
}
