package commands

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/eventstore/sqlite"
)

func testDeps(t *testing.T) Deps {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	return Deps{Store: s, Registry: domain.NewRegistry(), Now: func() time.Time { return now }}
}

func eventTypes(t *testing.T, d Deps) map[string]int {
	t.Helper()
	evs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), eventstore.Start, 1000)
	require.NoError(t, err)
	out := map[string]int{}
	for _, ev := range evs {
		out[ev.Type]++
	}
	return out
}

// A bootstrap cut short (here: after its plan and the organisation) is finished by the next
// start with the same plan, and nothing is written twice.
func TestBootstrapResumesAfterACrash(t *testing.T) {
	d := testDeps(t)
	ctx := context.Background()
	h, err := NewBootstrapHandler(d)
	require.NoError(t, err)
	first, err := h.Handle(ctx, Bootstrap{OrganisationName: "Org", OwnerEmail: "o@example.com", AdminKey: "key-key-key-key-key-key-1"})
	require.NoError(t, err)
	require.True(t, first.Created)

	again, err := h.Handle(ctx, Bootstrap{OrganisationName: "Org", OwnerEmail: "o@example.com", AdminKey: "key-key-key-key-key-key-1"})
	require.NoError(t, err)
	assert.False(t, again.Created, "a completed bootstrap does nothing")
	assert.Equal(t, first.OrganisationID, again.OrganisationID)

	// Now a crash: a second store where only the plan and the organisation were written.
	d2 := testDeps(t)
	h2, _ := NewBootstrapHandler(d2)
	plan := domain.BootstrapStarted{OrganisationID: "o-1", OwnerUserID: "u-1", AdminKeyID: "k-1", At: d2.Now()}
	sys := WithRequest(ctx, Request{Actor: domain.System("")})
	_, err = appendEvents(sys, d2, domain.BootstrapStream, eventstore.NoStream, []domain.Event{plan})
	require.NoError(t, err)
	step := WithRequest(ctx, Request{Actor: domain.System("o-1"), RequestID: "bootstrap", IdempotencyKey: "bootstrap-o-1-organisation"})
	_, err = appendEvents(step, d2, domain.Stream(domain.OrganisationPrefix, "o-1"), eventstore.NoStream,
		[]domain.Event{domain.OrganisationCreated{OrganisationID: "o-1", Name: "Org", OwnerUserID: "u-1", At: d2.Now()}})
	require.NoError(t, err)

	res, err := h2.Handle(ctx, Bootstrap{OrganisationName: "Org", OwnerEmail: "o@example.com", AdminKey: "key-key-key-key-key-key-2"})
	require.NoError(t, err)
	assert.True(t, res.Created)
	assert.Equal(t, "o-1", res.OrganisationID, "the resumed bootstrap follows the stored plan")
	types := eventTypes(t, d2)
	for _, typ := range []string{"BootstrapStarted", "OrganisationCreated", "UserJoined", "ApiKeyCreated", "BootstrapCompleted", "NameReserved"} {
		assert.Equal(t, 1, types[typ], typ)
	}
}

// Two processes bootstrapping one empty store at once end with one organisation.
func TestConcurrentBootstrapsAgreeOnOnePlan(t *testing.T) {
	d := testDeps(t)
	h, _ := NewBootstrapHandler(d)
	var wg sync.WaitGroup
	results := make([]BootstrapResult, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = h.Handle(context.Background(), Bootstrap{OrganisationName: "Org", OwnerEmail: "o@example.com", AdminKey: "same-key-for-everyone-001"})
		}()
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i])
		assert.Equal(t, results[0].OrganisationID, results[i].OrganisationID)
	}
	assert.Equal(t, 1, eventTypes(t, d)["OrganisationCreated"])
	assert.Equal(t, 1, eventTypes(t, d)["ApiKeyCreated"])
}

