package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Per-check time limits: a check configured without a timeout gets the default, and none
// gets more than the maximum.
const (
	DefaultCheckTimeout = 10 * time.Second
	MaxCheckTimeout     = 60 * time.Second
)

// Guardrail is one stored guardrail as the gateway runs it: its checks, built, and its
// actions.
type Guardrail struct {
	ID      string
	Slug    string
	Version uint64
	Checks  []Configured
	Actions Actions
}

// Configured is one check of a guardrail, built (Registry.Configure builds one from a stored
// check's id and parameters).
type Configured struct {
	ID          string // the check's id, e.g. default.regexMatch
	Name        string // the name the guardrail gave it, if any
	Check       Check
	Timeout     time.Duration // 0: DefaultCheckTimeout; capped at MaxCheckTimeout
	FailOnError bool          // an error or a timeout counts as a failure (else as a pass)
}

// Actions are what a guardrail's verdict does, in the reference's shape: deny answers the
// request with an error when the guardrail fails; async runs it after the answer, never
// blocking nor denying; on_success and on_fail attach feedback to the request's log.
type Actions struct {
	Deny      bool      `json:"deny"`
	Async     bool      `json:"async"`
	OnSuccess OnOutcome `json:"on_success"`
	OnFail    OnOutcome `json:"on_fail"`
}

// OnOutcome is what follows a verdict.
type OnOutcome struct {
	Feedback *Feedback `json:"feedback,omitempty"`
}

// Feedback is the feedback a verdict records (the reference's defaults: value 5 on success,
// -5 on failure, weight 1).
type Feedback struct {
	Value    float64 `json:"value"`
	Weight   float64 `json:"weight"`
	Metadata string  `json:"metadata"`
}

// Transformer is a check that may rewrite the body. The runner runs the checks that say
// Transforms() true first, one after the other in guardrail and check order, each seeing
// the body the previous ones left; the other checks then run concurrently on the final body.
// A check that rewrites the body without saying so still has its body applied, in the same
// order, after every check ran, but no other check of the hook sees it.
type Transformer interface {
	Check
	Transforms() bool
}

// Windowed is a text check whose failure on a window of a streamed answer is a failure of
// the whole answer (a forbidden word, PII, a lowercase letter where all must be uppercase).
// The StreamScanner runs such checks on every window; the others once, on the whole answer.
type Windowed interface {
	Check
	Windowed() bool
}

// HookResult is what one hook's guardrails decided.
type HookResult struct {
	Hook       Hook              `json:"hook"`
	Guardrails []GuardrailResult `json:"guardrails"`
	// Denied is true when a failing guardrail has actions.deny: the gateway answers with an
	// error naming DeniedBy (the check that failed first) and the hook results.
	Denied   bool      `json:"denied"`
	DeniedBy *DeniedBy `json:"denied_by,omitempty"`
	// Transformed is the body the checks left (the request before it, the answer after it)
	// when one of them rewrote it; nil otherwise.
	Transformed json.RawMessage `json:"transformed,omitempty"`
}

// DeniedBy names the guardrail and the check that denied.
type DeniedBy struct {
	Guardrail  string `json:"guardrail"`
	Check      string `json:"check"`
	CheckIndex int    `json:"check_index"`
}

// HookResults is the reference's hook_results object, which the gateway returns with an
// answer or a denial.
type HookResults struct {
	BeforeRequestHooks []GuardrailResult `json:"before_request_hooks"`
	AfterRequestHooks  []GuardrailResult `json:"after_request_hooks"`
}

// NewHookResults gathers hook results under their hooks (never null lists, as the reference).
func NewHookResults(rs ...HookResult) HookResults {
	out := HookResults{BeforeRequestHooks: []GuardrailResult{}, AfterRequestHooks: []GuardrailResult{}}
	for _, r := range rs {
		if r.Hook == AfterRequest {
			out.AfterRequestHooks = append(out.AfterRequestHooks, r.Guardrails...)
		} else {
			out.BeforeRequestHooks = append(out.BeforeRequestHooks, r.Guardrails...)
		}
	}
	return out
}

