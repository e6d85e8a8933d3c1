package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	wsT0    = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	wsLater = wsT0.Add(time.Hour)
)

const testWorkspaceID, testOrgID = "ws-1", "org-1"

func wsPtr[T any](v T) *T { return &v }

// decision is one given/when/then case: the events a workspace was folded from, the decision
// taken on it, and the events it must decide (or the error code and param it must refuse with).
type decision struct {
	name  string
	given []Event
	when  func(w *Workspace) ([]Event, error)
	then  []Event
	code  Code
	param string
}

func givenWorkspace(events ...Event) *Workspace {
	w := &Workspace{}
	for _, e := range events {
		w.Apply(e)
	}
	return w
}

func runDecisions(t *testing.T, cases []decision) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events, err := tc.when(givenWorkspace(tc.given...))
			if tc.code != "" {
				require.Error(t, err)
				assert.Equal(t, tc.code, ErrorCode(err), err.Error())
				var e *Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, tc.param, e.Param, e.Message)
				assert.Empty(t, events)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.then, events)
		})
	}
}

func wsCreated(mods ...func(*WorkspaceCreated)) WorkspaceCreated {
	e := WorkspaceCreated{WorkspaceID: testWorkspaceID, OrganisationID: testOrgID, Name: "Team A", Slug: "team-a", At: wsT0}
	for _, m := range mods {
		m(&e)
	}
	return e
}

func wsSpec(mods ...func(*CreateWorkspace)) CreateWorkspace {
	c := CreateWorkspace{WorkspaceID: testWorkspaceID, OrganisationID: testOrgID, Name: "Team A", Slug: "team-a"}
	for _, m := range mods {
		m(&c)
	}
	return c
}

func costLimit(credit float64) UsageLimits {
	return UsageLimits{Type: UsageCost, CreditLimit: wsPtr(credit)}
}

