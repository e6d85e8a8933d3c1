package domain

import (
	"encoding/json"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ProviderPrefix names the streams of managed providers.
const ProviderPrefix = "provider"

// Provider is a managed provider of a workspace: what a client names with
// `x-gateway-provider: @<slug>` (or, in the legacy spelling, `x-gateway-virtual-key: <slug>`).
// It either refers to an integration, whose credential it uses, or carries a credential of
// its own. Virtual keys are the same aggregate read and written through their legacy paths
// (see virtualkey.go).
type Provider struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	WorkspaceID    string `json:"workspace_id"`
	Slug           string `json:"slug"`
	Name           string `json:"name"`
	Note           string `json:"note"`
	// IntegrationID is the integration whose credential the provider uses; empty when it
	// carries its own.
	IntegrationID string `json:"integration_id,omitempty"`
	// AIProviderID is the provider type (openai, anthropic...): the integration's, copied at
	// creation (an integration's type never changes), or its own.
	AIProviderID   string            `json:"ai_provider_id"`
	Configurations map[string]any    `json:"configurations"`
	Sealed         SealedCredential  `json:"-"`
	Masked         MaskedCredential  `json:"masked"`
	UsageLimits    *UsageLimits      `json:"usage_limits"`
	RateLimits     []RateLimit       `json:"rate_limits"`
	CurrentUsage   float64           `json:"current_usage"`
	LastResetAt    *time.Time        `json:"last_reset_at"`
	ExpiresAt      *time.Time        `json:"expires_at"`
	Tags           map[string]string `json:"tags"`
	Status         string            `json:"status"`
	CreatedBy      string            `json:"created_by,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	LastUpdatedAt  time.Time         `json:"last_updated_at"`
	// The usage alerts sent this period: each is sent once until its alerts are reset.
	ThresholdAlertSent bool `json:"is_threshold_alerts_sent"`
	ExhaustedAlertSent bool `json:"is_exhausted_alerts_sent"`
	// BudgetExhausted: usage reached the credit limit (ProviderBudgetExhausted) and neither a
	// raised limit nor a reset has reactivated the budget since.
	BudgetExhausted bool `json:"budget_exhausted,omitempty"`
	// UsageResets counts the usage resets so far: it names the usage period (UsagePeriod).
	UsageResets int `json:"usage_resets,omitempty"`
}

// Provider status values beyond active and archived, as a reader sees them (StatusAt).
const (
	ProviderExhausted = "exhausted"
	ProviderExpired   = "expired"
)

type ProviderCreated struct {
	ProviderID     string            `json:"provider_id"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    string            `json:"workspace_id"`
	Slug           string            `json:"slug"`
	Name           string            `json:"name"`
	Note           string            `json:"note,omitempty"`
	IntegrationID  string            `json:"integration_id,omitempty"`
	AIProviderID   string            `json:"ai_provider_id"`
	Configurations map[string]any    `json:"configurations,omitempty"`
	Sealed         SealedCredential  `json:"sealed"`
	Masked         MaskedCredential  `json:"masked"`
	UsageLimits    *UsageLimits      `json:"usage_limits,omitempty"`
	RateLimits     []RateLimit       `json:"rate_limits,omitempty"`
	ExpiresAt      *time.Time        `json:"expires_at,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	CreatedBy      string            `json:"created_by,omitempty"`
	At             time.Time         `json:"at"`
}

// ProviderUpdated carries what changed; a field set to null is sent as a Clear flag.
type ProviderUpdated struct {
	ProviderID       string            `json:"provider_id"`
	Name             *string           `json:"name,omitempty"`
	Note             *string           `json:"note,omitempty"`
	Configuration    *ConfigurationSet `json:"configuration,omitempty"`
	UsageLimits      *UsageLimits      `json:"usage_limits,omitempty"`
	ClearUsageLimits bool              `json:"clear_usage_limits,omitempty"`
	RateLimits       []RateLimit       `json:"rate_limits,omitempty"`
	ClearRateLimits  bool              `json:"clear_rate_limits,omitempty"`
	ExpiresAt        *time.Time        `json:"expires_at,omitempty"`
	ClearExpiresAt   bool              `json:"clear_expires_at,omitempty"`
	Tags             map[string]string `json:"tags,omitempty"`
	ClearTags        bool              `json:"clear_tags,omitempty"`
	At               time.Time         `json:"at"`
}

// ProviderUsageReset zeroes the provider's usage and starts a new usage period (reset_usage on
// update, or its periodic reset). A Scheduled reset also moves the next reset to
// NextUsageResetAt (nil: none); a manual one leaves the schedule as it is.
type ProviderUsageReset struct {
	ProviderID       string     `json:"provider_id"`
	Scheduled        bool       `json:"scheduled,omitempty"`
	NextUsageResetAt *time.Time `json:"next_usage_reset_at,omitempty"`
	At               time.Time  `json:"at"`
}

// ProviderUsageThresholdReached: the provider's usage reached its alert threshold; it is
// alerted once until its alerts are reset.
type ProviderUsageThresholdReached struct {
	ProviderID     string    `json:"provider_id"`
	Usage          float64   `json:"usage"`
	AlertThreshold float64   `json:"alert_threshold"`
	At             time.Time `json:"at"`
}

// ProviderBudgetExhausted: the provider's usage reached its credit limit; the gateway refuses
// it until the limit is raised above the usage or its usage is reset.
type ProviderBudgetExhausted struct {
	ProviderID  string    `json:"provider_id"`
	Usage       float64   `json:"usage"`
	CreditLimit float64   `json:"credit_limit"`
	At          time.Time `json:"at"`
}

// ProviderBudgetReactivated: an exhausted provider is active again, its credit limit raised
// above the usage it was exhausted at, or removed (Reason: ReactivatedCreditRaised,
// ReactivatedLimitRemoved).
type ProviderBudgetReactivated struct {
	ProviderID string    `json:"provider_id"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

// ProviderUsageAlertsReset clears the provider's sent alerts, so they are sent again when
// reached (3: a raised credit limit resets both, a raised or removed threshold the threshold
// alert).
type ProviderUsageAlertsReset struct {
	ProviderID string    `json:"provider_id"`
	Threshold  bool      `json:"threshold"`
	Exhausted  bool      `json:"exhausted"`
	At         time.Time `json:"at"`
}

// ProviderArchived is DELETE: the provider stops serving and frees its slug.
type ProviderArchived struct {
	ProviderID string    `json:"provider_id"`
	At         time.Time `json:"at"`
}

func (ProviderCreated) EventType() string    { return "ProviderCreated" }
func (ProviderUpdated) EventType() string    { return "ProviderUpdated" }
func (ProviderUsageReset) EventType() string { return "ProviderUsageReset" }
func (ProviderArchived) EventType() string   { return "ProviderArchived" }
func (ProviderUsageThresholdReached) EventType() string {
	return "ProviderUsageThresholdReached"
}
func (ProviderBudgetExhausted) EventType() string   { return "ProviderBudgetExhausted" }
func (ProviderBudgetReactivated) EventType() string { return "ProviderBudgetReactivated" }
func (ProviderUsageAlertsReset) EventType() string  { return "ProviderUsageAlertsReset" }

func providerModule() module {
	return module{prefix: ProviderPrefix, aggregate: func() Aggregate { return &Provider{} },
		events: []Event{ProviderCreated{}, ProviderUpdated{}, ProviderUsageReset{}, ProviderArchived{},
			ProviderUsageThresholdReached{}, ProviderBudgetExhausted{}, ProviderBudgetReactivated{}, ProviderUsageAlertsReset{}}}
}

func (p *Provider) Apply(e Event) {
	switch e := e.(type) {
	case ProviderCreated:
		*p = Provider{ID: e.ProviderID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Slug: e.Slug,
			Name: e.Name, Note: e.Note, IntegrationID: e.IntegrationID, AIProviderID: e.AIProviderID,
			Configurations: e.Configurations, Sealed: e.Sealed, Masked: e.Masked, UsageLimits: e.UsageLimits,
			RateLimits: e.RateLimits, ExpiresAt: e.ExpiresAt, Tags: e.Tags, Status: StatusActive,
			CreatedBy: e.CreatedBy, CreatedAt: e.At, LastUpdatedAt: e.At}
	case ProviderUpdated:
		if e.Name != nil {
			p.Name = *e.Name
		}
		if e.Note != nil {
			p.Note = *e.Note
		}
		if e.Configuration != nil {
			p.Configurations, p.Sealed, p.Masked = e.Configuration.applyTo(p.Configurations, p.Sealed, p.Masked)
		}
		if e.UsageLimits != nil || e.ClearUsageLimits {
			p.UsageLimits = e.UsageLimits
		}
		if e.RateLimits != nil || e.ClearRateLimits {
			p.RateLimits = e.RateLimits
		}
		if e.ExpiresAt != nil || e.ClearExpiresAt {
			p.ExpiresAt = e.ExpiresAt
		}
		if e.Tags != nil || e.ClearTags {
			p.Tags = e.Tags
		}
		p.LastUpdatedAt = e.At
	case ProviderUsageReset:
		at := e.At
		p.CurrentUsage, p.LastResetAt, p.LastUpdatedAt = 0, &at, e.At
		p.ThresholdAlertSent, p.ExhaustedAlertSent, p.BudgetExhausted = false, false, false
		p.UsageResets++
		if e.Scheduled && p.UsageLimits != nil {
			p.UsageLimits = withNextReset(p.UsageLimits, e.NextUsageResetAt)
		}
	case ProviderArchived:
		p.Status, p.LastUpdatedAt = StatusArchived, e.At
	case ProviderUsageThresholdReached:
		p.CurrentUsage, p.ThresholdAlertSent, p.LastUpdatedAt = e.Usage, true, e.At
	case ProviderBudgetExhausted:
		p.CurrentUsage, p.BudgetExhausted, p.ExhaustedAlertSent, p.LastUpdatedAt = e.Usage, true, true, e.At
	case ProviderBudgetReactivated:
		p.BudgetExhausted, p.LastUpdatedAt = false, e.At
	case ProviderUsageAlertsReset:
		p.ThresholdAlertSent = p.ThresholdAlertSent && !e.Threshold
		p.ExhaustedAlertSent = p.ExhaustedAlertSent && !e.Exhausted
		p.LastUpdatedAt = e.At
	}
}

// Exists reports whether the provider was created and not deleted.
func (p *Provider) Exists() bool { return p.ID != "" && p.Status != StatusArchived }

// StatusAt is the provider's status as a reader at now sees it: expired once expires_at has
// passed, exhausted from its ProviderBudgetExhausted until reactivated or reset, and (as
// before that event existed) whenever its recorded usage is at its credit limit.
func (p *Provider) StatusAt(now time.Time) string {
	switch {
	case p.Status != StatusActive:
		return p.Status
	case p.ExpiresAt != nil && !now.Before(*p.ExpiresAt):
		return ProviderExpired
	case p.BudgetExhausted:
		return ProviderExhausted
	case p.UsageLimits != nil && p.UsageLimits.CreditLimit != nil && p.CurrentUsage >= *p.UsageLimits.CreditLimit:
		return ProviderExhausted
	}
	return StatusActive
}

// CreateProvider is the create command's input, already decoded. Either IntegrationID (with
// the integration's AIProviderID) or a credential of its own is given, not both.
type CreateProvider struct {
	ProviderID     string
	OrganisationID string
	WorkspaceID    string
	Slug           string
	Name           string
	Note           string
	IntegrationID  string
	AIProviderID   string
	Key            *string
	Configurations map[string]any
	UsageLimits    *UsageLimits
	RateLimits     []RateLimit
	ExpiresAt      *time.Time
	Tags           map[string]string
	CreatedBy      string
}

// MaxNoteLength bounds notes and descriptions.
const MaxNoteLength = 1024

// Create decides the creation of a provider. seal encrypts its secrets, bound to this
// provider, before they enter the event.
func (p *Provider) Create(c CreateProvider, seal SealFunc, now time.Time) ([]Event, error) {
	if p.ID != "" {
		return nil, Errorf(CodeConflict, "provider %s exists already", c.ProviderID)
	}
	if err := ValidateName("name", c.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", c.Slug); err != nil {
		return nil, err
	}
	if err := validateNote("note", c.Note); err != nil {
		return nil, err
	}
	if c.IntegrationID != "" && (c.Key != nil || len(c.Configurations) > 0) {
		param := "key"
		if c.Key == nil {
			param = "configurations"
		}
		return nil, Invalid(param, "%s cannot be set on a provider of an integration: it uses the integration's", param)
	}
	if err := ValidateProviderType("ai_provider_id", c.AIProviderID); err != nil {
		return nil, err
	}
	// A provider of an integration uses the integration's configurations, which met the
	// type's requirements when the integration was created.
	set, err := NewConfigurationSet(c.AIProviderID, c.Key, c.Configurations, c.IntegrationID == "", seal)
	if err != nil {
		return nil, err
	}
	usage, err := normaliseKeyUsageLimits(c.UsageLimits, now)
	if err != nil {
		return nil, err
	}
	if err := validateKeyRateLimits(c.RateLimits); err != nil {
		return nil, err
	}
	if c.ExpiresAt != nil && !c.ExpiresAt.After(now) {
		return nil, Invalid("expires_at", "expires_at must be in the future")
	}
	if err := ValidateTags("tags", c.Tags); err != nil {
		return nil, err
	}
	configs, sealed, masked := set.applyTo(nil, SealedCredential{}, MaskedCredential{})
	return []Event{ProviderCreated{ProviderID: c.ProviderID, OrganisationID: c.OrganisationID, WorkspaceID: c.WorkspaceID,
		Slug: c.Slug, Name: c.Name, Note: c.Note, IntegrationID: c.IntegrationID, AIProviderID: c.AIProviderID,
		Configurations: configs, Sealed: sealed, Masked: masked, UsageLimits: usage, RateLimits: c.RateLimits, ExpiresAt: c.ExpiresAt,
		Tags: c.Tags, CreatedBy: c.CreatedBy, At: now}}, nil
}

// UpdateProvider changes a provider; nil fields stay as they are, Clear flags remove.
type UpdateProvider struct {
	Name             *string
	Note             *string
	Key              *string
	Configurations   map[string]any // merged field by field; a nil value removes the field
	UsageLimits      *UsageLimits
	ClearUsageLimits bool
	RateLimits       []RateLimit
	ClearRateLimits  bool
	ExpiresAt        *time.Time
	ClearExpiresAt   bool
	Tags             map[string]string
	ClearTags        bool
	ResetUsage       bool
}

func (c UpdateProvider) empty() bool {
	return c.Name == nil && c.Note == nil && c.Key == nil && c.Configurations == nil && c.UsageLimits == nil &&
		!c.ClearUsageLimits && c.RateLimits == nil && !c.ClearRateLimits && c.ExpiresAt == nil && !c.ClearExpiresAt &&
		c.Tags == nil && !c.ClearTags && !c.ResetUsage
}

// Update decides a change of the provider.
func (p *Provider) Update(c UpdateProvider, seal SealFunc, now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "provider not found")
	}
	if c.empty() {
		return nil, Invalid("", "nothing to update: give name, note, key, configurations, usage_limits, rate_limits, expires_at, tags or reset_usage")
	}
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, true); err != nil {
			return nil, err
		}
	}
	if c.Note != nil {
		if err := validateNote("note", *c.Note); err != nil {
			return nil, err
		}
	}
	e := ProviderUpdated{ProviderID: p.ID, Name: c.Name, Note: c.Note, RateLimits: c.RateLimits,
		ClearRateLimits: c.ClearRateLimits, ExpiresAt: c.ExpiresAt, ClearExpiresAt: c.ClearExpiresAt,
		Tags: c.Tags, ClearTags: c.ClearTags, ClearUsageLimits: c.ClearUsageLimits, At: now}
	if c.Key != nil || c.Configurations != nil {
		if p.IntegrationID != "" {
			param := "key"
			if c.Key == nil {
				param = "configurations"
			}
			return nil, Invalid(param, "%s cannot be set on a provider of an integration: it uses the integration's", param)
		}
		set, err := NewConfigurationSet(p.AIProviderID, c.Key, c.Configurations, false, seal)
		if err != nil {
			return nil, err
		}
		e.Configuration = &set
	}
	if c.UsageLimits != nil {
		usage, err := normaliseKeyUsageLimits(c.UsageLimits, now)
		if err != nil {
			return nil, err
		}
		e.UsageLimits = usage
	}
	if err := validateKeyRateLimits(c.RateLimits); err != nil {
		return nil, err
	}
	if c.ExpiresAt != nil && !c.ExpiresAt.After(now) {
		return nil, Invalid("expires_at", "expires_at must be in the future")
	}
	if err := ValidateTags("tags", c.Tags); err != nil {
		return nil, err
	}
	var out []Event
	if !c.ResetUsage || !e.empty() {
		out = append(out, e)
	}
	if c.ResetUsage {
		// The reset clears the alerts and the exhaustion itself.
		return append(out, ProviderUsageReset{ProviderID: p.ID, At: now}), nil
	}
	return append(out, p.budgetChanged(e)...), nil
}

