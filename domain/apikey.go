package domain

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// APIKeyPrefix names API key streams.
const APIKeyPrefix = "apikey"

// Key status values (3).
const (
	KeyActive    = "active"
	KeyExhausted = "exhausted"
	KeyExpired   = "expired"
	KeyDeleted   = "deleted"
)

// MinKeyTransition is the least time both keys stay valid after a rotation: 30 minutes.
const MinKeyTransition = 30 * time.Minute

// KeyNoticePeriod is how long before a key's expiry or scheduled rotation its owners are
// warned.
const KeyNoticePeriod = 24 * time.Hour

// RotationPolicy rotates a key on a schedule.
type RotationPolicy struct {
	RotationPeriod        *string    `json:"rotation_period"` // weekly or monthly
	NextRotationAt        *time.Time `json:"next_rotation_at"`
	KeyTransitionPeriodMS *int64     `json:"key_transition_period_ms"`
}

// KeyDefaults are applied to the gateway requests a key makes.
type KeyDefaults struct {
	Metadata            map[string]any `json:"metadata,omitempty"`
	ConfigID            *string        `json:"config_id,omitempty"`
	AllowConfigOverride *bool          `json:"allow_config_override,omitempty"`
}

// APIKey is a client credential. Only the SHA-256 of the key is kept; the plaintext is shown
// once, in the answer to create or rotate.
type APIKey struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	Type           string       `json:"type"`
	OrganisationID string       `json:"organisation_id"`
	WorkspaceID    string       `json:"workspace_id,omitempty"`
	UserID         string       `json:"user_id,omitempty"`
	Scopes         []string     `json:"scopes"`
	RateLimits     []RateLimit  `json:"rate_limits"`
	UsageLimits    *UsageLimits `json:"usage_limits"`
	CurrentUsage   float64      `json:"current_usage"`
	// The usage alerts sent this period: each is sent once until its alerts are reset.
	ThresholdAlertSent bool            `json:"is_threshold_alerts_sent"`
	ExhaustedAlertSent bool            `json:"is_exhausted_alerts_sent"`
	Defaults           *KeyDefaults    `json:"defaults"`
	AlertEmails        []string        `json:"alert_emails"`
	ExpiresAt          *time.Time      `json:"expires_at"`
	RotationPolicy     *RotationPolicy `json:"rotation_policy"`
	Status             string          `json:"status"`
	Masked             string          `json:"key"` // prefix and last four characters
	CreatedBy          string          `json:"created_by,omitempty"`
	LastResetAt        *time.Time      `json:"last_reset_at"`
	CreatedAt          time.Time       `json:"created_at"`
	LastUpdatedAt      time.Time       `json:"last_updated_at"`
	// UsageResets counts the usage resets so far: it names the usage period (UsagePeriod).
	UsageResets int `json:"usage_resets,omitempty"`

	// The hashes never leave the process in an answer or an audit view.
	Hash               string     `json:"-"`
	PreviousHash       string     `json:"-"`
	PreviousValidUntil *time.Time `json:"-"`
}

type APIKeyCreated struct {
	KeyID          string          `json:"key_id"`
	Name           string          `json:"name"`
	Type           string          `json:"type"`
	OrganisationID string          `json:"organisation_id"`
	WorkspaceID    string          `json:"workspace_id,omitempty"`
	UserID         string          `json:"user_id,omitempty"`
	Scopes         []string        `json:"scopes"`
	RateLimits     []RateLimit     `json:"rate_limits,omitempty"`
	UsageLimits    *UsageLimits    `json:"usage_limits,omitempty"`
	Defaults       *KeyDefaults    `json:"defaults,omitempty"`
	AlertEmails    []string        `json:"alert_emails,omitempty"`
	ExpiresAt      *time.Time      `json:"expires_at,omitempty"`
	RotationPolicy *RotationPolicy `json:"rotation_policy,omitempty"`
	Hash           string          `json:"hash"`
	Masked         string          `json:"masked"`
	CreatedBy      string          `json:"created_by,omitempty"`
	At             time.Time       `json:"at"`
}

