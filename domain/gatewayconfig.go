package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A gateway config says how the gateway serves a request: which provider or providers, with
// which strategy (single, fallback, loadbalance) over nested targets, retries, timeout, cache
// and parameter overrides. A client sends one inline (x-gateway-config: {...}) or names a
// saved one by its id or slug; both go through ParseGatewayConfig, so they behave the same.
// A saved config must not hold credentials (ValidateSaved): it names managed providers
// (@slug, or a virtual_key) instead, whose secrets stay sealed.
//
// Validation errors carry a code of the specification's AB catalogue in Error.Detail, the
// path of the offending field in Error.Param (targets[1].weight; "" for the config itself):
//
//	AB01  not valid JSON, not a JSON object, larger than 64 KiB, an unknown field, or a field
//	      of the wrong JSON type (provider options, api_key, strict_openai_compliance...)
//	AB02  strategy is not an object, or strategy.mode is not single, fallback or loadbalance;
//	      targets without a strategy
//	AB03  targets is not an array of objects, is empty, holds more than 100, or a strategy has
//	      no targets
//	AB04  weight is not a number, is negative, is set outside targets, or every weight of a
//	      loadbalance strategy is zero
//	AB05  retry is not an object, or retry.attempts is not a whole number from 0 to 5
//	AB06  on_status_codes (of strategy or retry) is not an array of at most 100 HTTP status
//	      codes from 100 to 599
//	AB07  request_timeout is not a whole number of milliseconds from 1 to 3600000
//	AB08  a target has neither provider, virtual_key nor targets
//	AB09  cache is set below the root, is not an object, cache.mode is not simple or semantic,
//	      cache.max_age is not a whole number of seconds from 1 to 31536000, cache.threshold
//	      is not in (0, 1], cache.embedding is not {provider?: @slug, model}, a flag is not a
//	      boolean, or a semantic-only field is set in mode simple
//	AB10  override_params is not an object, or holds more than 128 parameters
//	AB11  targets are nested more than 5 deep
//	AB12  a saved config holds a credential (api_key, aws_access_key_id,
//	      aws_secret_access_key, aws_session_token): use a managed provider
//	AB13  provider is neither a known provider type nor @<provider slug>, virtual_key is not
//	      a slug, or both name a managed provider
//	AB14  custom_host is not an http or https URL, or its host is refused
//	AB15  forward_headers is not an array of at most 100 header names
//	AB16  input_guardrails or output_guardrails is not an array of at most 50 guardrail ids or
//	      slugs; before_request_hooks or after_request_hooks is not an array of at most 50
//	      hooks {"id": <guardrail id or slug>, "type"?: "guardrail"} (inline hooks with their
//	      own checks are not supported: save the guardrail and name it); or a saved config
//	      names a guardrail that does not exist, is deleted, or belongs to another workspace
//	      (checked when the config is saved; an inline config's guardrails are resolved when
//	      the gateway serves the request)

// Config error codes (Error.Detail).
const (
	ConfigErrJSON           = "AB01"
	ConfigErrStrategy       = "AB02"
	ConfigErrTargets        = "AB03"
	ConfigErrWeight         = "AB04"
	ConfigErrRetry          = "AB05"
	ConfigErrStatusCodes    = "AB06"
	ConfigErrTimeout        = "AB07"
	ConfigErrNoProvider     = "AB08"
	ConfigErrCache          = "AB09"
	ConfigErrOverrideParams = "AB10"
	ConfigErrDepth          = "AB11"
	ConfigErrCredential     = "AB12"
	ConfigErrProvider       = "AB13"
	ConfigErrCustomHost     = "AB14"
	ConfigErrForwardHeaders = "AB15"
	ConfigErrGuardrails     = "AB16"
)

// Bounds of a config.
const (
	MaxGatewayConfigBytes = 64 << 10
	MaxConfigDepth        = 5
	MaxConfigTargets      = 100
	MaxRetryAttempts      = 5
	MaxRequestTimeoutMS   = 3_600_000
	MaxCacheAgeSeconds    = 31_536_000
	maxOverrideParams     = 128
	maxStatusCodes        = 100
	maxForwardHeaders     = 100
	maxConfigString       = 4096
)

// Strategy modes and cache modes.
const (
	StrategySingle      = "single"
	StrategyFallback    = "fallback"
	StrategyLoadBalance = "loadbalance"
	CacheSimple         = "simple"
	CacheSemantic       = "semantic"
)

// GatewayConfig is a parsed, valid config: its root is a Target without a weight.
type GatewayConfig struct {
	Target
}