// budgetChanged decides what an update's usage limits do to the provider's budget (3): a
// raised or removed credit limit resets both alerts, a raised or removed threshold the
// threshold alert, and an exhausted provider is active again once its limit is removed or
// raised above the usage it was exhausted at.
func (p *Provider) budgetChanged(e ProviderUpdated) []Event {
	if e.UsageLimits == nil && !e.ClearUsageLimits {
		return nil
	}
	c := changeBudget(p.UsageLimits, e.UsageLimits, budgetState{thresholdSent: p.ThresholdAlertSent,
		exhaustedSent: p.ExhaustedAlertSent, exhausted: p.BudgetExhausted, usage: p.CurrentUsage})
	var out []Event
	if c.reactivated != "" {
		out = append(out, ProviderBudgetReactivated{ProviderID: p.ID, Reason: c.reactivated, At: e.At})
	}
	if c.resetThreshold || c.resetExhausted {
		out = append(out, ProviderUsageAlertsReset{ProviderID: p.ID, Threshold: c.resetThreshold, Exhausted: c.resetExhausted, At: e.At})
	}
	return out
}

// UsagePeriod names the provider's current usage period: the number of its usage resets so
// far.
func (p *Provider) UsagePeriod() string { return usagePeriod(p.UsageResets) }

// UsageReached decides what usage, as the ledger counted it in period, does to the provider:
// the alert threshold is alerted once per period, and the provider is exhausted at its credit
// limit when it is not already. A report about an earlier period, or about a deleted or
// expired provider, decides nothing.
func (p *Provider) UsageReached(period string, usage float64, now time.Time) ([]Event, error) {
	if err := validateUsage(usage); err != nil {
		return nil, err
	}
	if !p.Exists() || p.StatusAt(now) == ProviderExpired || period != p.UsagePeriod() {
		return nil, nil
	}
	threshold, exhaust := budgetAlertsDue(p.UsageLimits, p.ThresholdAlertSent, p.BudgetExhausted, usage)
	var events []Event
	if threshold {
		events = append(events, ProviderUsageThresholdReached{ProviderID: p.ID, Usage: usage,
			AlertThreshold: *p.UsageLimits.AlertThreshold, At: now})
	}
	if exhaust {
		events = append(events, ProviderBudgetExhausted{ProviderID: p.ID, Usage: usage, CreditLimit: *p.UsageLimits.CreditLimit, At: now})
	}
	return events, nil
}

