package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	ulpT0   = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	ulpT1   = ulpT0.Add(time.Hour)
	ulpID   = "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1"
	ulpKeyA = "api_key:a"
	ulpKeyB = "api_key:b"
)

func ulpF(v float64) *float64 { return &v }
func ulpS(v string) *string   { return &v }
func ulpI(v int) *int         { return &v }

// ulpCase is one given/when/then case: events that happened, a decision, and the events it
// must decide (or the error code and param it must refuse with).
type ulpCase struct {
	name   string
	given  []Event
	when   func(p *UsageLimitPolicy) ([]Event, error)
	then   []Event
	code   Code
	param  string
	wantIn string // a fragment of the error message (the bound)
}

func runULP(t *testing.T, cases []ulpCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &UsageLimitPolicy{}
			for _, e := range tc.given {
				p.Apply(e)
			}
			got, err := tc.when(p)
			if tc.code != "" {
				require.Error(t, err)
				var appErr *Error
				require.ErrorAs(t, err, &appErr)
				assert.Equal(t, tc.code, appErr.Code, appErr.Message)
				assert.Equal(t, tc.param, appErr.Param, appErr.Message)
				assert.Contains(t, appErr.Message, tc.wantIn)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.then, got)
		})
	}
}

func ulpCreated(mod ...func(*UsageLimitPolicyCreated)) UsageLimitPolicyCreated {
	c := UsageLimitPolicyCreated{PolicyID: ulpID, OrganisationID: "org", WorkspaceID: "ws", Name: ulpS("budget"),
		Conditions: []Condition{{Key: "workspace_id", Value: "ws"}}, GroupBy: []GroupBy{{Key: "api_key"}},
		Type: UsageCost, CreditLimit: 100, AlertThreshold: ulpF(80), At: ulpT0}
	for _, m := range mod {
		m(&c)
	}
	return c
}

func ulpUsed(key string, amount float64) UsageLimitPolicyUsageRecorded {
	return UsageLimitPolicyUsageRecorded{PolicyID: ulpID, ValueKey: key, Amount: amount, At: ulpT0}
}

func ulpThreshold(key string, usage, at float64) UsageLimitPolicyThresholdReached {
	return UsageLimitPolicyThresholdReached{PolicyID: ulpID, ValueKey: key, Usage: usage, AlertThreshold: at, At: ulpT1}
}

func ulpExhausted(key string, usage, limit float64) UsageLimitPolicyEntityExhausted {
	return UsageLimitPolicyEntityExhausted{PolicyID: ulpID, ValueKey: key, Usage: usage, CreditLimit: limit, At: ulpT1}
}