func TestCreateWorkspace(t *testing.T) {
	create := func(mods ...func(*CreateWorkspace)) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.Create(wsSpec(mods...), wsT0) }
	}
	runDecisions(t, []decision{
		{name: "minimal", when: create(), then: []Event{wsCreated()}},
		{name: "with defaults and limits",
			when: create(func(c *CreateWorkspace) {
				c.Description = "d"
				c.Defaults = map[string]any{"metadata": map[string]any{"env": "prod"}}
				c.RateLimits = []RateLimit{{Type: LimitRequests, Unit: "rpm", Value: 10}}
				c.UsageLimits = []UsageLimits{costLimit(100)}
			}),
			then: []Event{wsCreated(func(e *WorkspaceCreated) {
				e.Description = "d"
				e.Defaults = map[string]any{"metadata": map[string]any{"env": "prod"}}
				e.RateLimits = []RateLimit{{Type: LimitRequests, Unit: "rpm", Value: 10}}
				e.UsageLimits = []UsageLimits{costLimit(100)}
			})}},
		{name: "weekly reset starts its first period now",
			when: create(func(c *CreateWorkspace) { c.PeriodicReset = wsPtr("weekly") }),
			then: []Event{wsCreated(func(e *WorkspaceCreated) {
				e.PeriodicReset, e.NextUsageResetAt = wsPtr("weekly"), wsPtr(wsT0.AddDate(0, 0, 7))
			})}},
		{name: "monthly usage limit gets its next reset",
			when: create(func(c *CreateWorkspace) {
				c.UsageLimits = []UsageLimits{{Type: UsageTokens, CreditLimit: wsPtr(5.0), PeriodicReset: wsPtr("monthly")}}
			}),
			then: []Event{wsCreated(func(e *WorkspaceCreated) {
				e.UsageLimits = []UsageLimits{{Type: UsageTokens, CreditLimit: wsPtr(5.0), PeriodicReset: wsPtr("monthly"),
					NextUsageResetAt: wsPtr(wsT0.AddDate(0, 1, 0))}}
			})}},
		{name: "periodic_reset_days 1", when: create(func(c *CreateWorkspace) { c.PeriodicResetDays = wsPtr(1) }),
			then: []Event{wsCreated(func(e *WorkspaceCreated) {
				e.PeriodicResetDays, e.NextUsageResetAt = wsPtr(1), wsPtr(wsT0.AddDate(0, 0, 1))
			})}},
		{name: "periodic_reset_days 365", when: create(func(c *CreateWorkspace) { c.PeriodicResetDays = wsPtr(365) }),
			then: []Event{wsCreated(func(e *WorkspaceCreated) {
				e.PeriodicResetDays, e.NextUsageResetAt = wsPtr(365), wsPtr(wsT0.AddDate(0, 0, 365))
			})}},
		{name: "given next reset is kept",
			when: create(func(c *CreateWorkspace) { c.PeriodicResetDays, c.NextUsageResetAt = wsPtr(3), wsPtr(wsLater) }),
			then: []Event{wsCreated(func(e *WorkspaceCreated) { e.PeriodicResetDays, e.NextUsageResetAt = wsPtr(3), wsPtr(wsLater) })}},
		{name: "name at 255", when: create(func(c *CreateWorkspace) { c.Name = strings.Repeat("n", 255) }),
			then: []Event{wsCreated(func(e *WorkspaceCreated) { e.Name = strings.Repeat("n", 255) })}},
		{name: "slug at 255", when: create(func(c *CreateWorkspace) { c.Slug = strings.Repeat("s", 255) }),
			then: []Event{wsCreated(func(e *WorkspaceCreated) { e.Slug = strings.Repeat("s", 255) })}},
		{name: "exists already", given: []Event{wsCreated()}, when: create(), code: CodeConflict},
		{name: "name missing", when: create(func(c *CreateWorkspace) { c.Name = " " }), code: CodeInvalid, param: "name"},
		{name: "name at 256", when: create(func(c *CreateWorkspace) { c.Name = strings.Repeat("n", 256) }), code: CodeInvalid, param: "name"},
		{name: "slug at 256", when: create(func(c *CreateWorkspace) { c.Slug = strings.Repeat("s", 256) }), code: CodeInvalid, param: "slug"},
		{name: "slug upper case", when: create(func(c *CreateWorkspace) { c.Slug = "Team" }), code: CodeInvalid, param: "slug"},
		{name: "periodic_reset_days 0", when: create(func(c *CreateWorkspace) { c.PeriodicResetDays = wsPtr(0) }), code: CodeInvalid, param: "periodic_reset_days"},
		{name: "periodic_reset_days 366", when: create(func(c *CreateWorkspace) { c.PeriodicResetDays = wsPtr(366) }), code: CodeInvalid, param: "periodic_reset_days"},
		{name: "both reset fields", when: create(func(c *CreateWorkspace) { c.PeriodicReset, c.PeriodicResetDays = wsPtr("weekly"), wsPtr(7) }),
			code: CodeInvalid, param: "periodic_reset_days"},
		{name: "unknown periodic_reset", when: create(func(c *CreateWorkspace) { c.PeriodicReset = wsPtr("daily") }), code: CodeInvalid, param: "periodic_reset"},
		{name: "next reset in the past", when: create(func(c *CreateWorkspace) { c.NextUsageResetAt = wsPtr(wsT0) }), code: CodeInvalid, param: "next_usage_reset_at"},
		{name: "unknown default", when: create(func(c *CreateWorkspace) { c.Defaults = map[string]any{"colour": "red"} }), code: CodeInvalid, param: "defaults.colour"},
		{name: "metadata not strings", when: create(func(c *CreateWorkspace) { c.Defaults = map[string]any{"metadata": map[string]any{"n": 1.0}} }),
			code: CodeInvalid, param: "defaults.metadata.n"},
		{name: "metadata not an object", when: create(func(c *CreateWorkspace) { c.Defaults = map[string]any{"metadata": "x"} }),
			code: CodeInvalid, param: "defaults.metadata"},
		{name: "bad rate limit", when: create(func(c *CreateWorkspace) { c.RateLimits = []RateLimit{{Type: LimitRequests, Unit: "rps", Value: 1}} }),
			code: CodeInvalid, param: "rate_limits[0].unit"},
		{name: "repeated rate limit", when: create(func(c *CreateWorkspace) {
			c.RateLimits = []RateLimit{{Type: LimitTokens, Unit: "rpm", Value: 1}, {Type: LimitTokens, Unit: "rpm", Value: 2}}
		}), code: CodeInvalid, param: "rate_limits[1].unit"},
		{name: "bad usage limit", when: create(func(c *CreateWorkspace) { c.UsageLimits = []UsageLimits{costLimit(0)} }),
			code: CodeInvalid, param: "usage_limits[0].credit_limit"},
		{name: "repeated usage limit type", when: create(func(c *CreateWorkspace) { c.UsageLimits = []UsageLimits{costLimit(1), costLimit(2)} }),
			code: CodeInvalid, param: "usage_limits[1].type"},
		{name: "usage limit reset in the past", when: create(func(c *CreateWorkspace) {
			c.UsageLimits = []UsageLimits{{Type: UsageCost, CreditLimit: wsPtr(5.0), NextUsageResetAt: wsPtr(wsT0.Add(-time.Second))}}
		}), code: CodeInvalid, param: "usage_limits[0].next_usage_reset_at"},
	})
}