// UsageResetDue reports whether the provider's periodic usage reset has come at now.
func (p *Provider) UsageResetDue(now time.Time) bool {
	due, _ := scheduledReset(p.UsageLimits, now)
	return p.Exists() && due
}

// ResetUsageIfDue decides the provider's periodic usage reset once its next_usage_reset_at has
// passed: a new period starts from zero, an exhausted provider is active again, and the next
// reset is a period later (periods missed are skipped). Before then, or without a schedule,
// it decides nothing, so a worker that repeats itself resets once.
func (p *Provider) ResetUsageIfDue(now time.Time) ([]Event, error) {
	due, next := scheduledReset(p.UsageLimits, now)
	if !p.Exists() || !due {
		return nil, nil
	}
	return []Event{ProviderUsageReset{ProviderID: p.ID, Scheduled: true, NextUsageResetAt: next, At: now}}, nil
}

func (e ProviderUpdated) empty() bool {
	return e.Name == nil && e.Note == nil && e.Configuration == nil && e.UsageLimits == nil && !e.ClearUsageLimits &&
		e.RateLimits == nil && !e.ClearRateLimits && e.ExpiresAt == nil && !e.ClearExpiresAt && e.Tags == nil && !e.ClearTags
}

// Archive decides the deletion of a provider.
func (p *Provider) Archive(now time.Time) ([]Event, error) {
	if !p.Exists() {
		return nil, Errorf(CodeNotFound, "provider not found")
	}
	return []Event{ProviderArchived{ProviderID: p.ID, At: now}}, nil
}

