package domain

import (
	"crypto/sha1"
	"encoding/hex"
	"maps"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ModelPricingPrefix names the streams of model pricing overrides.
const ModelPricingPrefix = "modelpricing"

// Prices are in USD cents per token (per unit for additional units), as in the reference's
// ModelPricingConfig: 0.00025 is $2.50 per million tokens. Costs computed from them are in USD.
const (
	// MaxPricePerUnit bounds every price: 1000 USD per token or unit, in cents.
	MaxPricePerUnit = 100_000
	// MaxAdditionalUnits bounds how many additional units one override may price.
	MaxAdditionalUnits = 64
	// PricingCurrency is the only currency prices are kept in.
	PricingCurrency = "USD"
)

// TokenPrice is one price, in USD cents per token or unit.
type TokenPrice struct {
	Price float64 `json:"price"`
}

// ModelPrices is the reference's pay_as_you_go object. A nil price is one the model does not
// set: input tokens read from or written to a cache are then billed at the request price, and
// other tokens cost nothing.
type ModelPrices struct {
	RequestToken         *TokenPrice           `json:"request_token,omitempty"`
	ResponseToken        *TokenPrice           `json:"response_token,omitempty"`
	CacheReadInputToken  *TokenPrice           `json:"cache_read_input_token,omitempty"`
	CacheWriteInputToken *TokenPrice           `json:"cache_write_input_token,omitempty"`
	AdditionalUnits      map[string]TokenPrice `json:"additional_units,omitempty"`
}

// Empty reports whether no price at all is set.
func (p ModelPrices) Empty() bool {
	return p.RequestToken == nil && p.ResponseToken == nil && p.CacheReadInputToken == nil &&
		p.CacheWriteInputToken == nil && len(p.AdditionalUnits) == 0
}

// Equal reports whether two sets of prices are the same.
func (p ModelPrices) Equal(o ModelPrices) bool {
	same := func(a, b *TokenPrice) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return same(p.RequestToken, o.RequestToken) && same(p.ResponseToken, o.ResponseToken) &&
		same(p.CacheReadInputToken, o.CacheReadInputToken) && same(p.CacheWriteInputToken, o.CacheWriteInputToken) &&
		maps.Equal(p.AdditionalUnits, o.AdditionalUnits)
}

// ValidatePrices checks every price: finite, at least 0 and at most MaxPricePerUnit; unit
// names non-empty and at most 255 characters. param prefixes the field names.
func ValidatePrices(param string, p ModelPrices) error {
	check := func(field string, tp *TokenPrice) error {
		if tp == nil {
			return nil
		}
		name := param + "." + field + ".price"
		if math.IsNaN(tp.Price) || math.IsInf(tp.Price, 0) || tp.Price < 0 || tp.Price > MaxPricePerUnit {
			return Invalid(name, "%s must be from 0 to %d USD cents (1000 USD) per token or unit (got %v)",
				name, MaxPricePerUnit, tp.Price)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		p    *TokenPrice
	}{{"request_token", p.RequestToken}, {"response_token", p.ResponseToken},
		{"cache_read_input_token", p.CacheReadInputToken}, {"cache_write_input_token", p.CacheWriteInputToken}} {
		if err := check(f.name, f.p); err != nil {
			return err
		}
	}
	if len(p.AdditionalUnits) > MaxAdditionalUnits {
		return Invalid(param+".additional_units", "%s.additional_units must hold at most %d units (got %d)",
			param, MaxAdditionalUnits, len(p.AdditionalUnits))
	}
	units := make([]string, 0, len(p.AdditionalUnits))
	for u := range p.AdditionalUnits {
		units = append(units, u)
	}
	sort.Strings(units)
	for _, u := range units {
		if strings.TrimSpace(u) == "" || utf8.RuneCountInString(u) > MaxNameLength {
			return Invalid(param+".additional_units", "%s.additional_units names must be 1 to %d characters (got %q)",
				param, MaxNameLength, u)
		}
		tp := p.AdditionalUnits[u]
		if err := check("additional_units."+u, &tp); err != nil {
			return err
		}
	}
	return nil
}

// providerAliases maps the other spellings of a provider to the name the gateway's adapters
// (ai_service) use.
var providerAliases = map[string]string{
	"azure":          "azure-openai",
	"azure-ai":       "azure-openai",
	"azureopenai":    "azure-openai",
	"gemini":         "google",
	"google-gemini":  "google",
	"vertex":         "vertex-ai",
	"google-vertex":  "vertex-ai",
	"aws-bedrock":    "bedrock",
	"amazon-bedrock": "bedrock",
	"mistral":        "mistral-ai",
	"mistralai":      "mistral-ai",
	"together":       "together-ai",
	"togetherai":     "together-ai",
	"fireworks":      "fireworks-ai",
	"fireworksai":    "fireworks-ai",
}

// NormaliseProvider returns the canonical name of a provider for pricing: trimmed, lower
// case, underscores as hyphens, and aliases resolved (mistral → mistral-ai, azure →
// azure-openai, gemini → google, vertex → vertex-ai).
func NormaliseProvider(p string) string {
	p = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(p)), "_", "-")
	if canon, ok := providerAliases[p]; ok {
		return canon
	}
	return p
}

// ValidateModelName checks a provider or model name: required, at most 255 characters, no
// control characters.
func ValidateModelName(param, v string) error {
	if err := ValidateName(param, v, true); err != nil {
		return err
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return Invalid(param, "%s must not hold control characters", param)
	}
	return nil
}

