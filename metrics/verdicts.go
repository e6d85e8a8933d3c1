package metrics

import (
	"encoding/json"

	"github.com/causeway/causeway/analytics"
)

// The guardrail hooks and verdicts counted by causeway_guardrail_verdicts_total.
const (
	hookBefore = iota
	hookAfter
	hooks
)

const (
	verdictPass = iota
	verdictFail
	verdictError
	verdicts
)

var (
	hookNames    = [hooks]string{"before", "after"}
	verdictNames = [verdicts]string{"pass", "fail", "error"}
)

// hookResults is the part of the reference's hook_results object (Provenance.HookResults,
// written by the gateway from guardrails.NewHookResults) that the verdicts are read from.
// It is declared here rather than imported: the metrics read a stored shape, not the
// guardrail engine.
type hookResults struct {
	Before []guardrailResult `json:"before_request_hooks"`
	After  []guardrailResult `json:"after_request_hooks"`
}

type guardrailResult struct {
	Verdict bool          `json:"verdict"`
	Checks  []checkResult `json:"checks"`
}

type checkResult struct {
	Verdict   bool `json:"verdict"`
	Cancelled bool `json:"cancelled"`
	Error     *struct {
		Name string `json:"name"`
	} `json:"error"`
}

// verdict is one guardrail's outcome: fail when one of its checks failed on its own,
// error when none did but one erred or timed out (whether it counted as a failure, with
// fail_on_error, or as a pass), pass otherwise. Cancelled checks count neither way, as in
// the engine.
func (g guardrailResult) verdict() int {
	erred, failed := false, false
	for _, c := range g.Checks {
		switch {
		case c.Cancelled:
		case c.Error != nil:
			erred = true
		case !c.Verdict:
			failed = true
		}
	}
	switch {
	case failed:
		return verdictFail
	case erred:
		return verdictError
	case !g.Verdict:
		return verdictFail
	}
	return verdictPass
}

// guardrailVerdicts counts the verdicts in raw (a hook_results object) by hook and verdict.
// A body that is not one counts nothing.
func guardrailVerdicts(raw json.RawMessage) (counts [hooks][verdicts]int, ok bool) {
	var hr hookResults
	if err := json.Unmarshal(raw, &hr); err != nil {
		return counts, false
	}
	for _, g := range hr.Before {
		counts[hookBefore][g.verdict()]++
	}
	for _, g := range hr.After {
		counts[hookAfter][g.verdict()]++
	}
	return counts, true
}

// The reasons of causeway_refusals_total.
const (
	refusalRateLimit = iota
	refusalBudget
	refusalGuardrail
	refusalAuth
	refusalOther
	refusalReasons
)

var refusalNames = [refusalReasons]string{"rate_limit", "budget", "guardrail", "auth", "other"}

// Statuses the gateway refuses with (gateway.StatusGuardrailDenied and the rest), restated:
// the metrics read records, not the gateway.
const (
	statusUnauthorized    = 401
	statusForbidden       = 403
	statusTooManyRequests = 429
	statusGuardrailDenied = 446
)

// refusal is why the gateway refused rec, or false when it did not: a request that a rate
// limit, a budget, a guardrail or authentication stopped, read from what decided it
// (Provenance.RefusedBy) and its status. A provider's own error (a 429 from upstream, with
// no decider) is not a refusal.
func refusal(rec *analytics.LogRecord) (int, bool) {
	if p := rec.Provenance; p != nil && p.RefusedBy != nil {
		switch p.RefusedBy.Kind {
		case "rate_limit_policy":
			return refusalRateLimit, true
		case "guardrail":
			return refusalGuardrail, true
		case "api_key", "workspace", "provider", "integration_workspace", "usage_limit_policy":
			// A key's, a workspace's or a target's own rate limits name the same kinds as
			// their budgets: the status tells them apart.
			if rec.StatusCode == statusTooManyRequests {
				return refusalRateLimit, true
			}
			return refusalBudget, true
		}
		return refusalOther, true
	}
	switch rec.StatusCode {
	case statusUnauthorized, statusForbidden:
		// No decider: an unknown, expired or under-scoped key.
		return refusalAuth, true
	case statusGuardrailDenied:
		return refusalGuardrail, true
	}
	return 0, false
}

// cacheStatuses are the values of the cache status label: the record's CacheStatus, any
// other counted as Other.
var cacheStatuses = [...]string{analytics.CacheHit, analytics.CacheSemanticHit, analytics.CacheMiss,
	analytics.CacheRefresh, analytics.CacheDisabled, Other}

func cacheStatus(s string) int {
	for i, v := range cacheStatuses[:len(cacheStatuses)-1] {
		if s == v {
			return i
		}
	}
	return len(cacheStatuses) - 1
}

// cacheHit reports whether the answer came from the cache, with no provider call.
func cacheHit(s string) bool { return s == analytics.CacheHit || s == analytics.CacheSemanticHit }
