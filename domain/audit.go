package domain

import "time"

// AuditStream holds what the audit log records that changes no state: refused attempts.
const AuditStream = "audit-denials"

// AccessDenied records a request refused for missing or unknown credentials (401) or too few
// rights (403). Resource names what was attempted, never the credential.
type AccessDenied struct {
	Status       int       `json:"status"`
	Reason       string    `json:"reason"`
	Method       string    `json:"method"`
	Path         string    `json:"path"`
	ResourceType string    `json:"resource_type,omitempty"`
	At           time.Time `json:"at"`
}

func (AccessDenied) EventType() string { return "AccessDenied" }