// Provider types: the adapters a provider, integration or config may name (ai_provider_id,
// a virtual key's provider, a config's provider).
var providerTypes = []string{
	"ai21", "anthropic", "anyscale", "azure-ai", "azure-openai", "bedrock", "cerebras", "cohere", "deepinfra",
	"deepseek", "fireworks-ai", "google", "groq", "hugging-face", "jina", "lingyi", "mistral-ai", "monsterapi",
	"moonshot", "nomic", "novita-ai", "ollama", "openai", "openrouter", "palm", "perplexity-ai", "predibase",
	"reka-ai", "sagemaker", "segmind", "stability-ai", "together-ai", "vertex-ai", "vllm", "workers-ai", "x-ai",
	"zhipu",
}

// ProviderTypes lists the known provider types, sorted.
func ProviderTypes() []string { return slices.Clone(providerTypes) }

// IsProviderType reports whether t is a known provider type.
func IsProviderType(t string) bool { return slices.Contains(providerTypes, t) }

// ValidateProviderType checks a provider type field.
func ValidateProviderType(param, t string) error {
	if t == "" {
		return Invalid(param, "%s is required", param)
	}
	if !IsProviderType(t) {
		return Invalid(param, "%s must be a known provider type such as openai, azure-openai, anthropic, google, bedrock, cohere or groq (got %q)", param, truncate(t, 64))
	}
	return nil
}

