package projections

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// auditResource is one resource type of the audit log: the name the admin API answers and
// filters by (snake case, as notifications and the specification spell api_key), the stream
// prefix of its aggregates ("" for names only refusals carry, such as log), and the other
// spellings clients use for it, the stream prefix and the route's path among them.
type auditResource struct {
	name    string
	prefix  string
	history bool // each stream is a resource with a history of its own
	aliases []string
}

// auditResources lists every resource type an audit record can name. A record stores what its
// event said (the stream prefix, or a refused route's resource name); reads answer the name.
// A new admin route's resource name belongs here, or its refusals cannot be filtered by type.
var auditResources = []auditResource{
	{name: "organisation", prefix: domain.OrganisationPrefix, history: true, aliases: []string{"organisations", "organization", "organizations"}},
	{name: "workspace", prefix: domain.WorkspacePrefix, history: true, aliases: []string{"workspaces"}},
	{name: "workspace_member", aliases: []string{"workspace_members", "workspace-members"}},
	{name: "user", prefix: domain.UserPrefix, history: true, aliases: []string{"users"}},
	{name: "invite", prefix: domain.InvitePrefix, history: true, aliases: []string{"invites", "user_invite", "user_invites"}},
	{name: "api_key", prefix: domain.APIKeyPrefix, history: true, aliases: []string{"api_keys", "api-keys", "api-key"}},
	{name: "rate_limit_policy", prefix: domain.RateLimitPolicyPrefix, history: true,
		aliases: []string{"rate_limit_policies", "rate-limits", "rate_limits", "rate_limits_policy"}},
	{name: "usage_limit_policy", prefix: domain.UsageLimitPolicyPrefix, history: true,
		aliases: []string{"usage_limit_policies", "usage-limits", "usage_limits", "usage_limits_policy"}},
	{name: "notification", prefix: domain.NotificationPrefix, history: true, aliases: []string{"notifications"}},
	{name: "webhook", prefix: domain.WebhookPrefix, history: true, aliases: []string{"webhooks"}},
	{name: "integration", prefix: domain.IntegrationPrefix, history: true, aliases: []string{"integrations"}},
	// Virtual keys are the legacy name of managed providers: one resource, two routes.
	{name: "provider", prefix: domain.ProviderPrefix, history: true,
		aliases: []string{"providers", "virtual_key", "virtual_keys", "virtual-keys", "virtualkey"}},
	{name: "config", prefix: domain.SavedConfigPrefix, history: true, aliases: []string{"configs"}},
	{name: "config_default", prefix: domain.ConfigDefaultPrefix},
	{name: "guardrail", prefix: domain.GuardrailPrefix, history: true, aliases: []string{"guardrails"}},
	{name: "prompt", prefix: domain.PromptPrefix, history: true, aliases: []string{"prompts"}},
	{name: "prompt_partial", prefix: domain.PromptPartialPrefix, history: true,
		aliases: []string{"prompt_partials", "prompt-partials", "partial", "partials"}},
	{name: "prompt_label", prefix: domain.PromptLabelPrefix, history: true, aliases: []string{"prompt_labels", "label", "labels"}},
	{name: "prompt_collection", prefix: domain.PromptCollectionPrefix, history: true,
		aliases: []string{"prompt_collections", "collection", "collections"}},
	{name: "model_pricing", prefix: domain.ModelPricingPrefix, history: true,
		aliases: []string{"model_pricing_override", "model_pricing_overrides", "model-pricing"}},
	{name: "log_export", prefix: domain.LogExportPrefix, history: true, aliases: []string{"log_exports", "log-exports"}},
	{name: "reservation", prefix: domain.ReservationPrefix, aliases: []string{"reservations"}},
	{name: "bootstrap", prefix: domain.BootstrapPrefix},
	{name: "log", aliases: []string{"logs"}},
	{name: "analytics"},
	{name: "audit_log", aliases: []string{"audit_logs", "audit-logs"}},
}

// auditSpellings maps every spelling, lower case, to its resource.
var auditSpellings = func() map[string]*auditResource {
	out := map[string]*auditResource{}
	for i := range auditResources {
		r := &auditResources[i]
		for _, s := range append([]string{r.name, r.prefix}, r.aliases...) {
			if s != "" {
				out[s] = r
			}
		}
	}
	return out
}()

// AuditResourceTypes lists the resource type names the audit log answers, sorted.
func AuditResourceTypes() []string {
	out := make([]string, 0, len(auditResources))
	for _, r := range auditResources {
		out = append(out, r.name)
	}
	sort.Strings(out)
	return out
}

