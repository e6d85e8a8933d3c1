package domain

import (
	"maps"
	"slices"
	"time"
)

// The usage budget of an integration workspace: one workspace's use of an integration, under
// the usage limit of its access (at most one). The budget's state lives on the workspace's
// entry (IntegrationWorkspaceBudget), folded from the events below.

// IntegrationWorkspaceUsageThresholdReached: the workspace's usage of the integration reached
// its alert threshold; it is alerted once until its alerts are reset.
type IntegrationWorkspaceUsageThresholdReached struct {
	IntegrationID  string    `json:"integration_id"`
	WorkspaceID    string    `json:"workspace_id"`
	LimitType      string    `json:"limit_type"`
	Usage          float64   `json:"usage"`
	AlertThreshold float64   `json:"alert_threshold"`
	At             time.Time `json:"at"`
}

// IntegrationWorkspaceBudgetExhausted: the workspace's usage of the integration reached its
// credit limit; the gateway refuses that use until the limit is raised above the usage or the
// usage is reset.
type IntegrationWorkspaceBudgetExhausted struct {
	IntegrationID string    `json:"integration_id"`
	WorkspaceID   string    `json:"workspace_id"`
	LimitType     string    `json:"limit_type"`
	Usage         float64   `json:"usage"`
	CreditLimit   float64   `json:"credit_limit"`
	At            time.Time `json:"at"`
}

// IntegrationWorkspaceBudgetReactivated: an exhausted integration workspace is active again,
// its credit limit raised above the usage it was exhausted at, or removed (Reason).
type IntegrationWorkspaceBudgetReactivated struct {
	IntegrationID string    `json:"integration_id"`
	WorkspaceID   string    `json:"workspace_id"`
	Reason        string    `json:"reason"`
	At            time.Time `json:"at"`
}

// IntegrationWorkspaceUsageAlertsReset clears the workspace's sent alerts, so they are sent
// again when reached (3: a raised credit limit resets both, a raised or removed threshold the
// threshold alert).
type IntegrationWorkspaceUsageAlertsReset struct {
	IntegrationID string    `json:"integration_id"`
	WorkspaceID   string    `json:"workspace_id"`
	Threshold     bool      `json:"threshold"`
	Exhausted     bool      `json:"exhausted"`
	At            time.Time `json:"at"`
}

// IntegrationWorkspaceUsageReset zeroes the workspace's usage of the integration and starts a
// new usage period (reset_usage, or its periodic reset): its alerts and exhaustion are
// cleared. A Scheduled reset also moves the next reset to NextUsageResetAt (nil: none); a
// manual one leaves the schedule as it is.
type IntegrationWorkspaceUsageReset struct {
	IntegrationID    string     `json:"integration_id"`
	WorkspaceID      string     `json:"workspace_id"`
	Scheduled        bool       `json:"scheduled,omitempty"`
	NextUsageResetAt *time.Time `json:"next_usage_reset_at,omitempty"`
	At               time.Time  `json:"at"`
}

func (IntegrationWorkspaceUsageThresholdReached) EventType() string {
	return "IntegrationWorkspaceUsageThresholdReached"
}
func (IntegrationWorkspaceBudgetExhausted) EventType() string {
	return "IntegrationWorkspaceBudgetExhausted"
}
func (IntegrationWorkspaceBudgetReactivated) EventType() string {
	return "IntegrationWorkspaceBudgetReactivated"
}
func (IntegrationWorkspaceUsageAlertsReset) EventType() string {
	return "IntegrationWorkspaceUsageAlertsReset"
}
func (IntegrationWorkspaceUsageReset) EventType() string { return "IntegrationWorkspaceUsageReset" }

