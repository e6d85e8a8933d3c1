package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type checkFunc func(ctx context.Context, in Input) (Verdict, error)

func (f checkFunc) Run(ctx context.Context, in Input) (Verdict, error) { return f(ctx, in) }

func configured(id string, f checkFunc) Configured { return Configured{ID: id, Check: f} }

func passing(context.Context, Input) (Verdict, error) { return Verdict{Pass: true}, nil }
func failing(context.Context, Input) (Verdict, error) { return Verdict{Pass: false}, nil }

// sleeping passes after d, or returns the context's error if it ends first.
func sleeping(d time.Duration) checkFunc {
	return func(ctx context.Context, _ Input) (Verdict, error) {
		select {
		case <-time.After(d):
			return Verdict{Pass: true}, nil
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		}
	}
}

func TestRunChecksConcurrently(t *testing.T) {
	var started sync.WaitGroup
	started.Add(5)
	check := func(ctx context.Context, _ Input) (Verdict, error) {
		started.Done()
		started.Wait() // only returns once all five run at the same time
		return sleeping(50*time.Millisecond)(ctx, Input{})
	}
	gs := []Guardrail{
		{ID: "g1", Checks: []Configured{configured("a", check), configured("b", check)}},
		{ID: "g2", Checks: []Configured{configured("c", check), configured("d", check), configured("e", check)}},
	}
	t0 := time.Now()
	res := Run(context.Background(), BeforeRequest, gs, Input{})
	elapsed := time.Since(t0)
	assert.Less(t, elapsed, 200*time.Millisecond, "five 50 ms checks run side by side")
	require.Len(t, res.Guardrails, 2)
	for _, g := range res.Guardrails {
		assert.True(t, g.Verdict)
		for _, c := range g.Checks {
			assert.Nil(t, c.Error)
			assert.GreaterOrEqual(t, c.ExecutionTime, int64(50))
		}
	}
	assert.False(t, res.Denied)
}

func TestFirstDenyCancelsTheRest(t *testing.T) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seen []error
	blocking := func(ctx context.Context, _ Input) (Verdict, error) {
		defer wg.Done()
		<-ctx.Done()
		mu.Lock()
		seen = append(seen, ctx.Err())
		mu.Unlock()
		return Verdict{}, ctx.Err()
	}
	wg.Add(3)
	gs := []Guardrail{
		{ID: "slow", Checks: []Configured{configured("s1", blocking), configured("s2", blocking)}},
		{ID: "strict", Actions: Actions{Deny: true}, Checks: []Configured{configured("ok", passing), configured("bad", func(ctx context.Context, in Input) (Verdict, error) {
			time.Sleep(5 * time.Millisecond)
			return Verdict{Pass: false, Explanation: "no"}, nil
		}), configured("s3", blocking)}},
	}
	res := Run(context.Background(), BeforeRequest, gs, Input{})
	wg.Wait()

	assert.True(t, res.Denied)
	assert.Equal(t, &DeniedBy{Guardrail: "strict", Check: "bad", CheckIndex: 1}, res.DeniedBy)
	assert.Equal(t, []error{context.Canceled, context.Canceled, context.Canceled}, seen, "the other checks saw their context cancelled")

	slow, strict := res.Guardrails[0], res.Guardrails[1]
	assert.True(t, slow.Verdict, "cancelled checks count neither way")
	assert.False(t, slow.Deny)
	for _, c := range slow.Checks {
		assert.True(t, c.Cancelled, c.ID)
		require.NotNil(t, c.Error)
		assert.Equal(t, "cancelled", c.Error.Name)
		assert.Contains(t, c.Error.Message, "check bad of guardrail strict denied")
	}
	assert.False(t, strict.Verdict)
	assert.True(t, strict.Deny)
	assert.True(t, strict.Checks[0].Verdict)
	assert.False(t, strict.Checks[1].Verdict)
	assert.True(t, strict.Checks[2].Cancelled)
}

func TestAFailureWithoutDenyDoesNotDeny(t *testing.T) {
	gs := []Guardrail{{ID: "soft", Checks: []Configured{configured("bad", failing), configured("ok", passing)}}}
	res := Run(context.Background(), BeforeRequest, gs, Input{})
	assert.False(t, res.Denied)
	assert.Nil(t, res.DeniedBy)
	assert.False(t, res.Guardrails[0].Verdict)
	assert.False(t, res.Guardrails[0].Deny)
}