// Target is one node of a config: a provider to call (by type with a credential, as a
// managed provider @slug or virtual key, or at a custom host), or a strategy over nested
// targets. Settings of a node (override_params, retry, timeout, cache...) apply to what it
// calls; the gateway lets nested targets inherit them.
type Target struct {
	Strategy *Strategy `json:"strategy,omitempty"`
	Targets  []Target  `json:"targets,omitempty"`
	// Provider is a provider type (openai) or a managed provider (@slug).
	Provider string `json:"provider,omitempty"`
	// VirtualKey is the legacy spelling of a managed provider: its slug without '@'.
	VirtualKey string `json:"virtual_key,omitempty"`
	// APIKey is an inline credential; only inline configs may carry one.
	APIKey                 string         `json:"api_key,omitempty"`
	CustomHost             string         `json:"custom_host,omitempty"`
	OverrideParams         map[string]any `json:"override_params,omitempty"`
	Retry                  *Retry         `json:"retry,omitempty"`
	RequestTimeout         int            `json:"request_timeout,omitempty"` // milliseconds
	Cache                  *Cache         `json:"cache,omitempty"`
	ForwardHeaders         []string       `json:"forward_headers,omitempty"`
	StrictOpenAICompliance *bool          `json:"strict_openai_compliance,omitempty"`
	// Weight is the share of a loadbalance strategy's traffic; nil counts as 1.
	Weight          *float64 `json:"weight,omitempty"`
	AzureEntraScope string   `json:"azure_entra_scope,omitempty"`
	AnthropicBeta   string   `json:"anthropic_beta,omitempty"`
	// Options are the provider-specific settings (ConfigOptionFields): Azure's resource,
	// deployment and API version, AWS and Vertex regions and credentials, and so on.
	Options map[string]string `json:"options,omitempty"`
	// InputGuardrails and OutputGuardrails name, by id or slug, the guardrails that check
	// what a request through this node sends and what it answers.
	InputGuardrails  []string `json:"input_guardrails,omitempty"`
	OutputGuardrails []string `json:"output_guardrails,omitempty"`
	// BeforeRequestHooks and AfterRequestHooks are the hook spelling of the same: the ids or
	// slugs of the guardrails of the before-request and after-request hooks.
	BeforeRequestHooks []string `json:"before_request_hooks,omitempty"`
	AfterRequestHooks  []string `json:"after_request_hooks,omitempty"`
}

// BeforeRequestGuardrails are the guardrails a node runs on the request: its
// input_guardrails, then its before_request_hooks.
func (t *Target) BeforeRequestGuardrails() []string {
	return append(slices.Clip(t.InputGuardrails), t.BeforeRequestHooks...)
}

// AfterRequestGuardrails are the guardrails a node runs on the answer: its
// output_guardrails, then its after_request_hooks.
func (t *Target) AfterRequestGuardrails() []string {
	return append(slices.Clip(t.OutputGuardrails), t.AfterRequestHooks...)
}

// Strategy chooses among a node's targets.
type Strategy struct {
	Mode string `json:"mode"`
	// OnStatusCodes are the statuses that make a fallback try the next target; empty: any
	// failure does.
	OnStatusCodes []int `json:"on_status_codes,omitempty"`
}

// Retry retries a failed call.
type Retry struct {
	Attempts      int   `json:"attempts"`
	OnStatusCodes []int `json:"on_status_codes,omitempty"`
}

// Cache caches answers for MaxAge seconds (0: the gateway's default). It is set at a
// config's root only: the lookup happens before routing chooses a target.
type Cache struct {
	Mode   string `json:"mode"`
	MaxAge int    `json:"max_age,omitempty"`
	// Threshold is the cosine similarity a semantic hit needs (0: the gateway's default).
	Threshold float64 `json:"threshold,omitempty"`
	// Embedding names the model that embeds the last user message for a semantic lookup;
	// nil: the request's own provider and its default embedding model.
	Embedding *CacheEmbedding `json:"embedding,omitempty"`
	// ToolCalls (cache_tool_calls) says whether answers that call tools are cached; nil: they
	// are.
	ToolCalls *bool `json:"cache_tool_calls,omitempty"`
	// Sampled (cache_sampled) caches requests that ask for several choices (n > 1) or set a
	// temperature above 0, whose answers are meant to vary.
	Sampled bool `json:"cache_sampled,omitempty"`
	// SemanticToolsAndTurns lets requests with tools or several user turns be looked up
	// semantically; without it they are exact-only.
	SemanticToolsAndTurns bool `json:"semantic_tools_and_turns,omitempty"`
}

// CachesToolCalls reports whether answers that call tools may be cached (cache_tool_calls,
// true unless a config sets it false).
func (c *Cache) CachesToolCalls() bool { return c.ToolCalls == nil || *c.ToolCalls }

// CacheEmbedding is a semantic cache's embedding model: a managed provider (@slug) or, when
// Provider is empty, the request's own provider, and a model.
type CacheEmbedding struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model"`
}

// ManagedProvider returns the slug of the managed provider the target names (@slug or
// virtual_key), or "".
func (t *Target) ManagedProvider() string {
	if slug, ok := strings.CutPrefix(t.Provider, "@"); ok {
		return slug
	}
	return t.VirtualKey
}

// configOptionFields are the provider-specific string settings a config node may carry.
var configOptionFields = []string{
	"anthropic_version", "api_version", "aws_access_key_id", "aws_region", "aws_secret_access_key",
	"aws_session_token", "azure_model_name", "deployment_id", "openai_organization", "openai_project",
	"resource_name", "vertex_project_id", "vertex_region",
}

// configCredentialFields are the fields a saved config may not hold.
var configCredentialFields = []string{"api_key", "aws_access_key_id", "aws_secret_access_key", "aws_session_token"}

