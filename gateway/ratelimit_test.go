package gateway

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
)

// 25 requests against 20 per minute: exactly 20 allowed and 5 refused, with the right
// remaining counts, and a refused request consumes nothing.
func TestLimiterTwentyPerMinute(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 10, 0, time.UTC)
	l := NewLimiter(func() time.Time { return now }, nil)
	lim := []Limit{{Bucket: "key:k", Type: domain.LimitRequests, Unit: "rpm", Value: 20}}
	allowed, refused := 0, 0
	for i := 0; i < 25; i++ {
		d := l.Allow(lim)
		if d.Allowed {
			allowed++
			assert.Equal(t, float64(20-allowed), d.Remaining, "request %d", i)
		} else {
			refused++
			assert.Equal(t, 0.0, d.Remaining)
		}
		assert.Equal(t, time.Date(2026, 11, 20, 12, 1, 0, 0, time.UTC), d.Reset)
	}
	assert.Equal(t, 20, allowed)
	assert.Equal(t, 5, refused)

	now = now.Add(50 * time.Second) // the next minute
	assert.True(t, l.Allow(lim).Allowed, "a new window starts afresh")
}

// A request refused by one limit consumes nothing of the others.
func TestLimiterRefusalConsumesNothing(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	l := NewLimiter(func() time.Time { return now }, nil)
	tight := Limit{Bucket: "policy:p", Type: domain.LimitRequests, Unit: "rpm", Value: 1}
	loose := Limit{Bucket: "key:k", Type: domain.LimitRequests, Unit: "rpd", Value: 100}
	require.True(t, l.Allow([]Limit{loose, tight}).Allowed)
	for i := 0; i < 10; i++ {
		require.False(t, l.Allow([]Limit{loose, tight}).Allowed)
	}
	d := l.Allow([]Limit{loose})
	assert.Equal(t, 98.0, d.Remaining, "only the one allowed request counted against the daily limit")
}

func TestLimiterTokens(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	l := NewLimiter(func() time.Time { return now }, nil)
	lim := []Limit{{Bucket: "ws:w", Type: domain.LimitTokens, Unit: "rph", Value: 1000}}
	require.True(t, l.Allow(lim).Allowed)
	l.Charge(lim, 900)
	require.True(t, l.Allow(lim).Allowed, "100 tokens left")
	l.Charge(lim, 200)
	d := l.Allow(lim)
	assert.False(t, d.Allowed, "the window is spent")
	assert.Equal(t, time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC), d.Reset)
}

func TestWindowsAlignToTheirUnit(t *testing.T) {
	at := time.Date(2026, 11, 20, 15, 42, 7, 0, time.UTC) // a Friday
	assert.Equal(t, time.Date(2026, 11, 20, 15, 42, 0, 0, time.UTC), windowStart("rpm", at))
	assert.Equal(t, time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC), windowStart("rph", at))
	assert.Equal(t, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), windowStart("rpd", at))
	assert.Equal(t, time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), windowStart("rpw", at), "weeks start on Monday")
}

func TestLimiterIsExactUnderConcurrency(t *testing.T) {
	l := NewLimiter(nil, nil)
	lim := []Limit{{Bucket: "key:k", Type: domain.LimitRequests, Unit: "rpd", Value: 500}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.Allow(lim).Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 500, allowed)
}

func TestPolicyLimitsMatchConditionsAndGroup(t *testing.T) {
	policy := func(id string, conds []domain.Condition, groups []domain.GroupBy) domain.RateLimitPolicy {
		return domain.RateLimitPolicy{ID: id, OrganisationID: "o", WorkspaceID: "w", Status: domain.StatusActive,
			Conditions: conds, GroupBy: groups, Type: domain.LimitRequests, Unit: "rpm", Value: 5}
	}
	raw := []domain.RateLimitPolicy{
		policy("by-user", []domain.Condition{{Key: "workspace_id", Value: "w"}}, []domain.GroupBy{{Key: "metadata._user"}}),
		policy("chat-only", []domain.Condition{{Key: "endpoint_type", Value: "chatComplete"}}, []domain.GroupBy{{Key: "api_key"}}),
		policy("team-x", []domain.Condition{{Key: "metadata.team", Value: "x"}}, nil),
		func() domain.RateLimitPolicy {
			p := policy("archived", nil, nil)
			p.Status = domain.StatusArchived
			return p
		}(),
		func() domain.RateLimitPolicy { p := policy("other-ws", nil, nil); p.WorkspaceID = "w2"; return p }(),
	}
	var ps []Versioned[domain.RateLimitPolicy]
	for i, p := range raw {
		ps = append(ps, Versioned[domain.RateLimitPolicy]{Value: p, Version: uint64(i + 1)})
	}
	f := RequestFacts{OrganisationID: "o", WorkspaceID: "w", APIKeyID: "k", EndpointType: "embed", Metadata: map[string]string{"_user": "ann"}}
	got := PolicyLimits(ps, f)
	require.Len(t, got, 1)
	assert.Equal(t, "policy:by-user:metadata._user=ann", got[0].Bucket)
	assert.Equal(t, "rate_limit_policy:by-user@v1", got[0].By.String(), "the limit names its policy and version")

	f.EndpointType, f.Metadata["team"] = "chatComplete", "x"
	buckets := map[string]bool{}
	for _, l := range PolicyLimits(ps, f) {
		buckets[l.Bucket] = true
	}
	assert.Equal(t, map[string]bool{"policy:by-user:metadata._user=ann": true, "policy:chat-only:api_key=k": true, "policy:team-x:": true}, buckets)
}

// A refusal names the limit in its unit and kind, what set it, and how long to wait.
func TestRefusalMessage(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 48, 0, time.UTC)
	policy := analytics.Decider{Kind: "rate_limit_policy", ID: "p1", Version: 3}
	cases := []struct {
		name  string
		limit Limit
		reset time.Time
		on    string
		want  string
	}{
		{"tokens per minute", Limit{Type: domain.LimitTokens, Unit: "rpm", Value: 50, By: policy}, now.Add(12 * time.Second), "",
			"rate limit of 50 tokens per minute reached (rate_limit_policy:p1@v3); retry after 12s"},
		{"one request per hour", Limit{Type: domain.LimitRequests, Unit: "rph", Value: 1, By: analytics.Decider{Kind: "api_key", ID: "k", Sub: "requests/rph", Version: 2}},
			now.Add(11*time.Minute + 12*time.Second), "", "rate limit of 1 request per hour reached (api_key:k:requests/rph@v2); retry after 11m12s"},
		{"a managed provider's, per day", Limit{Type: domain.LimitRequests, Unit: "rpd", Value: 1000, By: analytics.Decider{Kind: "provider", ID: "pv", Version: 1}},
			now.Add(3 * time.Hour), "@openai-main", "rate limit of 1000 requests per day on @openai-main reached (provider:pv@v1); retry after 3h"},
		{"a window ending now waits a second", Limit{Type: domain.LimitRequests, Unit: "rpw", Value: 5, By: policy}, now, "",
			"rate limit of 5 requests per week reached (rate_limit_policy:p1@v3); retry after 1s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decision{Limit: tc.limit, Reset: tc.reset}
			assert.Equal(t, tc.want, d.Refusal(now, tc.on))
		})
	}
}