// APIKeyUpdated carries the fields that changed; a field set to null is sent as a Clear flag.
type APIKeyUpdated struct {
	KeyID               string          `json:"key_id"`
	Name                *string         `json:"name,omitempty"`
	Scopes              []string        `json:"scopes,omitempty"`
	RateLimits          []RateLimit     `json:"rate_limits,omitempty"`
	ClearRateLimits     bool            `json:"clear_rate_limits,omitempty"`
	UsageLimits         *UsageLimits    `json:"usage_limits,omitempty"`
	ClearUsageLimits    bool            `json:"clear_usage_limits,omitempty"`
	Defaults            *KeyDefaults    `json:"defaults,omitempty"`
	ClearDefaults       bool            `json:"clear_defaults,omitempty"`
	AlertEmails         []string        `json:"alert_emails,omitempty"`
	ClearAlertEmails    bool            `json:"clear_alert_emails,omitempty"`
	ExpiresAt           *time.Time      `json:"expires_at,omitempty"`
	ClearExpiresAt      bool            `json:"clear_expires_at,omitempty"`
	RotationPolicy      *RotationPolicy `json:"rotation_policy,omitempty"`
	ClearRotationPolicy bool            `json:"clear_rotation_policy,omitempty"`
	At                  time.Time       `json:"at"`
}

// APIKeyRotated replaces the key; the old one stays valid until PreviousValidUntil.
type APIKeyRotated struct {
	KeyID              string     `json:"key_id"`
	Hash               string     `json:"hash"`
	Masked             string     `json:"masked"`
	PreviousValidUntil time.Time  `json:"previous_valid_until"`
	NextRotationAt     *time.Time `json:"next_rotation_at,omitempty"`
	Scheduled          bool       `json:"scheduled"`
	At                 time.Time  `json:"at"`
}

type APIKeyExpired struct {
	KeyID string    `json:"key_id"`
	At    time.Time `json:"at"`
}

type APIKeyDeleted struct {
	KeyID string    `json:"key_id"`
	At    time.Time `json:"at"`
}

// APIKeyUsageReset zeroes the key's usage and starts a new usage period (manually, or at its
// periodic reset). A Scheduled reset also moves the next reset to NextUsageResetAt (nil: none);
// a manual one leaves the schedule as it is.
type APIKeyUsageReset struct {
	KeyID            string     `json:"key_id"`
	Scheduled        bool       `json:"scheduled,omitempty"`
	NextUsageResetAt *time.Time `json:"next_usage_reset_at,omitempty"`
	At               time.Time  `json:"at"`
}

// APIKeyExhausted: the key's usage reached its credit limit; the gateway refuses it until the
// limit is raised or its usage is reset. CreditLimit is the limit it reached (zero in events
// recorded before the field existed).
type APIKeyExhausted struct {
	KeyID       string    `json:"key_id"`
	Usage       float64   `json:"usage"`
	CreditLimit float64   `json:"credit_limit,omitempty"`
	At          time.Time `json:"at"`
}

// APIKeyUsageThresholdReached: the key's usage reached its alert threshold; it is alerted
// once until its alerts are reset.
type APIKeyUsageThresholdReached struct {
	KeyID          string    `json:"key_id"`
	Usage          float64   `json:"usage"`
	AlertThreshold float64   `json:"alert_threshold"`
	At             time.Time `json:"at"`
}

// APIKeyUsageAlertsReset clears the key's sent alerts, so they are sent again when reached
// (3: a raised credit limit resets both, a raised or removed threshold the threshold alert).
type APIKeyUsageAlertsReset struct {
	KeyID     string    `json:"key_id"`
	Threshold bool      `json:"threshold"`
	Exhausted bool      `json:"exhausted"`
	At        time.Time `json:"at"`
}

func (APIKeyCreated) EventType() string    { return "ApiKeyCreated" }
func (APIKeyUpdated) EventType() string    { return "ApiKeyUpdated" }
func (APIKeyRotated) EventType() string    { return "ApiKeyRotated" }
func (APIKeyExpired) EventType() string    { return "ApiKeyExpired" }
func (APIKeyDeleted) EventType() string    { return "ApiKeyDeleted" }
func (APIKeyUsageReset) EventType() string { return "ApiKeyUsageReset" }
func (APIKeyExhausted) EventType() string  { return "ApiKeyExhausted" }
func (APIKeyUsageThresholdReached) EventType() string {
	return "ApiKeyUsageThresholdReached"
}
func (APIKeyUsageAlertsReset) EventType() string { return "ApiKeyUsageAlertsReset" }

func apiKeyModule() module {
	return module{
		prefix:    APIKeyPrefix,
		aggregate: func() Aggregate { return &APIKey{} },
		events: []Event{APIKeyCreated{}, APIKeyUpdated{}, APIKeyRotated{}, APIKeyExpired{}, APIKeyDeleted{},
			APIKeyUsageReset{}, APIKeyExhausted{}, APIKeyUsageThresholdReached{}, APIKeyUsageAlertsReset{}},
	}
}