func TestCreateUsageLimitPolicy(t *testing.T) {
	valid := func(mod ...func(*CreateUsageLimitPolicy)) CreateUsageLimitPolicy {
		c := CreateUsageLimitPolicy{PolicyID: ulpID, OrganisationID: "org", WorkspaceID: "ws", Name: ulpS("budget"),
			Conditions: []Condition{{Key: "workspace_id", Value: "ws"}}, GroupBy: []GroupBy{{Key: "api_key"}},
			Type: UsageCost, CreditLimit: ulpF(100), AlertThreshold: ulpF(80)}
		for _, m := range mod {
			m(&c)
		}
		return c
	}
	create := func(c CreateUsageLimitPolicy) func(p *UsageLimitPolicy) ([]Event, error) {
		return func(p *UsageLimitPolicy) ([]Event, error) { return p.Create(c, ulpT0) }
	}
	weekly := ulpT0.AddDate(0, 0, 7)
	days365 := ulpT0.AddDate(0, 0, 365)
	runULP(t, []ulpCase{
		{name: "created without schedule", when: create(valid()), then: []Event{ulpCreated()}},
		{name: "weekly sets the first reset a week out",
			when: create(valid(func(c *CreateUsageLimitPolicy) { c.PeriodicReset = ulpS("weekly") })),
			then: []Event{ulpCreated(func(e *UsageLimitPolicyCreated) { e.PeriodicReset, e.NextUsageResetAt = ulpS("weekly"), &weekly })}},
		{name: "periodic_reset_days 365",
			when: create(valid(func(c *CreateUsageLimitPolicy) { c.PeriodicResetDays = ulpI(365) })),
			then: []Event{ulpCreated(func(e *UsageLimitPolicyCreated) { e.PeriodicResetDays, e.NextUsageResetAt = ulpI(365), &days365 })}},
		{name: "exists already", given: []Event{ulpCreated()}, when: create(valid()), code: CodeConflict},
		{name: "name 256", when: create(valid(func(c *CreateUsageLimitPolicy) { c.Name = ulpS(strings.Repeat("n", 256)) })),
			code: CodeInvalid, param: "name", wantIn: "at most 255"},
		{name: "no conditions", when: create(valid(func(c *CreateUsageLimitPolicy) { c.Conditions = nil })),
			code: CodeInvalid, param: "conditions", wantIn: "at least one"},
		{name: "no group_by", when: create(valid(func(c *CreateUsageLimitPolicy) { c.GroupBy = nil })),
			code: CodeInvalid, param: "group_by", wantIn: "at least one"},
		{name: "bad type", when: create(valid(func(c *CreateUsageLimitPolicy) { c.Type = "requests" })),
			code: CodeInvalid, param: "type", wantIn: "cost or tokens"},
		{name: "credit_limit missing", when: create(valid(func(c *CreateUsageLimitPolicy) { c.CreditLimit = nil })),
			code: CodeInvalid, param: "credit_limit", wantIn: "required"},
		{name: "credit_limit 0", when: create(valid(func(c *CreateUsageLimitPolicy) { c.CreditLimit, c.AlertThreshold = ulpF(0), nil })),
			code: CodeInvalid, param: "credit_limit", wantIn: "greater than 0"},
		{name: "alert_threshold equal to credit_limit", when: create(valid(func(c *CreateUsageLimitPolicy) { c.AlertThreshold = ulpF(100) })),
			code: CodeInvalid, param: "alert_threshold", wantIn: "below credit_limit"},
		{name: "alert_threshold negative", when: create(valid(func(c *CreateUsageLimitPolicy) { c.AlertThreshold = ulpF(-1) })),
			code: CodeInvalid, param: "alert_threshold", wantIn: "at least 0"},
		{name: "both resets", when: create(valid(func(c *CreateUsageLimitPolicy) { c.PeriodicReset, c.PeriodicResetDays = ulpS("weekly"), ulpI(3) })),
			code: CodeInvalid, param: "periodic_reset_days", wantIn: "exclude each other"},
		{name: "periodic_reset_days 0", when: create(valid(func(c *CreateUsageLimitPolicy) { c.PeriodicResetDays = ulpI(0) })),
			code: CodeInvalid, param: "periodic_reset_days", wantIn: "1 to 365"},
		{name: "periodic_reset daily", when: create(valid(func(c *CreateUsageLimitPolicy) { c.PeriodicReset = ulpS("daily") })),
			code: CodeInvalid, param: "periodic_reset", wantIn: "weekly or monthly"},
	})
}

