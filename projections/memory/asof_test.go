package memory_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
	"github.com/causeway/causeway/projections/memory"
	"github.com/causeway/causeway/projections/projectionstest"
)

// events is an event store held in a slice, with the recorded times a test gives them.
type events []eventstore.RecordedEvent

func (es events) ReadAll(_ context.Context, from eventstore.Position, max int) ([]eventstore.RecordedEvent, error) {
	var out []eventstore.RecordedEvent
	for _, e := range es {
		if e.Position > from && len(out) < max {
			out = append(out, e)
		}
	}
	return out, nil
}

func (es events) ReadStream(_ context.Context, stream string, _ eventstore.Direction, _ uint64, _ int) ([]eventstore.RecordedEvent, error) {
	var out []eventstore.RecordedEvent
	for _, e := range es {
		if e.Stream == stream {
			out = append(out, e)
		}
	}
	return out, nil
}

// lists is what a read model answers to the admin API's lists, as JSON.
func lists(t *testing.T, m projections.Reader) map[string]string {
	t.Helper()
	ctx := context.Background()
	val := func(v any, err error) any {
		t.Helper()
		require.NoError(t, err)
		return v
	}
	all := map[string]bool{domain.StatusActive: true, domain.StatusArchived: true}
	out := map[string]string{}
	for name, v := range map[string]any{
		"workspaces":    val(m.Workspaces(ctx, projections.WorkspaceFilter{OrganisationID: projectionstest.Org, Statuses: all})),
		"keys":          val(m.APIKeys(ctx, projections.KeyFilter{OrganisationID: projectionstest.Org})),
		"users":         val(m.Users(ctx, projections.UserFilter{OrganisationID: projectionstest.Org})),
		"rate limits":   val(m.RateLimitPolicies(ctx, projections.PolicyFilter{OrganisationID: projectionstest.Org, Statuses: all})),
		"usage limits":  val(m.UsageLimitPolicies(ctx, projections.PolicyFilter{OrganisationID: projectionstest.Org, Statuses: all}, "")),
		"notifications": val(m.Notifications(ctx, projections.NotificationFilter{OrganisationID: projectionstest.Org})),
		"members":       val(m.WorkspaceMembers(ctx, projectionstest.Org, "ws-01")),
	} {
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		out[name] = string(raw)
	}
	return out
}

// AsOf folds each stream up to its last event recorded by the instant, and no further: what a
// model fed those events alone answers, even where a clock stepped back within a stream.
func TestAsOfFoldsEachStreamUpToTheInstant(t *testing.T) {
	reg := domain.NewRegistry()
	store := projectionstest.Load(t, projectionstest.History(8, time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)))
	all, err := store.ReadAll(context.Background(), eventstore.Start, 100_000)
	require.NoError(t, err)
	require.Greater(t, len(all), 50)

	// Event i is recorded at base+i s; the instant is between the halves. One stream's first
	// event is recorded late (after the instant) while its next is early: the clock stepped.
	base := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	half := len(all) / 2
	at := base.Add(time.Duration(half)*time.Second + time.Second/2)
	es := make(events, len(all))
	copy(es, all)
	for i := range es {
		es[i].RecordedAt = base.Add(time.Duration(i) * time.Second)
	}
	stepped := ""
	for i := 0; i < half && stepped == ""; i++ {
		for j := i + 1; j < half; j++ {
			if es[j].Stream == es[i].Stream {
				if _, ok := reg.NewAggregate(es[i].Stream); ok {
					stepped = es[i].Stream
					es[i].RecordedAt = at.Add(time.Hour)
				}
				break
			}
		}
	}
	require.NotEmpty(t, stepped, "a stream with two events before the instant")

	// What the instant held: per stream, every event up to its last one recorded by then.
	last := map[string]uint64{}
	for _, e := range es {
		if !e.RecordedAt.After(at) {
			last[e.Stream] = e.Revision
		}
	}
	want := memory.New(reg)
	for _, e := range es {
		if rev, ok := last[e.Stream]; ok && e.Revision <= rev {
			require.NoError(t, want.Apply(e))
		}
	}
	got, since, err := memory.AsOf(context.Background(), es, reg, at)
	require.NoError(t, err)
	assert.Equal(t, lists(t, want), lists(t, got))
	assert.Equal(t, base.Add(time.Duration(half)*time.Second), since, "the last event recorded by the instant")

	// After the last event, the past is the present.
	live := memory.New(reg)
	projectionstest.Project(t, store, live)
	now, _, err := memory.AsOf(context.Background(), store, reg, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, lists(t, live), lists(t, now))
	before, since, err := memory.AsOf(context.Background(), store, reg, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.True(t, since.IsZero())
	assert.Equal(t, "[]", lists(t, before)["workspaces"], "before the first event, nothing")
}