func (k *APIKey) Apply(e Event) {
	switch e := e.(type) {
	case APIKeyCreated:
		*k = APIKey{ID: e.KeyID, Name: e.Name, Type: e.Type, OrganisationID: e.OrganisationID,
			WorkspaceID: e.WorkspaceID, UserID: e.UserID, Scopes: e.Scopes, RateLimits: e.RateLimits,
			UsageLimits: e.UsageLimits, Defaults: e.Defaults, AlertEmails: e.AlertEmails, ExpiresAt: e.ExpiresAt,
			RotationPolicy: e.RotationPolicy, Status: KeyActive, Hash: e.Hash, Masked: e.Masked,
			CreatedBy: e.CreatedBy, CreatedAt: e.At, LastUpdatedAt: e.At}
	case APIKeyUpdated:
		if e.Name != nil {
			k.Name = *e.Name
		}
		if e.Scopes != nil {
			k.Scopes = e.Scopes
		}
		if e.RateLimits != nil || e.ClearRateLimits {
			k.RateLimits = e.RateLimits
		}
		if e.UsageLimits != nil || e.ClearUsageLimits {
			k.UsageLimits = e.UsageLimits
			// Raising the limit of an exhausted key reactivates it (3).
			if k.Status == KeyExhausted && (k.UsageLimits == nil || k.CurrentUsage < *k.UsageLimits.CreditLimit) {
				k.Status = KeyActive
			}
		}
		if e.Defaults != nil || e.ClearDefaults {
			k.Defaults = e.Defaults
		}
		if e.AlertEmails != nil || e.ClearAlertEmails {
			k.AlertEmails = e.AlertEmails
		}
		if e.ExpiresAt != nil || e.ClearExpiresAt {
			k.ExpiresAt = e.ExpiresAt
			if k.Status == KeyExpired && (k.ExpiresAt == nil || k.ExpiresAt.After(e.At)) {
				k.Status = KeyActive
			}
		}
		if e.RotationPolicy != nil || e.ClearRotationPolicy {
			k.RotationPolicy = e.RotationPolicy
		}
		k.LastUpdatedAt = e.At
	case APIKeyRotated:
		until := e.PreviousValidUntil
		k.PreviousHash, k.PreviousValidUntil = k.Hash, &until
		k.Hash, k.Masked = e.Hash, e.Masked
		// Copy on write: read models hand out copies that share the policy. A scheduled
		// rotation of a policy without a period was its last one.
		if k.RotationPolicy != nil && (e.NextRotationAt != nil || e.Scheduled) {
			rp := *k.RotationPolicy
			rp.NextRotationAt = e.NextRotationAt
			k.RotationPolicy = &rp
		}
		k.LastUpdatedAt = e.At
	case APIKeyExpired:
		k.Status, k.LastUpdatedAt = KeyExpired, e.At
	case APIKeyDeleted:
		k.Status, k.LastUpdatedAt = KeyDeleted, e.At
	case APIKeyUsageReset:
		k.CurrentUsage, k.ThresholdAlertSent, k.ExhaustedAlertSent = 0, false, false
		k.UsageResets++
		if e.Scheduled && k.UsageLimits != nil {
			k.UsageLimits = withNextReset(k.UsageLimits, e.NextUsageResetAt)
		}
		at := e.At
		k.LastResetAt = &at
		if k.Status == KeyExhausted {
			k.Status = KeyActive
		}
		k.LastUpdatedAt = e.At
	case APIKeyExhausted:
		k.CurrentUsage, k.Status, k.ExhaustedAlertSent, k.LastUpdatedAt = e.Usage, KeyExhausted, true, e.At
	case APIKeyUsageThresholdReached:
		k.CurrentUsage, k.ThresholdAlertSent, k.LastUpdatedAt = e.Usage, true, e.At
	case APIKeyUsageAlertsReset:
		k.ThresholdAlertSent = k.ThresholdAlertSent && !e.Threshold
		k.ExhaustedAlertSent = k.ExhaustedAlertSent && !e.Exhausted
		k.LastUpdatedAt = e.At
	}
}

func (k *APIKey) Exists() bool { return k.ID != "" && k.Status != KeyDeleted }

// Accepts reports whether a presented key with this hash authenticates as k at now, and if
// not, why: a deleted key is unknown (401); an expired one is refused; the previous key of a
// rotation works until its transition ends.
func (k *APIKey) Accepts(hash string, now time.Time) (ok bool, reason string) {
	switch {
	case k.ID == "" || k.Status == KeyDeleted:
		return false, "unknown"
	case hash == k.Hash:
	case hash != "" && hash == k.PreviousHash && k.PreviousValidUntil != nil && now.Before(*k.PreviousValidUntil):
	default:
		return false, "unknown"
	}
	if k.StatusAt(now) == KeyExpired {
		return false, "expired"
	}
	return true, ""
}