// GuardrailResult is one guardrail's verdict, in the reference's shape.
type GuardrailResult struct {
	Verdict       bool            `json:"verdict"`
	ID            string          `json:"id"`
	Transformed   bool            `json:"transformed"`
	Checks        []CheckResult   `json:"checks"`
	Feedback      *FeedbackResult `json:"feedback"`
	ExecutionTime int64           `json:"execution_time"` // milliseconds
	Async         bool            `json:"async"`
	Type          string          `json:"type"` // guardrail
	Deny          bool            `json:"deny"`
	CreatedAt     time.Time       `json:"created_at"`
}

// CheckResult is one check's verdict, in the reference's shape.
type CheckResult struct {
	Verdict       bool        `json:"verdict"`
	ID            string      `json:"id"`
	Name          string      `json:"name,omitempty"`
	Data          any         `json:"data"`
	Explanation   string      `json:"explanation,omitempty"`
	Error         *CheckError `json:"error,omitempty"`
	Transformed   bool        `json:"transformed"`
	ExecutionTime int64       `json:"execution_time"` // milliseconds
	CreatedAt     time.Time   `json:"created_at"`
	FailOnError   bool        `json:"fail_on_error"`
	// Cancelled is true when the check was stopped (or never started) because another check
	// denied the request, or the request went away; it counts neither way.
	Cancelled bool `json:"cancelled,omitempty"`

	body json.RawMessage // the body it rewrote
	end  time.Time
}

// CheckError is a check's error or timeout.
type CheckError struct {
	Name    string `json:"name"` // error, timeout, cancelled
	Message string `json:"message"`
}

// FeedbackResult is the feedback a guardrail's verdict recorded: the configured value and
// weight, and in metadata the configured metadata (under "metadata") and the ids of the
// checks that passed, failed and errored, comma-separated as the reference does.
type FeedbackResult struct {
	Value    float64           `json:"value"`
	Weight   float64           `json:"weight"`
	Metadata map[string]string `json:"metadata"`
}

// Run applies a hook's guardrails to a request or an answer. Async guardrails
// (actions.async) are left out: the gateway runs them with RunAsync after answering.
//
// Every check of every guardrail runs concurrently (after the ones that rewrite the body,
// see Transformer), each bounded by its timeout. A guardrail passes when all its checks
// pass; a check that errs or times out counts as failed when FailOnError and as passed
// otherwise, its error reported. The first failing check of a guardrail with actions.deny
// cancels the checks still running; their results say cancelled.
//
// Run returns once every check has returned or given up at its deadline or at the
// cancellation; a check that ignores its context is left behind.
func Run(ctx context.Context, hook Hook, gs []Guardrail, in Input) HookResult {
	return runHook(ctx, hook, gs, in, false)
}

// RunAsync applies the hook's async guardrails (actions.async) and only them. They never deny
// nor rewrite: Denied is false and Transformed nil whatever they decide; their results are for
// the log.
func RunAsync(ctx context.Context, hook Hook, gs []Guardrail, in Input) HookResult {
	return runHook(ctx, hook, gs, in, true)
}

func runHook(ctx context.Context, hook Hook, gs []Guardrail, in Input, async bool) HookResult {
	in.Hook = hook
	start := time.Now()
	var slots []slot
	for gi, g := range gs {
		if g.Actions.Async != async {
			continue
		}
		for ci := range g.Checks {
			slots = append(slots, slot{gi, ci})
		}
	}
	out := execute(ctx, gs, slots, in, async)
	res := HookResult{Hook: hook, Guardrails: assemble(gs, out.results, async, start)}
	if async {
		return res
	}
	res.DeniedBy = out.deniedBy
	for _, g := range res.Guardrails {
		res.Denied = res.Denied || g.Deny
	}
	if res.Denied && res.DeniedBy == nil {
		res.DeniedBy = firstDenier(gs, res.Guardrails)
	}
	if out.transformed {
		res.Transformed = hookBody(out.in)
	}
	return res
}