func TestDeriveSlug(t *testing.T) {
	for name, want := range map[string]string{
		"Team A":                   "team-a",
		"  Prod -- EU/West 2  ":    "prod-eu-west-2",
		"snake_case":               "snake_case",
		"__lead":                   "lead",
		"日本":                       "workspace",
		strings.Repeat("ab ", 200): strings.TrimRight(strings.Repeat("ab-", 85), "-"),
	} {
		got := DeriveSlug(name)
		assert.Equal(t, want, got, name)
		assert.NoError(t, ValidateSlug("slug", got))
	}
}

func TestUpdateWorkspace(t *testing.T) {
	update := func(c UpdateWorkspace) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.Update(c, wsLater) }
	}
	weekly := wsCreated(func(e *WorkspaceCreated) {
		e.PeriodicReset, e.NextUsageResetAt = wsPtr("weekly"), wsPtr(wsT0.AddDate(0, 0, 7))
	})
	withBudget := wsCreated(func(e *WorkspaceCreated) { e.UsageLimits = []UsageLimits{costLimit(100)} })
	exhausted := WorkspaceBudgetExhausted{WorkspaceID: testWorkspaceID, LimitType: UsageCost, CreditLimit: 100, CurrentUsage: 100, At: wsT0}
	runDecisions(t, []decision{
		{name: "name and description", given: []Event{wsCreated()},
			when: update(UpdateWorkspace{Name: wsPtr("B"), Description: wsPtr("about")}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, Name: wsPtr("B"), Description: wsPtr("about"), At: wsLater}}},
		{name: "defaults cleared", given: []Event{wsCreated()},
			when: update(UpdateWorkspace{Defaults: map[string]any{}}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, Defaults: &map[string]any{}, At: wsLater}}},
		{name: "limits replaced", given: []Event{wsCreated()},
			when: update(UpdateWorkspace{RateLimits: &[]RateLimit{}, UsageLimits: &[]UsageLimits{costLimit(5)}}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, RateLimits: &[]RateLimit{}, UsageLimits: &[]UsageLimits{costLimit(5)}, At: wsLater}}},
		{name: "weekly becomes every 10 days", given: []Event{weekly},
			when: update(UpdateWorkspace{ResetGiven: true, PeriodicResetDays: wsPtr(10)}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, At: wsLater,
				Reset: &UsageResetSchedule{PeriodicResetDays: wsPtr(10), NextUsageResetAt: wsPtr(wsLater.AddDate(0, 0, 10))}}}},
		{name: "periodic reset cleared", given: []Event{weekly},
			when: update(UpdateWorkspace{ResetGiven: true}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, At: wsLater, Reset: &UsageResetSchedule{}}}},
		{name: "next reset moved, period kept", given: []Event{weekly},
			when: update(UpdateWorkspace{NextUsageResetAt: wsPtr(wsLater.Add(time.Hour))}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, At: wsLater,
				Reset: &UsageResetSchedule{PeriodicReset: wsPtr("weekly"), NextUsageResetAt: wsPtr(wsLater.Add(time.Hour))}}}},
		{name: "raising an exhausted credit limit reactivates", given: []Event{withBudget, exhausted},
			when: update(UpdateWorkspace{UsageLimits: &[]UsageLimits{costLimit(150)}}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, UsageLimits: &[]UsageLimits{costLimit(150)}, At: wsLater},
				WorkspaceBudgetReactivated{WorkspaceID: testWorkspaceID, Reason: ReactivatedCreditRaised, At: wsLater}}},
		{name: "removing the exhausted limit reactivates", given: []Event{withBudget, exhausted},
			when: update(UpdateWorkspace{UsageLimits: &[]UsageLimits{}}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, UsageLimits: &[]UsageLimits{}, At: wsLater},
				WorkspaceBudgetReactivated{WorkspaceID: testWorkspaceID, Reason: ReactivatedLimitRemoved, At: wsLater}}},
		{name: "the same credit limit stays exhausted", given: []Event{withBudget, exhausted},
			when: update(UpdateWorkspace{UsageLimits: &[]UsageLimits{costLimit(100)}}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, UsageLimits: &[]UsageLimits{costLimit(100)}, At: wsLater}}},
		{name: "a lower credit limit stays exhausted", given: []Event{withBudget, exhausted},
			when: update(UpdateWorkspace{UsageLimits: &[]UsageLimits{costLimit(50)}}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, UsageLimits: &[]UsageLimits{costLimit(50)}, At: wsLater}}},
		{name: "raising a limit that is not exhausted", given: []Event{withBudget},
			when: update(UpdateWorkspace{UsageLimits: &[]UsageLimits{costLimit(150)}}),
			then: []Event{WorkspaceUpdated{WorkspaceID: testWorkspaceID, UsageLimits: &[]UsageLimits{costLimit(150)}, At: wsLater}}},
		{name: "missing", when: update(UpdateWorkspace{Name: wsPtr("B")}), code: CodeNotFound},
		{name: "archived", given: []Event{wsCreated(), WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}},
			when: update(UpdateWorkspace{Name: wsPtr("B")}), code: CodeConflict},
		{name: "nothing", given: []Event{wsCreated()}, when: update(UpdateWorkspace{}), code: CodeInvalid, param: ""},
		{name: "name at 256", given: []Event{wsCreated()}, when: update(UpdateWorkspace{Name: wsPtr(strings.Repeat("n", 256))}),
			code: CodeInvalid, param: "name"},
		{name: "empty name", given: []Event{wsCreated()}, when: update(UpdateWorkspace{Name: wsPtr("")}), code: CodeInvalid, param: "name"},
		{name: "both reset fields", given: []Event{wsCreated()},
			when: update(UpdateWorkspace{ResetGiven: true, PeriodicReset: wsPtr("monthly"), PeriodicResetDays: wsPtr(3)}),
			code: CodeInvalid, param: "periodic_reset_days"},
		{name: "periodic_reset_days 366", given: []Event{wsCreated()},
			when: update(UpdateWorkspace{ResetGiven: true, PeriodicResetDays: wsPtr(366)}), code: CodeInvalid, param: "periodic_reset_days"},
		{name: "bad defaults", given: []Event{wsCreated()}, when: update(UpdateWorkspace{Defaults: map[string]any{"x": 1}}),
			code: CodeInvalid, param: "defaults.x"},
		{name: "bad rate limit", given: []Event{wsCreated()},
			when: update(UpdateWorkspace{RateLimits: &[]RateLimit{{Type: "cost", Unit: "rpm", Value: 1}}}), code: CodeInvalid, param: "rate_limits[0].type"},
		{name: "bad usage limit", given: []Event{wsCreated()},
			when: update(UpdateWorkspace{UsageLimits: &[]UsageLimits{{Type: UsageCost}}}), code: CodeInvalid, param: "usage_limits[0].credit_limit"},
	})
}

