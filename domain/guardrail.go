package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A guardrail is a named set of checks (default.regexMatch, lasso.classify, ...) with their
// parameters, and the actions to take on their verdict (deny, async, feedback on success and
// on failure). It belongs to an organisation (WorkspaceID "": any workspace of it may attach
// it) or to one workspace. Configs attach guardrails by id or slug (input_guardrails,
// output_guardrails, before_request_hooks, after_request_hooks) and so do workspaces (their
// defaults' input_guardrails and output_guardrails); the gateway runs them. Every change of
// the checks or actions is a new version; the latest is the one in force.
//
// Which checks exist, and what their parameters may be, the guardrail engine knows: a
// decision asks a CheckValidator, which the command layer is given.

// GuardrailPrefix names the streams of guardrails.
const GuardrailPrefix = "guardrail"

// Bounds of a guardrail.
const (
	// MaxGuardrailChecks bounds the checks of one guardrail.
	MaxGuardrailChecks = 50
	// MaxCheckParamsBytes bounds one check's parameters, as compact JSON.
	MaxCheckParamsBytes = 64 << 10
	// MaxGuardrailParamsBytes bounds the parameters of all the checks of a guardrail together.
	MaxGuardrailParamsBytes = 256 << 10
	// MaxCheckIDLength bounds a check's id (default.regexMatch).
	MaxCheckIDLength = 128
	// MaxFeedbackMetadata bounds an action's feedback metadata, in characters.
	MaxFeedbackMetadata = 4096
	// MaxGuardrailRefs bounds the guardrails one list of a config or workspace attaches.
	MaxGuardrailRefs = 50
)

// The reference's feedback defaults: a passing verdict scores 5, a failing one -5, weight 1.
const (
	DefaultSuccessFeedback = 5.0
	DefaultFailFeedback    = -5.0
	DefaultFeedbackWeight  = 1.0
)

// CheckValidator knows the guardrail checks: Validate refuses a check id it does not know
// with an error wrapping ErrUnknownCheck, and parameters the check cannot run with with a
// *CheckParamError naming the parameter. Any other error is about the parameters as a whole.
type CheckValidator interface {
	Validate(id string, params map[string]any) error
}

// ErrUnknownCheck is a check id that no check answers to.
var ErrUnknownCheck = errors.New("unknown guardrail check")

// CheckParamError is a check's parameter that is missing or out of its bounds. Param is its
// path within the parameters (metadataPairs, tools.allowedTypes[1]).
type CheckParamError struct {
	Param   string
	Message string
}

func (e *CheckParamError) Error() string { return e.Param + ": " + e.Message }

// GuardrailCheck is one check of a guardrail and its parameters.
type GuardrailCheck struct {
	ID         string         `json:"id"`
	Parameters map[string]any `json:"parameters"`
	// Name is the check's own name in this guardrail ("" : none).
	Name      string `json:"name,omitempty"`
	IsEnabled bool   `json:"is_enabled"`
}

// GuardrailActions is what a guardrail does with its verdict.
type GuardrailActions struct {
	// Deny refuses the request (or the answer) when a check fails.
	Deny bool `json:"deny"`
	// Async runs the checks off the request's path: their verdict is logged, never enforced.
	Async     bool             `json:"async"`
	OnSuccess GuardrailOutcome `json:"on_success"`
	OnFail    GuardrailOutcome `json:"on_fail"`
}

// GuardrailOutcome is what a guardrail records when its checks pass, or fail.
type GuardrailOutcome struct {
	Feedback GuardrailFeedback `json:"feedback"`
}

// GuardrailFeedback is the feedback a verdict records on the request: a value from -10 to
// 10, its weight from 0 to 1, and metadata.
type GuardrailFeedback struct {
	Value    float64 `json:"value"`
	Weight   float64 `json:"weight"`
	Metadata string  `json:"metadata"`
}

// DefaultGuardrailActions are the reference's defaults: no deny, not async, feedback 5 on
// success and -5 on failure, each of weight 1.
func DefaultGuardrailActions() GuardrailActions {
	return GuardrailActions{
		OnSuccess: GuardrailOutcome{Feedback: GuardrailFeedback{Value: DefaultSuccessFeedback, Weight: DefaultFeedbackWeight}},
		OnFail:    GuardrailOutcome{Feedback: GuardrailFeedback{Value: DefaultFailFeedback, Weight: DefaultFeedbackWeight}},
	}
}

