package queries

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
)

// recordedStore serves streams whose events were recorded at chosen instants, so that folds
// by time are tested without waiting for a clock.
type recordedStore struct {
	streams map[string][]eventstore.RecordedEvent
}

func (s *recordedStore) Append(context.Context, string, eventstore.ExpectedRevision, ...eventstore.EventData) (eventstore.AppendResult, error) {
	return eventstore.AppendResult{}, nil
}

func (s *recordedStore) ReadStream(_ context.Context, stream string, _ eventstore.Direction, _ uint64, _ int) ([]eventstore.RecordedEvent, error) {
	recs, ok := s.streams[stream]
	if !ok {
		return nil, eventstore.ErrStreamNotFound
	}
	return recs, nil
}

// record adds an event to stream as recorded at at.
func (s *recordedStore) record(t *testing.T, stream string, at time.Time, ev domain.Event) {
	t.Helper()
	data, err := json.Marshal(ev)
	require.NoError(t, err)
	n := len(s.streams[stream])
	s.streams[stream] = append(s.streams[stream], eventstore.RecordedEvent{ID: uuid.New(), Stream: stream,
		Revision: uint64(n), Position: eventstore.Position(100 + n), Type: ev.EventType(), Data: data, RecordedAt: at,
		Metadata: eventstore.Metadata{ActorID: "k-1", ActorKind: eventstore.ActorAPIKey}})
}

func newAsOfPolicy() *domain.RateLimitPolicy { return &domain.RateLimitPolicy{} }

func asOfValue(v float64) *float64 { return &v }

// A policy created at t0 and changed at t1 (to 20) and t2 (to 30).
func recordedPolicy(t *testing.T) (*Queries, string, time.Time) {
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	store := &recordedStore{streams: map[string][]eventstore.RecordedEvent{}}
	stream := domain.Stream(domain.RateLimitPolicyPrefix, "p-1")
	store.record(t, stream, t0, domain.RateLimitPolicyCreated{PolicyID: "p-1", OrganisationID: "o-1", Type: "requests", Unit: "rpm", Value: 10, At: t0})
	store.record(t, stream, t0.Add(time.Minute), domain.RateLimitPolicyUpdated{PolicyID: "p-1", Value: asOfValue(20), At: t0.Add(time.Minute)})
	store.record(t, stream, t0.Add(2*time.Minute), domain.RateLimitPolicyUpdated{PolicyID: "p-1", Value: asOfValue(30), At: t0.Add(2 * time.Minute)})
	return &Queries{Events: store, Registry: domain.NewRegistry()}, stream, t0
}

func TestLoadAsOfFoldsUpToTheInstant(t *testing.T) {
	d, stream, t0 := recordedPolicy(t)
	cases := []struct {
		name     string
		at       time.Time
		existed  bool
		value    float64
		position eventstore.Position
	}{
		{"before the first event", t0.Add(-time.Nanosecond), false, 0, 0},
		{"at the first event, inclusive", t0, true, 10, 100},
		{"between the first and second", t0.Add(59 * time.Second), true, 10, 100},
		{"at the second", t0.Add(time.Minute), true, 20, 101},
		{"a nanosecond before the third", t0.Add(2*time.Minute - time.Nanosecond), true, 20, 101},
		{"at the third", t0.Add(2 * time.Minute), true, 30, 102},
		{"long after", t0.Add(24 * time.Hour), true, 30, 102},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, pos, ok, err := LoadAsOf(context.Background(), d, stream, newAsOfPolicy, c.at)
			require.NoError(t, err)
			assert.Equal(t, c.existed, ok)
			assert.Equal(t, c.existed, p.Exists())
			assert.Equal(t, c.value, p.Value)
			assert.Equal(t, c.position, pos)
		})
	}
}

func TestLoadAsOfEventReturnsTheLastEventFolded(t *testing.T) {
	d, stream, t0 := recordedPolicy(t)
	_, last, ok, err := LoadAsOfEvent(context.Background(), d, stream, newAsOfPolicy, t0.Add(90*time.Second))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, t0.Add(time.Minute), last.RecordedAt)
	assert.Equal(t, "RateLimitPolicyUpdated", last.Type)
	assert.EqualValues(t, 1, last.Revision)
}

func TestLoadAsOfWithoutAStream(t *testing.T) {
	d, _, t0 := recordedPolicy(t)
	p, pos, ok, err := LoadAsOf(context.Background(), d, domain.Stream(domain.RateLimitPolicyPrefix, "none"), newAsOfPolicy, t0)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Zero(t, pos)
	assert.False(t, p.Exists())
}

// A clock that stepped back recorded a later event before an earlier one: the cut is at the
// last event recorded by the instant, and what precedes it is folded.
func TestLoadAsOfAfterAClockStepBack(t *testing.T) {
	d, stream, t0 := recordedPolicy(t)
	store := d.Events.(*recordedStore)
	store.streams[stream][1].RecordedAt = t0.Add(3 * time.Minute)
	p, pos, ok, err := LoadAsOf(context.Background(), d, stream, newAsOfPolicy, t0.Add(2*time.Minute))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, float64(30), p.Value)
	assert.EqualValues(t, 102, pos)
}