func TestArchiveAndRestoreWorkspace(t *testing.T) {
	archived := WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}
	archive := func(w *Workspace) ([]Event, error) { return w.Archive(wsLater) }
	restore := func(w *Workspace) ([]Event, error) { return w.Restore(wsLater) }
	runDecisions(t, []decision{
		{name: "archive", given: []Event{wsCreated()}, when: archive, then: []Event{WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsLater}}},
		{name: "archive twice", given: []Event{wsCreated(), archived}, when: archive, code: CodeConflict},
		{name: "archive missing", when: archive, code: CodeNotFound},
		{name: "restore", given: []Event{wsCreated(), archived}, when: restore, then: []Event{WorkspaceRestored{WorkspaceID: testWorkspaceID, At: wsLater}}},
		{name: "restore active", given: []Event{wsCreated()}, when: restore, code: CodeConflict},
		{name: "restore missing", when: restore, code: CodeNotFound},
	})
	w := givenWorkspace(wsCreated(), archived)
	assert.False(t, w.Active())
	w.Apply(WorkspaceRestored{WorkspaceID: testWorkspaceID, At: wsLater})
	assert.True(t, w.Active())
	assert.Equal(t, wsLater, w.LastUpdatedAt)
}

func TestWorkspaceMembers(t *testing.T) {
	member := func(user string, role Role) WorkspaceMemberAdded {
		return WorkspaceMemberAdded{WorkspaceID: testWorkspaceID, UserID: user, Role: role, At: wsLater}
	}
	add := func(ms ...MemberRole) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.AddMembers("users", ms, wsLater) }
	}
	withBob := WorkspaceMemberAdded{WorkspaceID: testWorkspaceID, UserID: "bob", Role: RoleMember, At: wsT0}
	archived := WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}
	runDecisions(t, []decision{
		{name: "add two, roles in any case", given: []Event{wsCreated()},
			when: add(MemberRole{"ann", "ADMIN"}, MemberRole{"bob", "Manager"}),
			then: []Event{member("ann", RoleAdmin), member("bob", RoleManager)}},
		{name: "a member with the same role adds nothing", given: []Event{wsCreated(), withBob},
			when: add(MemberRole{"bob", "member"}), then: nil},
		{name: "adding a member again changes the role", given: []Event{wsCreated(), withBob},
			when: add(MemberRole{"bob", "manager"}), then: []Event{member("bob", RoleManager)}},
		{name: "no users", given: []Event{wsCreated()}, when: add(), code: CodeInvalid, param: "users"},
		{name: "unknown role", given: []Event{wsCreated()}, when: add(MemberRole{"ann", "owner"}), code: CodeInvalid, param: "users[0].role"},
		{name: "missing id", given: []Event{wsCreated()}, when: add(MemberRole{"", "member"}), code: CodeInvalid, param: "users[0].id"},
		{name: "repeated user", given: []Event{wsCreated()}, when: add(MemberRole{"ann", "member"}, MemberRole{"ann", "admin"}),
			code: CodeInvalid, param: "users[1].id"},
		{name: "archived workspace", given: []Event{wsCreated(), archived}, when: add(MemberRole{"ann", "member"}), code: CodeConflict},
		{name: "missing workspace", when: add(MemberRole{"ann", "member"}), code: CodeNotFound},

		{name: "change role", given: []Event{wsCreated(), withBob},
			when: func(w *Workspace) ([]Event, error) { return w.ChangeMemberRole("bob", "Admin", wsLater) },
			then: []Event{member("bob", RoleAdmin)}},
		{name: "change to the same role", given: []Event{wsCreated(), withBob},
			when: func(w *Workspace) ([]Event, error) { return w.ChangeMemberRole("bob", "member", wsLater) }, then: nil},
		{name: "change a non-member", given: []Event{wsCreated()},
			when: func(w *Workspace) ([]Event, error) { return w.ChangeMemberRole("bob", "admin", wsLater) }, code: CodeNotFound},
		{name: "change to an unknown role", given: []Event{wsCreated(), withBob},
			when: func(w *Workspace) ([]Event, error) { return w.ChangeMemberRole("bob", "boss", wsLater) }, code: CodeInvalid, param: "role"},
		{name: "change in an archived workspace", given: []Event{wsCreated(), withBob, archived},
			when: func(w *Workspace) ([]Event, error) { return w.ChangeMemberRole("bob", "admin", wsLater) }, code: CodeConflict},

		{name: "remove", given: []Event{wsCreated(), withBob},
			when: func(w *Workspace) ([]Event, error) { return w.RemoveMember("bob", wsLater) },
			then: []Event{WorkspaceMemberRemoved{WorkspaceID: testWorkspaceID, UserID: "bob", At: wsLater}}},
		{name: "remove a non-member", given: []Event{wsCreated()},
			when: func(w *Workspace) ([]Event, error) { return w.RemoveMember("bob", wsLater) }, code: CodeNotFound},
		{name: "remove in an archived workspace", given: []Event{wsCreated(), withBob, archived},
			when: func(w *Workspace) ([]Event, error) { return w.RemoveMember("bob", wsLater) }, code: CodeConflict},
	})
}

