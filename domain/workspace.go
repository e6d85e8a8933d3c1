package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// WorkspacePrefix names workspace streams.
const WorkspacePrefix = "workspace"

// Workspace is a unit of isolation inside the organisation: its members and their roles, its
// defaults, limits and budget, and overrides of the organisation's security settings.
type Workspace struct {
	ID                string         `json:"id"`
	OrganisationID    string         `json:"organisation_id"`
	Name              string         `json:"name"`
	Slug              string         `json:"slug"`
	Description       string         `json:"description,omitempty"`
	Status            string         `json:"status"`
	Defaults          map[string]any `json:"defaults,omitempty"`
	RateLimits        []RateLimit    `json:"rate_limits"`
	UsageLimits       []UsageLimits  `json:"usage_limits"`
	PeriodicReset     *string        `json:"periodic_reset"`
	PeriodicResetDays *int           `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time     `json:"next_usage_reset_at"`
	LastResetAt       *time.Time     `json:"last_reset_at"`
	CurrentUsage      float64        `json:"current_usage"`
	BudgetExhausted   bool           `json:"budget_exhausted"`
	// ExhaustedLimit is the type (cost or tokens) of the usage limit that was exhausted.
	ExhaustedLimit string `json:"exhausted_limit,omitempty"`
	// ThresholdAlertsSent lists, sorted, the limit types whose alert threshold was alerted this
	// period; each is alerted once until its alert is reset.
	ThresholdAlertsSent []string `json:"threshold_alerts_sent,omitempty"`
	// UsageResets counts the usage resets so far: it names the usage period (UsagePeriod).
	UsageResets int `json:"usage_resets,omitempty"`
	// Security holds only the settings the workspace overrides; the rest inherit the
	// organisation's (SecurityOverrides.Over).
	Security SecurityOverrides `json:"security_settings"`
	Members  map[string]Role   `json:"members"`
	// MemberSince and MemberChanged say when each member joined and last changed role.
	MemberSince   map[string]time.Time `json:"member_since,omitempty"`
	MemberChanged map[string]time.Time `json:"member_changed,omitempty"`
	CreatedAt     time.Time            `json:"created_at"`
	LastUpdatedAt time.Time            `json:"last_updated_at"`
}

type WorkspaceCreated struct {
	WorkspaceID       string         `json:"workspace_id"`
	OrganisationID    string         `json:"organisation_id"`
	Name              string         `json:"name"`
	Slug              string         `json:"slug"`
	Description       string         `json:"description,omitempty"`
	Defaults          map[string]any `json:"defaults,omitempty"`
	RateLimits        []RateLimit    `json:"rate_limits,omitempty"`
	UsageLimits       []UsageLimits  `json:"usage_limits,omitempty"`
	PeriodicReset     *string        `json:"periodic_reset,omitempty"`
	PeriodicResetDays *int           `json:"periodic_reset_days,omitempty"`
	NextUsageResetAt  *time.Time     `json:"next_usage_reset_at,omitempty"`
	At                time.Time      `json:"at"`
}

type WorkspaceArchived struct {
	WorkspaceID string    `json:"workspace_id"`
	At          time.Time `json:"at"`
}

type WorkspaceRestored struct {
	WorkspaceID string    `json:"workspace_id"`
	At          time.Time `json:"at"`
}

// WorkspaceMemberAdded also stands for a role change: the member's role becomes Role.
type WorkspaceMemberAdded struct {
	WorkspaceID string    `json:"workspace_id"`
	UserID      string    `json:"user_id"`
	Role        Role      `json:"role"`
	At          time.Time `json:"at"`
}

type WorkspaceMemberRemoved struct {
	WorkspaceID string    `json:"workspace_id"`
	UserID      string    `json:"user_id"`
	At          time.Time `json:"at"`
}

func (WorkspaceCreated) EventType() string       { return "WorkspaceCreated" }
func (WorkspaceArchived) EventType() string      { return "WorkspaceArchived" }
func (WorkspaceRestored) EventType() string      { return "WorkspaceRestored" }
func (WorkspaceMemberAdded) EventType() string   { return "WorkspaceMemberAdded" }
func (WorkspaceMemberRemoved) EventType() string { return "WorkspaceMemberRemoved" }

// workspaceEvents lists the workspace's events; the workspace commands add to it.
func workspaceEvents() []Event {
	return []Event{WorkspaceCreated{}, WorkspaceArchived{}, WorkspaceRestored{}, WorkspaceMemberAdded{},
		WorkspaceMemberRemoved{}, WorkspaceUpdated{}, WorkspaceSecurityUpdated{}, WorkspaceBudgetExhausted{},
		WorkspaceBudgetReactivated{}, WorkspaceUsageReset{}, WorkspaceUsageThresholdReached{}, WorkspaceUsageAlertsReset{},
		WorkspaceCachePurged{}}
}

func workspaceModule() module {
	return module{prefix: WorkspacePrefix, aggregate: func() Aggregate { return &Workspace{} }, events: workspaceEvents()}
}

func (w *Workspace) Apply(e Event) {
	switch e := e.(type) {
	case WorkspaceCreated:
		*w = Workspace{ID: e.WorkspaceID, OrganisationID: e.OrganisationID, Name: e.Name, Slug: e.Slug,
			Description: e.Description, Status: StatusActive, Defaults: e.Defaults, RateLimits: e.RateLimits,
			UsageLimits: e.UsageLimits, PeriodicReset: e.PeriodicReset, PeriodicResetDays: e.PeriodicResetDays,
			NextUsageResetAt: e.NextUsageResetAt, Members: map[string]Role{}, CreatedAt: e.At, LastUpdatedAt: e.At}
	case WorkspaceArchived:
		w.Status, w.LastUpdatedAt = StatusArchived, e.At
	case WorkspaceRestored:
		w.Status, w.LastUpdatedAt = StatusActive, e.At
	case WorkspaceMemberAdded:
		// Copy on write: read models hand out copies that share the map.
		members := maps.Clone(w.Members)
		if members == nil {
			members = map[string]Role{}
		}
		since, changed := cloneTimes(w.MemberSince), cloneTimes(w.MemberChanged)
		if _, member := members[e.UserID]; !member {
			since[e.UserID] = e.At
		}
		changed[e.UserID] = e.At
		members[e.UserID] = e.Role
		w.Members, w.MemberSince, w.MemberChanged, w.LastUpdatedAt = members, since, changed, e.At
	case WorkspaceMemberRemoved:
		members := maps.Clone(w.Members)
		delete(members, e.UserID)
		since, changed := cloneTimes(w.MemberSince), cloneTimes(w.MemberChanged)
		delete(since, e.UserID)
		delete(changed, e.UserID)
		w.Members, w.MemberSince, w.MemberChanged, w.LastUpdatedAt = members, since, changed, e.At
	default:
		w.applyMore(e)
	}
}

// Exists reports whether the workspace was created (archived ones exist).
func (w *Workspace) Exists() bool { return w.ID != "" }

// Active reports whether the workspace exists and is not archived.
func (w *Workspace) Active() bool { return w.Exists() && w.Status == StatusActive }

func cloneTimes(m map[string]time.Time) map[string]time.Time {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]time.Time{}
	}
	return out
}

// CreateWorkspace is the create command's input, already decoded; Slug is given or derived
// from the name by the command (DeriveSlug).
type CreateWorkspace struct {
	WorkspaceID       string
	OrganisationID    string
	Name              string
	Slug              string
	Description       string
	Defaults          map[string]any
	RateLimits        []RateLimit
	UsageLimits       []UsageLimits
	PeriodicReset     *string
	PeriodicResetDays *int
	NextUsageResetAt  *time.Time
}

// Create decides the creation of a workspace. A periodic reset without next_usage_reset_at
// starts its first period now.
func (w *Workspace) Create(c CreateWorkspace, now time.Time) ([]Event, error) {
	if w.Exists() {
		return nil, Errorf(CodeConflict, "workspace %s exists already", c.WorkspaceID)
	}
	if err := ValidateName("name", c.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", c.Slug); err != nil {
		return nil, err
	}
	if err := validateDefaults(c.Defaults); err != nil {
		return nil, err
	}
	if err := validateRateLimits(c.RateLimits); err != nil {
		return nil, err
	}
	usage, err := normaliseUsageLimits(c.UsageLimits, now)
	if err != nil {
		return nil, err
	}
	next, err := nextUsageReset(c.PeriodicReset, c.PeriodicResetDays, c.NextUsageResetAt, now)
	if err != nil {
		return nil, err
	}
	return []Event{WorkspaceCreated{WorkspaceID: c.WorkspaceID, OrganisationID: c.OrganisationID, Name: c.Name,
		Slug: c.Slug, Description: c.Description, Defaults: c.Defaults, RateLimits: c.RateLimits, UsageLimits: usage,
		PeriodicReset: c.PeriodicReset, PeriodicResetDays: c.PeriodicResetDays, NextUsageResetAt: next, At: now}}, nil
}

// DeriveSlug makes a slug of a name: lower-case letters and digits, other runs of characters
// turned into one '-', at most 255 characters; "workspace" when nothing is left.
func DeriveSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
		if b.Len() >= MaxNameLength {
			break
		}
	}
	slug := strings.TrimRight(strings.TrimLeft(b.String()[:min(b.Len(), MaxNameLength)], "_"), "-")
	if slug == "" || !slugPattern.MatchString(slug) {
		return "workspace"
	}
	return slug
}

// Workspace defaults (the reference's defaults object): metadata added to every request, and
// the guardrails every request of the workspace runs.
const (
	DefaultsMetadata         = "metadata"
	DefaultsInputGuardrails  = "input_guardrails"
	DefaultsOutputGuardrails = "output_guardrails"
)

// validateDefaults checks a workspace's defaults: metadata, an object of strings, and
// input_guardrails and output_guardrails, arrays of at most MaxGuardrailRefs guardrail ids or
// slugs. Whether the guardrails exist the command checks.
func validateDefaults(d map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(d)) {
		switch k {
		case DefaultsMetadata:
			if err := validateDefaultMetadata(d[k]); err != nil {
				return err
			}
		case DefaultsInputGuardrails, DefaultsOutputGuardrails:
			if _, err := defaultGuardrails(d, k); err != nil {
				return err
			}
		default:
			return Invalid("defaults."+k, "defaults.%s is not a workspace default; defaults may hold metadata, input_guardrails and output_guardrails", k)
		}
	}
	return nil
}

func validateDefaultMetadata(v any) error {
	switch md := v.(type) {
	case nil, map[string]string:
	case map[string]any:
		for _, mk := range slices.Sorted(maps.Keys(md)) {
			if _, ok := md[mk].(string); !ok {
				return Invalid("defaults.metadata."+mk, "defaults.metadata.%s must be a string", mk)
			}
			if mk == "" || utf8.RuneCountInString(mk) > MaxNameLength {
				return Invalid("defaults.metadata", "defaults.metadata keys must be 1 to %d characters", MaxNameLength)
			}
		}
	default:
		return Invalid("defaults.metadata", "defaults.metadata must be an object of strings")
	}
	return nil
}

// defaultGuardrails reads the guardrail list of defaults[key] (absent or null: none).
func defaultGuardrails(d map[string]any, key string) ([]string, error) {
	p := "defaults." + key
	var refs []string
	switch v := d[key].(type) {
	case nil:
		return nil, nil
	case []string:
		refs = v
	case []any:
		for i, el := range v {
			s, ok := el.(string)
			if !ok {
				return nil, Invalid(fmt.Sprintf("%s[%d]", p, i), "%s[%d] must be a guardrail id or slug", p, i)
			}
			refs = append(refs, s)
		}
	default:
		return nil, Invalid(p, "%s must be an array of guardrail ids or slugs", p)
	}
	if len(refs) > MaxGuardrailRefs {
		return nil, Invalid(p, "%s must hold at most %d guardrails (got %d)", p, MaxGuardrailRefs, len(refs))
	}
	for i, ref := range refs {
		if err := ValidateGuardrailRef(fmt.Sprintf("%s[%d]", p, i), ref); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// WorkspaceGuardrails are the guardrails a workspace attaches to every request of it, by id
// or slug, in order: Input on the request (before-request hook), Output on the answer.
type WorkspaceGuardrails struct {
	Input  []string
	Output []string
}

// Guardrails are the guardrails the workspace's defaults attach. Defaults were validated when
// they were set; anything unreadable counts as none.
func (w *Workspace) Guardrails() WorkspaceGuardrails {
	in, _ := defaultGuardrails(w.Defaults, DefaultsInputGuardrails)
	out, _ := defaultGuardrails(w.Defaults, DefaultsOutputGuardrails)
	return WorkspaceGuardrails{Input: in, Output: out}
}

// DefaultGuardrailRefs lists the guardrails that defaults attach, each with the path of its
// field (defaults.input_guardrails[1]), for the check that they exist.
func DefaultGuardrailRefs(d map[string]any) []ConfigGuardrail {
	var out []ConfigGuardrail
	for _, k := range []string{DefaultsInputGuardrails, DefaultsOutputGuardrails} {
		refs, _ := defaultGuardrails(d, k)
		for i, ref := range refs {
			out = append(out, ConfigGuardrail{Param: fmt.Sprintf("defaults.%s[%d]", k, i), Ref: ref})
		}
	}
	return out
}

// validateRateLimits checks each rate limit; one limit per type and unit.
func validateRateLimits(limits []RateLimit) error {
	seen := map[[2]string]bool{}
	for i, r := range limits {
		p := fmt.Sprintf("rate_limits[%d]", i)
		if err := ValidateRateLimit(p, r); err != nil {
			return err
		}
		if seen[[2]string{r.Type, r.Unit}] {
			return Invalid(p+".unit", "%s repeats a %s limit per %s; give one per type and unit", p, r.Type, r.Unit)
		}
		seen[[2]string{r.Type, r.Unit}] = true
	}
	return nil
}

// normaliseUsageLimits checks each budget (one per type) and fills in the next reset of those
// that reset periodically but did not say when.
func normaliseUsageLimits(limits []UsageLimits, now time.Time) ([]UsageLimits, error) {
	if limits == nil {
		return nil, nil
	}
	out := make([]UsageLimits, len(limits))
	seen := map[string]bool{}
	for i, u := range limits {
		p := fmt.Sprintf("usage_limits[%d]", i)
		if err := ValidateUsageLimits(p, u); err != nil {
			return nil, err
		}
		if seen[u.Type] {
			return nil, Invalid(p+".type", "%s repeats a %s usage limit; give one per type", p, u.Type)
		}
		seen[u.Type] = true
		if u.NextUsageResetAt != nil && !u.NextUsageResetAt.After(now) {
			return nil, Invalid(p+".next_usage_reset_at", "%s.next_usage_reset_at must be in the future (got %s)", p,
				u.NextUsageResetAt.UTC().Format(time.RFC3339))
		}
		if u.NextUsageResetAt == nil {
			u.NextUsageResetAt = NextReset(now, u.PeriodicReset, u.PeriodicResetDays)
		}
		out[i] = u
	}
	return out, nil
}

// nextUsageReset checks the reset fields of 2.7 and returns when the next reset falls: the
// time given (which must be in the future) or one period from now.
func nextUsageReset(reset *string, days *int, next *time.Time, now time.Time) (*time.Time, error) {
	if err := ValidatePeriodicReset("", reset, days); err != nil {
		return nil, err
	}
	if next != nil {
		if !next.After(now) {
			return nil, Invalid("next_usage_reset_at", "next_usage_reset_at must be in the future (got %s)", next.UTC().Format(time.RFC3339))
		}
		return next, nil
	}
	return NextReset(now, reset, days), nil
}

// refuseUnlessActive: a workspace that does not exist is not found; an archived one cannot
// change until it is restored.
func (w *Workspace) refuseUnlessActive() error {
	if !w.Exists() {
		return Errorf(CodeNotFound, "workspace not found")
	}
	if !w.Active() {
		return Errorf(CodeConflict, "workspace %s is archived; restore it first", w.ID)
	}
	return nil
}

// Archive decides the deletion of a workspace: it is archived, its keys stop working, and it
// keeps its slug so that it can be restored.
func (w *Workspace) Archive(now time.Time) ([]Event, error) {
	if !w.Exists() {
		return nil, Errorf(CodeNotFound, "workspace not found")
	}
	if !w.Active() {
		return nil, Errorf(CodeConflict, "workspace %s is archived already", w.ID)
	}
	return []Event{WorkspaceArchived{WorkspaceID: w.ID, At: now}}, nil
}

// Restore brings an archived workspace back.
func (w *Workspace) Restore(now time.Time) ([]Event, error) {
	if !w.Exists() {
		return nil, Errorf(CodeNotFound, "workspace not found")
	}
	if w.Active() {
		return nil, Errorf(CodeConflict, "workspace %s is not archived", w.ID)
	}
	return []Event{WorkspaceRestored{WorkspaceID: w.ID, At: now}}, nil
}

// MemberRole is a user and the workspace role to give them; Role is parsed case-insensitively.
type MemberRole struct {
	UserID string
	Role   string
}

// AddMembers decides adding users (or changing the role of those already members); param
// names the list ("users") in errors. A user given the role they hold already adds nothing.
func (w *Workspace) AddMembers(param string, members []MemberRole, now time.Time) ([]Event, error) {
	if err := w.refuseUnlessActive(); err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return nil, Invalid(param, "%s must hold at least one user", param)
	}
	var events []Event
	seen := map[string]bool{}
	for i, m := range members {
		p := fmt.Sprintf("%s[%d]", param, i)
		if strings.TrimSpace(m.UserID) == "" {
			return nil, Invalid(p+".id", "%s.id is required", p)
		}
		if seen[m.UserID] {
			return nil, Invalid(p+".id", "%s.id repeats user %s", p, m.UserID)
		}
		seen[m.UserID] = true
		role, ok := ParseWorkspaceRole(m.Role)
		if !ok {
			return nil, Invalid(p+".role", "%s.role must be admin, manager or member (got %q)", p, m.Role)
		}
		if current, member := w.Members[m.UserID]; member && current == role {
			continue
		}
		events = append(events, WorkspaceMemberAdded{WorkspaceID: w.ID, UserID: m.UserID, Role: role, At: now})
	}
	return events, nil
}

// ChangeMemberRole decides a member's new role.
func (w *Workspace) ChangeMemberRole(userID, role string, now time.Time) ([]Event, error) {
	if err := w.refuseUnlessActive(); err != nil {
		return nil, err
	}
	r, ok := ParseWorkspaceRole(role)
	if !ok {
		return nil, Invalid("role", "role must be admin, manager or member (got %q)", role)
	}
	current, member := w.Members[userID]
	if !member {
		return nil, Errorf(CodeNotFound, "user %s is not a member of workspace %s", userID, w.ID)
	}
	if current == r {
		return nil, nil
	}
	return []Event{WorkspaceMemberAdded{WorkspaceID: w.ID, UserID: userID, Role: r, At: now}}, nil
}

// RemoveMember decides a member's removal.
func (w *Workspace) RemoveMember(userID string, now time.Time) ([]Event, error) {
	if err := w.refuseUnlessActive(); err != nil {
		return nil, err
	}
	if _, member := w.Members[userID]; !member {
		return nil, Errorf(CodeNotFound, "user %s is not a member of workspace %s", userID, w.ID)
	}
	return []Event{WorkspaceMemberRemoved{WorkspaceID: w.ID, UserID: userID, At: now}}, nil
}