// StatusAt is the key's status as a reader at now sees it: a key whose expiry time has passed
// is expired at once, before the background worker records it.
func (k *APIKey) StatusAt(now time.Time) string {
	if (k.Status == KeyActive || k.Status == KeyExhausted) && k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return KeyExpired
	}
	return k.Status
}

// ExpiryDue reports whether the key's expiry time has passed and its expiry is not yet
// recorded.
func (k *APIKey) ExpiryDue(now time.Time) bool {
	return k.Exists() && k.Status != KeyExpired && k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)
}

// RotationDue reports whether the key's rotation policy schedules a rotation at or before now.
func (k *APIKey) RotationDue(now time.Time) bool {
	return k.Exists() && k.StatusAt(now) != KeyExpired && k.RotationPolicy != nil &&
		k.RotationPolicy.NextRotationAt != nil && !now.Before(*k.RotationPolicy.NextRotationAt)
}

// ExpiryNoticeDue reports whether the key expires within the notice period after now.
func (k *APIKey) ExpiryNoticeDue(now time.Time) bool {
	return k.Exists() && k.StatusAt(now) != KeyExpired && k.ExpiresAt != nil && withinNotice(now, *k.ExpiresAt)
}

// RotationNoticeDue reports whether the key's next scheduled rotation falls within the notice
// period after now.
func (k *APIKey) RotationNoticeDue(now time.Time) bool {
	return k.Exists() && k.StatusAt(now) != KeyExpired && k.RotationPolicy != nil &&
		k.RotationPolicy.NextRotationAt != nil && withinNotice(now, *k.RotationPolicy.NextRotationAt)
}

func withinNotice(now, at time.Time) bool {
	return at.After(now) && !at.After(now.Add(KeyNoticePeriod))
}

// IsOrganisationKey reports whether k is an admin key of the whole organisation.
func (k *APIKey) IsOrganisationKey() bool { return k.Type == KeyOrganisationService }

// NewSecretKey returns a fresh client key: a 256-bit random value in base62 with a prefix
// that says what it is, so a leaked one is recognisable.
func NewSecretKey() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var b strings.Builder
	b.WriteString("cw-")
	max := big.NewInt(int64(len(alphabet)))
	for i := 0; i < 43; i++ { // 62^43 > 2^256
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("domain: crypto/rand failed: %v", err))
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String()
}

// HashKey is how a key is stored and looked up: SHA-256, hex. Keys carry 256 bits of
// randomness, so a fast hash is enough and keeps authentication cheap on the hot path.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// MaskKey shows a key as its first seven and last four characters.
func MaskKey(key string) string {
	if len(key) <= 11 {
		return strings.Repeat("*", len(key))
	}
	return key[:7] + "****" + key[len(key)-4:]
}

// CreateAPIKey is the create command's input, already decoded. Key is the plaintext the
// command generated; only its hash enters the event.
type CreateAPIKey struct {
	KeyID          string
	Key            string
	Name           string
	Type           string
	OrganisationID string
	WorkspaceID    string
	UserID         string
	Scopes         []string
	RateLimits     []RateLimit
	UsageLimits    *UsageLimits
	Defaults       *KeyDefaults
	AlertEmails    []string
	ExpiresAt      *time.Time
	RotationPolicy *RotationPolicy
	CreatedBy      string
}