func TestMembershipFoldsCopyOnWrite(t *testing.T) {
	w := givenWorkspace(wsCreated(), WorkspaceMemberAdded{WorkspaceID: testWorkspaceID, UserID: "bob", Role: RoleMember, At: wsT0})
	shared := *w // what a read model hands out
	w.Apply(WorkspaceMemberAdded{WorkspaceID: testWorkspaceID, UserID: "bob", Role: RoleAdmin, At: wsLater})
	w.Apply(WorkspaceMemberAdded{WorkspaceID: testWorkspaceID, UserID: "ann", Role: RoleMember, At: wsLater})

	assert.Equal(t, map[string]Role{"bob": RoleMember}, shared.Members, "the copy handed out is unchanged")
	assert.Equal(t, map[string]Role{"bob": RoleAdmin, "ann": RoleMember}, w.Members)
	assert.Equal(t, wsT0, w.MemberSince["bob"], "a role change keeps the joining time")
	assert.Equal(t, wsLater, w.MemberChanged["bob"])

	w.Apply(WorkspaceMemberRemoved{WorkspaceID: testWorkspaceID, UserID: "bob", At: wsLater})
	assert.NotContains(t, w.Members, "bob")
	assert.NotContains(t, w.MemberSince, "bob")
	assert.Contains(t, shared.MemberSince, "bob")
}

