package gateway

import (
	"context"
	"errors"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// The engine runs against the real OpenAI-compatible adapter and local stand-ins.
func testEngine() *Engine {
	return &Engine{Providers: providers.NewRegistry(all.Default()),
		Sleep: func(context.Context, time.Duration) error { return nil }}
}

func chatCall() providers.Call {
	return providers.Call{Endpoint: providers.EndpointChat, Model: "m",
		Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":1}`)}
}

func leafAt(s *providertest.OpenAIServer) Plan {
	return Plan{Target: &providers.Target{Provider: "openai", APIKey: "sk", BaseURL: s.BaseURL()}}
}

func TestLoadbalanceFollowsWeights(t *testing.T) {
	a, b := providertest.NewOpenAI(t), providertest.NewOpenAI(t)
	pa, pb := leafAt(a), leafAt(b)
	pa.Weight, pb.Weight = 3, 1
	plan := Plan{Mode: "loadbalance", Targets: []Plan{pa, pb}}
	e := testEngine()
	const n = 400
	for i := 0; i < n; i++ {
		out, err := e.Run(context.Background(), plan, chatCall())
		require.NoError(t, err)
		out.Close()
	}
	share := float64(len(a.Requests())) / n
	assert.InDelta(t, 0.75, share, 0.08, "weights 3:1 send about three quarters to the first (got %.2f)", share)
	zero := Plan{Mode: "loadbalance", Targets: []Plan{func() Plan { p := leafAt(a); p.Weight = 0; return p }(), pb}}
	before := len(a.Requests())
	for i := 0; i < 50; i++ {
		out, err := e.Run(context.Background(), zero, chatCall())
		require.NoError(t, err)
		out.Close()
	}
	assert.Equal(t, before, len(a.Requests()), "a target of weight 0 gets nothing")
}

// override_params apply to the provider's request, and nested targets inherit them unless they
// set the key themselves.
func TestOverridesAreInherited(t *testing.T) {
	a, b := providertest.NewOpenAI(t), providertest.NewOpenAI(t)
	pb := leafAt(b)
	pb.Override = map[string]any{"temperature": 0.9}
	plan := Plan{Mode: "fallback", Override: map[string]any{"temperature": 0.2, "max_tokens": 7}, Targets: []Plan{leafAt(a), pb}}
	a.Script(providertest.Answer{Status: 500, Body: `{"error":{"message":"boom"}}`})
	out, err := testEngine().Run(context.Background(), plan, chatCall())
	require.NoError(t, err)
	out.Close()
	assert.Equal(t, "0.1", out.Path)
	assert.Equal(t, []string{"0.0"}, out.Tried)
	first, second := a.LastRequest().JSON(), b.LastRequest().JSON()
	assert.EqualValues(t, 0.2, first["temperature"], "the parent's override")
	assert.EqualValues(t, 7, first["max_tokens"])
	assert.EqualValues(t, 0.9, second["temperature"], "a nested target's own override wins")
	assert.EqualValues(t, 7, second["max_tokens"], "and it inherits the rest")
}

// A fallback moves on only for the statuses it names; other errors are answered as they are.
func TestFallbackOnlyOnNamedStatuses(t *testing.T) {
	a, b := providertest.NewOpenAI(t), providertest.NewOpenAI(t)
	plan := Plan{Mode: "fallback", OnStatusCodes: []int{503}, Targets: []Plan{leafAt(a), leafAt(b)}}
	a.Script(providertest.Answer{Status: 400, Body: `{"error":{"message":"bad request"}}`})
	_, err := testEngine().Run(context.Background(), plan, chatCall())
	var up *providers.UpstreamError
	require.ErrorAs(t, err, &up)
	assert.Equal(t, 400, up.Status)
	assert.Empty(t, b.Requests(), "a 400 is not a reason to fall back")
}

// Retries wait as Retry-After says (capped), then back off exponentially.
func TestRetryHonoursRetryAfter(t *testing.T) {
	a := providertest.NewOpenAI(t)
	a.Script(providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {"7"}}, Body: `{"error":{"message":"slow"}}`},
		providertest.Answer{Status: 503, Body: `{"error":{"message":"down"}}`})
	var waits []time.Duration
	e := testEngine()
	e.MaxBackoff = 5 * time.Second
	e.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	plan := leafAt(a)
	plan.Retry = Retry{Attempts: 3}
	out, err := e.Run(context.Background(), plan, chatCall())
	require.NoError(t, err)
	out.Close()
	assert.Equal(t, 2, out.Retries)
	assert.Equal(t, []time.Duration{5 * time.Second, 500 * time.Millisecond}, waits, "Retry-After capped, then the doubled back-off")
}