func TestUpdateUsageLimitPolicy(t *testing.T) {
	update := func(c UpdateUsageLimitPolicy) func(p *UsageLimitPolicy) ([]Event, error) {
		return func(p *UsageLimitPolicy) ([]Event, error) { return p.Update(c, ulpT1) }
	}
	upd := func(mod func(*UsageLimitPolicyUpdated)) UsageLimitPolicyUpdated {
		e := UsageLimitPolicyUpdated{PolicyID: ulpID, At: ulpT1}
		mod(&e)
		return e
	}
	monthly := ulpT1.AddDate(0, 1, 0)
	weekly := ulpT0.AddDate(0, 0, 7)
	exhaustedA := []Event{ulpCreated(), ulpUsed(ulpKeyA, 100), ulpThreshold(ulpKeyA, 100, 80), ulpExhausted(ulpKeyA, 100, 100)}
	runULP(t, []ulpCase{
		{name: "rename", given: []Event{ulpCreated()}, when: update(UpdateUsageLimitPolicy{Name: ulpS("renamed")}),
			then: []Event{upd(func(e *UsageLimitPolicyUpdated) { e.Name = ulpS("renamed") })}},
		{name: "schedule set to monthly starts a period now", given: []Event{ulpCreated()},
			when: update(UpdateUsageLimitPolicy{SetSchedule: true, PeriodicReset: ulpS("monthly")}),
			then: []Event{upd(func(e *UsageLimitPolicyUpdated) {
				e.ScheduleChanged, e.PeriodicReset, e.NextUsageResetAt = true, ulpS("monthly"), &monthly
			})}},
		{name: "the same schedule keeps its period",
			given: []Event{ulpCreated(func(c *UsageLimitPolicyCreated) { c.PeriodicReset, c.NextUsageResetAt = ulpS("weekly"), &weekly })},
			when:  update(UpdateUsageLimitPolicy{SetSchedule: true, PeriodicReset: ulpS("weekly")}),
			then:  []Event{upd(func(e *UsageLimitPolicyUpdated) {})}},
		{name: "schedule removed",
			given: []Event{ulpCreated(func(c *UsageLimitPolicyCreated) { c.PeriodicReset, c.NextUsageResetAt = ulpS("weekly"), &weekly })},
			when:  update(UpdateUsageLimitPolicy{SetSchedule: true}),
			then:  []Event{upd(func(e *UsageLimitPolicyUpdated) { e.ScheduleChanged = true })}},
		{name: "raising the limit reactivates and resets both alerts", given: exhaustedA,
			when: update(UpdateUsageLimitPolicy{CreditLimit: ulpF(150)}),
			then: []Event{
				upd(func(e *UsageLimitPolicyUpdated) { e.CreditLimit = ulpF(150) }),
				UsageLimitPolicyEntityReactivated{PolicyID: ulpID, ValueKey: ulpKeyA, At: ulpT1},
				UsageLimitPolicyAlertsReset{PolicyID: ulpID, Threshold: true, Exhausted: true, At: ulpT1},
				// Still over the threshold of 80, the entity is alerted again at once.
				ulpThreshold(ulpKeyA, 100, 80),
			}},
		{name: "raising the limit and the threshold past the usage alerts nothing again", given: exhaustedA,
			when: update(UpdateUsageLimitPolicy{CreditLimit: ulpF(200), AlertThreshold: ulpF(150)}),
			then: []Event{
				upd(func(e *UsageLimitPolicyUpdated) { e.CreditLimit, e.AlertThreshold = ulpF(200), ulpF(150) }),
				UsageLimitPolicyEntityReactivated{PolicyID: ulpID, ValueKey: ulpKeyA, At: ulpT1},
				UsageLimitPolicyAlertsReset{PolicyID: ulpID, Threshold: true, Exhausted: true, At: ulpT1},
			}},
		{name: "a raise that leaves the entity over the limit alerts its exhaustion again",
			given: append(append([]Event{}, exhaustedA...), ulpUsed(ulpKeyA, 50)),
			when:  update(UpdateUsageLimitPolicy{CreditLimit: ulpF(120), ClearAlertThreshold: true}),
			then: []Event{
				upd(func(e *UsageLimitPolicyUpdated) { e.CreditLimit, e.ClearAlertThreshold = ulpF(120), true }),
				UsageLimitPolicyAlertsReset{PolicyID: ulpID, Threshold: true, Exhausted: true, At: ulpT1},
				ulpExhausted(ulpKeyA, 150, 120),
			}},
		{name: "lowering the limit exhausts entities at it", given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 60), ulpUsed(ulpKeyB, 10)},
			when: update(UpdateUsageLimitPolicy{CreditLimit: ulpF(60), ClearAlertThreshold: true}),
			then: []Event{
				upd(func(e *UsageLimitPolicyUpdated) { e.CreditLimit, e.ClearAlertThreshold = ulpF(60), true }),
				ulpExhausted(ulpKeyA, 60, 60),
			}},
		{name: "raising the threshold resets threshold alerts only",
			given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 85), ulpThreshold(ulpKeyA, 85, 80)},
			when:  update(UpdateUsageLimitPolicy{AlertThreshold: ulpF(90)}),
			then: []Event{
				upd(func(e *UsageLimitPolicyUpdated) { e.AlertThreshold = ulpF(90) }),
				UsageLimitPolicyAlertsReset{PolicyID: ulpID, Threshold: true, At: ulpT1},
			}},
		{name: "removing the threshold resets threshold alerts",
			given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 85), ulpThreshold(ulpKeyA, 85, 80)},
			when:  update(UpdateUsageLimitPolicy{ClearAlertThreshold: true}),
			then: []Event{
				upd(func(e *UsageLimitPolicyUpdated) { e.ClearAlertThreshold = true }),
				UsageLimitPolicyAlertsReset{PolicyID: ulpID, Threshold: true, At: ulpT1},
			}},
		{name: "lowering the threshold under the usage alerts at once", given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 50)},
			when: update(UpdateUsageLimitPolicy{AlertThreshold: ulpF(50)}),
			then: []Event{upd(func(e *UsageLimitPolicyUpdated) { e.AlertThreshold = ulpF(50) }), ulpThreshold(ulpKeyA, 50, 50)}},
		{name: "reset_usage_for_value", given: exhaustedA,
			when: update(UpdateUsageLimitPolicy{ResetUsageForValue: ulpS(ulpKeyA)}),
			then: []Event{upd(func(e *UsageLimitPolicyUpdated) {}),
				UsageLimitPolicyEntityReset{PolicyID: ulpID, ValueKey: ulpKeyA, At: ulpT1}}},
		{name: "reset_usage_for_value unknown", given: []Event{ulpCreated()},
			when: update(UpdateUsageLimitPolicy{ResetUsageForValue: ulpS("api_key:zzz")}), code: CodeNotFound, param: "reset_usage_for_value"},
		{name: "nothing to update", given: []Event{ulpCreated()}, when: update(UpdateUsageLimitPolicy{}), code: CodeInvalid, wantIn: "nothing to update"},
		{name: "name 256", given: []Event{ulpCreated()}, when: update(UpdateUsageLimitPolicy{Name: ulpS(strings.Repeat("n", 256))}),
			code: CodeInvalid, param: "name", wantIn: "at most 255"},
		{name: "credit_limit 0", given: []Event{ulpCreated()}, when: update(UpdateUsageLimitPolicy{CreditLimit: ulpF(0)}),
			code: CodeInvalid, param: "credit_limit", wantIn: "greater than 0"},
		{name: "credit_limit at the kept threshold", given: []Event{ulpCreated()}, when: update(UpdateUsageLimitPolicy{CreditLimit: ulpF(80)}),
			code: CodeInvalid, param: "credit_limit", wantIn: "above alert_threshold 80"},
		{name: "threshold at the new limit", given: []Event{ulpCreated()},
			when: update(UpdateUsageLimitPolicy{CreditLimit: ulpF(50), AlertThreshold: ulpF(50)}),
			code: CodeInvalid, param: "alert_threshold", wantIn: "below credit_limit 50"},
		{name: "both resets", given: []Event{ulpCreated()},
			when: update(UpdateUsageLimitPolicy{SetSchedule: true, PeriodicReset: ulpS("weekly"), PeriodicResetDays: ulpI(2)}),
			code: CodeInvalid, param: "periodic_reset_days"},
		{name: "periodic_reset_days 366", given: []Event{ulpCreated()},
			when: update(UpdateUsageLimitPolicy{SetSchedule: true, PeriodicResetDays: ulpI(366)}),
			code: CodeInvalid, param: "periodic_reset_days", wantIn: "1 to 365"},
		{name: "missing", when: update(UpdateUsageLimitPolicy{Name: ulpS("x")}), code: CodeNotFound},
		{name: "archived", given: []Event{ulpCreated(), UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT0}},
			when: update(UpdateUsageLimitPolicy{Name: ulpS("x")}), code: CodeNotFound},
	})
}