// ConfigOptionFields lists the provider-specific settings a config node may carry.
func ConfigOptionFields() []string { return slices.Clone(configOptionFields) }

var configFields = append([]string{
	"after_request_hooks", "anthropic_beta", "api_key", "azure_entra_scope", "before_request_hooks", "cache", "custom_host",
	"forward_headers", "input_guardrails", "output_guardrails", "override_params", "provider", "request_timeout", "retry",
	"strategy", "strict_openai_compliance", "targets", "virtual_key", "weight",
}, configOptionFields...)

func configError(code, param, format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Detail: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// ParseGatewayConfig reads and validates a config, inline or saved. Errors are *Error with
// an AB code in Detail and the field's path in Param.
func ParseGatewayConfig(raw []byte) (*GatewayConfig, error) {
	if len(raw) > MaxGatewayConfigBytes {
		return nil, configError(ConfigErrJSON, "", "config must be at most %d bytes (got %d)", MaxGatewayConfigBytes, len(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, configError(ConfigErrJSON, "", "config is not valid JSON")
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, configError(ConfigErrJSON, "", "config must be one JSON object, with nothing after it")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, configError(ConfigErrJSON, "", "config must be a JSON object, not %s", describe(v))
	}
	var cfg GatewayConfig
	if err := parseTarget(obj, "", 0, &cfg.Target); err != nil {
		return nil, err
	}
	return &cfg, nil
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// parseTarget validates one node at path, depth levels below the root, into t.
func parseTarget(obj map[string]any, path string, depth int, t *Target) error {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(configFields, k) {
			return configError(ConfigErrJSON, joinPath(path, k), "%s is not a config field", joinPath(path, k))
		}
	}
	str := func(field string, dst *string) error {
		v, ok := obj[field]
		if !ok {
			return nil
		}
		p := joinPath(path, field)
		s, isStr := v.(string)
		if !isStr {
			return configError(ConfigErrJSON, p, "%s must be a string, not %s", p, describe(v))
		}
		if n := utf8.RuneCountInString(s); n > maxConfigString {
			return configError(ConfigErrJSON, p, "%s must be at most %d characters (got %d)", p, maxConfigString, n)
		}
		if hasControl(s) {
			return configError(ConfigErrJSON, p, "%s must not hold control characters", p)
		}
		*dst = s
		return nil
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"provider", &t.Provider}, {"virtual_key", &t.VirtualKey}, {"api_key", &t.APIKey}, {"custom_host", &t.CustomHost},
		{"azure_entra_scope", &t.AzureEntraScope}, {"anthropic_beta", &t.AnthropicBeta}} {
		if err := str(f.name, f.dst); err != nil {
			return err
		}
	}
	for _, f := range configOptionFields {
		var s string
		if err := str(f, &s); err != nil {
			return err
		}
		if _, ok := obj[f]; ok {
			if t.Options == nil {
				t.Options = map[string]string{}
			}
			t.Options[f] = s
		}
	}
	if v, ok := obj["strict_openai_compliance"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			p := joinPath(path, "strict_openai_compliance")
			return configError(ConfigErrJSON, p, "%s must be a boolean, not %s", p, describe(v))
		}
		t.StrictOpenAICompliance = &b
	}
	if err := parseStrategy(obj, path, t); err != nil {
		return err
	}
	if err := parseTargets(obj, path, depth, t); err != nil {
		return err
	}
	if err := parseProvider(obj, path, depth, t); err != nil {
		return err
	}
	if _, ok := obj["api_key"]; ok && strings.TrimSpace(t.APIKey) == "" {
		p := joinPath(path, "api_key")
		return configError(ConfigErrJSON, p, "%s must not be empty", p)
	}
	if _, ok := obj["custom_host"]; ok {
		p := joinPath(path, "custom_host")
		if err := ValidateBaseURL(p, t.CustomHost); err != nil {
			var appErr *Error
			errors.As(err, &appErr)
			return configError(ConfigErrCustomHost, p, "%s", appErr.Message)
		}
	}
	if v, ok := obj["override_params"]; ok {
		p := joinPath(path, "override_params")
		m, isObj := v.(map[string]any)
		if !isObj {
			return configError(ConfigErrOverrideParams, p, "%s must be an object, not %s", p, describe(v))
		}
		if len(m) > maxOverrideParams {
			return configError(ConfigErrOverrideParams, p, "%s must hold at most %d parameters (got %d)", p, maxOverrideParams, len(m))
		}
		t.OverrideParams = plainNumbers(m).(map[string]any)
	}
	if err := parseRetry(obj, path, t); err != nil {
		return err
	}
	if v, ok := obj["request_timeout"]; ok {
		p := joinPath(path, "request_timeout")
		n, whole := wholeNumber(v)
		if !whole || n < 1 || n > MaxRequestTimeoutMS {
			return configError(ConfigErrTimeout, p, "%s must be a whole number of milliseconds from 1 to %d", p, MaxRequestTimeoutMS)
		}
		t.RequestTimeout = int(n)
	}
	if err := parseCache(obj, path, t); err != nil {
		return err
	}
	if v, ok := obj["forward_headers"]; ok {
		p := joinPath(path, "forward_headers")
		arr, isArr := v.([]any)
		if !isArr || len(arr) > maxForwardHeaders {
			return configError(ConfigErrForwardHeaders, p, "%s must be an array of at most %d header names", p, maxForwardHeaders)
		}
		for i, h := range arr {
			s, isStr := h.(string)
			if !isStr || !ValidHeaderName(s) {
				return configError(ConfigErrForwardHeaders, fmt.Sprintf("%s[%d]", p, i), "%s[%d] must be a header name", p, i)
			}
			t.ForwardHeaders = append(t.ForwardHeaders, s)
		}
	}
	if err := parseGuardrailRefs(obj, path, t); err != nil {
		return err
	}
	if v, ok := obj["weight"]; ok {
		p := joinPath(path, "weight")
		if depth == 0 {
			return configError(ConfigErrWeight, p, "weight applies to targets only, not to the config itself")
		}
		w, isNum := number(v)
		if !isNum || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return configError(ConfigErrWeight, p, "%s must be a number of at least 0", p)
		}
		t.Weight = &w
	}
	return nil
}