// Create decides the creation of a key. The actor's rights (may it create this kind of key,
// with these scopes, in this workspace) are checked by the command, which knows the actor.
func (k *APIKey) Create(c CreateAPIKey, now time.Time) ([]Event, error) {
	if k.ID != "" {
		return nil, Errorf(CodeConflict, "api key %s exists already", c.KeyID)
	}
	if err := ValidateName("name", c.Name, true); err != nil {
		return nil, err
	}
	switch c.Type {
	case KeyOrganisationService:
	case KeyWorkspaceService, KeyWorkspaceUser:
		if c.WorkspaceID == "" {
			return nil, Invalid("workspace_id", "workspace_id is required for a workspace key")
		}
		if c.Type == KeyWorkspaceUser && c.UserID == "" {
			return nil, Invalid("user_id", "user_id is required for a workspace user key")
		}
	default:
		return nil, Invalid("type", "type must be organisation-service, workspace-service or workspace-user (got %q)", c.Type)
	}
	if err := validateScopes(c.Scopes, c.Type); err != nil {
		return nil, err
	}
	if err := validateKeyRateLimits(c.RateLimits); err != nil {
		return nil, err
	}
	usage, err := normaliseKeyUsageLimits(c.UsageLimits, now)
	if err != nil {
		return nil, err
	}
	if err := validateKeyDefaults(c.Defaults); err != nil {
		return nil, err
	}
	if err := validateEmails("alert_emails", c.AlertEmails); err != nil {
		return nil, err
	}
	if c.ExpiresAt != nil && !c.ExpiresAt.After(now) {
		return nil, Invalid("expires_at", "expires_at must be in the future")
	}
	rp, err := normaliseRotationPolicy(c.RotationPolicy, now)
	if err != nil {
		return nil, err
	}
	return []Event{APIKeyCreated{KeyID: c.KeyID, Name: c.Name, Type: c.Type, OrganisationID: c.OrganisationID,
		WorkspaceID: c.WorkspaceID, UserID: c.UserID, Scopes: c.Scopes, RateLimits: c.RateLimits,
		UsageLimits: usage, Defaults: c.Defaults, AlertEmails: c.AlertEmails, ExpiresAt: c.ExpiresAt,
		RotationPolicy: rp, Hash: HashKey(c.Key), Masked: MaskKey(c.Key), CreatedBy: c.CreatedBy, At: now}}, nil
}

// UpdateAPIKey is the update command's input (the reference's UpdateApiKeyObject): nil fields
// stay as they are; a Clear flag, or an empty list, removes the field (the client sent null).
type UpdateAPIKey struct {
	Name                *string
	Scopes              []string
	RateLimits          []RateLimit
	ClearRateLimits     bool
	UsageLimits         *UsageLimits
	ClearUsageLimits    bool
	ResetUsage          bool
	Defaults            *KeyDefaults
	ClearDefaults       bool
	AlertEmails         []string
	ClearAlertEmails    bool
	ExpiresAt           *time.Time
	ClearExpiresAt      bool
	RotationPolicy      *RotationPolicy
	ClearRotationPolicy bool
}

// Update decides a change of a key's settings, and a reset of its usage when asked. Raising
// the credit limit of an exhausted key reactivates it (Apply); setting expires_at in the future
// reactivates an expired one. The actor's right to grant the scopes is checked by the command.
func (k *APIKey) Update(c UpdateAPIKey, now time.Time) ([]Event, error) {
	if !k.Exists() {
		return nil, Errorf(CodeNotFound, "api key not found")
	}
	ev := APIKeyUpdated{KeyID: k.ID, At: now}
	changed := false
	if c.Name != nil {
		if err := ValidateName("name", *c.Name, true); err != nil {
			return nil, err
		}
		ev.Name, changed = c.Name, true
	}
	if c.Scopes != nil {
		if err := validateScopes(c.Scopes, k.Type); err != nil {
			return nil, err
		}
		ev.Scopes, changed = c.Scopes, true
	}
	switch {
	case c.ClearRateLimits || (c.RateLimits != nil && len(c.RateLimits) == 0):
		ev.ClearRateLimits, changed = true, true
	case c.RateLimits != nil:
		if err := validateKeyRateLimits(c.RateLimits); err != nil {
			return nil, err
		}
		ev.RateLimits, changed = c.RateLimits, true
	}
	switch {
	case c.ClearUsageLimits:
		ev.ClearUsageLimits, changed = true, true
	case c.UsageLimits != nil:
		usage, err := normaliseKeyUsageLimits(c.UsageLimits, now)
		if err != nil {
			return nil, err
		}
		ev.UsageLimits, changed = usage, true
	}
	switch {
	case c.ClearDefaults:
		ev.ClearDefaults, changed = true, true
	case c.Defaults != nil:
		if err := validateKeyDefaults(c.Defaults); err != nil {
			return nil, err
		}
		ev.Defaults, changed = c.Defaults, true
	}
	switch {
	case c.ClearAlertEmails || (c.AlertEmails != nil && len(c.AlertEmails) == 0):
		ev.ClearAlertEmails, changed = true, true
	case c.AlertEmails != nil:
		if err := validateEmails("alert_emails", c.AlertEmails); err != nil {
			return nil, err
		}
		ev.AlertEmails, changed = c.AlertEmails, true
	}
	switch {
	case c.ClearExpiresAt:
		ev.ClearExpiresAt, changed = true, true
	case c.ExpiresAt != nil:
		if !c.ExpiresAt.After(now) {
			return nil, Invalid("expires_at", "expires_at must be in the future")
		}
		ev.ExpiresAt, changed = c.ExpiresAt, true
	}
	switch {
	case c.ClearRotationPolicy:
		ev.ClearRotationPolicy, changed = true, true
	case c.RotationPolicy != nil:
		rp, err := normaliseRotationPolicy(c.RotationPolicy, now)
		if err != nil {
			return nil, err
		}
		ev.RotationPolicy, changed = rp, true
	}
	var events []Event
	if changed {
		events = append(events, ev)
	}
	if reset, ok := k.alertsReset(ev); ok {
		events = append(events, reset)
	}
	if c.ResetUsage {
		reset, err := k.ResetUsage(now)
		if err != nil {
			return nil, err
		}
		events = append(events, reset...)
	}
	if len(events) == 0 {
		return nil, Invalid("", "nothing to update: give at least one of name, scopes, rate_limits, usage_limits, reset_usage, defaults, alert_emails, expires_at or rotation_policy")
	}
	return events, nil
}