// Guardrail is a guardrail of an organisation or of one of its workspaces, referred to by its
// id or slug (unique in the organisation).
type Guardrail struct {
	ID             string `json:"id"`
	OrganisationID string `json:"organisation_id"`
	// WorkspaceID is "" for an organisation guardrail.
	WorkspaceID   string             `json:"workspace_id"`
	Slug          string             `json:"slug"`
	Name          string             `json:"name"`
	Status        string             `json:"status"`
	Versions      []GuardrailVersion `json:"versions"`
	OwnerID       string             `json:"owner_id"`
	UpdatedBy     string             `json:"updated_by"`
	CreatedAt     time.Time          `json:"created_at"`
	LastUpdatedAt time.Time          `json:"last_updated_at"`
}

// GuardrailVersion is one version of a guardrail: its checks and actions.
type GuardrailVersion struct {
	ID        string           `json:"version_id"`
	Name      string           `json:"name"`
	Checks    []GuardrailCheck `json:"checks"`
	Actions   GuardrailActions `json:"actions"`
	CreatedBy string           `json:"created_by"`
	CreatedAt time.Time        `json:"created_at"`
}

type GuardrailCreated struct {
	GuardrailID    string           `json:"guardrail_id"`
	OrganisationID string           `json:"organisation_id"`
	WorkspaceID    string           `json:"workspace_id,omitempty"`
	Slug           string           `json:"slug"`
	Name           string           `json:"name"`
	VersionID      string           `json:"version_id"`
	Checks         []GuardrailCheck `json:"checks"`
	Actions        GuardrailActions `json:"actions"`
	By             string           `json:"by"`
	At             time.Time        `json:"at"`
}

// GuardrailUpdated renames a guardrail and, when VersionID is set, adds a version whose
// checks and actions are Checks and Actions (both whole).
type GuardrailUpdated struct {
	GuardrailID string            `json:"guardrail_id"`
	Name        *string           `json:"name,omitempty"`
	VersionID   string            `json:"version_id,omitempty"`
	Checks      []GuardrailCheck  `json:"checks,omitempty"`
	Actions     *GuardrailActions `json:"actions,omitempty"`
	By          string            `json:"by"`
	At          time.Time         `json:"at"`
}

// GuardrailArchived is DELETE: the guardrail stops applying and frees its slug.
type GuardrailArchived struct {
	GuardrailID string    `json:"guardrail_id"`
	By          string    `json:"by"`
	At          time.Time `json:"at"`
}

func (GuardrailCreated) EventType() string  { return "GuardrailCreated" }
func (GuardrailUpdated) EventType() string  { return "GuardrailUpdated" }
func (GuardrailArchived) EventType() string { return "GuardrailArchived" }

func guardrailModule() module {
	return module{prefix: GuardrailPrefix, aggregate: func() Aggregate { return &Guardrail{} },
		events: []Event{GuardrailCreated{}, GuardrailUpdated{}, GuardrailArchived{}}}
}

func (g *Guardrail) Apply(e Event) {
	switch e := e.(type) {
	case GuardrailCreated:
		*g = Guardrail{ID: e.GuardrailID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Slug: e.Slug,
			Name: e.Name, Status: StatusActive, OwnerID: e.By, UpdatedBy: e.By, CreatedAt: e.At, LastUpdatedAt: e.At,
			Versions: []GuardrailVersion{{ID: e.VersionID, Name: e.Name, Checks: e.Checks, Actions: e.Actions,
				CreatedBy: e.By, CreatedAt: e.At}}}
	case GuardrailUpdated:
		if e.Name != nil {
			g.Name = *e.Name
		}
		if e.VersionID != "" {
			v := GuardrailVersion{ID: e.VersionID, Name: g.Name, Checks: e.Checks, Actions: g.Latest().Actions,
				CreatedBy: e.By, CreatedAt: e.At}
			if e.Actions != nil {
				v.Actions = *e.Actions
			}
			// Copy on write: read models hand out copies that share the slice.
			g.Versions = append(slices.Clip(g.Versions), v)
		}
		g.UpdatedBy, g.LastUpdatedAt = e.By, e.At
	case GuardrailArchived:
		g.Status, g.UpdatedBy, g.LastUpdatedAt = StatusArchived, e.By, e.At
	}
}

// Exists reports whether the guardrail was created and not deleted.
func (g *Guardrail) Exists() bool { return g.ID != "" && g.Status != StatusArchived }