// parseGuardrailRefs reads a node's guardrails: input_guardrails and output_guardrails as
// arrays of ids or slugs, before_request_hooks and after_request_hooks as arrays of hooks
// {"id", "type"?: "guardrail"} that name saved guardrails.
func parseGuardrailRefs(obj map[string]any, path string, t *Target) error {
	for _, f := range []struct {
		name  string
		dst   *[]string
		hooks bool
	}{{"input_guardrails", &t.InputGuardrails, false}, {"output_guardrails", &t.OutputGuardrails, false},
		{"before_request_hooks", &t.BeforeRequestHooks, true}, {"after_request_hooks", &t.AfterRequestHooks, true}} {
		v, ok := obj[f.name]
		if !ok {
			continue
		}
		p := joinPath(path, f.name)
		arr, isArr := v.([]any)
		if !isArr || len(arr) > MaxGuardrailRefs {
			what := "guardrail ids or slugs"
			if f.hooks {
				what = `hooks {"id": <guardrail id or slug>}`
			}
			return configError(ConfigErrGuardrails, p, "%s must be an array of at most %d %s", p, MaxGuardrailRefs, what)
		}
		refs := make([]string, 0, len(arr))
		for i, el := range arr {
			ep := fmt.Sprintf("%s[%d]", p, i)
			ref, err := guardrailRef(el, ep, f.hooks)
			if err != nil {
				return err
			}
			refs = append(refs, ref)
		}
		*f.dst = refs
	}
	return nil
}

// guardrailRef reads one element of a guardrail list: a string, or for hooks an object
// {"id", "type"?: "guardrail"}.
func guardrailRef(el any, p string, hook bool) (string, error) {
	idPath := p
	if hook {
		m, isObj := el.(map[string]any)
		if !isObj {
			return "", configError(ConfigErrGuardrails, p, `%s must be a hook {"id": <guardrail id or slug>}, not %s`, p, describe(el))
		}
		for _, k := range sortedKeys(m) {
			switch k {
			case "id":
			case "type":
				if m[k] != "guardrail" {
					return "", configError(ConfigErrGuardrails, p+".type", "%s.type must be guardrail", p)
				}
			case "checks", "deny", "async", "on_success", "on_fail":
				return "", configError(ConfigErrGuardrails, p+"."+k, "%s.%s: inline hooks are not supported; save the guardrail (POST /guardrails) and name it by its id or slug", p, k)
			default:
				return "", configError(ConfigErrJSON, p+"."+k, "%s.%s is not a hook field", p, k)
			}
		}
		el, idPath = m["id"], p+".id"
	}
	s, isStr := el.(string)
	if !isStr || ValidateGuardrailRef(idPath, s) != nil {
		return "", configError(ConfigErrGuardrails, idPath, "%s must be a guardrail id or slug (lower-case letters, digits, '-' and '_')", idPath)
	}
	return s, nil
}

func parseStrategy(obj map[string]any, path string, t *Target) error {
	v, ok := obj["strategy"]
	if !ok {
		return nil
	}
	p := joinPath(path, "strategy")
	m, isObj := v.(map[string]any)
	if !isObj {
		return configError(ConfigErrStrategy, p, "%s must be an object with a mode, not %s", p, describe(v))
	}
	for _, k := range sortedKeys(m) {
		if k != "mode" && k != "on_status_codes" {
			return configError(ConfigErrJSON, p+"."+k, "%s.%s is not a strategy field", p, k)
		}
	}
	mode, _ := m["mode"].(string)
	if mode != StrategySingle && mode != StrategyFallback && mode != StrategyLoadBalance {
		return configError(ConfigErrStrategy, p+".mode", "%s.mode must be single, fallback or loadbalance", p)
	}
	t.Strategy = &Strategy{Mode: mode}
	if v, ok := m["on_status_codes"]; ok {
		codes, err := statusCodes(v, p+".on_status_codes")
		if err != nil {
			return err
		}
		t.Strategy.OnStatusCodes = codes
	}
	return nil
}

