package domain

import "time"

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
