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
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Type           string          `json:"type"`
	OrganisationID string          `json:"organisation_id"`
	WorkspaceID    string          `json:"workspace_id,omitempty"`
	UserID         string          `json:"user_id,omitempty"`
	Scopes         []string        `json:"scopes"`
	RateLimits     []RateLimit     `json:"rate_limits"`
	UsageLimits    *UsageLimits    `json:"usage_limits"`
	CurrentUsage   float64         `json:"current_usage"`
	Defaults       *KeyDefaults    `json:"defaults"`
	AlertEmails    []string        `json:"alert_emails"`
	ExpiresAt      *time.Time      `json:"expires_at"`
	RotationPolicy *RotationPolicy `json:"rotation_policy"`
	Status         string          `json:"status"`
	Masked         string          `json:"key"` // prefix and last four characters
	CreatedBy      string          `json:"created_by,omitempty"`
	LastResetAt    *time.Time      `json:"last_reset_at"`
	CreatedAt      time.Time       `json:"created_at"`
	LastUpdatedAt  time.Time       `json:"last_updated_at"`

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
	AlertEmails         []string        `json:"alert_emails,omitempty"`
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

// APIKeyUsageReset zeroes the key's usage (manually, or at its periodic reset).
type APIKeyUsageReset struct {
	KeyID string    `json:"key_id"`
	At    time.Time `json:"at"`
}

// APIKeyExhausted: the key's usage reached its credit limit; the gateway refuses it until the
// limit is raised or its usage is reset.
type APIKeyExhausted struct {
	KeyID string    `json:"key_id"`
	Usage float64   `json:"usage"`
	At    time.Time `json:"at"`
}

func (APIKeyCreated) EventType() string    { return "ApiKeyCreated" }
func (APIKeyUpdated) EventType() string    { return "ApiKeyUpdated" }
func (APIKeyRotated) EventType() string    { return "ApiKeyRotated" }
func (APIKeyExpired) EventType() string    { return "ApiKeyExpired" }
func (APIKeyDeleted) EventType() string    { return "ApiKeyDeleted" }
func (APIKeyUsageReset) EventType() string { return "ApiKeyUsageReset" }
func (APIKeyExhausted) EventType() string  { return "ApiKeyExhausted" }

func apiKeyModule() module {
	return module{
		prefix:    APIKeyPrefix,
		aggregate: func() Aggregate { return &APIKey{} },
		events: []Event{APIKeyCreated{}, APIKeyUpdated{}, APIKeyRotated{}, APIKeyExpired{}, APIKeyDeleted{},
			APIKeyUsageReset{}, APIKeyExhausted{}},
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
		if e.Defaults != nil {
			k.Defaults = e.Defaults
		}
		if e.AlertEmails != nil {
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
		if k.RotationPolicy != nil && e.NextRotationAt != nil {
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
		k.CurrentUsage = 0
		at := e.At
		k.LastResetAt = &at
		if k.Status == KeyExhausted {
			k.Status = KeyActive
		}
		k.LastUpdatedAt = e.At
	case APIKeyExhausted:
		k.CurrentUsage, k.Status, k.LastUpdatedAt = e.Usage, KeyExhausted, e.At
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
	if k.Status == KeyExpired || (k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)) {
		return false, "expired"
	}
	return true, ""
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
	if err := validateKeyLimits(c.RateLimits, c.UsageLimits); err != nil {
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
		UsageLimits: c.UsageLimits, Defaults: c.Defaults, AlertEmails: c.AlertEmails, ExpiresAt: c.ExpiresAt,
		RotationPolicy: rp, Hash: HashKey(c.Key), Masked: MaskKey(c.Key), CreatedBy: c.CreatedBy, At: now}}, nil
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

func validateKeyLimits(rates []RateLimit, usage *UsageLimits) error {
	for i, r := range rates {
		if err := ValidateRateLimit(fmt.Sprintf("rate_limits[%d]", i), r); err != nil {
			return err
		}
	}
	if usage != nil {
		return ValidateUsageLimits("usage_limits", *usage)
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

func normaliseRotationPolicy(rp *RotationPolicy, now time.Time) (*RotationPolicy, error) {
	if rp == nil {
		return nil, nil
	}
	out := *rp
	if out.RotationPeriod != nil && *out.RotationPeriod != "weekly" && *out.RotationPeriod != "monthly" {
		return nil, Invalid("rotation_policy.rotation_period", "rotation_policy.rotation_period must be weekly or monthly (got %q)", *out.RotationPeriod)
	}
	if out.KeyTransitionPeriodMS != nil && *out.KeyTransitionPeriodMS < MinKeyTransition.Milliseconds() {
		return nil, Invalid("rotation_policy.key_transition_period_ms", "rotation_policy.key_transition_period_ms must be at least %d (30 minutes; got %d)", MinKeyTransition.Milliseconds(), *out.KeyTransitionPeriodMS)
	}
	if out.NextRotationAt != nil && !out.NextRotationAt.After(now) {
		return nil, Invalid("rotation_policy.next_rotation_at", "rotation_policy.next_rotation_at must be in the future")
	}
	if out.NextRotationAt == nil && out.RotationPeriod != nil {
		out.NextRotationAt = nextRotation(now, *out.RotationPeriod)
	}
	return &out, nil
}

func nextRotation(from time.Time, period string) *time.Time {
	var t time.Time
	if period == "weekly" {
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
	if k.Status == KeyExpired {
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