func parseTargets(obj map[string]any, path string, depth int, t *Target) error {
	p := joinPath(path, "targets")
	v, ok := obj["targets"]
	if !ok {
		if t.Strategy != nil {
			return configError(ConfigErrTargets, p, "a strategy needs targets: %s is missing", p)
		}
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return configError(ConfigErrTargets, p, "%s must be an array of targets, not %s", p, describe(v))
	}
	if t.Strategy == nil {
		sp := joinPath(path, "strategy")
		return configError(ConfigErrStrategy, sp, "%s is required with targets: give its mode (single, fallback or loadbalance)", sp)
	}
	if len(arr) == 0 || len(arr) > MaxConfigTargets {
		return configError(ConfigErrTargets, p, "%s must hold from 1 to %d targets (got %d)", p, MaxConfigTargets, len(arr))
	}
	if depth+1 > MaxConfigDepth {
		return configError(ConfigErrDepth, p, "targets may be nested at most %d deep", MaxConfigDepth)
	}
	t.Targets = make([]Target, len(arr))
	for i, el := range arr {
		tp := fmt.Sprintf("%s[%d]", p, i)
		m, isObj := el.(map[string]any)
		if !isObj {
			return configError(ConfigErrTargets, tp, "%s must be an object, not %s", tp, describe(el))
		}
		if err := parseTarget(m, tp, depth+1, &t.Targets[i]); err != nil {
			return err
		}
	}
	if t.Strategy.Mode == StrategyLoadBalance {
		total := 0.0
		for _, c := range t.Targets {
			if c.Weight == nil {
				total++
				continue
			}
			total += *c.Weight
		}
		if total <= 0 {
			return configError(ConfigErrWeight, p, "at least one of %s needs a weight above 0 to balance the load", p)
		}
	}
	return nil
}

func parseProvider(obj map[string]any, path string, depth int, t *Target) error {
	if _, ok := obj["provider"]; ok {
		p := joinPath(path, "provider")
		if slug, managed := strings.CutPrefix(t.Provider, "@"); managed {
			if ValidateSlug(p, slug) != nil {
				return configError(ConfigErrProvider, p, "%s must be @ and a provider slug of lower-case letters, digits, '-' and '_'", p)
			}
		} else if !IsProviderType(t.Provider) {
			return configError(ConfigErrProvider, p, "%s must be a known provider type (openai, anthropic, azure-openai...) or @<provider slug> (got %q)", p, truncate(t.Provider, 64))
		}
	}
	if _, ok := obj["virtual_key"]; ok {
		p := joinPath(path, "virtual_key")
		if ValidateSlug(p, t.VirtualKey) != nil {
			return configError(ConfigErrProvider, p, "%s must be a provider slug of lower-case letters, digits, '-' and '_'", p)
		}
		if strings.HasPrefix(t.Provider, "@") {
			return configError(ConfigErrProvider, p, "give either provider @<slug> or %s, not both", p)
		}
	}
	if depth > 0 && t.Provider == "" && t.VirtualKey == "" && len(t.Targets) == 0 {
		return configError(ConfigErrNoProvider, path, "%s needs a provider, a virtual_key or targets", path)
	}
	return nil
}

func parseRetry(obj map[string]any, path string, t *Target) error {
	v, ok := obj["retry"]
	if !ok {
		return nil
	}
	p := joinPath(path, "retry")
	m, isObj := v.(map[string]any)
	if !isObj {
		return configError(ConfigErrRetry, p, "%s must be an object with attempts, not %s", p, describe(v))
	}
	for _, k := range sortedKeys(m) {
		if k != "attempts" && k != "on_status_codes" {
			return configError(ConfigErrJSON, p+"."+k, "%s.%s is not a retry field", p, k)
		}
	}
	n, whole := wholeNumber(m["attempts"])
	if !whole || n < 0 || n > MaxRetryAttempts {
		return configError(ConfigErrRetry, p+".attempts", "%s.attempts must be a whole number from 0 to %d", p, MaxRetryAttempts)
	}
	t.Retry = &Retry{Attempts: int(n)}
	if v, ok := m["on_status_codes"]; ok {
		codes, err := statusCodes(v, p+".on_status_codes")
		if err != nil {
			return err
		}
		t.Retry.OnStatusCodes = codes
	}
	return nil
}

