package domain

import (
	"crypto/sha1"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// UsageLimitPolicyPrefix names usage-limit policy streams.
const UsageLimitPolicyPrefix = "usagelimitpolicy"

// MaxValueKeyLength bounds an entity's value key: it joins the values of every group_by key,
// so it may be longer than a name.
const MaxValueKeyLength = 1024

// Usage entity states (3: a budget "includes exhausted").
const (
	UsageEntityActive    = "active"
	UsageEntityExhausted = "exhausted"
)

// UsageLimitPolicy caps cost or tokens over time for the traffic its conditions select,
// counted per group_by partition (an entity, named by its value key).
type UsageLimitPolicy struct {
	ID                string      `json:"id"`
	Name              *string     `json:"name"`
	Conditions        []Condition `json:"conditions"`
	GroupBy           []GroupBy   `json:"group_by"`
	Type              string      `json:"type"`
	CreditLimit       float64     `json:"credit_limit"`
	AlertThreshold    *float64    `json:"alert_threshold"`
	PeriodicReset     *string     `json:"periodic_reset"`
	PeriodicResetDays *int        `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time  `json:"next_usage_reset_at"`
	LastResetAt       *time.Time  `json:"last_reset_at"`
	Status            string      `json:"status"`
	WorkspaceID       string      `json:"workspace_id"`
	OrganisationID    string      `json:"organisation_id"`
	CreatedAt         time.Time   `json:"created_at"`
	LastUpdatedAt     time.Time   `json:"last_updated_at"`
	// PeriodResets counts the periodic resets so far; with an entity's own resets it names
	// the entity's usage period (EntityPeriod).
	PeriodResets int `json:"period_resets,omitempty"`
	// Entities is replaced, never changed in place: read models hand out copies sharing it.
	Entities map[string]UsageLimitEntity `json:"value_key_usage_map"`
}

// UsageLimitEntity is one partition's usage in the current period.
type UsageLimitEntity struct {
	ID                 string     `json:"id"`
	ValueKey           string     `json:"value_key"`
	CurrentUsage       float64    `json:"current_usage"`
	Status             string     `json:"status"`
	ThresholdAlertSent bool       `json:"is_threshold_alerts_sent"`
	ExhaustedAlertSent bool       `json:"is_exhausted_alerts_sent"`
	LastResetAt        *time.Time `json:"last_reset_at"`
	CreatedAt          time.Time  `json:"created_at"`
	LastUpdatedAt      time.Time  `json:"last_updated_at"`
	// UsageResets counts the resets of this entity alone (UsageLimitPolicyEntityReset).
	UsageResets int `json:"usage_resets,omitempty"`
}

// UsageEntityID is the stable id of a policy's entity: a name-based (version 5 layout) UUID
// of the policy id and the value key, so that value keys which cannot travel in a URL path
// (those holding '/') still have an address.
func UsageEntityID(policyID, valueKey string) string {
	sum := sha1.Sum([]byte(policyID + "\x00" + valueKey))
	sum[6] = (sum[6] & 0x0f) | 0x50
	sum[8] = (sum[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

type UsageLimitPolicyCreated struct {
	PolicyID          string      `json:"policy_id"`
	OrganisationID    string      `json:"organisation_id"`
	WorkspaceID       string      `json:"workspace_id"`
	Name              *string     `json:"name"`
	Conditions        []Condition `json:"conditions"`
	GroupBy           []GroupBy   `json:"group_by"`
	Type              string      `json:"type"`
	CreditLimit       float64     `json:"credit_limit"`
	AlertThreshold    *float64    `json:"alert_threshold,omitempty"`
	PeriodicReset     *string     `json:"periodic_reset,omitempty"`
	PeriodicResetDays *int        `json:"periodic_reset_days,omitempty"`
	NextUsageResetAt  *time.Time  `json:"next_usage_reset_at,omitempty"`
	At                time.Time   `json:"at"`
}

// UsageLimitPolicyUpdated carries what changed. A cleared alert threshold is a flag; when
// ScheduleChanged the three schedule fields replace the old ones, nil clearing them.
type UsageLimitPolicyUpdated struct {
	PolicyID            string     `json:"policy_id"`
	Name                *string    `json:"name,omitempty"`
	CreditLimit         *float64   `json:"credit_limit,omitempty"`
	AlertThreshold      *float64   `json:"alert_threshold,omitempty"`
	ClearAlertThreshold bool       `json:"clear_alert_threshold,omitempty"`
	ScheduleChanged     bool       `json:"schedule_changed,omitempty"`
	PeriodicReset       *string    `json:"periodic_reset,omitempty"`
	PeriodicResetDays   *int       `json:"periodic_reset_days,omitempty"`
	NextUsageResetAt    *time.Time `json:"next_usage_reset_at,omitempty"`
	At                  time.Time  `json:"at"`
}

type UsageLimitPolicyArchived struct {
	PolicyID string    `json:"policy_id"`
	At       time.Time `json:"at"`
}

// UsageLimitPolicyUsageRecorded adds Amount to an entity's usage (gateway traffic).
type UsageLimitPolicyUsageRecorded struct {
	PolicyID string    `json:"policy_id"`
	ValueKey string    `json:"value_key"`
	Amount   float64   `json:"amount"`
	At       time.Time `json:"at"`
}

// UsageLimitPolicyThresholdReached: an entity's usage reached the alert threshold; it is
// alerted once until its alerts are reset. Usage becomes the entity's current usage.
type UsageLimitPolicyThresholdReached struct {
	PolicyID       string    `json:"policy_id"`
	ValueKey       string    `json:"value_key"`
	Usage          float64   `json:"usage"`
	AlertThreshold float64   `json:"alert_threshold"`
	At             time.Time `json:"at"`
}

// UsageLimitPolicyEntityExhausted: an entity's usage reached the credit limit; the gateway
// refuses its traffic until the limit is raised or its usage is reset. Usage becomes the
// entity's current usage.
type UsageLimitPolicyEntityExhausted struct {
	PolicyID    string    `json:"policy_id"`
	ValueKey    string    `json:"value_key"`
	Usage       float64   `json:"usage"`
	CreditLimit float64   `json:"credit_limit"`
	At          time.Time `json:"at"`
}

// UsageLimitPolicyEntityReactivated: a raised credit limit put an exhausted entity back
// under its limit (3).
type UsageLimitPolicyEntityReactivated struct {
	PolicyID string    `json:"policy_id"`
	ValueKey string    `json:"value_key"`
	At       time.Time `json:"at"`
}

// UsageLimitPolicyAlertsReset clears sent alerts on every entity, so they are sent again
// when reached (3: a raised credit limit resets both, a raised or removed threshold resets
// the threshold alert).
type UsageLimitPolicyAlertsReset struct {
	PolicyID  string    `json:"policy_id"`
	Threshold bool      `json:"threshold"`
	Exhausted bool      `json:"exhausted"`
	At        time.Time `json:"at"`
}

// UsageLimitPolicyEntityReset zeroes one entity's usage (by hand, or reset_usage_for_value).
type UsageLimitPolicyEntityReset struct {
	PolicyID string    `json:"policy_id"`
	ValueKey string    `json:"value_key"`
	At       time.Time `json:"at"`
}

// UsageLimitPolicyPeriodReset zeroes every entity at the end of a period and sets the next.
type UsageLimitPolicyPeriodReset struct {
	PolicyID         string     `json:"policy_id"`
	NextUsageResetAt *time.Time `json:"next_usage_reset_at"`
	At               time.Time  `json:"at"`
}

func (UsageLimitPolicyCreated) EventType() string          { return "UsageLimitPolicyCreated" }
func (UsageLimitPolicyUpdated) EventType() string          { return "UsageLimitPolicyUpdated" }
func (UsageLimitPolicyArchived) EventType() string         { return "UsageLimitPolicyArchived" }
func (UsageLimitPolicyUsageRecorded) EventType() string    { return "UsageLimitPolicyUsageRecorded" }
func (UsageLimitPolicyThresholdReached) EventType() string { return "UsageLimitPolicyThresholdReached" }
func (UsageLimitPolicyEntityExhausted) EventType() string  { return "UsageLimitPolicyEntityExhausted" }
func (UsageLimitPolicyEntityReactivated) EventType() string {
	return "UsageLimitPolicyEntityReactivated"
}
func (UsageLimitPolicyAlertsReset) EventType() string { return "UsageLimitPolicyAlertsReset" }
func (UsageLimitPolicyEntityReset) EventType() string { return "UsageLimitPolicyEntityReset" }
func (UsageLimitPolicyPeriodReset) EventType() string { return "UsageLimitPolicyPeriodReset" }

func usageLimitPolicyModule() module {
	return module{
		prefix:    UsageLimitPolicyPrefix,
		aggregate: func() Aggregate { return &UsageLimitPolicy{} },
		events: []Event{UsageLimitPolicyCreated{}, UsageLimitPolicyUpdated{}, UsageLimitPolicyArchived{},
			UsageLimitPolicyUsageRecorded{}, UsageLimitPolicyThresholdReached{}, UsageLimitPolicyEntityExhausted{},
			UsageLimitPolicyEntityReactivated{}, UsageLimitPolicyAlertsReset{}, UsageLimitPolicyEntityReset{},
			UsageLimitPolicyPeriodReset{}},
	}
}

func (p *UsageLimitPolicy) Apply(e Event) {
	switch e := e.(type) {
	case UsageLimitPolicyCreated:
		*p = UsageLimitPolicy{ID: e.PolicyID, Name: e.Name, Conditions: e.Conditions, GroupBy: e.GroupBy,
			Type: e.Type, CreditLimit: e.CreditLimit, AlertThreshold: e.AlertThreshold, PeriodicReset: e.PeriodicReset,
			PeriodicResetDays: e.PeriodicResetDays, NextUsageResetAt: e.NextUsageResetAt, Status: StatusActive,
			WorkspaceID: e.WorkspaceID, OrganisationID: e.OrganisationID, CreatedAt: e.At, LastUpdatedAt: e.At,
			Entities: map[string]UsageLimitEntity{}}
	case UsageLimitPolicyUpdated:
		if e.Name != nil {
			p.Name = e.Name
		}
		if e.CreditLimit != nil {
			p.CreditLimit = *e.CreditLimit
		}
		if e.AlertThreshold != nil || e.ClearAlertThreshold {
			p.AlertThreshold = e.AlertThreshold
		}
		if e.ScheduleChanged {
			p.PeriodicReset, p.PeriodicResetDays, p.NextUsageResetAt = e.PeriodicReset, e.PeriodicResetDays, e.NextUsageResetAt
		}
		p.LastUpdatedAt = e.At
	case UsageLimitPolicyArchived:
		p.Status, p.LastUpdatedAt = StatusArchived, e.At
	case UsageLimitPolicyUsageRecorded:
		p.changeEntity(e.ValueKey, e.At, func(en *UsageLimitEntity) { en.CurrentUsage = addUsage(en.CurrentUsage, e.Amount) })
	// The usage ledger reports usage with the alerts it causes, not request by request. (Before
	// it, a UsageRecorded event with the same figure always came first: replays are unchanged.)
	case UsageLimitPolicyThresholdReached:
		p.changeEntity(e.ValueKey, e.At, func(en *UsageLimitEntity) { en.CurrentUsage, en.ThresholdAlertSent = e.Usage, true })
	case UsageLimitPolicyEntityExhausted:
		p.changeEntity(e.ValueKey, e.At, func(en *UsageLimitEntity) {
			en.CurrentUsage, en.Status, en.ExhaustedAlertSent = e.Usage, UsageEntityExhausted, true
		})
	case UsageLimitPolicyEntityReactivated:
		p.changeEntity(e.ValueKey, e.At, func(en *UsageLimitEntity) { en.Status = UsageEntityActive })
	case UsageLimitPolicyAlertsReset:
		p.changeEveryEntity(e.At, func(en *UsageLimitEntity) {
			en.ThresholdAlertSent = en.ThresholdAlertSent && !e.Threshold
			en.ExhaustedAlertSent = en.ExhaustedAlertSent && !e.Exhausted
		})
	case UsageLimitPolicyEntityReset:
		p.changeEntity(e.ValueKey, e.At, func(en *UsageLimitEntity) {
			en.reset(e.At)
			en.UsageResets++
		})
	case UsageLimitPolicyPeriodReset:
		p.changeEveryEntity(e.At, func(en *UsageLimitEntity) { en.reset(e.At) })
		p.PeriodResets++
		at := e.At
		p.LastResetAt, p.NextUsageResetAt, p.LastUpdatedAt = &at, e.NextUsageResetAt, e.At
	}
}

// changeEntity changes one entity, creating it on first use, in a fresh copy of the map.
func (p *UsageLimitPolicy) changeEntity(valueKey string, at time.Time, change func(*UsageLimitEntity)) {
	entities := maps.Clone(p.Entities)
	if entities == nil {
		entities = map[string]UsageLimitEntity{}
	}
	en, ok := entities[valueKey]
	if !ok {
		en = UsageLimitEntity{ID: UsageEntityID(p.ID, valueKey), ValueKey: valueKey, Status: UsageEntityActive, CreatedAt: at}
	}
	change(&en)
	en.LastUpdatedAt = at
	entities[valueKey] = en
	p.Entities = entities
}

func (p *UsageLimitPolicy) changeEveryEntity(at time.Time, change func(*UsageLimitEntity)) {
	entities := make(map[string]UsageLimitEntity, len(p.Entities))
	for k, en := range p.Entities {
		change(&en)
		en.LastUpdatedAt = at
		entities[k] = en
	}
	p.Entities = entities
}

func (en *UsageLimitEntity) reset(at time.Time) {
	en.CurrentUsage, en.Status, en.ThresholdAlertSent, en.ExhaustedAlertSent = 0, UsageEntityActive, false, false
	en.LastResetAt = &at
}

// addUsage sums usage to 15 significant digits, the precision a float64 holds exactly, so
// that fractional costs add up as people expect (0.1 + 0.2 shows as 0.3).
func addUsage(a, b float64) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(a+b, 'g', 15, 64), 64)
	if err != nil {
		return a + b
	}
	return v
}

// Exists reports whether the policy has been created.
func (p *UsageLimitPolicy) Exists() bool { return p.ID != "" }

// Active reports whether the policy exists and is not archived.
func (p *UsageLimitPolicy) Active() bool { return p.Exists() && p.Status == StatusActive }

// EntityByRef finds an entity by its id or, failing that, by its value key.
func (p *UsageLimitPolicy) EntityByRef(ref string) (UsageLimitEntity, bool) {
	for _, en := range p.Entities {
		if en.ID == ref {
			return en, true
		}
	}
	en, ok := p.Entities[ref]
	return en, ok
}

// SortedEntities returns the entities ordered by value key, so that decisions over every
// entity emit their events in the same order on every run.
func (p *UsageLimitPolicy) SortedEntities() []UsageLimitEntity {
	out := make([]UsageLimitEntity, 0, len(p.Entities))
	for _, en := range p.Entities {
		out = append(out, en)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ValueKey < out[j].ValueKey })
	return out
}

// UsageAlertRecipients are the audiences of a policy's alerts (6: organisation admins, and
// the workspace's admins and managers). They are resolved to addresses when the notification
// is delivered, so that membership changes made in between count.
func UsageAlertRecipients(workspaceID string) []string {
	return []string{"organisation:admins", "workspace:" + workspaceID + ":admins", "workspace:" + workspaceID + ":managers"}
}

// CreateUsageLimitPolicy is the create command's input, already decoded.
type CreateUsageLimitPolicy struct {
	PolicyID          string
	OrganisationID    string
	WorkspaceID       string
	Name              *string
	Conditions        []Condition
	GroupBy           []GroupBy
	Type              string
	CreditLimit       *float64
	AlertThreshold    *float64
	PeriodicReset     *string
	PeriodicResetDays *int
}

func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// validateCreditLimit: a limit of zero would exhaust every entity before its first request,
// so the limit must be above zero (the reference's minimum 0 is read as exclusive).
func validateCreditLimit(v *float64) error {
	if v == nil {
		return Invalid("credit_limit", "credit_limit is required")
	}
	if *v <= 0 || !finite(*v) {
		return Invalid("credit_limit", "credit_limit must be greater than 0 (got %v)", *v)
	}
	return nil
}

func validateAlertThreshold(threshold, creditLimit float64) error {
	if threshold < 0 || !finite(threshold) || threshold >= creditLimit {
		return Invalid("alert_threshold", "alert_threshold must be at least 0 and below credit_limit %v (got %v)", creditLimit, threshold)
	}
	return nil
}

// Create decides the creation of a policy. Its first period starts now.
func (p *UsageLimitPolicy) Create(c CreateUsageLimitPolicy, now time.Time) ([]Event, error) {
	if p.Exists() {
		return nil, Errorf(CodeConflict, "usage limit policy %s exists already", c.PolicyID)
	}
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, false); err != nil {
			return nil, err
		}
	}
	if err := ValidateConditions(c.Conditions, c.GroupBy, true); err != nil {
		return nil, err
	}
	if c.Type != UsageCost && c.Type != UsageTokens {
		return nil, Invalid("type", "type must be cost or tokens (got %q)", c.Type)
	}
	if err := validateCreditLimit(c.CreditLimit); err != nil {
		return nil, err
	}
	if c.AlertThreshold != nil {
		if err := validateAlertThreshold(*c.AlertThreshold, *c.CreditLimit); err != nil {
			return nil, err
		}
	}
	if err := ValidatePeriodicReset("", c.PeriodicReset, c.PeriodicResetDays); err != nil {
		return nil, err
	}
	return []Event{UsageLimitPolicyCreated{PolicyID: c.PolicyID, OrganisationID: c.OrganisationID,
		WorkspaceID: c.WorkspaceID, Name: c.Name, Conditions: c.Conditions, GroupBy: c.GroupBy, Type: c.Type,
		CreditLimit: *c.CreditLimit, AlertThreshold: c.AlertThreshold, PeriodicReset: c.PeriodicReset,
		PeriodicResetDays: c.PeriodicResetDays, NextUsageResetAt: NextReset(now, c.PeriodicReset, c.PeriodicResetDays),
		At: now}}, nil
}

// UpdateUsageLimitPolicy changes a policy; nil fields stay as they are. ClearAlertThreshold
// removes the threshold. SetSchedule replaces the periodic reset with PeriodicReset or
// PeriodicResetDays (both nil: no periodic reset). ResetUsageForValue zeroes one entity.
type UpdateUsageLimitPolicy struct {
	Name                *string
	CreditLimit         *float64
	AlertThreshold      *float64
	ClearAlertThreshold bool
	SetSchedule         bool
	PeriodicReset       *string
	PeriodicResetDays   *int
	ResetUsageForValue  *string
}

func (c UpdateUsageLimitPolicy) empty() bool {
	return c.Name == nil && c.CreditLimit == nil && c.AlertThreshold == nil && !c.ClearAlertThreshold &&
		!c.SetSchedule && c.ResetUsageForValue == nil
}

// Update decides a change of the policy and what it does to the entities (3): a raised
// credit limit reactivates the entities it puts back under the limit and resets every
// alert; a lowered one exhausts the entities already at it; a raised or removed alert
// threshold resets the threshold alerts.
func (p *UsageLimitPolicy) Update(c UpdateUsageLimitPolicy, now time.Time) ([]Event, error) {
	if !p.Active() {
		return nil, Errorf(CodeNotFound, "usage limit policy not found")
	}
	if c.empty() {
		return nil, Invalid("", "nothing to update: give name, credit_limit, alert_threshold, periodic_reset, periodic_reset_days or reset_usage_for_value")
	}
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, false); err != nil {
			return nil, err
		}
	}
	limit := p.CreditLimit
	if c.CreditLimit != nil {
		if err := validateCreditLimit(c.CreditLimit); err != nil {
			return nil, err
		}
		limit = *c.CreditLimit
	}
	threshold := p.AlertThreshold
	switch {
	case c.AlertThreshold != nil:
		if err := validateAlertThreshold(*c.AlertThreshold, limit); err != nil {
			return nil, err
		}
		threshold = c.AlertThreshold
	case c.ClearAlertThreshold:
		threshold = nil
	case threshold != nil && *threshold >= limit:
		return nil, Invalid("credit_limit", "credit_limit must be above alert_threshold %v (got %v): lower alert_threshold or set it to null in the same request", *threshold, limit)
	}
	if c.SetSchedule {
		if err := ValidatePeriodicReset("", c.PeriodicReset, c.PeriodicResetDays); err != nil {
			return nil, err
		}
	}
	var resetEntity *UsageLimitEntity
	if c.ResetUsageForValue != nil {
		en, ok := p.Entities[*c.ResetUsageForValue]
		if !ok {
			return nil, &Error{Code: CodeNotFound, Param: "reset_usage_for_value",
				Message: fmt.Sprintf("no usage is recorded for value %q", *c.ResetUsageForValue)}
		}
		resetEntity = &en
	}

	updated := UsageLimitPolicyUpdated{PolicyID: p.ID, Name: c.Name, CreditLimit: c.CreditLimit,
		AlertThreshold: c.AlertThreshold, ClearAlertThreshold: c.ClearAlertThreshold && c.AlertThreshold == nil, At: now}
	if c.SetSchedule && !sameSchedule(p.PeriodicReset, p.PeriodicResetDays, c.PeriodicReset, c.PeriodicResetDays) {
		updated.ScheduleChanged = true
		updated.PeriodicReset, updated.PeriodicResetDays = c.PeriodicReset, c.PeriodicResetDays
		updated.NextUsageResetAt = NextReset(now, c.PeriodicReset, c.PeriodicResetDays)
	}
	events := []Event{updated}

	raised := limit > p.CreditLimit
	thresholdEased := p.AlertThreshold != nil && (threshold == nil || *threshold > *p.AlertThreshold)
	var sentThreshold, sentExhausted bool
	for _, en := range p.SortedEntities() {
		sentThreshold = sentThreshold || en.ThresholdAlertSent
		sentExhausted = sentExhausted || en.ExhaustedAlertSent
		if raised && en.Status == UsageEntityExhausted && en.CurrentUsage < limit &&
			(resetEntity == nil || en.ValueKey != resetEntity.ValueKey) {
			events = append(events, UsageLimitPolicyEntityReactivated{PolicyID: p.ID, ValueKey: en.ValueKey, At: now})
		}
	}
	resetThreshold := (raised || thresholdEased) && sentThreshold
	resetExhausted := raised && sentExhausted
	if resetThreshold || resetExhausted {
		events = append(events, UsageLimitPolicyAlertsReset{PolicyID: p.ID, Threshold: resetThreshold, Exhausted: resetExhausted, At: now})
	}
	if resetEntity != nil {
		events = append(events, UsageLimitPolicyEntityReset{PolicyID: p.ID, ValueKey: resetEntity.ValueKey, At: now})
	}
	// The alerts that the new limits call for are decided on the state after the change: a
	// lowered limit exhausts, a lowered threshold alerts, an entity still over a raised limit
	// is alerted again.
	after := *p
	for _, e := range events {
		after.Apply(e)
	}
	for _, en := range after.SortedEntities() {
		events = append(events, after.alerts(en, en.CurrentUsage, now)...)
	}
	return events, nil
}

// alerts returns the alerts an entity at usage is due and has not had this period.
func (p *UsageLimitPolicy) alerts(en UsageLimitEntity, usage float64, now time.Time) []Event {
	var events []Event
	if p.AlertThreshold != nil && !en.ThresholdAlertSent && usageReached(usage, *p.AlertThreshold) {
		events = append(events, UsageLimitPolicyThresholdReached{PolicyID: p.ID, ValueKey: en.ValueKey, Usage: usage,
			AlertThreshold: *p.AlertThreshold, At: now})
	}
	if usageReached(usage, p.CreditLimit) && (en.Status != UsageEntityExhausted || !en.ExhaustedAlertSent) {
		events = append(events, UsageLimitPolicyEntityExhausted{PolicyID: p.ID, ValueKey: en.ValueKey, Usage: usage,
			CreditLimit: p.CreditLimit, At: now})
	}
	return events
}

func sameSchedule(reset *string, days *int, newReset *string, newDays *int) bool {
	eqS := (reset == nil) == (newReset == nil) && (reset == nil || *reset == *newReset)
	eqD := (days == nil) == (newDays == nil) && (days == nil || *days == *newDays)
	return eqS && eqD
}

// Archive decides the deletion of a policy: it is archived, and stays readable with
// status=archived.
func (p *UsageLimitPolicy) Archive(now time.Time) ([]Event, error) {
	if !p.Active() {
		return nil, Errorf(CodeNotFound, "usage limit policy not found")
	}
	return []Event{UsageLimitPolicyArchived{PolicyID: p.ID, At: now}}, nil
}

// RecordUsage decides what an amount of usage by one entity does: it is added, and the
// entity is alerted once per period when it reaches the alert threshold and exhausted when
// it reaches the credit limit. Usage that arrives after exhaustion (requests already in
// flight) is still counted.
func (p *UsageLimitPolicy) RecordUsage(valueKey string, amount float64, now time.Time) ([]Event, error) {
	if !p.Active() {
		return nil, Errorf(CodeNotFound, "usage limit policy not found")
	}
	if err := validateValueKey(valueKey); err != nil {
		return nil, err
	}
	if amount < 0 || !finite(amount) {
		return nil, Invalid("amount", "amount must be a number of at least 0 (got %v)", amount)
	}
	if amount == 0 {
		return nil, nil
	}
	en, ok := p.Entities[valueKey]
	if !ok {
		en = UsageLimitEntity{ValueKey: valueKey, Status: UsageEntityActive}
	}
	events := []Event{UsageLimitPolicyUsageRecorded{PolicyID: p.ID, ValueKey: valueKey, Amount: amount, At: now}}
	return append(events, p.alerts(en, addUsage(en.CurrentUsage, amount), now)...), nil
}

// ResetEntity decides the reset of one entity's usage; ref is its id or its value key.
func (p *UsageLimitPolicy) ResetEntity(ref string, now time.Time) ([]Event, error) {
	if !p.Active() {
		return nil, Errorf(CodeNotFound, "usage limit policy not found")
	}
	en, ok := p.EntityByRef(ref)
	if !ok {
		return nil, &Error{Code: CodeNotFound, Param: "entityId", Message: fmt.Sprintf("entity %q not found in this policy", ref)}
	}
	return []Event{UsageLimitPolicyEntityReset{PolicyID: p.ID, ValueKey: en.ValueKey, At: now}}, nil
}

// ResetEntityByValueKey decides the reset of the entity of valueKey, a value key the caller
// resolved (the usage ledger may count entities the policy has not seen yet): an entity the
// policy has no record of is reset all the same, which creates it with zero usage.
func (p *UsageLimitPolicy) ResetEntityByValueKey(valueKey string, now time.Time) ([]Event, error) {
	if !p.Active() {
		return nil, Errorf(CodeNotFound, "usage limit policy not found")
	}
	if err := validateValueKey(valueKey); err != nil {
		return nil, err
	}
	return []Event{UsageLimitPolicyEntityReset{PolicyID: p.ID, ValueKey: valueKey, At: now}}, nil
}

func validateValueKey(valueKey string) error {
	if strings.TrimSpace(valueKey) == "" {
		return Invalid("value_key", "value_key is required")
	}
	if n := utf8.RuneCountInString(valueKey); n > MaxValueKeyLength {
		return Invalid("value_key", "value_key must be at most %d characters (got %d)", MaxValueKeyLength, n)
	}
	return nil
}

// EntityPeriod names the current usage period of the entity of valueKey: the policy's
// periodic resets and the entity's own resets so far, as "<policy resets>.<entity resets>"
// (an entity the policy has not seen has no resets of its own).
func (p *UsageLimitPolicy) EntityPeriod(valueKey string) string {
	return usagePeriod(p.PeriodResets) + "." + usagePeriod(p.Entities[valueKey].UsageResets)
}

// UsageReached decides what usage by the entity of valueKey, as the ledger counted it in
// period, does to it: the alert threshold is alerted once per period, and the entity is
// exhausted at the credit limit (an entity the policy has not seen is created by its first
// alert). A report about an earlier period, or about an archived policy, decides nothing.
func (p *UsageLimitPolicy) UsageReached(valueKey, period string, usage float64, now time.Time) ([]Event, error) {
	if err := validateValueKey(valueKey); err != nil {
		return nil, err
	}
	if err := validateUsage(usage); err != nil {
		return nil, err
	}
	if !p.Active() || period != p.EntityPeriod(valueKey) {
		return nil, nil
	}
	en, ok := p.Entities[valueKey]
	if !ok {
		en = UsageLimitEntity{ValueKey: valueKey, Status: UsageEntityActive}
	}
	return p.alerts(en, usage, now), nil
}

// ResetPeriod decides the periodic reset: once next_usage_reset_at has passed, every
// entity starts again from zero and the next reset is set past now (periods missed while
// nothing ran are skipped, not replayed). Before then, or without a schedule, nothing
// happens.
func (p *UsageLimitPolicy) ResetPeriod(now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "usage limit policy not found")
	}
	if !p.Active() || p.NextUsageResetAt == nil || now.Before(*p.NextUsageResetAt) {
		return nil, nil
	}
	next := *p.NextUsageResetAt
	for !next.After(now) {
		n := NextReset(next, p.PeriodicReset, p.PeriodicResetDays)
		if n == nil {
			return nil, nil
		}
		next = *n
	}
	return []Event{UsageLimitPolicyPeriodReset{PolicyID: p.ID, NextUsageResetAt: &next, At: now}}, nil
}
