package domain

import (
	"slices"
	"time"
	"unicode/utf8"
)

// UsageResetSchedule is a workspace's usage reset of 2.7: every week, month or N days (not
// both), and when the next reset falls.
type UsageResetSchedule struct {
	PeriodicReset     *string    `json:"periodic_reset"`
	PeriodicResetDays *int       `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time `json:"next_usage_reset_at"`
}

// WorkspaceUpdated changes what it carries; nil fields stay as they were. Defaults, limits
// and the reset schedule are replaced whole.
type WorkspaceUpdated struct {
	WorkspaceID string              `json:"workspace_id"`
	Name        *string             `json:"name,omitempty"`
	Description *string             `json:"description,omitempty"`
	Defaults    *map[string]any     `json:"defaults,omitempty"`
	RateLimits  *[]RateLimit        `json:"rate_limits,omitempty"`
	UsageLimits *[]UsageLimits      `json:"usage_limits,omitempty"`
	Reset       *UsageResetSchedule `json:"reset,omitempty"`
	At          time.Time           `json:"at"`
}

// WorkspaceSecurityUpdated replaces the workspace's security overrides.
type WorkspaceSecurityUpdated struct {
	WorkspaceID string            `json:"workspace_id"`
	Security    SecurityOverrides `json:"security_settings"`
	At          time.Time         `json:"at"`
}

// WorkspaceBudgetExhausted: the workspace's usage reached the credit limit of LimitType; the
// gateway refuses its requests until the budget is reactivated.
type WorkspaceBudgetExhausted struct {
	WorkspaceID  string    `json:"workspace_id"`
	LimitType    string    `json:"limit_type"`
	CreditLimit  float64   `json:"credit_limit"`
	CurrentUsage float64   `json:"current_usage"`
	At           time.Time `json:"at"`
}

// Reasons a budget is reactivated.
const (
	ReactivatedCreditRaised  = "credit_limit_increased"
	ReactivatedLimitRemoved  = "usage_limit_removed"
	ReactivatedUsageWasReset = "usage_reset"
)

// WorkspaceBudgetReactivated: an exhausted budget is active again (3: automatic when the
// credit limit is raised).
type WorkspaceBudgetReactivated struct {
	WorkspaceID string    `json:"workspace_id"`
	Reason      string    `json:"reason"`
	At          time.Time `json:"at"`
}

// WorkspaceUsageReset starts a new usage period: usage is zero again and the next reset is
// NextUsageResetAt (nil: none scheduled).
type WorkspaceUsageReset struct {
	WorkspaceID      string     `json:"workspace_id"`
	PreviousUsage    float64    `json:"previous_usage"`
	NextUsageResetAt *time.Time `json:"next_usage_reset_at,omitempty"`
	At               time.Time  `json:"at"`
}

// WorkspaceUsageThresholdReached: the workspace's usage of LimitType reached that limit's
// alert threshold; it is alerted once per period until its alert is reset.
type WorkspaceUsageThresholdReached struct {
	WorkspaceID    string    `json:"workspace_id"`
	LimitType      string    `json:"limit_type"`
	Usage          float64   `json:"usage"`
	AlertThreshold float64   `json:"alert_threshold"`
	At             time.Time `json:"at"`
}

// WorkspaceUsageAlertsReset clears the sent threshold alert of LimitType, so that it is sent
// again when reached (3: its credit limit or alert threshold was raised, or removed).
type WorkspaceUsageAlertsReset struct {
	WorkspaceID string    `json:"workspace_id"`
	LimitType   string    `json:"limit_type"`
	At          time.Time `json:"at"`
}

func (WorkspaceUpdated) EventType() string           { return "WorkspaceUpdated" }
func (WorkspaceSecurityUpdated) EventType() string   { return "WorkspaceSecurityUpdated" }
func (WorkspaceBudgetExhausted) EventType() string   { return "WorkspaceBudgetExhausted" }
func (WorkspaceBudgetReactivated) EventType() string { return "WorkspaceBudgetReactivated" }
func (WorkspaceUsageReset) EventType() string        { return "WorkspaceUsageReset" }
func (WorkspaceUsageThresholdReached) EventType() string {
	return "WorkspaceUsageThresholdReached"
}
func (WorkspaceUsageAlertsReset) EventType() string { return "WorkspaceUsageAlertsReset" }
func (WorkspaceCachePurged) EventType() string      { return "WorkspaceCachePurged" }

// WorkspaceCachePurged: the answer cache's entries in one of the workspace's namespaces were
// deleted ("" is the default namespace). It records who purged and when; the workspace
// itself does not change.
type WorkspaceCachePurged struct {
	WorkspaceID string    `json:"workspace_id"`
	Namespace   string    `json:"namespace"`
	At          time.Time `json:"at"`
}

// MaxCacheNamespaceLength bounds x-gateway-cache-namespace and a purge's namespace.
const MaxCacheNamespaceLength = 128

// ValidateCacheNamespace checks a cache namespace named by param: at most
// MaxCacheNamespaceLength characters, printable.
func ValidateCacheNamespace(param, ns string) error {
	if n := utf8.RuneCountInString(ns); n > MaxCacheNamespaceLength {
		return Invalid(param, "%s must be at most %d characters (got %d)", param, MaxCacheNamespaceLength, n)
	}
	if hasControl(ns) {
		return Invalid(param, "%s must not hold control characters", param)
	}
	return nil
}

// PurgeCache decides the purge of the cache's entries in namespace. An archived workspace's
// cache may be purged too: its entries are its data.
func (w *Workspace) PurgeCache(namespace string, now time.Time) ([]Event, error) {
	if err := ValidateCacheNamespace("namespace", namespace); err != nil {
		return nil, err
	}
	return []Event{WorkspaceCachePurged{WorkspaceID: w.ID, Namespace: namespace, At: now}}, nil
}

// applyMore folds the workspace events beyond creation, archival and membership: updates,
// usage resets and budget transitions. Slices and maps are replaced, never changed in place.
func (w *Workspace) applyMore(e Event) {
	switch e := e.(type) {
	case WorkspaceUpdated:
		if e.Name != nil {
			w.Name = *e.Name
		}
		if e.Description != nil {
			w.Description = *e.Description
		}
		if e.Defaults != nil {
			w.Defaults = *e.Defaults
		}
		if e.RateLimits != nil {
			w.RateLimits = *e.RateLimits
		}
		if e.UsageLimits != nil {
			w.UsageLimits = *e.UsageLimits
		}
		if e.Reset != nil {
			w.PeriodicReset, w.PeriodicResetDays, w.NextUsageResetAt = e.Reset.PeriodicReset, e.Reset.PeriodicResetDays, e.Reset.NextUsageResetAt
		}
		w.LastUpdatedAt = e.At
	case WorkspaceSecurityUpdated:
		w.Security, w.LastUpdatedAt = e.Security, e.At
	case WorkspaceBudgetExhausted:
		w.BudgetExhausted, w.ExhaustedLimit, w.CurrentUsage, w.LastUpdatedAt = true, e.LimitType, e.CurrentUsage, e.At
	case WorkspaceBudgetReactivated:
		w.BudgetExhausted, w.ExhaustedLimit, w.LastUpdatedAt = false, "", e.At
	case WorkspaceUsageReset:
		at := e.At
		w.CurrentUsage, w.LastResetAt, w.NextUsageResetAt, w.LastUpdatedAt = 0, &at, e.NextUsageResetAt, e.At
		w.ThresholdAlertsSent = nil
		w.UsageResets++
	case WorkspaceUsageThresholdReached:
		if !slices.Contains(w.ThresholdAlertsSent, e.LimitType) {
			sent := append(slices.Clone(w.ThresholdAlertsSent), e.LimitType)
			slices.Sort(sent)
			w.ThresholdAlertsSent = sent
		}
		w.LastUpdatedAt = e.At
	case WorkspaceUsageAlertsReset:
		sent := slices.DeleteFunc(slices.Clone(w.ThresholdAlertsSent), func(t string) bool { return t == e.LimitType })
		if len(sent) == 0 {
			sent = nil
		}
		w.ThresholdAlertsSent, w.LastUpdatedAt = sent, e.At
	}
}

// UpdateWorkspace changes a workspace; nil fields stay as they are. ResetGiven says the reset
// fields were sent: PeriodicReset and PeriodicResetDays then replace the current schedule
// (both nil: no periodic reset). NextUsageResetAt alone moves the next reset.
type UpdateWorkspace struct {
	Name              *string
	Description       *string
	Defaults          map[string]any // nil: unchanged; empty: cleared
	RateLimits        *[]RateLimit
	UsageLimits       *[]UsageLimits
	ResetGiven        bool
	PeriodicReset     *string
	PeriodicResetDays *int
	NextUsageResetAt  *time.Time
}

// Update decides a change of an active workspace. Raising the credit limit of an exhausted
// budget (or removing that limit) reactivates the budget in the same decision.
func (w *Workspace) Update(c UpdateWorkspace, now time.Time) ([]Event, error) {
	if err := w.refuseUnlessActive(); err != nil {
		return nil, err
	}
	if c.Name == nil && c.Description == nil && c.Defaults == nil && c.RateLimits == nil && c.UsageLimits == nil &&
		!c.ResetGiven && c.NextUsageResetAt == nil {
		return nil, Invalid("", "nothing to update: give name, description, defaults, rate_limits, usage_limits or a usage reset")
	}
	ev := WorkspaceUpdated{WorkspaceID: w.ID, Name: c.Name, Description: c.Description, RateLimits: c.RateLimits, At: now}
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, true); err != nil {
			return nil, err
		}
	}
	if c.Defaults != nil {
		if err := validateDefaults(c.Defaults); err != nil {
			return nil, err
		}
		ev.Defaults = &c.Defaults
	}
	if c.RateLimits != nil {
		if err := validateRateLimits(*c.RateLimits); err != nil {
			return nil, err
		}
	}
	if c.UsageLimits != nil {
		usage, err := normaliseUsageLimits(*c.UsageLimits, now)
		if err != nil {
			return nil, err
		}
		if usage == nil {
			usage = []UsageLimits{}
		}
		ev.UsageLimits = &usage
	}
	if c.ResetGiven || c.NextUsageResetAt != nil {
		reset, days := w.PeriodicReset, w.PeriodicResetDays
		if c.ResetGiven {
			reset, days = c.PeriodicReset, c.PeriodicResetDays
		}
		next, err := nextUsageReset(reset, days, c.NextUsageResetAt, now)
		if err != nil {
			return nil, err
		}
		ev.Reset = &UsageResetSchedule{PeriodicReset: reset, PeriodicResetDays: days, NextUsageResetAt: next}
	}
	events := []Event{ev}
	if reason := w.reactivatedBy(ev.UsageLimits); reason != "" {
		events = append(events, WorkspaceBudgetReactivated{WorkspaceID: w.ID, Reason: reason, At: now})
	}
	for _, typ := range w.thresholdAlertsReset(ev.UsageLimits) {
		events = append(events, WorkspaceUsageAlertsReset{WorkspaceID: w.ID, LimitType: typ, At: now})
	}
	return events, nil
}

// thresholdAlertsReset lists the limit types whose sent threshold alert new usage limits reset
// (3): the limit's credit limit or alert threshold was raised, or removed.
func (w *Workspace) thresholdAlertsReset(limits *[]UsageLimits) []string {
	if limits == nil {
		return nil
	}
	var out []string
	for _, typ := range w.ThresholdAlertsSent {
		old, hadOld := w.usageLimit(w.UsageLimits, typ)
		updated, has := w.usageLimit(*limits, typ)
		switch {
		case !hadOld || !has,
			*updated.CreditLimit > *old.CreditLimit,
			old.AlertThreshold != nil && (updated.AlertThreshold == nil || *updated.AlertThreshold > *old.AlertThreshold):
			out = append(out, typ)
		}
	}
	return out
}

// reactivatedBy says why new usage limits reactivate an exhausted budget, or "" when they
// don't: the exhausted limit's credit was raised, or the limit is gone.
func (w *Workspace) reactivatedBy(limits *[]UsageLimits) string {
	if !w.BudgetExhausted || limits == nil {
		return ""
	}
	old, hadOld := w.usageLimit(w.UsageLimits, w.ExhaustedLimit)
	i := slices.IndexFunc(*limits, func(u UsageLimits) bool { return u.Type == w.ExhaustedLimit })
	switch {
	case i < 0:
		return ReactivatedLimitRemoved
	case !hadOld || *(*limits)[i].CreditLimit > *old.CreditLimit:
		return ReactivatedCreditRaised
	}
	return ""
}

func (w *Workspace) usageLimit(limits []UsageLimits, typ string) (UsageLimits, bool) {
	i := slices.IndexFunc(limits, func(u UsageLimits) bool { return u.Type == typ && u.CreditLimit != nil })
	if i < 0 {
		return UsageLimits{}, false
	}
	return limits[i], true
}

// UpdateSecurity decides a change of the workspace's security overrides.
func (w *Workspace) UpdateSecurity(patch SecurityPatch, now time.Time) ([]Event, error) {
	if err := w.refuseUnlessActive(); err != nil {
		return nil, err
	}
	sec, err := w.Security.Patched("security_settings", patch)
	if err != nil {
		return nil, err
	}
	return []Event{WorkspaceSecurityUpdated{WorkspaceID: w.ID, Security: sec, At: now}}, nil
}

// ExhaustBudget decides that usage has used up the workspace's budget of limitType (cost or
// tokens). The gateway calls it when usage reaches the credit limit; a budget exhausted
// already stays so and nothing is recorded twice.
func (w *Workspace) ExhaustBudget(limitType string, usage float64, now time.Time) ([]Event, error) {
	if err := w.refuseUnlessActive(); err != nil {
		return nil, err
	}
	if w.BudgetExhausted {
		return nil, nil
	}
	limit, ok := w.usageLimit(w.UsageLimits, limitType)
	if !ok {
		return nil, Invalid("type", "workspace %s has no %s usage limit", w.ID, limitType)
	}
	if usage < *limit.CreditLimit {
		return nil, Invalid("current_usage", "current_usage %v has not reached the credit_limit %v", usage, *limit.CreditLimit)
	}
	return []Event{WorkspaceBudgetExhausted{WorkspaceID: w.ID, LimitType: limitType, CreditLimit: *limit.CreditLimit,
		CurrentUsage: usage, At: now}}, nil
}

// ResetUsage decides the start of a new usage period. When the scheduled reset has come, the
// next one is a period later (several periods, if resets were missed); a reset before the
// schedule leaves it as it is. An exhausted budget is active again.
func (w *Workspace) ResetUsage(now time.Time) ([]Event, error) {
	if err := w.refuseUnlessActive(); err != nil {
		return nil, err
	}
	next := w.NextUsageResetAt
	switch {
	case next == nil:
		next = NextReset(now, w.PeriodicReset, w.PeriodicResetDays)
	case !next.After(now):
		next = advanceReset(*next, now, w.PeriodicReset, w.PeriodicResetDays)
	}
	events := []Event{WorkspaceUsageReset{WorkspaceID: w.ID, PreviousUsage: w.CurrentUsage, NextUsageResetAt: next, At: now}}
	if w.BudgetExhausted {
		events = append(events, WorkspaceBudgetReactivated{WorkspaceID: w.ID, Reason: ReactivatedUsageWasReset, At: now})
	}
	return events, nil
}

// ResetUsageIfDue decides the workspace's periodic usage reset once its next_usage_reset_at
// has passed (ResetUsage); before then, or without a schedule, it decides nothing, so a worker
// that repeats itself resets once. An archived workspace is not reset.
func (w *Workspace) ResetUsageIfDue(now time.Time) ([]Event, error) {
	if !w.Active() || w.NextUsageResetAt == nil || now.Before(*w.NextUsageResetAt) {
		return nil, nil
	}
	return w.ResetUsage(now)
}

// UsagePeriod names the workspace's current usage period, which both of its limit types
// share: the number of its usage resets so far.
func (w *Workspace) UsagePeriod() string { return usagePeriod(w.UsageResets) }

// UsageReached decides what usage of limitType (cost or tokens), as the ledger counted it in
// period, does to the workspace: that limit's alert threshold is alerted once per period, and
// the budget is exhausted at its credit limit when it is not already. A report about an
// earlier period, about a limit the workspace no longer has, or about an archived workspace
// decides nothing.
func (w *Workspace) UsageReached(period, limitType string, usage float64, now time.Time) ([]Event, error) {
	if limitType != UsageCost && limitType != UsageTokens {
		return nil, Invalid("limit_type", "limit_type must be cost or tokens (got %q)", limitType)
	}
	if err := validateUsage(usage); err != nil {
		return nil, err
	}
	limit, ok := w.usageLimit(w.UsageLimits, limitType)
	if !w.Active() || period != w.UsagePeriod() || !ok {
		return nil, nil
	}
	threshold, exhaust := budgetAlertsDue(&limit, slices.Contains(w.ThresholdAlertsSent, limitType), w.BudgetExhausted, usage)
	var events []Event
	if threshold {
		events = append(events, WorkspaceUsageThresholdReached{WorkspaceID: w.ID, LimitType: limitType, Usage: usage,
			AlertThreshold: *limit.AlertThreshold, At: now})
	}
	if exhaust {
		events = append(events, WorkspaceBudgetExhausted{WorkspaceID: w.ID, LimitType: limitType, CreditLimit: *limit.CreditLimit,
			CurrentUsage: usage, At: now})
	}
	return events, nil
}

// advanceReset moves a reset time that has passed by whole periods until it is after now;
// without a period a one-off reset is used up (nil).
func advanceReset(t, now time.Time, reset *string, days *int) *time.Time {
	for !t.After(now) {
		n := NextReset(t, reset, days)
		if n == nil {
			return nil
		}
		t = *n
	}
	return &t
}