func TestArchiveUsageLimitPolicy(t *testing.T) {
	archive := func(p *UsageLimitPolicy) ([]Event, error) { return p.Archive(ulpT1) }
	runULP(t, []ulpCase{
		{name: "archived", given: []Event{ulpCreated()}, when: archive,
			then: []Event{UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT1}}},
		{name: "twice", given: []Event{ulpCreated(), UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT0}}, when: archive, code: CodeNotFound},
		{name: "missing", when: archive, code: CodeNotFound},
	})
}

func TestRecordUsage(t *testing.T) {
	record := func(key string, amount float64) func(p *UsageLimitPolicy) ([]Event, error) {
		return func(p *UsageLimitPolicy) ([]Event, error) { return p.RecordUsage(key, amount, ulpT1) }
	}
	rec := func(key string, amount float64) UsageLimitPolicyUsageRecorded {
		e := ulpUsed(key, amount)
		e.At = ulpT1
		return e
	}
	runULP(t, []ulpCase{
		{name: "under the threshold", given: []Event{ulpCreated()}, when: record(ulpKeyA, 79.5),
			then: []Event{rec(ulpKeyA, 79.5)}},
		{name: "reaching the threshold alerts", given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 79.5)}, when: record(ulpKeyA, 0.5),
			then: []Event{rec(ulpKeyA, 0.5), ulpThreshold(ulpKeyA, 80, 80)}},
		{name: "the threshold alerts once per period",
			given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 81), ulpThreshold(ulpKeyA, 81, 80)}, when: record(ulpKeyA, 1),
			then: []Event{rec(ulpKeyA, 1)}},
		{name: "entities count apart", given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 99)}, when: record(ulpKeyB, 1),
			then: []Event{rec(ulpKeyB, 1)}},
		{name: "reaching the limit exhausts",
			given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 81), ulpThreshold(ulpKeyA, 81, 80)}, when: record(ulpKeyA, 19),
			then: []Event{rec(ulpKeyA, 19), ulpExhausted(ulpKeyA, 100, 100)}},
		{name: "one jump past both alerts both", given: []Event{ulpCreated()}, when: record(ulpKeyA, 250),
			then: []Event{rec(ulpKeyA, 250), ulpThreshold(ulpKeyA, 250, 80), ulpExhausted(ulpKeyA, 250, 100)}},
		{name: "usage after exhaustion is counted, not alerted again",
			given: []Event{ulpCreated(), ulpUsed(ulpKeyA, 100), ulpThreshold(ulpKeyA, 100, 80), ulpExhausted(ulpKeyA, 100, 100)},
			when:  record(ulpKeyA, 3), then: []Event{rec(ulpKeyA, 3)}},
		{name: "no threshold, no threshold alert", given: []Event{ulpCreated(func(c *UsageLimitPolicyCreated) { c.AlertThreshold = nil })},
			when: record(ulpKeyA, 90), then: []Event{rec(ulpKeyA, 90)}},
		{name: "zero is nothing", given: []Event{ulpCreated()}, when: record(ulpKeyA, 0)},
		{name: "negative", given: []Event{ulpCreated()}, when: record(ulpKeyA, -1), code: CodeInvalid, param: "amount", wantIn: "at least 0"},
		{name: "no value key", given: []Event{ulpCreated()}, when: record(" ", 1), code: CodeInvalid, param: "value_key"},
		{name: "value key at 1024", given: []Event{ulpCreated()}, when: record(strings.Repeat("k", 1024), 1),
			then: []Event{rec(strings.Repeat("k", 1024), 1)}},
		{name: "value key at 1025", given: []Event{ulpCreated()}, when: record(strings.Repeat("k", 1025), 1),
			code: CodeInvalid, param: "value_key", wantIn: "at most 1024"},
		{name: "archived", given: []Event{ulpCreated(), UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT0}},
			when: record(ulpKeyA, 1), code: CodeNotFound},
	})
}

