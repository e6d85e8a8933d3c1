package domain

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// OrganisationPrefix names organisation streams.
const OrganisationPrefix = "organisation"

// SecuritySettings are the organisation's access settings of 2.8; a workspace may override
// any of them. Owners and admins always have full access whatever they say.
type SecuritySettings struct {
	MembersViewAllData             bool `json:"membersViewAllData"`
	ManagersViewAllData            bool `json:"managersViewAllData"`
	MembersViewAnalytics           bool `json:"membersViewAnalytics"`
	ManagersViewAnalytics          bool `json:"managersViewAnalytics"`
	MembersViewPrompts             bool `json:"membersViewPrompts"`
	MembersWritePrompts            bool `json:"membersWritePrompts"`
	ManagersViewPrompts            bool `json:"managersViewPrompts"`
	ManagersWritePrompts           bool `json:"managersWritePrompts"`
	ManagersWriteWsIntegrations    bool `json:"managersWriteWsIntegrations"`
	ManagersWriteWsMcpIntegrations bool `json:"managersWriteWsMcpIntegrations"`
	ManagersWriteMcpServers        bool `json:"managersWriteMcpServers"`
}

// DefaultSecuritySettings are the specification's defaults.
func DefaultSecuritySettings() SecuritySettings {
	return SecuritySettings{
		MembersViewAllData: true, ManagersViewAllData: true,
		MembersViewAnalytics: true, ManagersViewAnalytics: true,
		MembersViewPrompts: true, MembersWritePrompts: false,
		ManagersViewPrompts: true, ManagersWritePrompts: true,
		ManagersWriteWsIntegrations: true, ManagersWriteWsMcpIntegrations: true, ManagersWriteMcpServers: true,
	}
}

// MinSessionTTL is the least max_session_ttl an organisation may set (900 seconds).
const MinSessionTTL = 900

// Organisation is the tenant: its name, owner and settings.
type Organisation struct {
	ID            string           `json:"id"`
	Name          string           `json:"name"`
	OwnerUserID   string           `json:"owner_user_id"`
	Security      SecuritySettings `json:"security_settings"`
	MaxSessionTTL *int             `json:"max_session_ttl"`
	CreatedAt     time.Time        `json:"created_at"`
	LastUpdatedAt time.Time        `json:"last_updated_at"`
}

type OrganisationCreated struct {
	OrganisationID string    `json:"organisation_id"`
	Name           string    `json:"name"`
	OwnerUserID    string    `json:"owner_user_id"`
	At             time.Time `json:"at"`
}

// OrganisationSettingsUpdated replaces the settings it carries.
type OrganisationSettingsUpdated struct {
	OrganisationID string            `json:"organisation_id"`
	Name           *string           `json:"name,omitempty"`
	Security       *SecuritySettings `json:"security_settings,omitempty"`
	MaxSessionTTL  *int              `json:"max_session_ttl,omitempty"`
	At             time.Time         `json:"at"`
}

func (OrganisationCreated) EventType() string         { return "OrganisationCreated" }
func (OrganisationSettingsUpdated) EventType() string { return "OrganisationSettingsUpdated" }

func organisationModule() module {
	return module{
		prefix:    OrganisationPrefix,
		aggregate: func() Aggregate { return &Organisation{} },
		events:    []Event{OrganisationCreated{}, OrganisationSettingsUpdated{}},
	}
}

func (o *Organisation) Apply(e Event) {
	switch e := e.(type) {
	case OrganisationCreated:
		*o = Organisation{ID: e.OrganisationID, Name: e.Name, OwnerUserID: e.OwnerUserID,
			Security: DefaultSecuritySettings(), CreatedAt: e.At, LastUpdatedAt: e.At}
	case OrganisationSettingsUpdated:
		if e.Name != nil {
			o.Name = *e.Name
		}
		if e.Security != nil {
			o.Security = *e.Security
		}
		if e.MaxSessionTTL != nil {
			o.MaxSessionTTL = e.MaxSessionTTL
		}
		o.LastUpdatedAt = e.At
	}
}