func parseCache(obj map[string]any, path string, t *Target) error {
	v, ok := obj["cache"]
	if !ok {
		return nil
	}
	p := joinPath(path, "cache")
	if path != "" {
		// The cache is looked up before routing picks a target, so it is the whole config's.
		return configError(ConfigErrCache, p, "%s is not allowed here: cache applies to the whole config; set it at the config's root", p)
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		return configError(ConfigErrCache, p, "%s must be an object with a mode, not %s", p, describe(v))
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(cacheFields, k) {
			return configError(ConfigErrJSON, p+"."+k, "%s.%s is not a cache field", p, k)
		}
	}
	mode, _ := m["mode"].(string)
	if mode != CacheSimple && mode != CacheSemantic {
		return configError(ConfigErrCache, p+".mode", "%s.mode must be simple or semantic", p)
	}
	c := &Cache{Mode: mode}
	if v, ok := m["max_age"]; ok {
		n, whole := wholeNumber(v)
		if !whole || n < 1 || n > MaxCacheAgeSeconds {
			return configError(ConfigErrCache, p+".max_age", "%s.max_age must be a whole number of seconds from 1 to %d", p, MaxCacheAgeSeconds)
		}
		c.MaxAge = int(n)
	}
	var toolCalls bool
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"cache_tool_calls", &toolCalls}, {"cache_sampled", &c.Sampled}, {"semantic_tools_and_turns", &c.SemanticToolsAndTurns}} {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		b, isBool := v.(bool)
		if !isBool {
			return configError(ConfigErrCache, p+"."+f.name, "%s.%s must be a boolean, not %s", p, f.name, describe(v))
		}
		*f.dst = b
	}
	if _, ok := m["cache_tool_calls"]; ok {
		c.ToolCalls = &toolCalls
	}
	if v, ok := m["threshold"]; ok {
		f, isNum := number(v)
		if !isNum || !(f > 0 && f <= 1) {
			return configError(ConfigErrCache, p+".threshold", "%s.threshold must be a number above 0 and at most 1 (a cosine similarity)", p)
		}
		c.Threshold = f
	}
	if v, ok := m["embedding"]; ok {
		e, err := parseCacheEmbedding(v, p+".embedding")
		if err != nil {
			return err
		}
		c.Embedding = e
	}
	if mode == CacheSimple {
		for _, k := range []string{"threshold", "embedding", "semantic_tools_and_turns"} {
			if _, ok := m[k]; ok {
				return configError(ConfigErrCache, p+"."+k, "%s.%s applies to mode semantic only", p, k)
			}
		}
	}
	t.Cache = c
	return nil
}

// cacheFields are the fields of a config's cache.
var cacheFields = []string{"mode", "max_age", "threshold", "embedding", "cache_tool_calls", "cache_sampled", "semantic_tools_and_turns"}

func parseCacheEmbedding(v any, p string) (*CacheEmbedding, error) {
	m, isObj := v.(map[string]any)
	if !isObj {
		return nil, configError(ConfigErrCache, p, "%s must be an object with a model, and optionally a provider, not %s", p, describe(v))
	}
	for _, k := range sortedKeys(m) {
		if k != "provider" && k != "model" {
			return nil, configError(ConfigErrJSON, p+"."+k, "%s.%s is not a cache embedding field", p, k)
		}
	}
	e := &CacheEmbedding{}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"provider", &e.Provider}, {"model", &e.Model}} {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		s, isStr := v.(string)
		if !isStr || s == "" || len(s) > 256 || hasControl(s) {
			return nil, configError(ConfigErrCache, p+"."+f.name, "%s.%s must be a string of 1 to 256 characters", p, f.name)
		}
		*f.dst = s
	}
	if e.Model == "" {
		return nil, configError(ConfigErrCache, p+".model", "%s.model is required: the embedding model the semantic cache calls", p)
	}
	if e.Provider != "" {
		slug, managed := strings.CutPrefix(e.Provider, "@")
		if !managed || ValidateSlug(p+".provider", slug) != nil {
			return nil, configError(ConfigErrCache, p+".provider", "%s.provider must be @<provider slug>: a managed provider whose credential the gateway holds", p)
		}
	}
	return e, nil
}

func statusCodes(v any, p string) ([]int, error) {
	arr, isArr := v.([]any)
	if !isArr || len(arr) > maxStatusCodes {
		return nil, configError(ConfigErrStatusCodes, p, "%s must be an array of at most %d HTTP status codes", p, maxStatusCodes)
	}
	out := make([]int, 0, len(arr))
	for i, c := range arr {
		n, whole := wholeNumber(c)
		if !whole || n < 100 || n > 599 {
			return nil, configError(ConfigErrStatusCodes, fmt.Sprintf("%s[%d]", p, i), "%s[%d] must be an HTTP status code from 100 to 599", p, i)
		}
		out = append(out, int(n))
	}
	return out, nil
}

// number reads a JSON number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// wholeNumber reads a JSON number that is a whole number (3 or 3.0, not 3.5).
func wholeNumber(v any) (int64, bool) {
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// plainNumbers turns the json.Numbers of a decoded value into float64 (integers that fit
// into int64 stay exact as int64), so that the parsed config holds ordinary Go values.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainNumbers(e)
		}
		return out
	}
	return v
}

// walk calls fn with every node of the tree and its path, the root first.
func (t *Target) walk(path string, fn func(path string, t *Target) error) error {
	if err := fn(path, t); err != nil {
		return err
	}
	for i := range t.Targets {
		if err := t.Targets[i].walk(fmt.Sprintf("%s[%d]", joinPath(path, "targets"), i), fn); err != nil {
			return err
		}
	}
	return nil
}

// ValidateSaved refuses what a saved config may not hold: credentials. Secrets are kept only
// sealed, in integrations and providers, which a saved config names.
func (c *GatewayConfig) ValidateSaved() error {
	return c.walk("", func(path string, t *Target) error {
		for _, f := range configCredentialFields {
			if (f == "api_key" && t.APIKey != "") || t.Options[f] != "" {
				p := joinPath(path, f)
				return configError(ConfigErrCredential, p, "a saved config may not hold credentials such as %s: create a provider and name it as @<provider slug>", p)
			}
		}
		return nil
	})
}