func TestWorkspaceBudget(t *testing.T) {
	withBudget := wsCreated(func(e *WorkspaceCreated) { e.UsageLimits = []UsageLimits{costLimit(100)} })
	exhausted := WorkspaceBudgetExhausted{WorkspaceID: testWorkspaceID, LimitType: UsageCost, CreditLimit: 100, CurrentUsage: 100, At: wsT0}
	exhaust := func(typ string, usage float64) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.ExhaustBudget(typ, usage, wsLater) }
	}
	runDecisions(t, []decision{
		{name: "usage reaches the credit limit", given: []Event{withBudget}, when: exhaust(UsageCost, 100),
			then: []Event{WorkspaceBudgetExhausted{WorkspaceID: testWorkspaceID, LimitType: UsageCost, CreditLimit: 100, CurrentUsage: 100, At: wsLater}}},
		{name: "usage passes the credit limit", given: []Event{withBudget}, when: exhaust(UsageCost, 100.5),
			then: []Event{WorkspaceBudgetExhausted{WorkspaceID: testWorkspaceID, LimitType: UsageCost, CreditLimit: 100, CurrentUsage: 100.5, At: wsLater}}},
		{name: "exhausted already", given: []Event{withBudget, exhausted}, when: exhaust(UsageCost, 120), then: nil},
		{name: "below the credit limit", given: []Event{withBudget}, when: exhaust(UsageCost, 99.99), code: CodeInvalid, param: "current_usage"},
		{name: "no limit of that type", given: []Event{withBudget}, when: exhaust(UsageTokens, 1000), code: CodeInvalid, param: "type"},
		{name: "archived", given: []Event{withBudget, WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}}, when: exhaust(UsageCost, 100), code: CodeConflict},
		{name: "missing", when: exhaust(UsageCost, 100), code: CodeNotFound},
	})

	w := givenWorkspace(withBudget, exhausted)
	assert.True(t, w.BudgetExhausted)
	assert.Equal(t, UsageCost, w.ExhaustedLimit)
	assert.Equal(t, 100.0, w.CurrentUsage)
	w.Apply(WorkspaceUpdated{WorkspaceID: testWorkspaceID, UsageLimits: &[]UsageLimits{costLimit(200)}, At: wsLater})
	w.Apply(WorkspaceBudgetReactivated{WorkspaceID: testWorkspaceID, Reason: ReactivatedCreditRaised, At: wsLater})
	assert.False(t, w.BudgetExhausted)
	assert.Empty(t, w.ExhaustedLimit)
	assert.Equal(t, []UsageLimits{costLimit(200)}, w.UsageLimits)
}