// request_timeout bounds a target's call.
func TestRequestTimeout(t *testing.T) {
	a := providertest.NewOpenAI(t)
	a.Script(providertest.Answer{Status: 200, Delay: 2 * time.Second, Body: `{}`})
	plan := leafAt(a)
	plan.Timeout, plan.TimeoutFrom = 100*time.Millisecond, HeaderRequestTimeout
	start := time.Now()
	_, err := testEngine().Run(context.Background(), plan, chatCall())
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	assert.Less(t, time.Since(start), time.Second)
	var te *TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "the request timeout of 100ms (x-gateway-request-timeout) ran out", te.Error())
	var conn *providers.ConnectionError
	assert.ErrorAs(t, err, &conn, "a fallback still sees a provider that did not answer")
}

// A stream cut by the request timeout says which timeout cut it; a nested target's own
// timeout names itself, and a fallback moves past it.
func TestRequestTimeoutNamesItself(t *testing.T) {
	a := providertest.NewOpenAI(t)
	a.SetStream(providertest.StreamPlan{Chunks: 100, Delay: 20 * time.Millisecond})
	plan := leafAt(a)
	plan.Timeout, plan.TimeoutFrom = 150*time.Millisecond, "the config's request_timeout"
	call := chatCall()
	call.Stream = true
	out, err := testEngine().Run(context.Background(), plan, call)
	require.NoError(t, err)
	defer out.Close()
	for err == nil {
		_, err = out.Stream.Next()
	}
	var te *TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "the request timeout of 150ms (the config's request_timeout) ran out", te.Error())

	slow, fast := providertest.NewOpenAI(t), providertest.NewOpenAI(t)
	slow.Script(providertest.Answer{Delay: 2 * time.Second, Body: `{}`})
	inner := leafAt(slow)
	inner.Timeout, inner.TimeoutFrom = 50*time.Millisecond, "the config's targets[0].request_timeout"
	fallback := Plan{Mode: "fallback", Timeout: 5 * time.Second, TimeoutFrom: "the config's request_timeout", Targets: []Plan{inner, leafAt(fast)}}
	out2, err := testEngine().Run(context.Background(), fallback, chatCall())
	require.NoError(t, err, "the fallback moved past the timed-out target")
	out2.Close()
	assert.Equal(t, "0.1", out2.Path)

	only := Plan{Mode: "fallback", Timeout: 5 * time.Second, TimeoutFrom: "the config's request_timeout", Targets: []Plan{inner}}
	slow.Script(providertest.Answer{Delay: 2 * time.Second, Body: `{}`})
	_, err = testEngine().Run(context.Background(), only, chatCall())
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 50*time.Millisecond, te.Timeout, "the inner timeout ran out, and is named")
	assert.Equal(t, "the config's targets[0].request_timeout", te.From)
}

func TestPickWeightedIgnoresNegativeWeights(t *testing.T) {
	targets := []Plan{{Weight: -5}, {Weight: 1}}
	for i := 0; i < 100; i++ {
		assert.Equal(t, 1, pickWeighted(targets))
	}
	assert.False(t, math.IsNaN(float64(pickWeighted([]Plan{{}, {}}))))
}