func TestResetEntity(t *testing.T) {
	reset := func(ref string) func(p *UsageLimitPolicy) ([]Event, error) {
		return func(p *UsageLimitPolicy) ([]Event, error) { return p.ResetEntity(ref, ulpT1) }
	}
	given := []Event{ulpCreated(), ulpUsed(ulpKeyA, 100), ulpThreshold(ulpKeyA, 100, 80), ulpExhausted(ulpKeyA, 100, 100)}
	want := []Event{UsageLimitPolicyEntityReset{PolicyID: ulpID, ValueKey: ulpKeyA, At: ulpT1}}
	runULP(t, []ulpCase{
		{name: "by value key", given: given, when: reset(ulpKeyA), then: want},
		{name: "by id", given: given, when: reset(UsageEntityID(ulpID, ulpKeyA)), then: want},
		{name: "unknown entity", given: given, when: reset(ulpKeyB), code: CodeNotFound, param: "entityId"},
		{name: "archived policy", given: append(append([]Event{}, given...), UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT0}),
			when: reset(ulpKeyA), code: CodeNotFound},
	})

	p := &UsageLimitPolicy{}
	for _, e := range append(append([]Event{}, given...), want...) {
		p.Apply(e)
	}
	en := p.Entities[ulpKeyA]
	assert.Equal(t, UsageLimitEntity{ID: UsageEntityID(ulpID, ulpKeyA), ValueKey: ulpKeyA, Status: UsageEntityActive,
		LastResetAt: &ulpT1, UsageResets: 1, CreatedAt: ulpT0, LastUpdatedAt: ulpT1}, en, "a reset entity is active, at zero, with no alerts sent")
}