// Latest is the version in force.
func (g *Guardrail) Latest() GuardrailVersion {
	if len(g.Versions) == 0 {
		return GuardrailVersion{}
	}
	return g.Versions[len(g.Versions)-1]
}

// UsableBy reports whether a workspace may attach the guardrail: an organisation guardrail
// any workspace of its organisation, a workspace guardrail its own workspace only. It says
// nothing of whether the guardrail is live (Exists).
func (g *Guardrail) UsableBy(workspaceID string) bool {
	return g.WorkspaceID == "" || g.WorkspaceID == workspaceID
}

// CreateGuardrail is the create command's input, already decoded: Checks and Actions are
// their JSON as sent (ParseGuardrailChecks, ParseGuardrailActions read them).
type CreateGuardrail struct {
	GuardrailID    string
	OrganisationID string
	WorkspaceID    string
	Slug           string
	Name           string
	VersionID      string
	Checks         []byte
	Actions        []byte
	By             string
}

// Create decides the creation of a guardrail; v says which checks exist.
func (g *Guardrail) Create(in CreateGuardrail, v CheckValidator, now time.Time) ([]Event, error) {
	if g.ID != "" {
		return nil, Errorf(CodeConflict, "guardrail %s exists already", in.GuardrailID)
	}
	if err := ValidateName("name", in.Name, true); err != nil {
		return nil, err
	}
	if err := ValidateSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	checks, err := ParseGuardrailChecks(in.Checks, v)
	if err != nil {
		return nil, err
	}
	if in.Actions == nil {
		return nil, Invalid("actions", "actions is required: an object of deny, async, on_success and on_fail (each may be left to its default)")
	}
	actions, err := ParseGuardrailActions(in.Actions)
	if err != nil {
		return nil, err
	}
	return []Event{GuardrailCreated{GuardrailID: in.GuardrailID, OrganisationID: in.OrganisationID, WorkspaceID: in.WorkspaceID,
		Slug: in.Slug, Name: in.Name, VersionID: in.VersionID, Checks: checks, Actions: actions, By: in.By, At: now}}, nil
}

// UpdateGuardrail renames a guardrail and, when Checks or Actions is given (each replaces
// the one in force whole), saves a new version VersionID of it.
type UpdateGuardrail struct {
	Name      *string
	Checks    []byte
	Actions   []byte
	VersionID string
	By        string
}

// Update decides a change of the guardrail; v says which checks exist.
func (g *Guardrail) Update(in UpdateGuardrail, v CheckValidator, now time.Time) ([]Event, error) {
	if !g.Exists() {
		return nil, Errorf(CodeNotFound, "guardrail not found")
	}
	if in.Name == nil && in.Checks == nil && in.Actions == nil {
		return nil, Invalid("", "nothing to update: give name, checks or actions")
	}
	if in.Name != nil {
		if err := ValidateName("name", *in.Name, true); err != nil {
			return nil, err
		}
	}
	e := GuardrailUpdated{GuardrailID: g.ID, Name: in.Name, By: in.By, At: now}
	if in.Checks == nil && in.Actions == nil {
		return []Event{e}, nil
	}
	latest := g.Latest()
	e.VersionID, e.Checks, e.Actions = in.VersionID, latest.Checks, &latest.Actions
	if in.Checks != nil {
		checks, err := ParseGuardrailChecks(in.Checks, v)
		if err != nil {
			return nil, err
		}
		e.Checks = checks
	}
	if in.Actions != nil {
		actions, err := ParseGuardrailActions(in.Actions)
		if err != nil {
			return nil, err
		}
		e.Actions = &actions
	}
	return []Event{e}, nil
}

// Archive decides the deletion of a guardrail.
func (g *Guardrail) Archive(by string, now time.Time) ([]Event, error) {
	if !g.Exists() {
		return nil, Errorf(CodeNotFound, "guardrail not found")
	}
	return []Event{GuardrailArchived{GuardrailID: g.ID, By: by, At: now}}, nil
}

