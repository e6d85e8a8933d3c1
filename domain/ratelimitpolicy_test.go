package domain

import (
	"strings"
	"testing"
	"time"
)

func TestRateLimitPolicyDecisions(t *testing.T) {
	conds := []Condition{{Key: "workspace_id", Value: "ws-1"}}
	groups := []GroupBy{{Key: "api_key"}}
	created := RateLimitPolicyCreated{PolicyID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Conditions: conds,
		GroupBy: groups, Type: "requests", Unit: "rpm", Value: 20, At: t0}
	create := func(mod func(*CreateRateLimitPolicy)) func(*RateLimitPolicy) ([]Event, error) {
		return func(p *RateLimitPolicy) ([]Event, error) {
			c := CreateRateLimitPolicy{PolicyID: "p-1", OrganisationID: "org", WorkspaceID: "ws-1", Conditions: conds,
				GroupBy: groups, Type: "requests", Unit: "rpm", Value: ptr(20.0)}
			if mod != nil {
				mod(&c)
			}
			return p.Create(c, t0)
		}
	}
	later := t0.Add(time.Hour)
	runScenarios(t, func() *RateLimitPolicy { return &RateLimitPolicy{} }, []scenario[*RateLimitPolicy]{
		{name: "create", when: create(nil), then: []Event{created}},
		{name: "create twice", given: []Event{created}, when: create(nil), wantCode: CodeConflict},
		{name: "unit rpw", when: create(func(c *CreateRateLimitPolicy) { c.Unit = "rpw" }),
			then: []Event{func() Event { e := created; e.Unit = "rpw"; return e }()}},
		{name: "unit rps", when: create(func(c *CreateRateLimitPolicy) { c.Unit = "rps" }), wantCode: CodeInvalid, wantParam: "unit"},
		{name: "type cost", when: create(func(c *CreateRateLimitPolicy) { c.Type = "cost" }), wantCode: CodeInvalid, wantParam: "type"},
		{name: "value 0", when: create(func(c *CreateRateLimitPolicy) { c.Value = ptr(0.0) }), wantCode: CodeInvalid, wantParam: "value"},
		{name: "value 1", when: create(func(c *CreateRateLimitPolicy) { c.Value = ptr(1.0) }),
			then: []Event{func() Event { e := created; e.Value = 1; return e }()}},
		{name: "no value", when: create(func(c *CreateRateLimitPolicy) { c.Value = nil }), wantCode: CodeInvalid, wantParam: "value"},
		{name: "name of 256", when: create(func(c *CreateRateLimitPolicy) { c.Name = ptr(strings.Repeat("a", 256)) }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "metadata condition", when: create(func(c *CreateRateLimitPolicy) { c.Conditions = []Condition{{Key: "metadata.team", Value: "a"}} }),
			then: []Event{func() Event { e := created; e.Conditions = []Condition{{Key: "metadata.team", Value: "a"}}; return e }()}},
		{name: "bare metadata key", when: create(func(c *CreateRateLimitPolicy) { c.Conditions = []Condition{{Key: "metadata.", Value: "a"}} }),
			wantCode: CodeInvalid, wantParam: "conditions[0].key"},
		{name: "empty condition value", when: create(func(c *CreateRateLimitPolicy) { c.Conditions = []Condition{{Key: "api_key"}} }),
			wantCode: CodeInvalid, wantParam: "conditions[0].value"},
		{name: "no group_by", when: create(func(c *CreateRateLimitPolicy) { c.GroupBy = nil }), wantCode: CodeInvalid, wantParam: "group_by"},
		{name: "update value", given: []Event{created},
			when: func(p *RateLimitPolicy) ([]Event, error) {
				return p.Update(UpdateRateLimitPolicy{Value: ptr(40.0)}, later)
			},
			then: []Event{RateLimitPolicyUpdated{PolicyID: "p-1", Value: ptr(40.0), At: later}}},
		{name: "update nothing", given: []Event{created},
			when:     func(p *RateLimitPolicy) ([]Event, error) { return p.Update(UpdateRateLimitPolicy{}, later) },
			wantCode: CodeInvalid},
		{name: "update a missing policy",
			when: func(p *RateLimitPolicy) ([]Event, error) {
				return p.Update(UpdateRateLimitPolicy{Value: ptr(1.0)}, later)
			},
			wantCode: CodeNotFound},
		{name: "archive", given: []Event{created},
			when: func(p *RateLimitPolicy) ([]Event, error) { return p.Archive(later) },
			then: []Event{RateLimitPolicyArchived{PolicyID: "p-1", At: later}}},
		{name: "archive twice", given: []Event{created, RateLimitPolicyArchived{PolicyID: "p-1", At: later}},
			when:     func(p *RateLimitPolicy) ([]Event, error) { return p.Archive(later) },
			wantCode: CodeNotFound},
		{name: "update an archived policy", given: []Event{created, RateLimitPolicyArchived{PolicyID: "p-1", At: later}},
			when: func(p *RateLimitPolicy) ([]Event, error) {
				return p.Update(UpdateRateLimitPolicy{Value: ptr(2.0)}, later)
			},
			wantCode: CodeNotFound},
	})
}

func TestReservationDecisions(t *testing.T) {
	held := NameReserved{Kind: "email", Name: "a@example.com", OwnerID: "u-1", At: t0}
	reserve := func(owner string) func(*Reservation) ([]Event, error) {
		return func(r *Reservation) ([]Event, error) { return r.Reserve("email", "a@example.com", owner, "email", t0) }
	}
	runScenarios(t, func() *Reservation { return &Reservation{} }, []scenario[*Reservation]{
		{name: "claim a free name", when: reserve("u-1"), then: []Event{held}},
		{name: "claim a held name", given: []Event{held}, when: reserve("u-2"), wantCode: CodeConflict, wantParam: "email"},
		{name: "claim again as the holder", given: []Event{held}, when: reserve("u-1"), then: nil},
		{name: "release", given: []Event{held},
			when: func(r *Reservation) ([]Event, error) { return r.Release("u-1", t0) },
			then: []Event{NameReleased{Kind: "email", Name: "a@example.com", OwnerID: "u-1", At: t0}}},
		{name: "release by another owner does nothing", given: []Event{held},
			when: func(r *Reservation) ([]Event, error) { return r.Release("u-2", t0) }, then: nil},
		{name: "claim a released name", given: []Event{held, NameReleased{Kind: "email", Name: "a@example.com", OwnerID: "u-1", At: t0}},
			when: reserve("u-2"), then: []Event{NameReserved{Kind: "email", Name: "a@example.com", OwnerID: "u-2", At: t0}}},
	})
}

func TestOrganisationAndBootstrapFolds(t *testing.T) {
	runScenarios(t, func() *Organisation { return &Organisation{} }, []scenario[*Organisation]{
		{name: "create", when: func(o *Organisation) ([]Event, error) { return o.Create("org", "Acme", "u-1", t0) },
			then: []Event{OrganisationCreated{OrganisationID: "org", Name: "Acme", OwnerUserID: "u-1", At: t0}}},
		{name: "create without a name", when: func(o *Organisation) ([]Event, error) { return o.Create("org", " ", "u-1", t0) },
			wantCode: CodeInvalid, wantParam: "name"},
		{name: "create twice", given: []Event{OrganisationCreated{OrganisationID: "org", Name: "Acme", At: t0}},
			when: func(o *Organisation) ([]Event, error) { return o.Create("org", "Acme", "u-1", t0) }, wantCode: CodeConflict},
	})
	var b Bootstrap
	b.Apply(BootstrapStarted{OrganisationID: "org", OwnerUserID: "u", AdminKeyID: "k", At: t0})
	if b.Completed || b.OrganisationID != "org" {
		t.Fatalf("started bootstrap folds to %+v", b)
	}
	b.Apply(BootstrapCompleted{At: t0})
	if !b.Completed {
		t.Fatal("completed bootstrap does not fold to completed")
	}
}