func TestLoadAsOfNeedsDeps(t *testing.T) {
	_, _, _, err := LoadAsOf(context.Background(), &Queries{}, "ratelimitpolicy-x", newAsOfPolicy, time.Now())
	require.Error(t, err)
}

func TestAsOfStoreIsReadOnlyAndReadsWholeStreams(t *testing.T) {
	d, stream, t0 := recordedPolicy(t)
	past := asOfStore{store: d.Events, at: t0}
	_, err := past.Append(context.Background(), stream, eventstore.Any)
	require.ErrorIs(t, err, errPastIsReadOnly)
	_, err = past.ReadStream(context.Background(), stream, eventstore.Backwards, eventstore.StreamEnd, 1)
	require.Error(t, err)
	_, err = past.ReadStream(context.Background(), stream, eventstore.Forwards, 1, 0)
	require.Error(t, err)
}

// Over the real store, RecordedAt is the store's clock: instants taken between appends split
// the history.
func TestLoadAsOfOverTheEventStore(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	defer store.Close()
	d := &Queries{Events: store, Registry: domain.NewRegistry()}
	stream := domain.Stream(domain.RateLimitPolicyPrefix, "p-1")
	var marks []time.Time
	for i, ev := range []domain.Event{
		domain.RateLimitPolicyCreated{PolicyID: "p-1", OrganisationID: "o-1", Type: "requests", Unit: "rpm", Value: 10, At: time.Now()},
		domain.RateLimitPolicyUpdated{PolicyID: "p-1", Value: asOfValue(20), At: time.Now()},
		domain.RateLimitPolicyUpdated{PolicyID: "p-1", Value: asOfValue(30), At: time.Now()},
	} {
		marks = append(marks, time.Now())
		time.Sleep(20 * time.Millisecond)
		data, err := json.Marshal(ev)
		require.NoError(t, err, i)
		_, err = store.Append(ctx, stream, eventstore.Any, eventstore.EventData{ID: uuid.New(), Type: ev.EventType(), Data: data,
			Metadata: eventstore.Metadata{ActorID: "system", ActorKind: eventstore.ActorSystem, OrganisationID: "o-1"}})
		require.NoError(t, err, i)
		time.Sleep(20 * time.Millisecond)
	}
	marks = append(marks, time.Now())
	for i, want := range []float64{0, 10, 20, 30} {
		p, _, ok, err := LoadAsOf(ctx, d, stream, newAsOfPolicy, marks[i])
		require.NoError(t, err)
		assert.Equal(t, i > 0, ok, "mark %d", i)
		assert.Equal(t, want, p.Value, "mark %d", i)
	}
}

func TestHistoryDescribesEachEventWithItsStates(t *testing.T) {
	d, stream, _ := recordedPolicy(t)
	changes, final, err := d.History(context.Background(), stream, nil)
	require.NoError(t, err)
	require.Len(t, changes, 3)
	assert.Equal(t, float64(30), final.(*domain.RateLimitPolicy).Value)
	assert.JSONEq(t, "null", string(changes[0].Before))
	for i, want := range []float64{10, 20, 30} {
		var after domain.RateLimitPolicy
		require.NoError(t, json.Unmarshal(changes[i].After, &after))
		assert.Equal(t, want, after.Value)
		assert.EqualValues(t, i, changes[i].Event.Revision)
		if i > 0 {
			assert.JSONEq(t, string(changes[i-1].After), string(changes[i].Before), "each change starts where the last ended")
		}
	}
}

func TestHistoryEncodesOnlyTheDescribedEvents(t *testing.T) {
	d, stream, _ := recordedPolicy(t)
	changes, final, err := d.History(context.Background(), stream, func(i int) bool { return i == 2 })
	require.NoError(t, err)
	require.Len(t, changes, 3, "every event is listed")
	assert.Nil(t, changes[0].Before)
	assert.Nil(t, changes[1].After)
	var before domain.RateLimitPolicy
	require.NoError(t, json.Unmarshal(changes[2].Before, &before))
	assert.Equal(t, float64(20), before.Value, "undescribed events are still folded")
	assert.Equal(t, float64(30), final.(*domain.RateLimitPolicy).Value)
}

func TestHistoryOfNothing(t *testing.T) {
	d, _, _ := recordedPolicy(t)
	changes, final, err := d.History(context.Background(), domain.Stream(domain.RateLimitPolicyPrefix, "none"), nil)
	require.NoError(t, err)
	assert.Empty(t, changes)
	assert.Nil(t, final)

	_, _, err = d.History(context.Background(), "nosuchprefix-1", nil)
	require.Error(t, err, "a stream no aggregate owns has no history")
}