type slot struct{ g, c int }

// cancelledPrefix starts the message of a check stopped by its context, which execute
// rewrites to name the check that denied when one did.
const cancelledPrefix = "cancelled: "

type executed struct {
	results  map[slot]CheckResult
	deniedBy *DeniedBy
	in       Input // the input after the checks' rewrites
	// transformed is true when a check's rewrite was applied to in.
	transformed bool
}

// execute runs the checks at slots: the Transformers first, in order, each on the body the
// previous left, then the others concurrently. Unless async, the first failing check of a
// denying guardrail cancels the rest.
func execute(ctx context.Context, gs []Guardrail, slots []slot, in Input, async bool) executed {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := executed{results: make(map[slot]CheckResult, len(slots)), in: in}

	var mu sync.Mutex
	record := func(s slot, r CheckResult) {
		mu.Lock()
		defer mu.Unlock()
		out.results[s] = r
		if async || out.deniedBy != nil || !gs[s.g].Actions.Deny || !fails(r) {
			return
		}
		out.deniedBy = &DeniedBy{Guardrail: gs[s.g].ID, Check: r.ID, CheckIndex: s.c}
		cancel()
	}
	denied := func() *DeniedBy {
		mu.Lock()
		defer mu.Unlock()
		return out.deniedBy
	}

	var judging []slot
	for _, s := range slots {
		cfg := gs[s.g].Checks[s.c]
		if t, ok := cfg.Check.(Transformer); !ok || !t.Transforms() {
			judging = append(judging, s)
			continue
		}
		if by := denied(); by != nil {
			record(s, notRun(cfg, by))
			continue
		}
		r := runCheck(hctx, cfg, out.in)
		if !async && r.body != nil && r.Error == nil {
			out.in = withBody(out.in, r.body)
			out.transformed = true
		}
		record(s, r)
	}

	var wg sync.WaitGroup
	for _, s := range judging {
		cfg := gs[s.g].Checks[s.c]
		if by := denied(); by != nil {
			record(s, notRun(cfg, by))
			continue
		}
		wg.Add(1)
		go func(s slot, in Input) {
			defer wg.Done()
			record(s, runCheck(hctx, cfg, in))
		}(s, out.in)
	}
	wg.Wait()

	by := out.deniedBy
	for _, s := range slots {
		r := out.results[s]
		if r.Cancelled && by != nil && r.Error != nil && strings.HasPrefix(r.Error.Message, cancelledPrefix) {
			r.Error.Message = fmt.Sprintf("cancelled: check %s of guardrail %s denied the request", by.Check, by.Guardrail)
			out.results[s] = r
		}
	}
	if !async {
		for _, s := range judging {
			if r := out.results[s]; r.body != nil && r.Error == nil {
				out.in = withBody(out.in, r.body)
				out.transformed = true
			}
		}
	}
	return out
}

// withBody sets the hook's body and refreshes the text checks read.
func withBody(in Input, body json.RawMessage) Input {
	if in.Hook == AfterRequest {
		in.Response = body
	} else {
		in.Request = body
	}
	if !in.Stream {
		in.Text = ExtractText(in.Hook, body)
	}
	return in
}

// fails reports whether a check's result counts against its guardrail.
func fails(r CheckResult) bool {
	if r.Cancelled {
		return false
	}
	if r.Error != nil {
		return r.FailOnError
	}
	return !r.Verdict
}

func notRun(cfg Configured, by *DeniedBy) CheckResult {
	now := time.Now()
	return CheckResult{
		ID: cfg.ID, Name: cfg.Name, FailOnError: cfg.FailOnError, CreatedAt: now, end: now,
		Cancelled: true,
		Error: &CheckError{Name: "cancelled", Message: fmt.Sprintf(
			"not run: check %s of guardrail %s denied the request", by.Check, by.Guardrail)},
	}
}

type ran struct {
	v   Verdict
	err error
}