func TestResetPeriod(t *testing.T) {
	next := ulpT0.AddDate(0, 0, 2)
	scheduled := ulpCreated(func(c *UsageLimitPolicyCreated) { c.PeriodicResetDays, c.NextUsageResetAt = ulpI(2), &next })
	resetAt := func(now time.Time) func(p *UsageLimitPolicy) ([]Event, error) {
		return func(p *UsageLimitPolicy) ([]Event, error) { return p.ResetPeriod(now) }
	}
	after := func(days int) *time.Time { t := ulpT0.AddDate(0, 0, days); return &t }
	runULP(t, []ulpCase{
		{name: "before the reset nothing happens", given: []Event{scheduled, ulpUsed(ulpKeyA, 5)}, when: resetAt(next.Add(-time.Second))},
		{name: "at the reset every entity restarts", given: []Event{scheduled, ulpUsed(ulpKeyA, 5)}, when: resetAt(next),
			then: []Event{UsageLimitPolicyPeriodReset{PolicyID: ulpID, NextUsageResetAt: after(4), At: next}}},
		{name: "missed periods are skipped", given: []Event{scheduled}, when: resetAt(ulpT0.AddDate(0, 0, 7)),
			then: []Event{UsageLimitPolicyPeriodReset{PolicyID: ulpID, NextUsageResetAt: after(8), At: ulpT0.AddDate(0, 0, 7)}}},
		{name: "no schedule", given: []Event{ulpCreated()}, when: resetAt(ulpT0.AddDate(1, 0, 0))},
		{name: "archived", given: []Event{scheduled, UsageLimitPolicyArchived{PolicyID: ulpID, At: ulpT0}}, when: resetAt(next)},
		{name: "missing", when: resetAt(next), code: CodeNotFound},
	})

	p := &UsageLimitPolicy{}
	for _, e := range []Event{scheduled, ulpUsed(ulpKeyA, 100), ulpThreshold(ulpKeyA, 100, 80), ulpExhausted(ulpKeyA, 100, 100),
		ulpUsed(ulpKeyB, 1), UsageLimitPolicyPeriodReset{PolicyID: ulpID, NextUsageResetAt: after(4), At: next}} {
		p.Apply(e)
	}
	assert.Equal(t, after(4), p.NextUsageResetAt)
	assert.Equal(t, &next, p.LastResetAt)
	for _, en := range p.Entities {
		assert.Zero(t, en.CurrentUsage, en.ValueKey)
		assert.Equal(t, UsageEntityActive, en.Status, en.ValueKey)
		assert.False(t, en.ThresholdAlertSent || en.ExhaustedAlertSent, en.ValueKey)
	}
}

func TestUsageAddsUpFractions(t *testing.T) {
	p := &UsageLimitPolicy{}
	for _, e := range []Event{ulpCreated(), ulpUsed(ulpKeyA, 0.25), ulpUsed(ulpKeyA, 0.5), ulpUsed(ulpKeyB, 0.1), ulpUsed(ulpKeyB, 0.2)} {
		p.Apply(e)
	}
	assert.Equal(t, 0.75, p.Entities[ulpKeyA].CurrentUsage)
	assert.Equal(t, 0.3, p.Entities[ulpKeyB].CurrentUsage)
	raw, err := json.Marshal(p.Entities[ulpKeyA])
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"current_usage":0.75`)
}

// Apply replaces the entity map rather than changing it, so a copy handed out earlier (the
// read model's get) never sees a later event.
func TestEntitiesAreCopiedOnWrite(t *testing.T) {
	p := &UsageLimitPolicy{}
	p.Apply(ulpCreated())
	p.Apply(ulpUsed(ulpKeyA, 1))
	before := *p
	p.Apply(ulpUsed(ulpKeyA, 2))
	p.Apply(UsageLimitPolicyAlertsReset{PolicyID: ulpID, Threshold: true, At: ulpT1})
	assert.Equal(t, 1.0, before.Entities[ulpKeyA].CurrentUsage)
	assert.Equal(t, 3.0, p.Entities[ulpKeyA].CurrentUsage)
}

func TestUsageEntityIDIsStable(t *testing.T) {
	id := UsageEntityID(ulpID, ulpKeyA)
	assert.Equal(t, id, UsageEntityID(ulpID, ulpKeyA))
	assert.NotEqual(t, id, UsageEntityID(ulpID, ulpKeyB))
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, id)
}
