package domain

import (
	"fmt"
	"maps"
	"time"
)

// IntegrationPrefix names the streams of integrations.
const IntegrationPrefix = "integration"

// gatewayModules are the aggregates of the gateway's admin resources: integrations, managed
// providers (and virtual keys, the same aggregate), saved configs, each workspace's default
// config, and guardrails.
func gatewayModules() []module {
	return []module{integrationModule(), providerModule(), savedConfigModule(), configDefaultModule(), guardrailModule()}
}

// Integration is an organisation's credential for one AI provider type, which workspaces are
// given access to and use through managed providers. A workspace integration (WorkspaceID set)
// serves that one workspace only.
type Integration struct {
	ID             string                          `json:"id"`
	OrganisationID string                          `json:"organisation_id"`
	WorkspaceID    string                          `json:"workspace_id,omitempty"`
	Slug           string                          `json:"slug"`
	Name           string                          `json:"name"`
	AIProviderID   string                          `json:"ai_provider_id"`
	Description    string                          `json:"description"`
	Configurations map[string]any                  `json:"configurations"`
	Sealed         SealedCredential                `json:"-"`
	Masked         MaskedCredential                `json:"masked"`
	Tags           map[string]string               `json:"tags"`
	Workspaces     map[string]IntegrationWorkspace `json:"workspaces"`
	Status         string                          `json:"status"`
	CreatedBy      string                          `json:"created_by,omitempty"`
	CreatedAt      time.Time                       `json:"created_at"`
	LastUpdatedAt  time.Time                       `json:"last_updated_at"`
}

// IntegrationWorkspace is one workspace's access to an integration, with the limits that
// apply to its use there (at most one of each, as the reference says), and the state of its
// usage budget. An update sets the access and limits; the budget state is folded from the
// usage events only (an update's entries never carry it, and the fold keeps it).
type IntegrationWorkspace struct {
	ID          string        `json:"id"`
	Enabled     bool          `json:"enabled"`
	UsageLimits []UsageLimits `json:"usage_limits"`
	RateLimits  []RateLimit   `json:"rate_limits"`
	IntegrationWorkspaceBudget
}

// IntegrationWorkspaceBudget is the state of an integration workspace's usage budget: the
// usage its last alert recorded, the alerts sent this period (each once until reset), whether
// it is exhausted, and the usage resets so far, which name its usage period.
type IntegrationWorkspaceBudget struct {
	CurrentUsage       float64    `json:"current_usage,omitempty"`
	ThresholdAlertSent bool       `json:"is_threshold_alerts_sent,omitempty"`
	ExhaustedAlertSent bool       `json:"is_exhausted_alerts_sent,omitempty"`
	BudgetExhausted    bool       `json:"budget_exhausted,omitempty"`
	UsageResets        int        `json:"usage_resets,omitempty"`
	LastResetAt        *time.Time `json:"last_reset_at,omitempty"`
}