func TestResetWorkspaceUsage(t *testing.T) {
	due := wsT0.AddDate(0, 0, 7)
	weekly := wsCreated(func(e *WorkspaceCreated) {
		e.UsageLimits = []UsageLimits{costLimit(100)}
		e.PeriodicReset, e.NextUsageResetAt = wsPtr("weekly"), wsPtr(due)
	})
	exhausted := WorkspaceBudgetExhausted{WorkspaceID: testWorkspaceID, LimitType: UsageCost, CreditLimit: 100, CurrentUsage: 100, At: wsT0}
	resetAt := func(now time.Time) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.ResetUsage(now) }
	}
	runDecisions(t, []decision{
		{name: "on schedule: the next reset is a period wsLater", given: []Event{weekly}, when: resetAt(due),
			then: []Event{WorkspaceUsageReset{WorkspaceID: testWorkspaceID, NextUsageResetAt: wsPtr(due.AddDate(0, 0, 7)), At: due}}},
		{name: "missed periods are skipped", given: []Event{weekly}, when: resetAt(due.AddDate(0, 0, 15)),
			then: []Event{WorkspaceUsageReset{WorkspaceID: testWorkspaceID, NextUsageResetAt: wsPtr(due.AddDate(0, 0, 21)), At: due.AddDate(0, 0, 15)}}},
		{name: "before the schedule it stays", given: []Event{weekly}, when: resetAt(wsLater),
			then: []Event{WorkspaceUsageReset{WorkspaceID: testWorkspaceID, NextUsageResetAt: wsPtr(due), At: wsLater}}},
		{name: "an exhausted budget is reactivated", given: []Event{weekly, exhausted}, when: resetAt(due),
			then: []Event{WorkspaceUsageReset{WorkspaceID: testWorkspaceID, PreviousUsage: 100, NextUsageResetAt: wsPtr(due.AddDate(0, 0, 7)), At: due},
				WorkspaceBudgetReactivated{WorkspaceID: testWorkspaceID, Reason: ReactivatedUsageWasReset, At: due}}},
		{name: "a one-off reset is used up",
			given: []Event{wsCreated(func(e *WorkspaceCreated) { e.NextUsageResetAt = wsPtr(due) })}, when: resetAt(due),
			then: []Event{WorkspaceUsageReset{WorkspaceID: testWorkspaceID, At: due}}},
		{name: "every 30 days", given: []Event{wsCreated(func(e *WorkspaceCreated) { e.PeriodicResetDays = wsPtr(30) })}, when: resetAt(wsLater),
			then: []Event{WorkspaceUsageReset{WorkspaceID: testWorkspaceID, NextUsageResetAt: wsPtr(wsLater.AddDate(0, 0, 30)), At: wsLater}}},
		{name: "archived", given: []Event{weekly, WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}}, when: resetAt(due), code: CodeConflict},
		{name: "missing", when: resetAt(due), code: CodeNotFound},
	})

	w := givenWorkspace(weekly, exhausted, WorkspaceUsageReset{WorkspaceID: testWorkspaceID, PreviousUsage: 100,
		NextUsageResetAt: wsPtr(due.AddDate(0, 0, 7)), At: due})
	assert.Zero(t, w.CurrentUsage)
	assert.Equal(t, wsPtr(due), w.LastResetAt)
	assert.Equal(t, wsPtr(due.AddDate(0, 0, 7)), w.NextUsageResetAt)
}