// A conflict between load and append is retried from a fresh load, so concurrent updates
// of one aggregate all land, each decided on the state the previous one left.
func TestExecuteRetriesConflicts(t *testing.T) {
	d := testDeps(t)
	ctx := WithRequest(context.Background(), Request{Actor: domain.System("org")})
	stream := domain.Stream(domain.RateLimitPolicyPrefix, "p-1")
	v := 10.0
	_, err := execute(ctx, d, stream, newRateLimitPolicy, func(p *domain.RateLimitPolicy) ([]domain.Event, error) {
		return p.Create(domain.CreateRateLimitPolicy{PolicyID: "p-1", OrganisationID: "org", WorkspaceID: "ws",
			Conditions: []domain.Condition{{Key: "api_key", Value: "k"}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			Type: "requests", Unit: "rpm", Value: &v}, d.Now())
	})
	require.NoError(t, err)

	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := execute(ctx, d, stream, newRateLimitPolicy, func(p *domain.RateLimitPolicy) ([]domain.Event, error) {
				next := p.Value + 1
				return p.Update(domain.UpdateRateLimitPolicy{Value: &next}, d.Now())
			})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	p, err := Load(ctx, d, stream, newRateLimitPolicy)
	require.NoError(t, err)
	assert.Equal(t, 14.0, p.Value, "every increment landed on the one before it")
}

// Fifty plain writes of one resource at once all land: conflicts are retried until a time
// bound, not a count. With If-Match, a write decided on a revision the resource has moved past
// is refused with 412, and one on the current revision lands.
func TestPlainWritesRetryAndIfMatchRefusesStaleOnes(t *testing.T) {
	d := testDeps(t)
	ctx := WithRequest(context.Background(), Request{Actor: domain.System("org")})
	stream := domain.Stream(domain.RateLimitPolicyPrefix, "p-1")
	v := 0.0
	_, err := execute(ctx, d, stream, newRateLimitPolicy, func(p *domain.RateLimitPolicy) ([]domain.Event, error) {
		v = 1
		return p.Create(domain.CreateRateLimitPolicy{PolicyID: "p-1", OrganisationID: "org", WorkspaceID: "ws",
			Conditions: []domain.Condition{{Key: "api_key", Value: "k"}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			Type: "requests", Unit: "rpm", Value: &v}, d.Now())
	})
	require.NoError(t, err)
	increment := func(p *domain.RateLimitPolicy) ([]domain.Event, error) {
		next := p.Value + 1
		return p.Update(domain.UpdateRateLimitPolicy{Value: &next}, d.Now())
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, err := execute(ctx, d, stream, newRateLimitPolicy, increment)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	p, err := Load(ctx, d, stream, newRateLimitPolicy)
	require.NoError(t, err)
	require.Equal(t, 51.0, p.Value, "all fifty landed")

	recs, err := d.Store.(eventstore.Store).ReadStream(context.Background(), stream, eventstore.Forwards, 0, 1000)
	require.NoError(t, err)
	current := recs[len(recs)-1].Revision
	stale := current - 3
	_, err = execute(WithRequest(context.Background(), Request{Actor: domain.System("org"), IfMatch: &stale}),
		d, stream, newRateLimitPolicy, increment)
	require.Error(t, err)
	var appErr *domain.Error
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, domain.CodePrecondition, appErr.Code)
	require.Contains(t, appErr.Message, "not the revision")

	_, err = execute(WithRequest(context.Background(), Request{Actor: domain.System("org"), IfMatch: &current}),
		d, stream, newRateLimitPolicy, increment)
	require.NoError(t, err, "If-Match on the current revision lands")
	p, err = Load(ctx, d, stream, newRateLimitPolicy)
	require.NoError(t, err)
	require.Equal(t, 52.0, p.Value)
}

// A request that repeats an idempotency key writes nothing and reports the first result.
func TestIdempotencyKeyReplaysWithoutWriting(t *testing.T) {
	d := testDeps(t)
	ctx := WithRequest(context.Background(), Request{Actor: domain.System("org"), RequestID: "r1", IdempotencyKey: "idem-1"})
	id := NewID(ctx, "ratelimitpolicy")
	assert.Equal(t, id, NewID(ctx, "ratelimitpolicy"), "ids derive from the key")
	v := 5.0
	decide := func(p *domain.RateLimitPolicy) ([]domain.Event, error) {
		return p.Create(domain.CreateRateLimitPolicy{PolicyID: id, OrganisationID: "org", WorkspaceID: "ws",
			Conditions: []domain.Condition{{Key: "api_key", Value: "k"}}, GroupBy: []domain.GroupBy{{Key: "api_key"}},
			Type: "requests", Unit: "rpm", Value: &v}, d.Now())
	}
	first, err := execute(ctx, d, domain.Stream(domain.RateLimitPolicyPrefix, id), newRateLimitPolicy, decide)
	require.NoError(t, err)
	second, err := execute(ctx, d, domain.Stream(domain.RateLimitPolicyPrefix, id), newRateLimitPolicy, decide)
	require.NoError(t, err, "the retry does not hit 'exists already'")
	assert.True(t, second.Replayed)
	assert.Equal(t, first.Position, second.Position)
	assert.Equal(t, 1, eventTypes(t, d)["RateLimitPolicyCreated"])

	other := WithRequest(context.Background(), Request{Actor: domain.System("org"), IdempotencyKey: "idem-2"})
	assert.NotEqual(t, id, NewID(other, "ratelimitpolicy"))
}