// ConfigGuardrail is a guardrail a config names and the path of the field that names it
// (targets[0].input_guardrails[1], before_request_hooks[0].id).
type ConfigGuardrail struct {
	Param string
	Ref   string
}

// Guardrails lists the guardrails the config names, root first, for the check that they
// exist and that the config's workspace may use them.
func (c *GatewayConfig) Guardrails() []ConfigGuardrail {
	var out []ConfigGuardrail
	_ = c.walk("", func(path string, t *Target) error {
		for _, f := range []struct {
			name  string
			refs  []string
			hooks bool
		}{{"input_guardrails", t.InputGuardrails, false}, {"output_guardrails", t.OutputGuardrails, false},
			{"before_request_hooks", t.BeforeRequestHooks, true}, {"after_request_hooks", t.AfterRequestHooks, true}} {
			for i, ref := range f.refs {
				p := fmt.Sprintf("%s[%d]", joinPath(path, f.name), i)
				if f.hooks {
					p += ".id"
				}
				out = append(out, ConfigGuardrail{Param: p, Ref: ref})
			}
		}
		return nil
	})
	return out
}

// ConfigHost is a custom host of a config and the path of its field.
type ConfigHost struct {
	Param string
	URL   string
}

// CustomHosts lists the config's custom hosts, root first, for the host check.
func (c *GatewayConfig) CustomHosts() []ConfigHost {
	var out []ConfigHost
	_ = c.walk("", func(path string, t *Target) error {
		if t.CustomHost != "" {
			out = append(out, ConfigHost{Param: joinPath(path, "custom_host"), URL: t.CustomHost})
		}
		return nil
	})
	return out
}

// ParseSavedConfig parses a config to be saved: ParseGatewayConfig and ValidateSaved, with
// the params of errors under "config" (the field of the admin body). It returns the config
// and its compact JSON, which is what is stored.
func ParseSavedConfig(raw []byte) (*GatewayConfig, string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, "", configError(ConfigErrJSON, "config", "config is required: a JSON object")
	}
	cfg, err := ParseGatewayConfig(raw)
	if err == nil {
		err = cfg.ValidateSaved()
	}
	if err != nil {
		var appErr *Error
		if errors.As(err, &appErr) {
			e := *appErr
			e.Param = "config"
			if appErr.Param != "" {
				e.Param += "." + appErr.Param
			}
			return nil, "", &e
		}
		return nil, "", err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, "", configError(ConfigErrJSON, "config", "config is not valid JSON")
	}
	return cfg, buf.String(), nil
}

// SavedConfigPrefix names the streams of saved configs.
const SavedConfigPrefix = "config"

// SavedConfig is a config saved in a workspace, referred to by its id or slug. Every change of
// its config is a new version; the latest is the one in force.
type SavedConfig struct {
	ID             string          `json:"id"`
	OrganisationID string          `json:"organisation_id"`
	WorkspaceID    string          `json:"workspace_id"`
	Slug           string          `json:"slug"`
	Name           string          `json:"name"`
	Status         string          `json:"status"`
	Versions       []ConfigVersion `json:"versions"`
	OwnerID        string          `json:"owner_id"`
	UpdatedBy      string          `json:"updated_by"`
	CreatedAt      time.Time       `json:"created_at"`
	LastUpdatedAt  time.Time       `json:"last_updated_at"`
}