// ModelPricingOverrideID is the id of the override of provider's model in an organisation,
// or in one of its workspaces (workspaceID empty: the organisation's). It is derived (a
// name-based UUID) so that setting a price twice lands on one stream, and the gateway finds an
// override without a search. Model names match case-insensitively.
func ModelPricingOverrideID(orgID, workspaceID, provider, model string) string {
	// The gateway prices every request with it, so it builds the id without fmt: one buffer
	// hashed, then the 8-4-4-4-12 hex form written in place.
	var buf [256]byte
	in := append(buf[:0], "modelpricing\x00"...)
	in = append(append(append(in, orgID...), 0), workspaceID...)
	in = append(append(in, 0), NormaliseProvider(provider)...)
	in = append(append(in, 0), strings.ToLower(strings.TrimSpace(model))...)
	h := sha1.Sum(in)
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	var out [36]byte
	hex.Encode(out[0:8], h[0:4])
	hex.Encode(out[9:13], h[4:6])
	hex.Encode(out[14:18], h[6:8])
	hex.Encode(out[19:23], h[8:10])
	hex.Encode(out[24:36], h[10:16])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
	return string(out[:])
}

// ModelPricingOverride is an organisation's (or a workspace's) own price for a provider's
// model. It takes precedence over every other source of prices, and it is an aggregate so
// that every change of price is an event in the audit log.
type ModelPricingOverride struct {
	ID             string      `json:"id"`
	OrganisationID string      `json:"organisation_id"`
	WorkspaceID    string      `json:"workspace_id,omitempty"`
	Provider       string      `json:"provider"`
	Model          string      `json:"model"`
	PayAsYouGo     ModelPrices `json:"pay_as_you_go"`
	Status         string      `json:"status"`
	CreatedAt      time.Time   `json:"created_at"`
	LastUpdatedAt  time.Time   `json:"last_updated_at"`
}

// StatusRemoved is an override taken back: the model's price is the default again.
const StatusRemoved = "removed"

type ModelPricingOverrideSet struct {
	OverrideID     string      `json:"override_id"`
	OrganisationID string      `json:"organisation_id"`
	WorkspaceID    string      `json:"workspace_id,omitempty"`
	Provider       string      `json:"provider"`
	Model          string      `json:"model"`
	PayAsYouGo     ModelPrices `json:"pay_as_you_go"`
	At             time.Time   `json:"at"`
}

type ModelPricingOverrideRemoved struct {
	OverrideID string    `json:"override_id"`
	At         time.Time `json:"at"`
}

func (ModelPricingOverrideSet) EventType() string     { return "ModelPricingOverrideSet" }
func (ModelPricingOverrideRemoved) EventType() string { return "ModelPricingOverrideRemoved" }

func modelPricingModule() module {
	return module{
		prefix:    ModelPricingPrefix,
		aggregate: func() Aggregate { return &ModelPricingOverride{} },
		events:    []Event{ModelPricingOverrideSet{}, ModelPricingOverrideRemoved{}},
	}
}

func (o *ModelPricingOverride) Apply(e Event) {
	switch e := e.(type) {
	case ModelPricingOverrideSet:
		created := o.CreatedAt
		if !o.Active() {
			created = e.At
		}
		*o = ModelPricingOverride{ID: e.OverrideID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID,
			Provider: e.Provider, Model: e.Model, PayAsYouGo: e.PayAsYouGo, Status: StatusActive,
			CreatedAt: created, LastUpdatedAt: e.At}
	case ModelPricingOverrideRemoved:
		o.Status, o.LastUpdatedAt = StatusRemoved, e.At
	}
}

// Active reports whether the override is in force.
func (o *ModelPricingOverride) Active() bool { return o.ID != "" && o.Status == StatusActive }

// SetModelPricing is the set command's input, already decoded; the id is derived by the
// caller with ModelPricingOverrideID.
type SetModelPricing struct {
	OverrideID     string
	OrganisationID string
	WorkspaceID    string
	Provider       string
	Model          string
	PayAsYouGo     ModelPrices
}

// Set decides a new price for the model: the whole pay_as_you_go object is replaced. Setting
// the prices already in force (model names compared case-insensitively) writes nothing.
func (o *ModelPricingOverride) Set(c SetModelPricing, now time.Time) ([]Event, error) {
	if err := ValidateModelName("provider", c.Provider); err != nil {
		return nil, err
	}
	if err := ValidateModelName("model", c.Model); err != nil {
		return nil, err
	}
	if c.PayAsYouGo.RequestToken == nil && c.PayAsYouGo.ResponseToken == nil {
		return nil, Invalid("pay_as_you_go", "pay_as_you_go must set request_token or response_token")
	}
	if err := ValidatePrices("pay_as_you_go", c.PayAsYouGo); err != nil {
		return nil, err
	}
	provider, model := NormaliseProvider(c.Provider), strings.TrimSpace(c.Model)
	if o.Active() && o.Provider == provider && strings.EqualFold(o.Model, model) && o.PayAsYouGo.Equal(c.PayAsYouGo) {
		return nil, nil
	}
	return []Event{ModelPricingOverrideSet{OverrideID: c.OverrideID, OrganisationID: c.OrganisationID,
		WorkspaceID: c.WorkspaceID, Provider: provider, Model: model, PayAsYouGo: c.PayAsYouGo, At: now}}, nil
}

// Remove decides the return to the default price.
func (o *ModelPricingOverride) Remove(now time.Time) ([]Event, error) {
	if !o.Active() {
		return nil, Errorf(CodeNotFound, "no price override is set for this model")
	}
	return []Event{ModelPricingOverrideRemoved{OverrideID: o.ID, At: now}}, nil
}