func TestWorkspaceSecurity(t *testing.T) {
	patch := func(p SecurityPatch) func(*Workspace) ([]Event, error) {
		return func(w *Workspace) ([]Event, error) { return w.UpdateSecurity(p, wsLater) }
	}
	overridden := WorkspaceSecurityUpdated{WorkspaceID: testWorkspaceID, At: wsT0,
		Security: SecurityOverrides{MembersViewAnalytics: wsPtr(false), ManagersWriteMcpServers: wsPtr(false)}}
	runDecisions(t, []decision{
		{name: "override one", given: []Event{wsCreated()}, when: patch(SecurityPatch{"membersViewAnalytics": wsPtr(false)}),
			then: []Event{WorkspaceSecurityUpdated{WorkspaceID: testWorkspaceID, At: wsLater, Security: SecurityOverrides{MembersViewAnalytics: wsPtr(false)}}}},
		{name: "null inherits again, others stay", given: []Event{wsCreated(), overridden},
			when: patch(SecurityPatch{"membersViewAnalytics": nil, "membersWritePrompts": wsPtr(true)}),
			then: []Event{WorkspaceSecurityUpdated{WorkspaceID: testWorkspaceID, At: wsLater,
				Security: SecurityOverrides{ManagersWriteMcpServers: wsPtr(false), MembersWritePrompts: wsPtr(true)}}}},
		{name: "unknown setting", given: []Event{wsCreated()}, when: patch(SecurityPatch{"adminsRule": wsPtr(true)}),
			code: CodeInvalid, param: "security_settings.adminsRule"},
		{name: "nothing", given: []Event{wsCreated()}, when: patch(SecurityPatch{}), code: CodeInvalid, param: "security_settings"},
		{name: "archived", given: []Event{wsCreated(), WorkspaceArchived{WorkspaceID: testWorkspaceID, At: wsT0}},
			when: patch(SecurityPatch{"membersViewAnalytics": wsPtr(false)}), code: CodeConflict},
		{name: "missing", when: patch(SecurityPatch{"membersViewAnalytics": wsPtr(false)}), code: CodeNotFound},
	})

	w := givenWorkspace(wsCreated(), overridden)
	org := DefaultSecuritySettings()
	org.ManagersViewAnalytics = false
	eff := w.Security.Over(org)
	assert.False(t, eff.MembersViewAnalytics, "overridden")
	assert.False(t, eff.ManagersWriteMcpServers, "overridden")
	assert.False(t, eff.ManagersViewAnalytics, "inherited from the organisation")
	assert.True(t, eff.MembersViewAllData, "inherited default")
}
