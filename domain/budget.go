package domain

import (
	"math"
	"strconv"
	"time"
)

// Budgets are the usage limits of an API key, a workspace, a managed provider, an integration
// workspace and each entity of a usage-limit policy. The usage ledger counts usage in memory,
// per budget and usage period; only what a usage figure changes (an alert threshold reached, a
// budget exhausted) and what resets or reactivates a budget are events.
//
// A usage period is named by the number of usage resets of its budget so far, so every process
// folding the same events names the same period, and a report about an earlier period (a
// reset came in between) is recognised as stale.

// usagePeriod names the period that follows resets usage resets: "0", "1", ...
func usagePeriod(resets int) string { return strconv.Itoa(resets) }

// validateUsage checks a usage figure the ledger reports.
func validateUsage(usage float64) error {
	if usage < 0 || !finite(usage) {
		return Invalid("usage", "usage must be a number of at least 0 (got %v)", usage)
	}
	return nil
}

// budgetAlertsDue says which alerts a budget under limits is due at usage: the threshold
// alert, once until it is reset, and exhaustion, when the budget is not exhausted already.
func budgetAlertsDue(limits *UsageLimits, thresholdSent, exhausted bool, usage float64) (threshold, exhaust bool) {
	if limits == nil {
		return false, false
	}
	threshold = limits.AlertThreshold != nil && !thresholdSent && usageReached(usage, *limits.AlertThreshold)
	exhaust = limits.CreditLimit != nil && !exhausted && usageReached(usage, *limits.CreditLimit)
	return threshold, exhaust
}

// usageReached reports whether usage has reached limit as the usage ledger decides it: sums
// of amounts stray from the limit by rounding alone (ten charges of 0.1 make
// 0.9999999999999999), and the ledger, which reports a crossing once, counts that as reached.
func usageReached(usage, limit float64) bool { return usage >= limit-math.Abs(limit)*1e-9 }

// budgetState is what a budget has recorded this period.
type budgetState struct {
	thresholdSent, exhaustedSent, exhausted bool
	// usage is the last figure an alert recorded (the one it was exhausted at).
	usage float64
}

// budgetChange is what new usage limits do to a budget (3).
type budgetChange struct {
	resetThreshold, resetExhausted bool
	// reactivated is why an exhausted budget is active again, or "".
	reactivated string
}

// changeBudget decides what replacing the limits old with updated (nil: removed) does to a
// budget in state st: a raised or removed credit limit resets both alerts, a raised or removed
// alert threshold the threshold alert; an exhausted budget is active again when its limit is
// removed or raised above the usage it was exhausted at. A limit of another type is a new
// limit: the old one is removed.
func changeBudget(old, updated *UsageLimits, st budgetState) budgetChange {
	if old == nil {
		return budgetChange{}
	}
	removed := updated == nil || updated.Type != old.Type || updated.CreditLimit == nil
	raised := removed || (old.CreditLimit != nil && *updated.CreditLimit > *old.CreditLimit)
	eased := old.AlertThreshold != nil &&
		(removed || updated.AlertThreshold == nil || *updated.AlertThreshold > *old.AlertThreshold)
	c := budgetChange{resetThreshold: (raised || eased) && st.thresholdSent, resetExhausted: raised && st.exhaustedSent}
	switch {
	case !st.exhausted:
	case removed:
		c.reactivated = ReactivatedLimitRemoved
	case *updated.CreditLimit > st.usage:
		c.reactivated = ReactivatedCreditRaised
	}
	return c
}

// scheduledReset says whether a budget's periodic reset has come at now, and if so when the
// next one falls (nil: none, a one-off reset is used up). Periods missed while nothing ran are
// skipped, not replayed.
func scheduledReset(limits *UsageLimits, now time.Time) (due bool, next *time.Time) {
	if limits == nil || limits.NextUsageResetAt == nil || now.Before(*limits.NextUsageResetAt) {
		return false, nil
	}
	return true, advanceReset(*limits.NextUsageResetAt, now, limits.PeriodicReset, limits.PeriodicResetDays)
}

// withNextReset returns a copy of limits whose next reset is next (copy on write: read models
// hand out copies that share the limits).
func withNextReset(limits *UsageLimits, next *time.Time) *UsageLimits {
	out := *limits
	out.NextUsageResetAt = next
	return &out
}