func TestTimeoutsAndErrorsFollowFailOnError(t *testing.T) {
	hang := sleeping(time.Hour)
	broken := checkFunc(func(context.Context, Input) (Verdict, error) { return Verdict{}, errors.New("upstream said 500") })
	panicky := checkFunc(func(context.Context, Input) (Verdict, error) { panic("boom") })
	cases := []struct {
		name        string
		check       checkFunc
		failOnError bool
		errName     string
		verdict     bool
	}{
		{"timeout counts as a pass", hang, false, "timeout", true},
		{"timeout counts as a failure", hang, true, "timeout", false},
		{"error counts as a pass", broken, false, "error", true},
		{"error counts as a failure", broken, true, "error", false},
		{"a panic is an error", panicky, true, "error", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gs := []Guardrail{{ID: "g", Actions: Actions{Deny: true}, Checks: []Configured{
				{ID: "c", Check: tc.check, Timeout: 20 * time.Millisecond, FailOnError: tc.failOnError},
			}}}
			t0 := time.Now()
			res := Run(context.Background(), BeforeRequest, gs, Input{})
			assert.Less(t, time.Since(t0), 5*time.Second, "the runner gives up at the timeout")
			c := res.Guardrails[0].Checks[0]
			require.NotNil(t, c.Error)
			assert.Equal(t, tc.errName, c.Error.Name, c.Error.Message)
			assert.False(t, c.Cancelled)
			assert.Equal(t, tc.verdict, res.Guardrails[0].Verdict)
			assert.Equal(t, !tc.verdict, res.Denied)
		})
	}
}

func TestTimeoutIsBounded(t *testing.T) {
	var got time.Duration
	check := checkFunc(func(ctx context.Context, _ Input) (Verdict, error) {
		dl, _ := ctx.Deadline()
		got = time.Until(dl)
		return Verdict{Pass: true}, nil
	})
	Run(context.Background(), BeforeRequest, []Guardrail{{Checks: []Configured{{Check: check, Timeout: time.Hour}}}}, Input{})
	assert.LessOrEqual(t, got, MaxCheckTimeout)
	Run(context.Background(), BeforeRequest, []Guardrail{{Checks: []Configured{{Check: check}}}}, Input{})
	assert.InDelta(t, float64(DefaultCheckTimeout), float64(got), float64(time.Second))
}

func TestTransformationsChain(t *testing.T) {
	reg := NewRegistry()
	conf := func(id string, params P) Configured {
		c, err := reg.Configure(id, "", decoded(t, params), Deps{})
		require.NoError(t, err)
		return c
	}
	var judged string
	judge := configured("judge", func(_ context.Context, in Input) (Verdict, error) {
		judged = in.Text
		return Verdict{Pass: true}, nil
	})
	gs := []Guardrail{
		{ID: "judging first in order", Checks: []Configured{judge, conf("default.regexMatch", P{"rule": `^B: A: mail \[REDACTED:EMAIL\]$`})}},
		{ID: "prefix A", Checks: []Configured{conf("default.addPrefix", P{"prefix": "A: "})}},
		{ID: "redact", Checks: []Configured{conf("default.pii", P{"redact": true})}},
		{ID: "prefix B", Checks: []Configured{conf("default.addPrefix", P{"prefix": "B: "})}},
	}
	in := before(chatRequest("m", "mail a@b.io"))
	in.Text = "mail a@b.io"
	res := Run(context.Background(), BeforeRequest, gs, in)
	for _, g := range res.Guardrails {
		assert.True(t, g.Verdict, "%s: %+v", g.ID, g.Checks)
	}
	assert.Equal(t, "B: A: mail [REDACTED:EMAIL]", judged, "the judging checks see every rewrite, applied in order")
	assert.Equal(t, "B: A: mail [REDACTED:EMAIL]", ExtractText(BeforeRequest, res.Transformed))
	assert.False(t, res.Guardrails[0].Transformed)
	assert.True(t, res.Guardrails[1].Transformed)
	assert.True(t, res.Guardrails[2].Checks[0].Transformed)

	res = Run(context.Background(), BeforeRequest, gs[:1], in)
	assert.Nil(t, res.Transformed, "nothing rewritten")
}

func TestADenyingRewriterStopsTheJudges(t *testing.T) {
	var ran bool
	rewriter := Configured{ID: "rw", Check: rewriting{pass: false}}
	gs := []Guardrail{
		{ID: "rw", Actions: Actions{Deny: true}, Checks: []Configured{rewriter}},
		{ID: "j", Checks: []Configured{configured("j", func(context.Context, Input) (Verdict, error) { ran = true; return Verdict{Pass: true}, nil })}},
	}
	res := Run(context.Background(), BeforeRequest, gs, Input{Request: json.RawMessage(`{}`)})
	assert.True(t, res.Denied)
	assert.False(t, ran)
	assert.True(t, res.Guardrails[1].Checks[0].Cancelled)
	assert.Contains(t, res.Guardrails[1].Checks[0].Error.Message, "not run")
}

