package domain

import (
	"math"
	"time"
)

// RateLimitPolicyPrefix names the streams of rate-limit policies.
const RateLimitPolicyPrefix = "ratelimitpolicy"

// RateLimitPolicy limits requests or tokens per minute, hour, day or week for the traffic its
// conditions select, counted per group_by partition (2.1).
type RateLimitPolicy struct {
	ID             string      `json:"id"`
	Name           *string     `json:"name"`
	Conditions     []Condition `json:"conditions"`
	GroupBy        []GroupBy   `json:"group_by"`
	Type           string      `json:"type"`
	Unit           string      `json:"unit"`
	Value          float64     `json:"value"`
	Status         string      `json:"status"`
	WorkspaceID    string      `json:"workspace_id"`
	OrganisationID string      `json:"organisation_id"`
	CreatedAt      time.Time   `json:"created_at"`
	LastUpdatedAt  time.Time   `json:"last_updated_at"`
}

const (
	StatusActive   = "active"
	StatusArchived = "archived"
)

type RateLimitPolicyCreated struct {
	PolicyID       string      `json:"policy_id"`
	OrganisationID string      `json:"organisation_id"`
	WorkspaceID    string      `json:"workspace_id"`
	Name           *string     `json:"name"`
	Conditions     []Condition `json:"conditions"`
	GroupBy        []GroupBy   `json:"group_by"`
	Type           string      `json:"type"`
	Unit           string      `json:"unit"`
	Value          float64     `json:"value"`
	At             time.Time   `json:"at"`
}

type RateLimitPolicyUpdated struct {
	PolicyID string    `json:"policy_id"`
	Name     *string   `json:"name,omitempty"`
	Unit     *string   `json:"unit,omitempty"`
	Value    *float64  `json:"value,omitempty"`
	At       time.Time `json:"at"`
}

type RateLimitPolicyArchived struct {
	PolicyID string    `json:"policy_id"`
	At       time.Time `json:"at"`
}

func (RateLimitPolicyCreated) EventType() string  { return "RateLimitPolicyCreated" }
func (RateLimitPolicyUpdated) EventType() string  { return "RateLimitPolicyUpdated" }
func (RateLimitPolicyArchived) EventType() string { return "RateLimitPolicyArchived" }

func rateLimitPolicyModule() module {
	return module{
		prefix:    RateLimitPolicyPrefix,
		aggregate: func() Aggregate { return &RateLimitPolicy{} },
		events:    []Event{RateLimitPolicyCreated{}, RateLimitPolicyUpdated{}, RateLimitPolicyArchived{}},
	}
}

func (p *RateLimitPolicy) Apply(e Event) {
	switch e := e.(type) {
	case RateLimitPolicyCreated:
		*p = RateLimitPolicy{ID: e.PolicyID, Name: e.Name, Conditions: e.Conditions, GroupBy: e.GroupBy,
			Type: e.Type, Unit: e.Unit, Value: e.Value, Status: StatusActive, WorkspaceID: e.WorkspaceID,
			OrganisationID: e.OrganisationID, CreatedAt: e.At, LastUpdatedAt: e.At}
	case RateLimitPolicyUpdated:
		if e.Name != nil {
			p.Name = e.Name
		}
		if e.Unit != nil {
			p.Unit = *e.Unit
		}
		if e.Value != nil {
			p.Value = *e.Value
		}
		p.LastUpdatedAt = e.At
	case RateLimitPolicyArchived:
		p.Status, p.LastUpdatedAt = StatusArchived, e.At
	}
}

// Exists reports whether the policy has been created.
func (p *RateLimitPolicy) Exists() bool { return p.ID != "" }

// CreateRateLimitPolicy is the create command's input, already decoded.
type CreateRateLimitPolicy struct {
	PolicyID       string
	OrganisationID string
	WorkspaceID    string
	Name           *string
	Conditions     []Condition
	GroupBy        []GroupBy
	Type           string
	Unit           string
	Value          *float64
}

func validateRateValue(v *float64) error {
	if v == nil {
		return Invalid("value", "value is required")
	}
	if *v < 1 || *v != math.Trunc(*v) || *v > 1e12 {
		return Invalid("value", "value must be a whole number from 1 to 1000000000000 (got %v)", *v)
	}
	return nil
}

// Create decides the creation of a policy.
func (p *RateLimitPolicy) Create(c CreateRateLimitPolicy, now time.Time) ([]Event, error) {
	if p.Exists() {
		return nil, Errorf(CodeConflict, "rate limit policy %s exists already", c.PolicyID)
	}
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, false); err != nil {
			return nil, err
		}
	}
	if err := ValidateConditions(c.Conditions, c.GroupBy, true); err != nil {
		return nil, err
	}
	if c.Type != LimitRequests && c.Type != LimitTokens {
		return nil, Invalid("type", "type must be requests or tokens (got %q)", c.Type)
	}
	if _, ok := RateUnitWindow[c.Unit]; !ok {
		return nil, Invalid("unit", "unit must be rpm, rph, rpd or rpw (got %q)", c.Unit)
	}
	if err := validateRateValue(c.Value); err != nil {
		return nil, err
	}
	return []Event{RateLimitPolicyCreated{PolicyID: c.PolicyID, OrganisationID: c.OrganisationID,
		WorkspaceID: c.WorkspaceID, Name: c.Name, Conditions: c.Conditions, GroupBy: c.GroupBy,
		Type: c.Type, Unit: c.Unit, Value: *c.Value, At: now}}, nil
}

// UpdateRateLimitPolicy changes the name, unit or value; nil fields stay as they are.
type UpdateRateLimitPolicy struct {
	Name  *string
	Unit  *string
	Value *float64
}

func (p *RateLimitPolicy) Update(c UpdateRateLimitPolicy, now time.Time) ([]Event, error) {
	if !p.Exists() || p.Status == StatusArchived {
		return nil, Errorf(CodeNotFound, "rate limit policy not found")
	}
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, false); err != nil {
			return nil, err
		}
	}
	if c.Unit != nil {
		if _, ok := RateUnitWindow[*c.Unit]; !ok {
			return nil, Invalid("unit", "unit must be rpm, rph, rpd or rpw (got %q)", *c.Unit)
		}
	}
	if c.Value != nil {
		if err := validateRateValue(c.Value); err != nil {
			return nil, err
		}
	}
	if c.Name == nil && c.Unit == nil && c.Value == nil {
		return nil, Invalid("", "nothing to update: give name, unit or value")
	}
	return []Event{RateLimitPolicyUpdated{PolicyID: p.ID, Name: c.Name, Unit: c.Unit, Value: c.Value, At: now}}, nil
}

// Archive decides the deletion of a policy: it is archived, and stays readable with
// status=archived.
func (p *RateLimitPolicy) Archive(now time.Time) ([]Event, error) {
	if !p.Exists() || p.Status == StatusArchived {
		return nil, Errorf(CodeNotFound, "rate limit policy not found")
	}
	return []Event{RateLimitPolicyArchived{PolicyID: p.ID, At: now}}, nil
}