// checkIDPattern is the form of a check id: dot-separated names, the first the check's
// provider (default, portkey, lasso, panw-prisma-airs...).
var checkIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$`)

var guardrailCheckFields = []string{"id", "parameters", "name", "is_enabled"}

// decodeJSONValue reads one JSON value with its numbers kept as json.Number.
func decodeJSONValue(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return v, true
}

// ParseGuardrailChecks reads a guardrail's checks (a JSON array of {id, parameters, name,
// is_enabled}) and has v validate each check's id and parameters. Errors name the field:
// checks[2].id, checks[0].parameters.metadataPairs.
func ParseGuardrailChecks(raw []byte, v CheckValidator) ([]GuardrailCheck, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, Invalid("checks", "checks is required: an array of 1 to %d checks {id, parameters}", MaxGuardrailChecks)
	}
	val, ok := decodeJSONValue(raw)
	if !ok {
		return nil, Invalid("checks", "checks is not valid JSON")
	}
	arr, isArr := val.([]any)
	if !isArr {
		return nil, Invalid("checks", "checks must be an array of checks {id, parameters}, not %s", describe(val))
	}
	if len(arr) == 0 || len(arr) > MaxGuardrailChecks {
		return nil, Invalid("checks", "checks must hold from 1 to %d checks (got %d)", MaxGuardrailChecks, len(arr))
	}
	out := make([]GuardrailCheck, len(arr))
	total := 0
	for i, el := range arr {
		p := fmt.Sprintf("checks[%d]", i)
		m, isObj := el.(map[string]any)
		if !isObj {
			return nil, Invalid(p, "%s must be an object {id, parameters}, not %s", p, describe(el))
		}
		for _, k := range sortedKeys(m) {
			if !slices.Contains(guardrailCheckFields, k) {
				return nil, Invalid(p+"."+k, "%s.%s is not a check field; the fields are %s", p, k, strings.Join(guardrailCheckFields, ", "))
			}
		}
		c := GuardrailCheck{IsEnabled: true}
		id, isStr := m["id"].(string)
		if !isStr || id == "" {
			return nil, Invalid(p+".id", "%s.id is required: the check's id, such as default.regexMatch", p)
		}
		if len(id) > MaxCheckIDLength || !checkIDPattern.MatchString(id) {
			return nil, Invalid(p+".id", "%s.id must be a check id of at most %d characters, such as default.regexMatch (got %q)", p, MaxCheckIDLength, truncate(id, 64))
		}
		c.ID = id
		if n, ok := m["name"]; ok {
			s, isStr := n.(string)
			if !isStr {
				return nil, Invalid(p+".name", "%s.name must be a string, not %s", p, describe(n))
			}
			if err := ValidateName(p+".name", s, false); err != nil {
				return nil, err
			}
			c.Name = s
		}
		if e, ok := m["is_enabled"]; ok {
			b, isBool := e.(bool)
			if !isBool {
				return nil, Invalid(p+".is_enabled", "%s.is_enabled must be a boolean, not %s", p, describe(e))
			}
			c.IsEnabled = b
		}
		params, size, err := checkParameters(m["parameters"], p+".parameters")
		if err != nil {
			return nil, err
		}
		if total += size; total > MaxGuardrailParamsBytes {
			return nil, Invalid("checks", "the parameters of all checks must be at most %d bytes of JSON together (got more than that by checks[%d])", MaxGuardrailParamsBytes, i)
		}
		if err := validateCheck(v, p, c.ID, params); err != nil {
			return nil, err
		}
		c.Parameters = params
		out[i] = c
	}
	return out, nil
}

// checkParameters reads a check's parameters (absent or null: none) as the gateway will read
// them back from the event, and returns their size as compact JSON.
func checkParameters(v any, p string) (map[string]any, int, error) {
	if v == nil {
		return map[string]any{}, 2, nil
	}
	if _, isObj := v.(map[string]any); !isObj {
		return nil, 0, Invalid(p, "%s must be an object, not %s", p, describe(v))
	}
	compact, err := json.Marshal(v)
	if err != nil {
		return nil, 0, Invalid(p, "%s is not valid JSON", p)
	}
	if len(compact) > MaxCheckParamsBytes {
		return nil, 0, Invalid(p, "%s must be at most %d bytes of JSON (got %d)", p, MaxCheckParamsBytes, len(compact))
	}
	var params map[string]any
	if err := json.Unmarshal(compact, &params); err != nil {
		return nil, 0, Invalid(p, "%s is not valid JSON", p)
	}
	return params, len(compact), nil
}

// validateCheck asks v about one check, naming the field of what it refuses.
func validateCheck(v CheckValidator, p, id string, params map[string]any) error {
	err := v.Validate(id, params)
	if err == nil {
		return nil
	}
	var paramErr *CheckParamError
	switch {
	case errors.Is(err, ErrUnknownCheck):
		return Invalid(p+".id", "%s.id %q is not a known guardrail check", p, truncate(id, 64))
	case errors.As(err, &paramErr):
		param := p + ".parameters"
		if paramErr.Param != "" {
			param += "." + paramErr.Param
		}
		return Invalid(param, "%s: %s", param, paramErr.Message)
	}
	return Invalid(p+".parameters", "%s.parameters: %s", p, err.Error())
}

var (
	guardrailActionFields  = []string{"deny", "async", "on_success", "on_fail"}
	guardrailFeedbackField = []string{"value", "weight", "metadata"}
)

// ParseGuardrailActions reads a guardrail's actions: {deny, async, on_success {feedback
// {value, weight, metadata}}, on_fail {...}}, each left out taking its default
// (DefaultGuardrailActions). Errors name the field: actions.on_fail.feedback.value.
func ParseGuardrailActions(raw []byte) (GuardrailActions, error) {
	out := DefaultGuardrailActions()
	val, ok := decodeJSONValue(raw)
	if !ok {
		return out, Invalid("actions", "actions is not valid JSON")
	}
	m, isObj := val.(map[string]any)
	if !isObj {
		return out, Invalid("actions", "actions must be an object of deny, async, on_success and on_fail, not %s", describe(val))
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(guardrailActionFields, k) {
			return out, Invalid("actions."+k, "actions.%s is not an action field; the fields are %s", k, strings.Join(guardrailActionFields, ", "))
		}
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"deny", &out.Deny}, {"async", &out.Async}} {
		if v, ok := m[f.name]; ok {
			b, isBool := v.(bool)
			if !isBool {
				return out, Invalid("actions."+f.name, "actions.%s must be a boolean, not %s", f.name, describe(v))
			}
			*f.dst = b
		}
	}
	for _, f := range []struct {
		name string
		dst  *GuardrailOutcome
	}{{"on_success", &out.OnSuccess}, {"on_fail", &out.OnFail}} {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		if err := parseOutcome(v, "actions."+f.name, f.dst); err != nil {
			return out, err
		}
	}
	return out, nil
}

func parseOutcome(v any, p string, dst *GuardrailOutcome) error {
	m, isObj := v.(map[string]any)
	if !isObj {
		return Invalid(p, "%s must be an object {feedback}, not %s", p, describe(v))
	}
	for _, k := range sortedKeys(m) {
		if k != "feedback" {
			return Invalid(p+"."+k, "%s.%s is not a field; the field is feedback", p, k)
		}
	}
	fv, ok := m["feedback"]
	if !ok {
		return nil
	}
	p += ".feedback"
	f, isObj := fv.(map[string]any)
	if !isObj {
		return Invalid(p, "%s must be an object {value, weight, metadata}, not %s", p, describe(fv))
	}
	for _, k := range sortedKeys(f) {
		if !slices.Contains(guardrailFeedbackField, k) {
			return Invalid(p+"."+k, "%s.%s is not a feedback field; the fields are %s", p, k, strings.Join(guardrailFeedbackField, ", "))
		}
	}
	if v, ok := f["value"]; ok {
		n, isNum := number(v)
		if !isNum || n < -10 || n > 10 || math.IsNaN(n) {
			return Invalid(p+".value", "%s.value must be a number from -10 to 10", p)
		}
		dst.Feedback.Value = n
	}
	if v, ok := f["weight"]; ok {
		n, isNum := number(v)
		if !isNum || n < 0 || n > 1 || math.IsNaN(n) {
			return Invalid(p+".weight", "%s.weight must be a number from 0 to 1", p)
		}
		dst.Feedback.Weight = n
	}
	if v, ok := f["metadata"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return Invalid(p+".metadata", "%s.metadata must be a string, not %s", p, describe(v))
		}
		if n := utf8.RuneCountInString(s); n > MaxFeedbackMetadata {
			return Invalid(p+".metadata", "%s.metadata must be at most %d characters (got %d)", p, MaxFeedbackMetadata, n)
		}
		dst.Feedback.Metadata = s
	}
	return nil
}

// ValidateGuardrailRef checks a guardrail reference: an id or a slug.
func ValidateGuardrailRef(param, ref string) error {
	if ValidateSlug(param, ref) != nil {
		return Invalid(param, "%s must be a guardrail id or slug (lower-case letters, digits, '-' and '_', at most %d characters)", param, MaxNameLength)
	}
	return nil
}
