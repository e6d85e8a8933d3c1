package domain

import (
	"maps"
	"time"
)

// WorkspacePrefix names workspace streams.
const WorkspacePrefix = "workspace"

// Workspace is a unit of isolation inside the organisation: its members and their roles, its
// defaults, limits and budget, and overrides of the organisation's security settings.
type Workspace struct {
	ID                string            `json:"id"`
	OrganisationID    string            `json:"organisation_id"`
	Name              string            `json:"name"`
	Slug              string            `json:"slug"`
	Description       string            `json:"description,omitempty"`
	Status            string            `json:"status"`
	Defaults          map[string]any    `json:"defaults,omitempty"`
	RateLimits        []RateLimit       `json:"rate_limits"`
	UsageLimits       []UsageLimits     `json:"usage_limits"`
	PeriodicReset     *string           `json:"periodic_reset"`
	PeriodicResetDays *int              `json:"periodic_reset_days"`
	NextUsageResetAt  *time.Time        `json:"next_usage_reset_at"`
	LastResetAt       *time.Time        `json:"last_reset_at"`
	CurrentUsage      float64           `json:"current_usage"`
	BudgetExhausted   bool              `json:"budget_exhausted"`
	Security          *SecuritySettings `json:"security_settings,omitempty"`
	Members           map[string]Role   `json:"members"`
	CreatedAt         time.Time         `json:"created_at"`
	LastUpdatedAt     time.Time         `json:"last_updated_at"`
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
		WorkspaceMemberRemoved{}}
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
		members[e.UserID] = e.Role
		w.Members, w.LastUpdatedAt = members, e.At
	case WorkspaceMemberRemoved:
		members := maps.Clone(w.Members)
		delete(members, e.UserID)
		w.Members, w.LastUpdatedAt = members, e.At
	default:
		w.applyMore(e)
	}
}

// Exists reports whether the workspace was created (archived ones exist).
func (w *Workspace) Exists() bool { return w.ID != "" }

// Active reports whether the workspace exists and is not archived.
func (w *Workspace) Active() bool { return w.Exists() && w.Status == StatusActive }