type IntegrationCreated struct {
	IntegrationID  string            `json:"integration_id"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    string            `json:"workspace_id,omitempty"`
	Slug           string            `json:"slug"`
	Name           string            `json:"name"`
	AIProviderID   string            `json:"ai_provider_id"`
	Description    string            `json:"description,omitempty"`
	Configurations map[string]any    `json:"configurations,omitempty"`
	Sealed         SealedCredential  `json:"sealed"`
	Masked         MaskedCredential  `json:"masked"`
	Tags           map[string]string `json:"tags,omitempty"`
	CreatedBy      string            `json:"created_by,omitempty"`
	At             time.Time         `json:"at"`
}

// IntegrationUpdated carries what changed; tags are replaced whole.
type IntegrationUpdated struct {
	IntegrationID string            `json:"integration_id"`
	Name          *string           `json:"name,omitempty"`
	Description   *string           `json:"description,omitempty"`
	Configuration *ConfigurationSet `json:"configuration,omitempty"`
	Tags          map[string]string `json:"tags,omitempty"`
	ClearTags     bool              `json:"clear_tags,omitempty"`
	At            time.Time         `json:"at"`
}

// IntegrationWorkspacesUpdated sets the access of the workspaces it names; others keep theirs.
type IntegrationWorkspacesUpdated struct {
	IntegrationID string                 `json:"integration_id"`
	Workspaces    []IntegrationWorkspace `json:"workspaces"`
	At            time.Time              `json:"at"`
}

// IntegrationArchived is DELETE: the integration stops serving and frees its slug.
type IntegrationArchived struct {
	IntegrationID string    `json:"integration_id"`
	At            time.Time `json:"at"`
}

func (IntegrationCreated) EventType() string           { return "IntegrationCreated" }
func (IntegrationUpdated) EventType() string           { return "IntegrationUpdated" }
func (IntegrationWorkspacesUpdated) EventType() string { return "IntegrationWorkspacesUpdated" }
func (IntegrationArchived) EventType() string          { return "IntegrationArchived" }

func integrationModule() module {
	return module{prefix: IntegrationPrefix, aggregate: func() Aggregate { return &Integration{} },
		events: []Event{IntegrationCreated{}, IntegrationUpdated{}, IntegrationWorkspacesUpdated{}, IntegrationArchived{},
			IntegrationWorkspaceUsageThresholdReached{}, IntegrationWorkspaceBudgetExhausted{},
			IntegrationWorkspaceBudgetReactivated{}, IntegrationWorkspaceUsageAlertsReset{}, IntegrationWorkspaceUsageReset{}}}
}

func (i *Integration) Apply(e Event) {
	switch e := e.(type) {
	case IntegrationCreated:
		*i = Integration{ID: e.IntegrationID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Slug: e.Slug,
			Name: e.Name, AIProviderID: e.AIProviderID, Description: e.Description, Configurations: e.Configurations,
			Sealed: e.Sealed, Masked: e.Masked, Tags: e.Tags, Status: StatusActive, CreatedBy: e.CreatedBy, CreatedAt: e.At,
			LastUpdatedAt: e.At}
		if e.WorkspaceID != "" {
			i.Workspaces = map[string]IntegrationWorkspace{e.WorkspaceID: {ID: e.WorkspaceID, Enabled: true}}
		}
	case IntegrationUpdated:
		if e.Name != nil {
			i.Name = *e.Name
		}
		if e.Description != nil {
			i.Description = *e.Description
		}
		if e.Configuration != nil {
			i.Configurations, i.Sealed, i.Masked = e.Configuration.applyTo(i.Configurations, i.Sealed, i.Masked)
		}
		if e.Tags != nil || e.ClearTags {
			i.Tags = e.Tags
		}
		i.LastUpdatedAt = e.At
	case IntegrationWorkspacesUpdated:
		// Copy on write: read models hand out copies that share the map.
		ws := maps.Clone(i.Workspaces)
		if ws == nil {
			ws = map[string]IntegrationWorkspace{}
		}
		for _, w := range e.Workspaces {
			w.IntegrationWorkspaceBudget = ws[w.ID].IntegrationWorkspaceBudget
			ws[w.ID] = w
		}
		i.Workspaces, i.LastUpdatedAt = ws, e.At
	case IntegrationArchived:
		i.Status, i.LastUpdatedAt = StatusArchived, e.At
	default:
		i.applyUsage(e)
	}
}

// Exists reports whether the integration was created and not deleted.
func (i *Integration) Exists() bool { return i.ID != "" && i.Status != StatusArchived }

// Serves reports whether workspaceID may use the integration.
func (i *Integration) Serves(workspaceID string) bool {
	return i.Exists() && i.Workspaces[workspaceID].Enabled
}

// EnabledWorkspaces counts the workspaces with access.
func (i *Integration) EnabledWorkspaces() int {
	n := 0
	for _, w := range i.Workspaces {
		if w.Enabled {
			n++
		}
	}
	return n
}

// CreateIntegration is the create command's input, already decoded. Key and the secret
// configuration fields are plaintext here; Create seals them.
type CreateIntegration struct {
	IntegrationID  string
	OrganisationID string
	WorkspaceID    string
	Slug           string
	Name           string
	AIProviderID   string
	Description    string
	Key            *string
	Configurations map[string]any
	Tags           map[string]string
	CreatedBy      string
}

// Create decides the creation of an integration. seal encrypts its secrets, bound to this
// integration, before they enter the event.
func (i *Integration) Create(c CreateIntegration, seal SealFunc, now time.Time) ([]Event, error) {
	if i.ID != "" {
		return nil, Errorf(CodeConflict, "integration %s exists already", c.IntegrationID)
	}
	if err := ValidateName("name", c.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", c.Slug); err != nil {
		return nil, err
	}
	if err := ValidateProviderType("ai_provider_id", c.AIProviderID); err != nil {
		return nil, err
	}
	if err := validateNote("description", c.Description); err != nil {
		return nil, err
	}
	set, err := NewConfigurationSet(c.AIProviderID, c.Key, c.Configurations, true, seal)
	if err != nil {
		return nil, err
	}
	if err := ValidateTags("tags", c.Tags); err != nil {
		return nil, err
	}
	configs, sealed, masked := set.applyTo(nil, SealedCredential{}, MaskedCredential{})
	return []Event{IntegrationCreated{IntegrationID: c.IntegrationID, OrganisationID: c.OrganisationID,
		WorkspaceID: c.WorkspaceID, Slug: c.Slug, Name: c.Name, AIProviderID: c.AIProviderID, Description: c.Description,
		Configurations: configs, Sealed: sealed, Masked: masked, Tags: c.Tags, CreatedBy: c.CreatedBy, At: now}}, nil
}

// UpdateIntegration changes an integration; nil fields stay as they are. Configurations are
// merged field by field (a nil value removes the field); tags are replaced whole.
type UpdateIntegration struct {
	Name           *string
	Description    *string
	Key            *string
	Configurations map[string]any
	Tags           map[string]string
	ClearTags      bool
}

// Update decides a change of the integration.
func (i *Integration) Update(c UpdateIntegration, seal SealFunc, now time.Time) ([]Event, error) {
	if !i.Exists() {
		return nil, Errorf(CodeNotFound, "integration not found")
	}
	if c.Name == nil && c.Description == nil && c.Key == nil && c.Configurations == nil && c.Tags == nil && !c.ClearTags {
		return nil, Invalid("", "nothing to update: give name, description, key, configurations or tags")
	}
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, true); err != nil {
			return nil, err
		}
	}
	if c.Description != nil {
		if err := validateNote("description", *c.Description); err != nil {
			return nil, err
		}
	}
	e := IntegrationUpdated{IntegrationID: i.ID, Name: c.Name, Description: c.Description, Tags: c.Tags,
		ClearTags: c.ClearTags, At: now}
	if c.Key != nil || c.Configurations != nil {
		set, err := NewConfigurationSet(i.AIProviderID, c.Key, c.Configurations, false, seal)
		if err != nil {
			return nil, err
		}
		e.Configuration = &set
	}
	if err := ValidateTags("tags", c.Tags); err != nil {
		return nil, err
	}
	return []Event{e}, nil
}

// MaxIntegrationWorkspaces bounds one bulk update of workspace access.
const MaxIntegrationWorkspaces = 1000

// UpdateWorkspaces decides a bulk update of workspace access: each entry replaces that
// workspace's access and limits (its budget state stays). A workspace integration serves its
// own workspace only. A periodic reset without next_usage_reset_at keeps its next reset when
// its schedule is unchanged, else starts its first period now. New limits reset alerts and
// reactivate an exhausted budget as the specification says (3; accessBudgetChanged).
func (i *Integration) UpdateWorkspaces(entries []IntegrationWorkspace, now time.Time) ([]Event, error) {
	if !i.Exists() {
		return nil, Errorf(CodeNotFound, "integration not found")
	}
	if len(entries) == 0 {
		return nil, Invalid("workspaces", "workspaces must hold at least one workspace")
	}
	if len(entries) > MaxIntegrationWorkspaces {
		return nil, Invalid("workspaces", "workspaces must hold at most %d workspaces (got %d)", MaxIntegrationWorkspaces, len(entries))
	}
	seen := map[string]bool{}
	out := make([]IntegrationWorkspace, 0, len(entries))
	for n, w := range entries {
		p := fmt.Sprintf("workspaces[%d]", n)
		if w.ID == "" {
			return nil, Invalid(p+".id", "%s.id is required", p)
		}
		if seen[w.ID] {
			return nil, Invalid(p+".id", "%s.id repeats workspace %s", p, w.ID)
		}
		seen[w.ID] = true
		if i.WorkspaceID != "" && w.ID != i.WorkspaceID {
			return nil, Invalid(p+".id", "%s.id: a workspace integration serves only its own workspace %s", p, i.WorkspaceID)
		}
		if len(w.UsageLimits) > 1 {
			return nil, Invalid(p+".usage_limits", "%s.usage_limits must hold at most 1 limit (got %d)", p, len(w.UsageLimits))
		}
		if len(w.RateLimits) > 1 {
			return nil, Invalid(p+".rate_limits", "%s.rate_limits must hold at most 1 limit (got %d)", p, len(w.RateLimits))
		}
		for k, u := range w.UsageLimits {
			if err := ValidateUsageLimits(fmt.Sprintf("%s.usage_limits[%d]", p, k), u); err != nil {
				return nil, err
			}
		}
		for k, r := range w.RateLimits {
			if err := ValidateRateLimit(fmt.Sprintf("%s.rate_limits[%d]", p, k), r); err != nil {
				return nil, err
			}
		}
		w.IntegrationWorkspaceBudget = IntegrationWorkspaceBudget{}
		w.UsageLimits = i.normaliseAccessLimits(w, now)
		out = append(out, w)
	}
	events := []Event{IntegrationWorkspacesUpdated{IntegrationID: i.ID, Workspaces: out, At: now}}
	for _, w := range out {
		events = append(events, i.accessBudgetChanged(w, now)...)
	}
	return events, nil
}

// Archive decides the deletion of an integration. Its providers stay, and are refused by the
// gateway while the integration does not serve them.
func (i *Integration) Archive(now time.Time) ([]Event, error) {
	if !i.Exists() {
		return nil, Errorf(CodeNotFound, "integration not found")
	}
	return []Event{IntegrationArchived{IntegrationID: i.ID, At: now}}, nil
}