func validateNote(param, v string) error {
	if n := utf8.RuneCountInString(v); n > MaxNoteLength {
		return Invalid(param, "%s must be at most %d characters (got %d)", param, MaxNoteLength, n)
	}
	return nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// MaxTags bounds the tags of an integration or provider: key-value labels, filterable in lists
// as ?tags=key:value[,key:value], so keys hold neither ':' nor ',' and values hold no ','.
const MaxTags = 50

// ValidateTags checks tags: at most 50, keys of 1 to 255 characters, values of at most 255.
func ValidateTags(param string, tags map[string]string) error {
	if len(tags) > MaxTags {
		return Invalid(param, "%s must hold at most %d tags (got %d)", param, MaxTags, len(tags))
	}
	for _, k := range sortedKeys(tags) {
		p := param + "." + truncate(k, 64)
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, ":,") || hasControl(k) {
			return Invalid(param, "%s keys must be non-empty and hold no ':', ',' or control characters", param)
		}
		if n := utf8.RuneCountInString(k); n > MaxNameLength {
			return Invalid(param, "%s keys must be at most %d characters (got %d)", param, MaxNameLength, n)
		}
		v := tags[k]
		if strings.Contains(v, ",") || hasControl(v) {
			return Invalid(p, "%s must hold no ',' or control characters", p)
		}
		if n := utf8.RuneCountInString(v); n > MaxNameLength {
			return Invalid(p, "%s must be at most %d characters (got %d)", p, MaxNameLength, n)
		}
	}
	return nil
}