// alertsReset decides which sent usage alerts an update resets (3): a raised or removed
// credit limit resets both, a raised or removed alert threshold the threshold alert.
func (k *APIKey) alertsReset(u APIKeyUpdated) (APIKeyUsageAlertsReset, bool) {
	old := k.UsageLimits
	if old == nil || (u.UsageLimits == nil && !u.ClearUsageLimits) {
		return APIKeyUsageAlertsReset{}, false
	}
	raised := u.ClearUsageLimits || (old.CreditLimit != nil && *u.UsageLimits.CreditLimit > *old.CreditLimit)
	eased := old.AlertThreshold != nil &&
		(u.ClearUsageLimits || u.UsageLimits.AlertThreshold == nil || *u.UsageLimits.AlertThreshold > *old.AlertThreshold)
	reset := APIKeyUsageAlertsReset{KeyID: k.ID, Threshold: (raised || eased) && k.ThresholdAlertSent,
		Exhausted: raised && k.ExhaustedAlertSent, At: u.At}
	return reset, reset.Threshold || reset.Exhausted
}

// ResetUsage decides a reset of the key's usage to zero; an exhausted key becomes active.
func (k *APIKey) ResetUsage(now time.Time) ([]Event, error) {
	if !k.Exists() {
		return nil, Errorf(CodeNotFound, "api key not found")
	}
	return []Event{APIKeyUsageReset{KeyID: k.ID, At: now}}, nil
}

// UsagePeriod names the key's current usage period: the number of its usage resets so far.
func (k *APIKey) UsagePeriod() string { return usagePeriod(k.UsageResets) }

// UsageReached decides what usage, as the ledger counted it in period, does to the key: the
// alert threshold is alerted once per period, and the key is exhausted at its credit limit
// when it is not already. A report about an earlier period (the usage was reset since), or
// about a deleted or expired key, decides nothing.
func (k *APIKey) UsageReached(period string, usage float64, now time.Time) ([]Event, error) {
	if err := validateUsage(usage); err != nil {
		return nil, err
	}
	if !k.Exists() || k.StatusAt(now) == KeyExpired || period != k.UsagePeriod() {
		return nil, nil
	}
	threshold, exhaust := budgetAlertsDue(k.UsageLimits, k.ThresholdAlertSent, k.Status == KeyExhausted, usage)
	var events []Event
	if threshold {
		events = append(events, APIKeyUsageThresholdReached{KeyID: k.ID, Usage: usage,
			AlertThreshold: *k.UsageLimits.AlertThreshold, At: now})
	}
	if exhaust {
		events = append(events, APIKeyExhausted{KeyID: k.ID, Usage: usage, CreditLimit: *k.UsageLimits.CreditLimit, At: now})
	}
	return events, nil
}

// UsageResetDue reports whether the key's periodic usage reset has come at now.
func (k *APIKey) UsageResetDue(now time.Time) bool {
	due, _ := scheduledReset(k.UsageLimits, now)
	return k.Exists() && due
}

// ResetUsageIfDue decides the key's periodic usage reset once its next_usage_reset_at has
// passed: a new period starts from zero, an exhausted key is active again, and the next reset
// is a period later (periods missed are skipped). Before then, or without a schedule, it
// decides nothing, so a worker that repeats itself resets once.
func (k *APIKey) ResetUsageIfDue(now time.Time) ([]Event, error) {
	due, next := scheduledReset(k.UsageLimits, now)
	if !k.Exists() || !due {
		return nil, nil
	}
	return []Event{APIKeyUsageReset{KeyID: k.ID, Scheduled: true, NextUsageResetAt: next, At: now}}, nil
}