// ConfigVersion is one version of a saved config: its compact JSON.
type ConfigVersion struct {
	ID        string    `json:"version_id"`
	Config    string    `json:"config"`
	Name      string    `json:"name"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}

type ConfigCreated struct {
	ConfigID       string    `json:"config_id"`
	OrganisationID string    `json:"organisation_id"`
	WorkspaceID    string    `json:"workspace_id"`
	Slug           string    `json:"slug"`
	Name           string    `json:"name"`
	VersionID      string    `json:"version_id"`
	Config         string    `json:"config"`
	By             string    `json:"by"`
	At             time.Time `json:"at"`
}

// ConfigUpdated renames a config and, when Config is set, adds a version.
type ConfigUpdated struct {
	ConfigID  string    `json:"config_id"`
	Name      *string   `json:"name,omitempty"`
	VersionID string    `json:"version_id,omitempty"`
	Config    string    `json:"config,omitempty"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

// ConfigArchived is DELETE: the config stops serving and frees its slug.
type ConfigArchived struct {
	ConfigID string    `json:"config_id"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
}

func (ConfigCreated) EventType() string  { return "ConfigCreated" }
func (ConfigUpdated) EventType() string  { return "ConfigUpdated" }
func (ConfigArchived) EventType() string { return "ConfigArchived" }

func savedConfigModule() module {
	return module{prefix: SavedConfigPrefix, aggregate: func() Aggregate { return &SavedConfig{} },
		events: []Event{ConfigCreated{}, ConfigUpdated{}, ConfigArchived{}}}
}

func (c *SavedConfig) Apply(e Event) {
	switch e := e.(type) {
	case ConfigCreated:
		*c = SavedConfig{ID: e.ConfigID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Slug: e.Slug,
			Name: e.Name, Status: StatusActive, OwnerID: e.By, UpdatedBy: e.By, CreatedAt: e.At, LastUpdatedAt: e.At,
			Versions: []ConfigVersion{{ID: e.VersionID, Config: e.Config, Name: e.Name, CreatedBy: e.By, CreatedAt: e.At}}}
	case ConfigUpdated:
		if e.Name != nil {
			c.Name = *e.Name
		}
		if e.VersionID != "" {
			// Copy on write: read models hand out copies that share the slice.
			c.Versions = append(slices.Clip(c.Versions), ConfigVersion{ID: e.VersionID, Config: e.Config, Name: c.Name,
				CreatedBy: e.By, CreatedAt: e.At})
		}
		c.UpdatedBy, c.LastUpdatedAt = e.By, e.At
	case ConfigArchived:
		c.Status, c.UpdatedBy, c.LastUpdatedAt = StatusArchived, e.By, e.At
	}
}

// Exists reports whether the config was created and not deleted.
func (c *SavedConfig) Exists() bool { return c.ID != "" && c.Status != StatusArchived }

// Latest is the version in force.
func (c *SavedConfig) Latest() ConfigVersion {
	if len(c.Versions) == 0 {
		return ConfigVersion{}
	}
	return c.Versions[len(c.Versions)-1]
}

// CreateSavedConfig is the create command's input, already decoded.
type CreateSavedConfig struct {
	ConfigID       string
	OrganisationID string
	WorkspaceID    string
	Slug           string
	Name           string
	VersionID      string
	Config         []byte
	By             string
}

// Create decides the creation of a saved config.
func (c *SavedConfig) Create(in CreateSavedConfig, now time.Time) ([]Event, error) {
	if c.ID != "" {
		return nil, Errorf(CodeConflict, "config %s exists already", in.ConfigID)
	}
	if err := ValidateName("name", in.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	_, compact, err := ParseSavedConfig(in.Config)
	if err != nil {
		return nil, err
	}
	return []Event{ConfigCreated{ConfigID: in.ConfigID, OrganisationID: in.OrganisationID, WorkspaceID: in.WorkspaceID,
		Slug: in.Slug, Name: in.Name, VersionID: in.VersionID, Config: compact, By: in.By, At: now}}, nil
}

// UpdateSavedConfig renames a config and, when Config is given, saves a new version of it.
type UpdateSavedConfig struct {
	Name      *string
	Config    []byte
	VersionID string
	By        string
}

// Update decides a change of the config.
func (c *SavedConfig) Update(in UpdateSavedConfig, now time.Time) ([]Event, error) {
	if !c.Exists() {
		return nil, Errorf(CodeNotFound, "config not found")
	}
	if in.Name == nil && in.Config == nil {
		return nil, Invalid("", "nothing to update: give name or config")
	}
	if in.Name != nil {
		if err := ValidateName("name", *in.Name, true); err != nil {
			return nil, err
		}
	}
	e := ConfigUpdated{ConfigID: c.ID, Name: in.Name, By: in.By, At: now}
	if in.Config != nil {
		_, compact, err := ParseSavedConfig(in.Config)
		if err != nil {
			return nil, err
		}
		e.VersionID, e.Config = in.VersionID, compact
	}
	return []Event{e}, nil
}

// Archive decides the deletion of a config.
func (c *SavedConfig) Archive(by string, now time.Time) ([]Event, error) {
	if !c.Exists() {
		return nil, Errorf(CodeNotFound, "config not found")
	}
	return []Event{ConfigArchived{ConfigID: c.ID, By: by, At: now}}, nil
}

// ConfigDefaultPrefix names the streams that hold each workspace's default config.
const ConfigDefaultPrefix = "configdefault"

// ConfigDefault is which saved config is its workspace's default (is_default): at most one,
// held in a stream of the workspace's own so that making one config the default unmakes the
// previous one in the same write.
type ConfigDefault struct {
	WorkspaceID string `json:"workspace_id"`
	ConfigID    string `json:"config_id"`
}

// ConfigDefaultSet makes ConfigID the workspace's default config ("" for none).
type ConfigDefaultSet struct {
	WorkspaceID string    `json:"workspace_id"`
	ConfigID    string    `json:"config_id"`
	At          time.Time `json:"at"`
}

func (ConfigDefaultSet) EventType() string { return "ConfigDefaultSet" }

func configDefaultModule() module {
	return module{prefix: ConfigDefaultPrefix, aggregate: func() Aggregate { return &ConfigDefault{} },
		events: []Event{ConfigDefaultSet{}}}
}

func (d *ConfigDefault) Apply(e Event) {
	if e, ok := e.(ConfigDefaultSet); ok {
		d.WorkspaceID, d.ConfigID = e.WorkspaceID, e.ConfigID
	}
}

// Set decides making configID the default (or, when isDefault is false, no longer the
// default if it is).
func (d *ConfigDefault) Set(workspaceID, configID string, isDefault bool, now time.Time) ([]Event, error) {
	switch {
	case isDefault && d.ConfigID != configID:
		return []Event{ConfigDefaultSet{WorkspaceID: workspaceID, ConfigID: configID, At: now}}, nil
	case !isDefault && d.ConfigID == configID && configID != "":
		return []Event{ConfigDefaultSet{WorkspaceID: workspaceID, At: now}}, nil
	}
	return nil, nil
}

// describe names a JSON value's kind for messages, never its content.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