// TagsMatch reports whether tags hold every key and value of want.
func TagsMatch(tags, want map[string]string) bool {
	for k, v := range want {
		if have, ok := tags[k]; !ok || have != v {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// SealFunc encrypts one secret of the resource being decided on; field names the secret
// ("key", "configurations.aws_secret_access_key"), and the ciphertext is bound to the resource
// and the field (CredentialAAD), so it cannot be moved to another. The command layer provides
// it; the domain never sees a key-encryption key.
type SealFunc func(plaintext []byte, field string) (string, error)

// CredentialAAD is the additional authenticated data of a sealed secret: the resource's stream
// and the secret's field. The gateway opens a secret with the same.
func CredentialAAD(stream, field string) string { return stream + "#" + field }

// SealedCredential is a resource's secrets as they are stored: each sealed on its own (the
// key, and each secret configuration field, SecretConfigurationFields, whose plaintext is the
// field's JSON value). Events carry it; aggregates keep it out of their JSON, so that neither
// an answer, a read model document nor an audit view ever holds even the ciphertext. The
// gateway reads it from its in-memory routing tables and opens it there.
type SealedCredential struct {
	Key     string            `json:"key,omitempty"`
	Secrets map[string]string `json:"secrets,omitempty"`
}

// MaskedCredential is what may be shown of a resource's secrets: the last four characters of
// each.
type MaskedCredential struct {
	Key     string            `json:"masked_key,omitempty"`
	Secrets map[string]string `json:"masked_secrets,omitempty"`
}

// HasKey reports whether a provider API key is stored.
func (m MaskedCredential) HasKey() bool { return m.Key != "" }

// MaskSecret shows a secret as its last four characters; short secrets show nothing of
// themselves.
func MaskSecret(s string) string {
	r := []rune(s)
	if len(r) < 12 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

// MaxSecretLength bounds a provider API key.
const MaxSecretLength = 8192

// ValidateSecret checks a provider API key: not blank, at most 8192 characters, and nothing
// that cannot travel in a header.
func ValidateSecret(param, v string) error {
	if strings.TrimSpace(v) == "" {
		return Invalid(param, "%s must not be empty", param)
	}
	if n := utf8.RuneCountInString(v); n > MaxSecretLength {
		return Invalid(param, "%s must be at most %d characters (got %d)", param, MaxSecretLength, n)
	}
	if hasControl(v) {
		return Invalid(param, "%s must not hold control characters such as line breaks", param)
	}
	return nil
}

// Configuration fields: provider-specific settings of an integration or provider, by the
// reference's names. The secret ones are sealed like the key and shown masked (masked_<field>).
var secretConfigurationFields = []string{
	"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "azure_entra_client_secret",
	"custom_headers", "vertex_service_account_json",
}

// SecretConfigurationFields lists the configuration fields that are sealed.
func SecretConfigurationFields() []string { return slices.Clone(secretConfigurationFields) }

// IsSecretConfigurationField reports whether a configuration field is sealed.
func IsSecretConfigurationField(f string) bool { return slices.Contains(secretConfigurationFields, f) }

// URLConfigurationFields are the configuration fields that hold a base URL the gateway will
// call: custom_host (the reference's name) and base_url. The command layer checks their hosts.
var URLConfigurationFields = []string{"base_url", "custom_host"}

var (
	configurationFieldPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	configurationEnums        = map[string][]string{
		"azure_auth_mode":  {"default", "entra", "managed"},
		"aws_auth_type":    {"accessKey", "assumedRole"},
		"vertex_auth_type": {"basic", "serviceAccount"},
	}
	// configurationObjects may hold a JSON object or array; every other field is a string,
	// number or boolean.
	configurationObjects = []string{"azure_deployment_config", "custom_headers", "vertex_service_account_json"}
	// requiredConfiguration is what a provider type cannot be called without.
	requiredConfiguration = map[string][]string{
		"azure-openai": {"azure_resource_name"},
		"bedrock":      {"aws_region"},
		"vertex-ai":    {"vertex_region"},
	}
)

const (
	maxConfigurationFields = 50
	maxConfigurationString = 4096
	maxConfigurationBytes  = 64 << 10
)

// ConfigurationSet is a change of configurations and credential, already sealed: fields set,
// fields removed, and a new key. It is what events carry.
type ConfigurationSet struct {
	Set           map[string]any    `json:"set,omitempty"`
	SealedKey     string            `json:"sealed_key,omitempty"`
	MaskedKey     string            `json:"masked_key,omitempty"`
	SealedSecrets map[string]string `json:"sealed_secrets,omitempty"`
	MaskedSecrets map[string]string `json:"masked_secrets,omitempty"`
	Removed       []string          `json:"removed,omitempty"`
}

// NewConfigurationSet validates a key and configuration fields for a provider type and seals
// the secrets, for a resource being created or changed; on a change a nil value in fields
// removes that field.
func NewConfigurationSet(providerType string, key *string, fields map[string]any, creating bool, seal SealFunc) (ConfigurationSet, error) {
	var set ConfigurationSet
	if key != nil {
		if err := ValidateSecret("key", *key); err != nil {
			return set, err
		}
	}
	if err := validateConfigurations(fields); err != nil {
		return set, err
	}
	if creating {
		for _, f := range requiredConfiguration[providerType] {
			if v, ok := fields[f]; !ok || v == nil {
				p := "configurations." + f
				return set, Invalid(p, "%s is required for %s", p, providerType)
			}
		}
	} else {
		for _, f := range requiredConfiguration[providerType] {
			if v, ok := fields[f]; ok && v == nil {
				p := "configurations." + f
				return set, Invalid(p, "%s is required for %s and cannot be removed", p, providerType)
			}
		}
	}
	if key != nil {
		sealed, err := seal([]byte(*key), "key")
		if err != nil {
			return set, err
		}
		set.SealedKey, set.MaskedKey = sealed, MaskSecret(*key)
	}
	for _, f := range sortedKeys(fields) {
		v := fields[f]
		switch {
		case v == nil:
			set.Removed = append(set.Removed, f)
		case IsSecretConfigurationField(f):
			raw, err := json.Marshal(v)
			if err != nil {
				return set, Invalid("configurations."+f, "configurations.%s is not valid JSON", f)
			}
			sealed, err := seal(raw, "configurations."+f)
			if err != nil {
				return set, err
			}
			if set.SealedSecrets == nil {
				set.SealedSecrets, set.MaskedSecrets = map[string]string{}, map[string]string{}
			}
			masked := "****"
			if s, ok := v.(string); ok {
				masked = MaskSecret(s)
			}
			set.SealedSecrets[f], set.MaskedSecrets[f] = sealed, masked
		default:
			if set.Set == nil {
				set.Set = map[string]any{}
			}
			set.Set[f] = v
		}
	}
	return set, nil
}

// applyTo returns the configurations and credential after the change, copies of the ones
// given (copy on write: read models hand out copies that share the maps).
func (s ConfigurationSet) applyTo(configs map[string]any, sealed SealedCredential, masked MaskedCredential) (map[string]any, SealedCredential, MaskedCredential) {
	configs = maps.Clone(configs)
	sealed.Secrets, masked.Secrets = maps.Clone(sealed.Secrets), maps.Clone(masked.Secrets)
	if s.SealedKey != "" {
		sealed.Key, masked.Key = s.SealedKey, s.MaskedKey
	}
	for _, f := range s.Removed {
		delete(configs, f)
		delete(sealed.Secrets, f)
		delete(masked.Secrets, f)
	}
	for f, v := range s.Set {
		if configs == nil {
			configs = map[string]any{}
		}
		configs[f] = v
	}
	for f, v := range s.SealedSecrets {
		if sealed.Secrets == nil {
			sealed.Secrets, masked.Secrets = map[string]string{}, map[string]string{}
		}
		sealed.Secrets[f], masked.Secrets[f] = v, s.MaskedSecrets[f]
	}
	return configs, sealed, masked
}

// validateConfigurations checks configuration fields: at most 50 known-shaped fields of
// bounded size; enumerations and base URLs by their rules. A nil value (a removal) is fine.
func validateConfigurations(fields map[string]any) error {
	if len(fields) > maxConfigurationFields {
		return Invalid("configurations", "configurations must hold at most %d fields (got %d)", maxConfigurationFields, len(fields))
	}
	if raw, err := json.Marshal(fields); err != nil || len(raw) > maxConfigurationBytes {
		return Invalid("configurations", "configurations must be a JSON object of at most %d bytes", maxConfigurationBytes)
	}
	for _, f := range sortedKeys(fields) {
		v := fields[f]
		if !configurationFieldPattern.MatchString(f) {
			return Invalid("configurations", "configurations field names must be 1 to 64 lower-case letters, digits and '_', starting with a letter (got %q)", truncate(f, 64))
		}
		p := "configurations." + f
		if v == nil {
			continue
		}
		switch v := v.(type) {
		case string:
			if n := utf8.RuneCountInString(v); n > maxConfigurationString {
				return Invalid(p, "%s must be at most %d characters (got %d)", p, maxConfigurationString, n)
			}
			if hasControl(v) {
				return Invalid(p, "%s must not hold control characters", p)
			}
			if allowed, ok := configurationEnums[f]; ok && !slices.Contains(allowed, v) {
				return Invalid(p, "%s must be %s (got %q)", p, strings.Join(allowed, ", "), truncate(v, 64))
			}
			if slices.Contains(URLConfigurationFields, f) {
				if err := ValidateBaseURL(p, v); err != nil {
					return err
				}
			}
		case bool, float64, json.Number:
			if _, ok := configurationEnums[f]; ok || slices.Contains(URLConfigurationFields, f) {
				return Invalid(p, "%s must be a string", p)
			}
		case map[string]any, []any:
			if !slices.Contains(configurationObjects, f) {
				return Invalid(p, "%s must be a string, number or boolean", p)
			}
			if f == "custom_headers" {
				headers, ok := v.(map[string]any)
				if !ok {
					return Invalid(p, "%s must be an object of header names to string values", p)
				}
				for _, name := range sortedKeys(headers) {
					s, ok := headers[name].(string)
					if !ValidHeaderName(name) || !ok || hasControl(s) {
						return Invalid(p, "%s must be an object of header names to string values without control characters", p)
					}
				}
			}
		default:
			return Invalid(p, "%s has an unsupported type %T", p, v)
		}
	}
	return nil
}

// ValidateBaseURL checks the form of a base URL an admin sets (custom_host): http or https,
// a host, no user information, query or fragment. Where it points is checked by the command
// layer's host check, and again by the gateway at dial time.
func ValidateBaseURL(param, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return Invalid(param, "%s must be an http or https URL with a host", param)
	}
	if u.User != nil {
		return Invalid(param, "%s must not carry user information", param)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Invalid(param, "%s must not carry a query or fragment", param)
	}
	if n := len(raw); n > 2048 {
		return Invalid(param, "%s must be at most 2048 characters (got %d)", param, n)
	}
	return nil
}

// ValidHeaderName reports whether s is an HTTP header name (an RFC 9110 token).
func ValidHeaderName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