type rewriting struct{ pass bool }

func (rewriting) Transforms() bool { return true }
func (r rewriting) Run(context.Context, Input) (Verdict, error) {
	return Verdict{Pass: r.pass, Transformed: json.RawMessage(`{"rewritten":true}`)}, nil
}

func TestAsyncGuardrailsRunApart(t *testing.T) {
	var syncRan, asyncRan bool
	gs := []Guardrail{
		{ID: "sync", Checks: []Configured{configured("s", func(context.Context, Input) (Verdict, error) { syncRan = true; return Verdict{Pass: true}, nil })}},
		{ID: "async", Actions: Actions{Async: true, Deny: true}, Checks: []Configured{
			configured("a", func(context.Context, Input) (Verdict, error) { asyncRan = true; return Verdict{Pass: false}, nil }),
			{ID: "rw", Check: rewriting{pass: true}},
		}},
	}
	res := Run(context.Background(), BeforeRequest, gs, Input{})
	assert.True(t, syncRan)
	assert.False(t, asyncRan)
	require.Len(t, res.Guardrails, 1)

	res = RunAsync(context.Background(), BeforeRequest, gs, Input{})
	assert.True(t, asyncRan)
	require.Len(t, res.Guardrails, 1)
	g := res.Guardrails[0]
	assert.Equal(t, "async", g.ID)
	assert.True(t, g.Async)
	assert.False(t, g.Verdict)
	assert.False(t, g.Deny, "async guardrails never deny")
	assert.False(t, res.Denied)
	assert.Nil(t, res.Transformed, "nor rewrite")
}

func TestFeedbackAndTheReferenceShape(t *testing.T) {
	gs := []Guardrail{{ID: "pg-1", Actions: Actions{
		OnSuccess: OnOutcome{Feedback: &Feedback{Value: 5, Weight: 1}},
		OnFail:    OnOutcome{Feedback: &Feedback{Value: -5, Weight: 1, Metadata: "team=ml"}},
	}, Checks: []Configured{
		configured("default.ok", passing),
		configured("default.bad", failing),
		{ID: "default.broken", Check: checkFunc(func(context.Context, Input) (Verdict, error) { return Verdict{}, errors.New("x") })},
	}}}
	res := Run(context.Background(), BeforeRequest, gs, Input{})
	fb := res.Guardrails[0].Feedback
	require.NotNil(t, fb)
	assert.Equal(t, -5.0, fb.Value)
	assert.Equal(t, map[string]string{"metadata": "team=ml", "successfulChecks": "default.ok", "failedChecks": "default.bad", "erroredChecks": "default.broken"}, fb.Metadata)

	var wire map[string][]map[string]any
	require.NoError(t, json.Unmarshal([]byte(toJSON(t, NewHookResults(res))), &wire))
	assert.Empty(t, wire["after_request_hooks"])
	require.Len(t, wire["before_request_hooks"], 1)
	g := wire["before_request_hooks"][0]
	for _, k := range []string{"verdict", "id", "transformed", "checks", "feedback", "execution_time", "async", "type", "deny", "created_at"} {
		assert.Contains(t, g, k)
	}
	assert.Equal(t, "guardrail", g["type"])
	check := g["checks"].([]any)[2].(map[string]any)
	for _, k := range []string{"verdict", "id", "data", "execution_time", "error", "fail_on_error", "created_at"} {
		assert.Contains(t, check, k)
	}
	assert.Equal(t, map[string]any{"name": "error", "message": "x"}, check["error"])

	var actions Actions
	require.NoError(t, json.Unmarshal([]byte(`{"deny":true,"async":false,"on_success":{"feedback":{"value":5,"weight":1,"metadata":""}},"on_fail":{"feedback":{"value":-5,"weight":1,"metadata":"m"}}}`), &actions))
	assert.Equal(t, Actions{Deny: true, OnSuccess: OnOutcome{Feedback: &Feedback{Value: 5, Weight: 1}}, OnFail: OnOutcome{Feedback: &Feedback{Value: -5, Weight: 1, Metadata: "m"}}}, actions)
}

func TestCallerCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := Run(ctx, BeforeRequest, []Guardrail{{ID: "g", Actions: Actions{Deny: true}, Checks: []Configured{{ID: "c", Check: sleeping(time.Hour), FailOnError: true}}}}, Input{})
	assert.True(t, res.Guardrails[0].Checks[0].Cancelled)
	assert.False(t, res.Denied, "a request that went away is not denied")
}