// AuditResourceType is the name of the resource type spelled s (any case; its name, stream
// prefix or an alias), and false when no resource type is spelled so.
func AuditResourceType(s string) (string, bool) {
	r, ok := auditSpellings[strings.ToLower(strings.TrimSpace(s))]
	if !ok {
		return "", false
	}
	return r.name, true
}

// HistoryResourceTypes lists the resource types whose resources have a history, sorted.
func HistoryResourceTypes() []string {
	var out []string
	for _, r := range auditResources {
		if r.history {
			out = append(out, r.name)
		}
	}
	sort.Strings(out)
	return out
}

// HistoryStreamPrefix is the stream prefix of the resources of type s (any spelling), and
// false when s names no resource type with a history of its own.
func HistoryStreamPrefix(s string) (string, bool) {
	r, ok := auditSpellings[strings.ToLower(strings.TrimSpace(s))]
	if !ok || !r.history {
		return "", false
	}
	return r.prefix, true
}

// AnsweredResourceType is how a record's stored resource type is answered: its name, or the
// stored text when no resource type is spelled so.
func AnsweredResourceType(stored string) string {
	if name, ok := AuditResourceType(stored); ok {
		return name
	}
	return stored
}

// StoredSpellings is every spelling, lower case, that a record of the type the filter names
// may have stored.
func StoredSpellings(filter string) []string {
	r, ok := auditSpellings[strings.ToLower(strings.TrimSpace(filter))]
	if !ok {
		return []string{strings.ToLower(filter)}
	}
	out := []string{r.name}
	if r.prefix != "" {
		out = append(out, r.prefix)
	}
	return append(out, r.aliases...)
}

// AuditRecord is one entry of the audit log: one event, who caused it and from where, and the
// state of the resource before and after it.
type AuditRecord struct {
	ID             string            `json:"id"`
	Position       uint64            `json:"position"`
	Timestamp      time.Time         `json:"timestamp"`
	Action         string            `json:"action"`
	ResourceType   string            `json:"resource_type"`
	ResourceID     string            `json:"resource_id"`
	ActorID        string            `json:"user_id"`
	ActorType      string            `json:"user_type"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    string            `json:"workspace_id,omitempty"`
	RequestID      string            `json:"request_id,omitempty"`
	ClientIP       string            `json:"client_ip,omitempty"`
	UserAgent      string            `json:"user_agent,omitempty"`
	Method         string            `json:"method,omitempty"`
	URI            string            `json:"uri,omitempty"`
	StatusCode     int               `json:"response_status_code"`
	Details        map[string]string `json:"details,omitempty"`
	Before         json.RawMessage   `json:"before"`
	After          json.RawMessage   `json:"after"`
}

// AuditFilter selects audit records; zero fields select everything. ResourceType may be any
// spelling of a type (AuditResourceType).
type AuditFilter struct {
	OrganisationID string
	From, To       time.Time
	ActorID        string
	ActorType      string
	WorkspaceID    string
	ResourceType   string
	ResourceID     string
	Action         string
	Method         string
	StatusCode     int
	RequestID      string
	ClientIP       string
	// NewestFirst orders the records by descending position; they are in the order they
	// happened otherwise. Positions are unique, so pages never overlap in either order.
	NewestFirst bool
}

// Keep is whether f selects r; f.ResourceType must be a name (AnsweredResourceType).
func (f AuditFilter) Keep(r *AuditRecord) bool {
	eq := func(want, have string) bool { return want == "" || strings.EqualFold(want, have) }
	// A refusal of an unknown key cannot be tied to an organisation; every organisation's
	// admins see those.
	org := r.OrganisationID == f.OrganisationID || (r.OrganisationID == "" && r.StatusCode >= 400)
	return org &&
		(f.From.IsZero() || !r.Timestamp.Before(f.From)) && (f.To.IsZero() || !r.Timestamp.After(f.To)) &&
		eq(f.ActorID, r.ActorID) && eq(f.ActorType, r.ActorType) && eq(f.WorkspaceID, r.WorkspaceID) &&
		(f.ResourceType == "" || strings.EqualFold(f.ResourceType, AnsweredResourceType(r.ResourceType))) &&
		eq(f.ResourceID, r.ResourceID) && eq(f.Action, r.Action) &&
		eq(f.Method, r.Method) && (f.StatusCode == 0 || f.StatusCode == r.StatusCode) &&
		eq(f.RequestID, r.RequestID) && eq(f.ClientIP, r.ClientIP)
}