func (o *Organisation) Exists() bool { return o.ID != "" }

// Create decides the creation of an organisation (bootstrap).
func (o *Organisation) Create(id, name, ownerUserID string, now time.Time) ([]Event, error) {
	if o.Exists() {
		return nil, Errorf(CodeConflict, "organisation exists already")
	}
	if err := ValidateName("name", name, true); err != nil {
		return nil, err
	}
	return []Event{OrganisationCreated{OrganisationID: id, Name: name, OwnerUserID: ownerUserID, At: now}}, nil
}

// UpdateSettings changes the name, security settings or session TTL.
func (o *Organisation) UpdateSettings(name *string, sec *SecuritySettings, ttl *int, now time.Time) ([]Event, error) {
	if !o.Exists() {
		return nil, Errorf(CodeNotFound, "organisation not found")
	}
	if name != nil {
		if err := ValidateName("name", *name, true); err != nil {
			return nil, err
		}
	}
	if ttl != nil && *ttl < MinSessionTTL {
		return nil, Invalid("session_settings.max_session_ttl", "session_settings.max_session_ttl must be at least %d seconds (got %d)", MinSessionTTL, *ttl)
	}
	if name == nil && sec == nil && ttl == nil {
		return nil, Invalid("", "nothing to update")
	}
	return []Event{OrganisationSettingsUpdated{OrganisationID: o.ID, Name: name, Security: sec, MaxSessionTTL: ttl, At: now}}, nil
}

// SecurityOverrides are the security settings a workspace sets for itself; a nil field
// inherits the organisation's value.
type SecurityOverrides struct {
	MembersViewAllData             *bool `json:"membersViewAllData,omitempty"`
	ManagersViewAllData            *bool `json:"managersViewAllData,omitempty"`
	MembersViewAnalytics           *bool `json:"membersViewAnalytics,omitempty"`
	ManagersViewAnalytics          *bool `json:"managersViewAnalytics,omitempty"`
	MembersViewPrompts             *bool `json:"membersViewPrompts,omitempty"`
	MembersWritePrompts            *bool `json:"membersWritePrompts,omitempty"`
	ManagersViewPrompts            *bool `json:"managersViewPrompts,omitempty"`
	ManagersWritePrompts           *bool `json:"managersWritePrompts,omitempty"`
	ManagersWriteWsIntegrations    *bool `json:"managersWriteWsIntegrations,omitempty"`
	ManagersWriteWsMcpIntegrations *bool `json:"managersWriteWsMcpIntegrations,omitempty"`
	ManagersWriteMcpServers        *bool `json:"managersWriteMcpServers,omitempty"`
}

// securityField ties a setting's JSON name to its place in the settings and in the overrides.
type securityField struct {
	name     string
	setting  func(*SecuritySettings) *bool
	override func(*SecurityOverrides) **bool
}