// applyUsage folds the budget events of an integration workspace, in a fresh copy of the map
// (read models hand out copies that share it). An event about a workspace without an entry
// changes nothing.
func (i *Integration) applyUsage(e Event) {
	switch e := e.(type) {
	case IntegrationWorkspaceUsageThresholdReached:
		i.changeBudget(e.WorkspaceID, e.At, func(w *IntegrationWorkspace) {
			w.CurrentUsage, w.ThresholdAlertSent = e.Usage, true
		})
	case IntegrationWorkspaceBudgetExhausted:
		i.changeBudget(e.WorkspaceID, e.At, func(w *IntegrationWorkspace) {
			w.CurrentUsage, w.BudgetExhausted, w.ExhaustedAlertSent = e.Usage, true, true
		})
	case IntegrationWorkspaceBudgetReactivated:
		i.changeBudget(e.WorkspaceID, e.At, func(w *IntegrationWorkspace) { w.BudgetExhausted = false })
	case IntegrationWorkspaceUsageAlertsReset:
		i.changeBudget(e.WorkspaceID, e.At, func(w *IntegrationWorkspace) {
			w.ThresholdAlertSent = w.ThresholdAlertSent && !e.Threshold
			w.ExhaustedAlertSent = w.ExhaustedAlertSent && !e.Exhausted
		})
	case IntegrationWorkspaceUsageReset:
		i.changeBudget(e.WorkspaceID, e.At, func(w *IntegrationWorkspace) {
			at := e.At
			w.IntegrationWorkspaceBudget = IntegrationWorkspaceBudget{UsageResets: w.UsageResets + 1, LastResetAt: &at}
			if e.Scheduled && len(w.UsageLimits) > 0 {
				limits := slices.Clone(w.UsageLimits)
				limits[0].NextUsageResetAt = e.NextUsageResetAt
				w.UsageLimits = limits
			}
		})
	}
}

func (i *Integration) changeBudget(workspaceID string, at time.Time, change func(*IntegrationWorkspace)) {
	w, ok := i.Workspaces[workspaceID]
	if !ok {
		return
	}
	ws := maps.Clone(i.Workspaces)
	change(&w)
	ws[workspaceID] = w
	i.Workspaces, i.LastUpdatedAt = ws, at
}

// accessLimit is the usage limit of an access, or nil.
func accessLimit(w IntegrationWorkspace) *UsageLimits {
	if len(w.UsageLimits) == 0 {
		return nil
	}
	return &w.UsageLimits[0]
}

// WorkspaceUsagePeriod names the current usage period of workspaceID's use of the integration:
// the number of its usage resets so far ("0" for a workspace without access yet).
func (i *Integration) WorkspaceUsagePeriod(workspaceID string) string {
	return usagePeriod(i.Workspaces[workspaceID].UsageResets)
}

// WorkspaceUsageReached decides what usage of the integration by workspaceID, as the ledger
// counted it in period, does to that workspace's budget: the alert threshold is alerted once
// per period, and the budget is exhausted at its credit limit when it is not already. A
// report about an earlier period, a deleted integration, or a workspace without access
// decides nothing.
func (i *Integration) WorkspaceUsageReached(workspaceID, period string, usage float64, now time.Time) ([]Event, error) {
	if err := validateUsage(usage); err != nil {
		return nil, err
	}
	w, ok := i.Workspaces[workspaceID]
	if !i.Exists() || !ok || !w.Enabled || period != i.WorkspaceUsagePeriod(workspaceID) {
		return nil, nil
	}
	limit := accessLimit(w)
	threshold, exhaust := budgetAlertsDue(limit, w.ThresholdAlertSent, w.BudgetExhausted, usage)
	var events []Event
	if threshold {
		events = append(events, IntegrationWorkspaceUsageThresholdReached{IntegrationID: i.ID, WorkspaceID: workspaceID,
			LimitType: limit.Type, Usage: usage, AlertThreshold: *limit.AlertThreshold, At: now})
	}
	if exhaust {
		events = append(events, IntegrationWorkspaceBudgetExhausted{IntegrationID: i.ID, WorkspaceID: workspaceID,
			LimitType: limit.Type, Usage: usage, CreditLimit: *limit.CreditLimit, At: now})
	}
	return events, nil
}

// WorkspaceUsageResetDue reports whether the periodic usage reset of workspaceID's use of the
// integration has come at now.
func (i *Integration) WorkspaceUsageResetDue(workspaceID string, now time.Time) bool {
	w, ok := i.Workspaces[workspaceID]
	if !i.Exists() || !ok {
		return false
	}
	due, _ := scheduledReset(accessLimit(w), now)
	return due
}