// runCheck runs one check under its timeout and turns what it did into a result. It returns
// at the check's deadline or the hook's cancellation even if the check does not.
func runCheck(ctx context.Context, cfg Configured, in Input) CheckResult {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	timeout = min(timeout, MaxCheckTimeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	start := time.Now()
	done := make(chan ran, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- ran{err: fmt.Errorf("the check panicked: %v", p)}
			}
		}()
		v, err := cfg.Check.Run(cctx, in)
		done <- ran{v, err}
	}()

	var o ran
	select {
	case o = <-done:
	case <-cctx.Done():
		select {
		case o = <-done:
		default:
			o.err = cctx.Err() // given up: the check has not returned
		}
	}
	r := CheckResult{ID: cfg.ID, Name: cfg.Name, FailOnError: cfg.FailOnError, CreatedAt: start, end: time.Now()}
	r.ExecutionTime = r.end.Sub(start).Milliseconds()
	switch {
	case o.err == nil:
		r.Verdict = o.v.Pass
		r.Data = o.v.Data
		r.Explanation = o.v.Explanation
		if len(o.v.Transformed) > 0 {
			r.Transformed = true
			r.body = o.v.Transformed
		}
	case ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && errors.Is(o.err, context.DeadlineExceeded):
		r.Error = &CheckError{Name: "timeout", Message: fmt.Sprintf("the check did not answer within %s", timeout)}
	case ctx.Err() != nil && errors.Is(o.err, ctx.Err()):
		r.Cancelled = true
		r.Error = &CheckError{Name: "cancelled", Message: cancelledPrefix + ctx.Err().Error()}
	default:
		r.Error = &CheckError{Name: "error", Message: o.err.Error()}
	}
	return r
}

// assemble gathers the results of the guardrails run (async or not) in their order.
func assemble(gs []Guardrail, results map[slot]CheckResult, async bool, start time.Time) []GuardrailResult {
	out := make([]GuardrailResult, 0, len(gs))
	for gi, g := range gs {
		if g.Actions.Async != async {
			continue
		}
		gr := GuardrailResult{ID: g.ID, Verdict: true, Async: g.Actions.Async, Type: "guardrail", CreatedAt: start, Checks: []CheckResult{}}
		end := start
		for ci := range g.Checks {
			r, ok := results[slot{gi, ci}]
			if !ok {
				continue
			}
			gr.Checks = append(gr.Checks, r)
			gr.Transformed = gr.Transformed || r.Transformed
			if fails(r) {
				gr.Verdict = false
			}
			if r.end.After(end) {
				end = r.end
			}
		}
		gr.ExecutionTime = end.Sub(start).Milliseconds()
		gr.Deny = !async && g.Actions.Deny && !gr.Verdict
		gr.Feedback = feedback(g.Actions, gr)
		out = append(out, gr)
	}
	return out
}

func feedback(a Actions, gr GuardrailResult) *FeedbackResult {
	f := a.OnFail.Feedback
	if gr.Verdict {
		f = a.OnSuccess.Feedback
	}
	if f == nil {
		return nil
	}
	var ok, failed, errored []string
	for _, r := range gr.Checks {
		switch {
		case r.Error != nil:
			errored = append(errored, r.ID)
		case r.Verdict:
			ok = append(ok, r.ID)
		default:
			failed = append(failed, r.ID)
		}
	}
	md := map[string]string{
		"successfulChecks": strings.Join(ok, ", "),
		"failedChecks":     strings.Join(failed, ", "),
		"erroredChecks":    strings.Join(errored, ", "),
	}
	if f.Metadata != "" {
		md["metadata"] = f.Metadata
	}
	return &FeedbackResult{Value: f.Value, Weight: f.Weight, Metadata: md}
}

// firstDenier names the first failing check of the first denying guardrail, in their order.
func firstDenier(gs []Guardrail, rs []GuardrailResult) *DeniedBy {
	for _, gr := range rs {
		if !gr.Deny {
			continue
		}
		for i, r := range gr.Checks {
			if fails(r) {
				return &DeniedBy{Guardrail: gr.ID, Check: r.ID, CheckIndex: i}
			}
		}
	}
	return nil
}