func securityFields() []securityField {
	return []securityField{
		{"membersViewAllData", func(s *SecuritySettings) *bool { return &s.MembersViewAllData }, func(o *SecurityOverrides) **bool { return &o.MembersViewAllData }},
		{"managersViewAllData", func(s *SecuritySettings) *bool { return &s.ManagersViewAllData }, func(o *SecurityOverrides) **bool { return &o.ManagersViewAllData }},
		{"membersViewAnalytics", func(s *SecuritySettings) *bool { return &s.MembersViewAnalytics }, func(o *SecurityOverrides) **bool { return &o.MembersViewAnalytics }},
		{"managersViewAnalytics", func(s *SecuritySettings) *bool { return &s.ManagersViewAnalytics }, func(o *SecurityOverrides) **bool { return &o.ManagersViewAnalytics }},
		{"membersViewPrompts", func(s *SecuritySettings) *bool { return &s.MembersViewPrompts }, func(o *SecurityOverrides) **bool { return &o.MembersViewPrompts }},
		{"membersWritePrompts", func(s *SecuritySettings) *bool { return &s.MembersWritePrompts }, func(o *SecurityOverrides) **bool { return &o.MembersWritePrompts }},
		{"managersViewPrompts", func(s *SecuritySettings) *bool { return &s.ManagersViewPrompts }, func(o *SecurityOverrides) **bool { return &o.ManagersViewPrompts }},
		{"managersWritePrompts", func(s *SecuritySettings) *bool { return &s.ManagersWritePrompts }, func(o *SecurityOverrides) **bool { return &o.ManagersWritePrompts }},
		{"managersWriteWsIntegrations", func(s *SecuritySettings) *bool { return &s.ManagersWriteWsIntegrations }, func(o *SecurityOverrides) **bool { return &o.ManagersWriteWsIntegrations }},
		{"managersWriteWsMcpIntegrations", func(s *SecuritySettings) *bool { return &s.ManagersWriteWsMcpIntegrations }, func(o *SecurityOverrides) **bool { return &o.ManagersWriteWsMcpIntegrations }},
		{"managersWriteMcpServers", func(s *SecuritySettings) *bool { return &s.ManagersWriteMcpServers }, func(o *SecurityOverrides) **bool { return &o.ManagersWriteMcpServers }},
	}
}

// SecurityPatch changes some security settings, by name: true or false sets a setting, and
// nil (a JSON null) takes a workspace's override away so that it inherits again.
type SecurityPatch map[string]*bool

// check refuses names that are not settings; param prefixes the field in errors.
func (p SecurityPatch) check(param string) error {
	if len(p) == 0 {
		return Invalid(param, "%s must hold at least one setting", param)
	}
	known := map[string]bool{}
	var names []string
	for _, f := range securityFields() {
		known[f.name] = true
		names = append(names, f.name)
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !known[k] {
			return Invalid(param+"."+k, "%s.%s is not a security setting; the settings are %s", param, k, strings.Join(names, ", "))
		}
	}
	return nil
}

// Over returns base with the overrides applied: the effective settings of a workspace.
func (o SecurityOverrides) Over(base SecuritySettings) SecuritySettings {
	for _, f := range securityFields() {
		if v := *f.override(&o); v != nil {
			*f.setting(&base) = *v
		}
	}
	return base
}

// Patched returns the overrides with patch applied; a nil value removes an override.
func (o SecurityOverrides) Patched(param string, patch SecurityPatch) (SecurityOverrides, error) {
	if err := patch.check(param); err != nil {
		return o, err
	}
	for _, f := range securityFields() {
		if v, given := patch[f.name]; given {
			if v != nil {
				b := *v
				v = &b
			}
			*f.override(&o) = v
		}
	}
	return o, nil
}

// Patched returns the settings with patch applied; an organisation's settings have no parent,
// so every value must be true or false.
func (s SecuritySettings) Patched(param string, patch SecurityPatch) (SecuritySettings, error) {
	if err := patch.check(param); err != nil {
		return s, err
	}
	for _, f := range securityFields() {
		if v, given := patch[f.name]; given {
			if v == nil {
				return s, Invalid(param+"."+f.name, "%s.%s must be true or false", param, f.name)
			}
			*f.setting(&s) = *v
		}
	}
	return s, nil
}

// UpdateSecurity changes some security settings (patch, may be empty) and the session TTL
// (nil: unchanged); the event carries the settings whole.
func (o *Organisation) UpdateSecurity(patch SecurityPatch, ttl *int, now time.Time) ([]Event, error) {
	if !o.Exists() {
		return nil, Errorf(CodeNotFound, "organisation not found")
	}
	if len(patch) == 0 && ttl == nil {
		return nil, Invalid("", "nothing to update: give security_settings or session_settings.max_session_ttl")
	}
	var sec *SecuritySettings
	if len(patch) > 0 {
		s, err := o.Security.Patched("security_settings", patch)
		if err != nil {
			return nil, err
		}
		sec = &s
	}
	return o.UpdateSettings(nil, sec, ttl, now)
}