// WorkspaceResetsDue lists, sorted, the workspaces whose periodic usage reset of the
// integration has come at now.
func (i *Integration) WorkspaceResetsDue(now time.Time) []string {
	var out []string
	for id := range i.Workspaces {
		if i.WorkspaceUsageResetDue(id, now) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// ResetWorkspaceUsageIfDue decides the periodic usage reset of workspaceID's use of the
// integration once its next_usage_reset_at has passed: a new period starts from zero, an
// exhausted budget is active again, and the next reset is a period later (periods missed are
// skipped). Before then, or without a schedule, it decides nothing, so a worker that repeats
// itself resets once.
func (i *Integration) ResetWorkspaceUsageIfDue(workspaceID string, now time.Time) ([]Event, error) {
	w, ok := i.Workspaces[workspaceID]
	if !i.Exists() || !ok {
		return nil, nil
	}
	due, next := scheduledReset(accessLimit(w), now)
	if !due {
		return nil, nil
	}
	return []Event{IntegrationWorkspaceUsageReset{IntegrationID: i.ID, WorkspaceID: workspaceID, Scheduled: true,
		NextUsageResetAt: next, At: now}}, nil
}

// UpdateWorkspacesResetting decides a bulk update as UpdateWorkspaces does, and resets the
// usage of the workspaces resetUsage names (reset_usage of their entries): each starts a new
// period from zero, and an exhausted one is active again.
func (i *Integration) UpdateWorkspacesResetting(entries []IntegrationWorkspace, resetUsage []string, now time.Time) ([]Event, error) {
	events, err := i.UpdateWorkspaces(entries, now)
	if err != nil {
		return nil, err
	}
	for _, id := range resetUsage {
		if !slices.ContainsFunc(entries, func(w IntegrationWorkspace) bool { return w.ID == id }) {
			return nil, Invalid("workspaces", "reset_usage names workspace %s, which the update does not", id)
		}
	}
	// A workspace whose usage is reset needs neither its alerts reset nor a reactivation.
	events = slices.DeleteFunc(events, func(e Event) bool {
		switch e := e.(type) {
		case IntegrationWorkspaceBudgetReactivated:
			return slices.Contains(resetUsage, e.WorkspaceID)
		case IntegrationWorkspaceUsageAlertsReset:
			return slices.Contains(resetUsage, e.WorkspaceID)
		}
		return false
	})
	seen := map[string]bool{}
	for _, id := range resetUsage {
		if !seen[id] {
			seen[id] = true
			events = append(events, IntegrationWorkspaceUsageReset{IntegrationID: i.ID, WorkspaceID: id, At: now})
		}
	}
	return events, nil
}

// accessBudgetChanged decides what an entry of a bulk update does to the budget of a workspace
// that had access (3): a raised or removed credit limit resets both alerts, a raised or
// removed threshold the threshold alert, and an exhausted budget is active again once its
// limit is removed or raised above the usage it was exhausted at.
func (i *Integration) accessBudgetChanged(w IntegrationWorkspace, now time.Time) []Event {
	old, ok := i.Workspaces[w.ID]
	if !ok {
		return nil
	}
	c := changeBudget(accessLimit(old), accessLimit(w), budgetState{thresholdSent: old.ThresholdAlertSent,
		exhaustedSent: old.ExhaustedAlertSent, exhausted: old.BudgetExhausted, usage: old.CurrentUsage})
	var out []Event
	if c.reactivated != "" {
		out = append(out, IntegrationWorkspaceBudgetReactivated{IntegrationID: i.ID, WorkspaceID: w.ID, Reason: c.reactivated, At: now})
	}
	if c.resetThreshold || c.resetExhausted {
		out = append(out, IntegrationWorkspaceUsageAlertsReset{IntegrationID: i.ID, WorkspaceID: w.ID,
			Threshold: c.resetThreshold, Exhausted: c.resetExhausted, At: now})
	}
	return out
}

// normaliseAccessLimits fills in when a periodic reset of an entry's usage limit next falls,
// when it was not given: as before when the schedule is unchanged, else one period from now.
func (i *Integration) normaliseAccessLimits(w IntegrationWorkspace, now time.Time) []UsageLimits {
	u := accessLimit(w)
	if u == nil || u.NextUsageResetAt != nil || (u.PeriodicReset == nil && u.PeriodicResetDays == nil) {
		return w.UsageLimits
	}
	out := slices.Clone(w.UsageLimits)
	next := NextReset(now, u.PeriodicReset, u.PeriodicResetDays)
	if old := accessLimit(i.Workspaces[w.ID]); old != nil && old.NextUsageResetAt != nil &&
		sameSchedule(old.PeriodicReset, old.PeriodicResetDays, u.PeriodicReset, u.PeriodicResetDays) {
		next = old.NextUsageResetAt
	}
	out[0].NextUsageResetAt = next
	return out
}