func validateScopes(scopes []string, keyType string) error {
	if len(scopes) == 0 {
		return Invalid("scopes", "scopes must hold at least one scope")
	}
	allowed := AllScopes()
	if keyType != KeyOrganisationService {
		allowed = WorkspaceScopes()
	}
	for i, s := range scopes {
		if !slices.Contains(allowed, s) {
			if IsScope(s) {
				return Invalid(fmt.Sprintf("scopes[%d]", i), "scope %q is not available to a workspace key", s)
			}
			return Invalid(fmt.Sprintf("scopes[%d]", i), "unknown scope %q", s)
		}
	}
	return nil
}

func validateKeyRateLimits(rates []RateLimit) error {
	for i, r := range rates {
		if err := ValidateRateLimit(fmt.Sprintf("rate_limits[%d]", i), r); err != nil {
			return err
		}
	}
	return nil
}

// normaliseKeyUsageLimits checks a key's budget and, when it resets periodically without a
// stated next reset, computes when the first one is due.
func normaliseKeyUsageLimits(u *UsageLimits, now time.Time) (*UsageLimits, error) {
	if u == nil {
		return nil, nil
	}
	if err := ValidateUsageLimits("usage_limits", *u); err != nil {
		return nil, err
	}
	out := *u
	if out.NextUsageResetAt != nil {
		if out.PeriodicReset == nil && out.PeriodicResetDays == nil {
			return nil, Invalid("usage_limits.next_usage_reset_at", "usage_limits.next_usage_reset_at needs periodic_reset or periodic_reset_days")
		}
		if !out.NextUsageResetAt.After(now) {
			return nil, Invalid("usage_limits.next_usage_reset_at", "usage_limits.next_usage_reset_at must be in the future")
		}
	} else {
		out.NextUsageResetAt = NextReset(now, out.PeriodicReset, out.PeriodicResetDays)
	}
	return &out, nil
}

func validateKeyDefaults(d *KeyDefaults) error {
	if d != nil && d.ConfigID != nil {
		return ValidateName("defaults.config_id", *d.ConfigID, false)
	}
	return nil
}

func validateEmails(param string, emails []string) error {
	for i, e := range emails {
		if !ValidEmail(e) {
			return Invalid(fmt.Sprintf("%s[%d]", param, i), "%s[%d] is not an e-mail address", param, i)
		}
	}
	return nil
}

// ValidEmail is a deliberately simple check: one @, something either side, a dot in the
// domain, at most 254 characters.
func ValidEmail(e string) bool {
	local, domainPart, ok := strings.Cut(e, "@")
	return ok && local != "" && strings.Contains(domainPart, ".") && !strings.ContainsAny(e, " \t\r\n<>") &&
		!strings.Contains(domainPart, "@") && len(e) <= 254
}

// Rotation periods of a rotation policy.
const (
	RotateWeekly  = "weekly"
	RotateMonthly = "monthly"
)

// shortestPeriod is the least time between two rotations of a period: a transition must end
// before the next rotation begins.
var shortestPeriod = map[string]time.Duration{RotateWeekly: 7 * 24 * time.Hour, RotateMonthly: 28 * 24 * time.Hour}

// normaliseRotationPolicy checks a policy, which needs a period or a date (the reference), and
// computes the first rotation of a period without a date.
func normaliseRotationPolicy(rp *RotationPolicy, now time.Time) (*RotationPolicy, error) {
	if rp == nil {
		return nil, nil
	}
	out := *rp
	if out.RotationPeriod == nil && out.NextRotationAt == nil {
		return nil, Invalid("rotation_policy", "rotation_policy needs rotation_period or next_rotation_at")
	}
	if out.RotationPeriod != nil {
		if _, ok := shortestPeriod[*out.RotationPeriod]; !ok {
			return nil, Invalid("rotation_policy.rotation_period", "rotation_policy.rotation_period must be weekly or monthly (got %q)", *out.RotationPeriod)
		}
	}
	if ms := out.KeyTransitionPeriodMS; ms != nil {
		if *ms < MinKeyTransition.Milliseconds() {
			return nil, Invalid("rotation_policy.key_transition_period_ms", "rotation_policy.key_transition_period_ms must be at least %d (30 minutes; got %d)", MinKeyTransition.Milliseconds(), *ms)
		}
		if out.RotationPeriod != nil && *ms >= shortestPeriod[*out.RotationPeriod].Milliseconds() {
			return nil, Invalid("rotation_policy.key_transition_period_ms", "rotation_policy.key_transition_period_ms must be less than the rotation period (%d for %s; got %d)", shortestPeriod[*out.RotationPeriod].Milliseconds(), *out.RotationPeriod, *ms)
		}
	}
	if out.NextRotationAt != nil && !out.NextRotationAt.After(now) {
		return nil, Invalid("rotation_policy.next_rotation_at", "rotation_policy.next_rotation_at must be in the future")
	}
	if out.NextRotationAt == nil {
		out.NextRotationAt = nextRotation(now, *out.RotationPeriod)
	}
	return &out, nil
}

