package domain

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxNameLength bounds names and slugs (the specification's Limits table).
const MaxNameLength = 255

// ValidateName checks a name or slug: required or not, at most 255 characters.
func ValidateName(param, v string, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return Invalid(param, "%s is required", param)
	}
	if n := utf8.RuneCountInString(v); n > MaxNameLength {
		return Invalid(param, "%s must be at most %d characters (got %d)", param, MaxNameLength, n)
	}
	return nil
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// ValidateSlug checks a slug: lower-case letters, digits, '-' and '_', at most 255 characters.
func ValidateSlug(param, v string) error {
	if err := ValidateName(param, v, true); err != nil {
		return err
	}
	if !slugPattern.MatchString(v) {
		return Invalid(param, "%s may hold only lower-case letters, digits, '-' and '_', and must start with a letter or digit", param)
	}
	return nil
}

// Condition selects the traffic a policy applies to.
type Condition struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// GroupBy partitions a policy's counting.
type GroupBy struct {
	Key string `json:"key"`
}

// validPolicyKey reports whether key may be used in a condition (withEndpoint) or group_by.
func validPolicyKey(key string, withEndpoint bool) bool {
	switch key {
	case "api_key", "organisation_id", "workspace_id":
		return true
	case "endpoint_type":
		return withEndpoint
	}
	field, ok := strings.CutPrefix(key, "metadata.")
	return ok && field != "" && len(field) <= MaxNameLength
}

// ValidateConditions checks a policy's conditions and group_by. required: at least one of
// each (the reference's policies require them).
func ValidateConditions(conds []Condition, groups []GroupBy, required bool) error {
	if required && len(conds) == 0 {
		return Invalid("conditions", "conditions must hold at least one condition")
	}
	for i, c := range conds {
		p := fmt.Sprintf("conditions[%d].key", i)
		if !validPolicyKey(c.Key, true) {
			return Invalid(p, "%s must be api_key, organisation_id, workspace_id, endpoint_type or metadata.<field> (got %q)", p, c.Key)
		}
		if strings.TrimSpace(c.Value) == "" {
			return Invalid(fmt.Sprintf("conditions[%d].value", i), "conditions[%d].value is required", i)
		}
		if utf8.RuneCountInString(c.Value) > MaxNameLength {
			return Invalid(fmt.Sprintf("conditions[%d].value", i), "conditions[%d].value must be at most %d characters", i, MaxNameLength)
		}
	}
	if required && len(groups) == 0 {
		return Invalid("group_by", "group_by must hold at least one key")
	}
	for i, g := range groups {
		p := fmt.Sprintf("group_by[%d].key", i)
		if !validPolicyKey(g.Key, false) {
			return Invalid(p, "%s must be api_key, organisation_id, workspace_id or metadata.<field> (got %q)", p, g.Key)
		}
	}
	return nil
}

// Rate-limit types and units.
const (
	LimitRequests = "requests"
	LimitTokens   = "tokens"
)

// RateUnitWindow is the window of each rate unit.
var RateUnitWindow = map[string]time.Duration{
	"rpm": time.Minute,
	"rph": time.Hour,
	"rpd": 24 * time.Hour,
	"rpw": 7 * 24 * time.Hour,
}

// RateLimit is one rate limit of a key or workspace.
type RateLimit struct {
	Type  string  `json:"type"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// ValidateRateLimit checks one rate limit; param prefixes the field names ("rate_limits[0]").
func ValidateRateLimit(param string, r RateLimit) error {
	if r.Type != LimitRequests && r.Type != LimitTokens {
		return Invalid(param+".type", "%s.type must be requests or tokens (got %q)", param, r.Type)
	}
	if _, ok := RateUnitWindow[r.Unit]; !ok {
		return Invalid(param+".unit", "%s.unit must be rpm, rph, rpd or rpw (got %q)", param, r.Unit)
	}
	if r.Value < 1 || r.Value != math.Trunc(r.Value) || r.Value > 1e12 {
		return Invalid(param+".value", "%s.value must be a whole number from 1 to 1000000000000 (got %v)", param, r.Value)
	}
	return nil
}

// Usage-limit types and periodic resets.
const (
	UsageCost   = "cost"
	UsageTokens = "tokens"
)

// UsageLimits is a budget: a credit limit in cost or tokens, an alert threshold, and an
// optional periodic reset (every week, month, or N days, but not both).
type UsageLimits struct {
	CreditLimit       *float64   `json:"credit_limit"`
	Type              string     `json:"type"`
	AlertThreshold    *float64   `json:"alert_threshold"`
	PeriodicReset     *string    `json:"periodic_reset"`
	PeriodicResetDays *int       `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time `json:"next_usage_reset_at"`
}

// ValidateUsageLimits checks a budget strictly: every field is bounded and the two kinds of
// periodic reset exclude each other.
func ValidateUsageLimits(param string, u UsageLimits) error {
	if u.Type != UsageCost && u.Type != UsageTokens {
		return Invalid(param+".type", "%s.type must be cost or tokens (got %q)", param, u.Type)
	}
	if u.CreditLimit == nil {
		return Invalid(param+".credit_limit", "%s.credit_limit is required", param)
	}
	if *u.CreditLimit < 1 || math.IsInf(*u.CreditLimit, 0) || math.IsNaN(*u.CreditLimit) {
		return Invalid(param+".credit_limit", "%s.credit_limit must be at least 1 (got %v)", param, *u.CreditLimit)
	}
	if u.AlertThreshold != nil {
		if *u.AlertThreshold < 1 || *u.AlertThreshold >= *u.CreditLimit {
			return Invalid(param+".alert_threshold", "%s.alert_threshold must be at least 1 and below credit_limit (got %v)", param, *u.AlertThreshold)
		}
	}
	return ValidatePeriodicReset(param, u.PeriodicReset, u.PeriodicResetDays)
}

// ValidatePeriodicReset checks the usage-reset fields of 2.7.
func ValidatePeriodicReset(param string, reset *string, days *int) error {
	prefix := param
	if prefix != "" {
		prefix += "."
	}
	if reset != nil && days != nil {
		return Invalid(prefix+"periodic_reset_days", "%speriodic_reset and %speriodic_reset_days exclude each other: set one", prefix, prefix)
	}
	if reset != nil && *reset != "weekly" && *reset != "monthly" {
		return Invalid(prefix+"periodic_reset", "%speriodic_reset must be weekly or monthly (got %q)", prefix, *reset)
	}
	if days != nil && (*days < 1 || *days > 365) {
		return Invalid(prefix+"periodic_reset_days", "%speriodic_reset_days must be from 1 to 365 (got %d)", prefix, *days)
	}
	return nil
}

// NextReset returns when a usage period that starts at from ends.
func NextReset(from time.Time, reset *string, days *int) *time.Time {
	var t time.Time
	switch {
	case days != nil:
		t = from.AddDate(0, 0, *days)
	case reset != nil && *reset == "weekly":
		t = from.AddDate(0, 0, 7)
	case reset != nil && *reset == "monthly":
		t = from.AddDate(0, 1, 0)
	default:
		return nil
	}
	return &t
}
