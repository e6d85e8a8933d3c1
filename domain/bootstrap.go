package domain

import "time"

// BootstrapPrefix names the one stream that records the first start: which organisation,
// owner and admin key it planned, and that it finished. A restart that finds it completed
// creates nothing; one that finds it only started finishes the same plan.
const BootstrapPrefix = "bootstrap"

// BootstrapStream is the bootstrap's stream.
const BootstrapStream = BootstrapPrefix + "-causeway"

type Bootstrap struct {
	OrganisationID string `json:"organisation_id"`
	OwnerUserID    string `json:"owner_user_id"`
	AdminKeyID     string `json:"admin_key_id"`
	Completed      bool   `json:"completed"`
}

type BootstrapStarted struct {
	OrganisationID string    `json:"organisation_id"`
	OwnerUserID    string    `json:"owner_user_id"`
	AdminKeyID     string    `json:"admin_key_id"`
	At             time.Time `json:"at"`
}

type BootstrapCompleted struct {
	At time.Time `json:"at"`
}

func (BootstrapStarted) EventType() string   { return "BootstrapStarted" }
func (BootstrapCompleted) EventType() string { return "BootstrapCompleted" }

func bootstrapModule() module {
	return module{prefix: BootstrapPrefix, aggregate: func() Aggregate { return &Bootstrap{} },
		events: []Event{BootstrapStarted{}, BootstrapCompleted{}}}
}

func (b *Bootstrap) Apply(e Event) {
	switch e := e.(type) {
	case BootstrapStarted:
		*b = Bootstrap{OrganisationID: e.OrganisationID, OwnerUserID: e.OwnerUserID, AdminKeyID: e.AdminKeyID}
	case BootstrapCompleted:
		b.Completed = true
	}
}