func nextRotation(from time.Time, period string) *time.Time {
	var t time.Time
	if period == RotateWeekly {
		t = from.AddDate(0, 0, 7)
	} else {
		t = from.AddDate(0, 1, 0)
	}
	return &t
}

// Rotate decides a rotation to newKey. transition is how long the old key keeps working: at
// least 30 minutes; zero takes the policy's, or 30 minutes.
func (k *APIKey) Rotate(newKey string, transition time.Duration, scheduled bool, now time.Time) ([]Event, error) {
	if !k.Exists() {
		return nil, Errorf(CodeNotFound, "api key not found")
	}
	if k.StatusAt(now) == KeyExpired {
		return nil, Errorf(CodeConflict, "an expired key cannot be rotated")
	}
	if transition == 0 {
		transition = MinKeyTransition
		if k.RotationPolicy != nil && k.RotationPolicy.KeyTransitionPeriodMS != nil {
			transition = time.Duration(*k.RotationPolicy.KeyTransitionPeriodMS) * time.Millisecond
		}
	}
	if transition < MinKeyTransition {
		return nil, Invalid("key_transition_period_ms", "key_transition_period_ms must be at least %d (30 minutes; got %d)", MinKeyTransition.Milliseconds(), transition.Milliseconds())
	}
	ev := APIKeyRotated{KeyID: k.ID, Hash: HashKey(newKey), Masked: MaskKey(newKey),
		PreviousValidUntil: now.Add(transition), Scheduled: scheduled, At: now}
	if k.RotationPolicy != nil && k.RotationPolicy.RotationPeriod != nil {
		ev.NextRotationAt = nextRotation(now, *k.RotationPolicy.RotationPeriod)
	}
	return []Event{ev}, nil
}

// RotateOnSchedule decides the rotation that the key's policy schedules for dueAt. It decides
// nothing when the schedule has moved on since the caller saw it (another rotation, a changed
// policy), when dueAt has not come, or when the key no longer works.
func (k *APIKey) RotateOnSchedule(newKey string, dueAt, now time.Time) ([]Event, error) {
	if !k.Exists() || k.StatusAt(now) == KeyExpired || now.Before(dueAt) ||
		k.RotationPolicy == nil || k.RotationPolicy.NextRotationAt == nil || !k.RotationPolicy.NextRotationAt.Equal(dueAt) {
		return nil, nil
	}
	return k.Rotate(newKey, 0, true, now)
}

// Expire decides the expiry of a key whose expires_at has passed.
func (k *APIKey) Expire(now time.Time) ([]Event, error) {
	if !k.Exists() || k.Status == KeyExpired {
		return nil, nil
	}
	if k.ExpiresAt == nil || now.Before(*k.ExpiresAt) {
		return nil, Errorf(CodeConflict, "api key has not reached its expiry time")
	}
	return []Event{APIKeyExpired{KeyID: k.ID, At: now}}, nil
}

// Delete decides the deletion of a key: it stops working at once.
func (k *APIKey) Delete(now time.Time) ([]Event, error) {
	if !k.Exists() {
		return nil, Errorf(CodeNotFound, "api key not found")
	}
	return []Event{APIKeyDeleted{KeyID: k.ID, At: now}}, nil
}

// DeriveSecretKey returns the key a retried create must answer with again: the HMAC of the
// request's identity under the server's secret, in the same form as NewSecretKey. Nothing but
// its hash is stored, yet the retry can show the same plaintext.
func DeriveSecretKey(secret []byte, material string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(material))
	n := new(big.Int).SetBytes(mac.Sum(nil))
	base := big.NewInt(int64(len(alphabet)))
	out := make([]byte, 43)
	for i := range out {
		var r big.Int
		n.DivMod(n, base, &r)
		out[i] = alphabet[r.Int64()]
	}
	return "cw-" + string(out)
}
