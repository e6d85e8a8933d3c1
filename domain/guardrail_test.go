package domain

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeChecks stands in for the guardrail engine: it knows default.contains (which needs
// words) and default.regexMatch (which needs a rule), and reads parameters as the engine does.
type fakeChecks struct{}

func (fakeChecks) Validate(id string, params map[string]any) error {
	switch id {
	case "default.contains":
		if _, ok := params["words"].([]any); !ok {
			return &CheckParamError{Param: "words", Message: "words is required: an array of strings"}
		}
	case "default.regexMatch":
		if _, ok := params["rule"].(string); !ok {
			return &CheckParamError{Param: "rule", Message: "rule is required"}
		}
	case "default.broken":
		return errors.New("the parameters do not fit together")
	default:
		return fmt.Errorf("%w: %s", ErrUnknownCheck, id)
	}
	return nil
}

func TestGuardrailDecisions(t *testing.T) {
	checks := []GuardrailCheck{{ID: "default.contains", Parameters: map[string]any{"words": []any{"apple"}, "operator": "none"}, IsEnabled: true}}
	deny := DefaultGuardrailActions()
	deny.Deny = true
	created := GuardrailCreated{GuardrailID: "g-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "no-apples", Name: "No apples",
		VersionID: "v-1", Checks: checks, Actions: deny, By: "u-1", At: t0}
	create := func(mod func(*CreateGuardrail)) func(*Guardrail) ([]Event, error) {
		return func(g *Guardrail) ([]Event, error) {
			in := CreateGuardrail{GuardrailID: "g-1", OrganisationID: "org", WorkspaceID: "ws-1", Slug: "no-apples", Name: "No apples",
				VersionID: "v-1", Checks: []byte(`[{"id":"default.contains","parameters":{"words":["apple"],"operator":"none"}}]`),
				Actions: []byte(`{"deny":true}`), By: "u-1"}
			if mod != nil {
				mod(&in)
			}
			return g.Create(in, fakeChecks{}, t0)
		}
	}
	later := t0.Add(time.Hour)
	update := func(in UpdateGuardrail) func(*Guardrail) ([]Event, error) {
		return func(g *Guardrail) ([]Event, error) { return g.Update(in, fakeChecks{}, later) }
	}
	regex := []GuardrailCheck{{ID: "default.regexMatch", Parameters: map[string]any{"rule": "x+"}, Name: "xs", IsEnabled: false}}
	archived := GuardrailArchived{GuardrailID: "g-1", By: "u-2", At: later}
	runScenarios(t, func() *Guardrail { return &Guardrail{} }, []scenario[*Guardrail]{
		{name: "create", when: create(nil), then: []Event{created}},
		{name: "create an organisation guardrail", when: create(func(c *CreateGuardrail) { c.WorkspaceID = "" }),
			then: []Event{func() Event { e := created; e.WorkspaceID = ""; return e }()}},
		{name: "create twice", given: []Event{created}, when: create(nil), wantCode: CodeConflict},
		{name: "no name", when: create(func(c *CreateGuardrail) { c.Name = "" }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "name of 256", when: create(func(c *CreateGuardrail) { c.Name = strings.Repeat("n", 256) }), wantCode: CodeInvalid, wantParam: "name"},
		{name: "bad slug", when: create(func(c *CreateGuardrail) { c.Slug = "No Apples" }), wantCode: CodeInvalid, wantParam: "slug"},
		{name: "no checks", when: create(func(c *CreateGuardrail) { c.Checks = nil }), wantCode: CodeInvalid, wantParam: "checks"},
		{name: "no actions", when: create(func(c *CreateGuardrail) { c.Actions = nil }), wantCode: CodeInvalid, wantParam: "actions"},
		{name: "unknown check", when: create(func(c *CreateGuardrail) { c.Checks = []byte(`[{"id":"default.nope"}]`) }),
			wantCode: CodeInvalid, wantParam: "checks[0].id"},
		{name: "a parameter the check refuses", when: create(func(c *CreateGuardrail) {
			c.Checks = []byte(`[{"id":"default.contains","parameters":{"words":["a"]}},{"id":"default.regexMatch","parameters":{}}]`)
		}), wantCode: CodeInvalid, wantParam: "checks[1].parameters.rule"},
		{name: "a new version of the checks keeps the actions", given: []Event{created},
			when: update(UpdateGuardrail{Checks: []byte(`[{"id":"default.regexMatch","name":"xs","is_enabled":false,"parameters":{"rule":"x+"}}]`), VersionID: "v-2", By: "u-2"}),
			then: []Event{GuardrailUpdated{GuardrailID: "g-1", VersionID: "v-2", Checks: regex, Actions: &deny, By: "u-2", At: later}}},
		{name: "a new version of the actions keeps the checks", given: []Event{created},
			when: update(UpdateGuardrail{Actions: []byte(`{}`), VersionID: "v-2", By: "u-2"}),
			then: []Event{GuardrailUpdated{GuardrailID: "g-1", VersionID: "v-2", Checks: checks, Actions: ptr(DefaultGuardrailActions()), By: "u-2", At: later}}},
		{name: "a rename is no new version", given: []Event{created}, when: update(UpdateGuardrail{Name: ptr("Apples"), VersionID: "v-2", By: "u-2"}),
			then: []Event{GuardrailUpdated{GuardrailID: "g-1", Name: ptr("Apples"), By: "u-2", At: later}}},
		{name: "nothing", given: []Event{created}, when: update(UpdateGuardrail{By: "u-2"}), wantCode: CodeInvalid},
		{name: "a bad new version", given: []Event{created}, when: update(UpdateGuardrail{Checks: []byte(`[]`)}), wantCode: CodeInvalid, wantParam: "checks"},
		{name: "bad actions", given: []Event{created}, when: update(UpdateGuardrail{Actions: []byte(`{"onFail":"block"}`)}), wantCode: CodeInvalid, wantParam: "actions.onFail"},
		{name: "update a deleted one", given: []Event{created, archived}, when: update(UpdateGuardrail{Name: ptr("x")}), wantCode: CodeNotFound},
		{name: "archive", given: []Event{created}, when: func(g *Guardrail) ([]Event, error) { return g.Archive("u-2", later) }, then: []Event{archived}},
		{name: "archive twice", given: []Event{created, archived}, when: func(g *Guardrail) ([]Event, error) { return g.Archive("u-2", later) }, wantCode: CodeNotFound},
	})

	g := &Guardrail{}
	g.Apply(created)
	copied := *g
	g.Apply(GuardrailUpdated{GuardrailID: "g-1", Name: ptr("Apples"), VersionID: "v-2", Checks: regex, By: "u-2", At: later})
	assert.Len(t, copied.Versions, 1, "an earlier copy is not changed by later events")
	require.Len(t, g.Versions, 2)
	assert.Equal(t, GuardrailVersion{ID: "v-2", Name: "Apples", Checks: regex, Actions: deny, CreatedBy: "u-2", CreatedAt: later}, g.Latest(),
		"a version without actions keeps the actions in force")
	assert.Equal(t, "u-1", g.OwnerID)
	assert.Equal(t, "u-2", g.UpdatedBy)
	assert.True(t, g.UsableBy("ws-1"))
	assert.False(t, g.UsableBy("ws-2"), "a workspace guardrail is its workspace's only")
	assert.True(t, (&Guardrail{WorkspaceID: ""}).UsableBy("ws-2"), "an organisation guardrail is every workspace's")
	g.Apply(archived)
	assert.False(t, g.Exists())
	assert.Equal(t, GuardrailVersion{}, (&Guardrail{}).Latest())
}

// Every bound and shape of checks and actions is refused with the field that breaks it and,
// for bounds, the bound.
func TestGuardrailChecksAndActionsNameWhatTheyRefuse(t *testing.T) {
	many := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `{"id":"default.regexMatch","parameters":{"rule":"x"}}`
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	big := func(n int) string { return `{"rule":"x","pad":"` + strings.Repeat("p", n) + `"}` }
	checks := []struct {
		name, raw, param, bound string
	}{
		{"not JSON", `[`, "checks", ""},
		{"not an array", `{"id":"default.regexMatch"}`, "checks", ""},
		{"empty", `[]`, "checks", "from 1 to 50"},
		{"51 checks", many(51), "checks", "from 1 to 50"},
		{"a check not an object", `["default.regexMatch"]`, "checks[0]", ""},
		{"unknown check field", `[{"id":"default.regexMatch","parameters":{"rule":"x"},"colour":"red"}]`, "checks[0].colour", ""},
		{"no id", `[{"parameters":{}}]`, "checks[0].id", ""},
		{"id not a check id", `[{"id":"regex match"}]`, "checks[0].id", ""},
		{"id of 129", `[{"id":"default.` + strings.Repeat("a", 121) + `"}]`, "checks[0].id", "at most 128"},
		{"unknown id", `[{"id":"acme.scan"}]`, "checks[0].id", "not a known"},
		{"name of 256", `[{"id":"default.regexMatch","parameters":{"rule":"x"},"name":"` + strings.Repeat("n", 256) + `"}]`, "checks[0].name", "at most 255"},
		{"is_enabled not a boolean", `[{"id":"default.regexMatch","parameters":{"rule":"x"},"is_enabled":"yes"}]`, "checks[0].is_enabled", ""},
		{"parameters not an object", `[{"id":"default.regexMatch","parameters":["x"]}]`, "checks[0].parameters", ""},
		{"parameters over 64 KiB", `[{"id":"default.regexMatch","parameters":` + big(MaxCheckParamsBytes) + `}]`, "checks[0].parameters", "at most 65536 bytes"},
		{"all parameters over 256 KiB", "[" + strings.Repeat(`{"id":"default.regexMatch","parameters":`+big(60_000)+`},`, 4) +
			`{"id":"default.regexMatch","parameters":` + big(60_000) + `}]`, "checks", "at most 262144 bytes"},
		{"a parameter named by the check", `[{"id":"default.contains","parameters":{"words":"apple"}}]`, "checks[0].parameters.words", "words is required"},
		{"the parameters as a whole", `[{"id":"default.broken"}]`, "checks[0].parameters", "do not fit"},
	}
	for _, tc := range checks {
		t.Run("checks "+tc.name, func(t *testing.T) {
			_, err := ParseGuardrailChecks([]byte(tc.raw), fakeChecks{})
			var appErr *Error
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, CodeInvalid, appErr.Code)
			assert.Equal(t, tc.param, appErr.Param, appErr.Message)
			assert.Contains(t, appErr.Message, tc.bound)
		})
	}
	ok, err := ParseGuardrailChecks([]byte(many(50)), fakeChecks{})
	require.NoError(t, err, "50 checks")
	assert.Len(t, ok, 50)
	one, err := ParseGuardrailChecks([]byte(`[{"id":"default.regexMatch","parameters":`+big(MaxCheckParamsBytes-21)+`},{"id":"default.contains","parameters":{"words":[1.5,2]}}]`), fakeChecks{})
	require.NoError(t, err, "parameters within 64 KiB")
	assert.True(t, one[0].IsEnabled, "checks are enabled unless they say otherwise")
	assert.Equal(t, []any{1.5, 2.0}, one[1].Parameters["words"], "numbers as the gateway reads them back from the event")

	actions := []struct {
		name, raw, param, bound string
	}{
		{"not an object", `true`, "actions", ""},
		{"the reference example's spelling", `{"onFail":"block","message":"no"}`, "actions.message", ""},
		{"deny not a boolean", `{"deny":"yes"}`, "actions.deny", ""},
		{"async not a boolean", `{"async":1}`, "actions.async", ""},
		{"on_fail not an object", `{"on_fail":"deny"}`, "actions.on_fail", ""},
		{"on_success unknown field", `{"on_success":{"continue":true}}`, "actions.on_success.continue", ""},
		{"feedback not an object", `{"on_fail":{"feedback":-5}}`, "actions.on_fail.feedback", ""},
		{"feedback unknown field", `{"on_fail":{"feedback":{"score":1}}}`, "actions.on_fail.feedback.score", ""},
		{"value of 11", `{"on_success":{"feedback":{"value":11}}}`, "actions.on_success.feedback.value", "from -10 to 10"},
		{"weight of 2", `{"on_fail":{"feedback":{"weight":2}}}`, "actions.on_fail.feedback.weight", "from 0 to 1"},
		{"metadata not a string", `{"on_fail":{"feedback":{"metadata":{}}}}`, "actions.on_fail.feedback.metadata", ""},
		{"metadata of 4097", `{"on_fail":{"feedback":{"metadata":"` + strings.Repeat("m", 4097) + `"}}}`, "actions.on_fail.feedback.metadata", "at most 4096"},
	}
	for _, tc := range actions {
		t.Run("actions "+tc.name, func(t *testing.T) {
			_, err := ParseGuardrailActions([]byte(tc.raw))
			var appErr *Error
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, tc.param, appErr.Param, appErr.Message)
			assert.Contains(t, appErr.Message, tc.bound)
		})
	}
	a, err := ParseGuardrailActions([]byte(`{"deny":true,"async":false,"on_fail":{"feedback":{"value":-10,"weight":0.5,"metadata":"m"}}}`))
	require.NoError(t, err)
	assert.Equal(t, GuardrailActions{Deny: true,
		OnSuccess: GuardrailOutcome{Feedback: GuardrailFeedback{Value: 5, Weight: 1}},
		OnFail:    GuardrailOutcome{Feedback: GuardrailFeedback{Value: -10, Weight: 0.5, Metadata: "m"}}}, a, "what is left out takes its default")
}

// Configs attach guardrails at every level of their target tree; what they name is checked
// for its form here (AB16) and for its existence where the config is saved.
func TestConfigGuardrailAttachments(t *testing.T) {
	cfg, err := ParseGatewayConfig([]byte(`{"input_guardrails":["pii-1"],"output_guardrails":["tone"],
		"before_request_hooks":[{"id":"3c3b8e9e-2a57-4f77-9c1f-0b6a1d3c2e10"}],"strategy":{"mode":"fallback"},
		"targets":[{"provider":"@a","output_guardrails":["org-tone"],"after_request_hooks":[{"type":"guardrail","id":"json-only"}]},
		{"strategy":{"mode":"single"},"targets":[{"provider":"@b","input_guardrails":["deep"]}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"pii-1", "3c3b8e9e-2a57-4f77-9c1f-0b6a1d3c2e10"}, cfg.BeforeRequestGuardrails())
	assert.Equal(t, []string{"org-tone", "json-only"}, cfg.Targets[0].AfterRequestGuardrails())
	assert.Equal(t, []string{"deep"}, cfg.Targets[1].Targets[0].InputGuardrails)
	assert.Equal(t, []ConfigGuardrail{
		{Param: "input_guardrails[0]", Ref: "pii-1"}, {Param: "output_guardrails[0]", Ref: "tone"},
		{Param: "before_request_hooks[0].id", Ref: "3c3b8e9e-2a57-4f77-9c1f-0b6a1d3c2e10"},
		{Param: "targets[0].output_guardrails[0]", Ref: "org-tone"}, {Param: "targets[0].after_request_hooks[0].id", Ref: "json-only"},
		{Param: "targets[1].targets[0].input_guardrails[0]", Ref: "deep"},
	}, cfg.Guardrails())

	refs := func(n int) string { return `["` + strings.TrimSuffix(strings.Repeat(`g",  "`, n), `,  "`) + `]` }
	for _, tc := range []struct{ name, raw, code, param string }{
		{"not an array", `{"provider":"@a","input_guardrails":"pii"}`, ConfigErrGuardrails, "input_guardrails"},
		{"51 guardrails", `{"provider":"@a","output_guardrails":` + refs(51) + `}`, ConfigErrGuardrails, "output_guardrails"},
		{"not a ref", `{"provider":"@a","input_guardrails":["PII Guard"]}`, ConfigErrGuardrails, "input_guardrails[0]"},
		{"a number", `{"provider":"@a","input_guardrails":[7]}`, ConfigErrGuardrails, "input_guardrails[0]"},
		{"nested", `{"strategy":{"mode":"single"},"targets":[{"provider":"@a","output_guardrails":[""]}]}`, ConfigErrGuardrails, "targets[0].output_guardrails[0]"},
		{"hook not an object", `{"provider":"@a","before_request_hooks":["pii"]}`, ConfigErrGuardrails, "before_request_hooks[0]"},
		{"hook without id", `{"provider":"@a","after_request_hooks":[{"type":"guardrail"}]}`, ConfigErrGuardrails, "after_request_hooks[0].id"},
		{"hook of another type", `{"provider":"@a","after_request_hooks":[{"id":"a","type":"mutator"}]}`, ConfigErrGuardrails, "after_request_hooks[0].type"},
		{"inline hook", `{"provider":"@a","before_request_hooks":[{"id":"a","checks":[]}]}`, ConfigErrGuardrails, "before_request_hooks[0].checks"},
		{"unknown hook field", `{"provider":"@a","before_request_hooks":[{"id":"a","colour":"red"}]}`, ConfigErrJSON, "before_request_hooks[0].colour"},
	} {
		_, err := ParseGatewayConfig([]byte(tc.raw))
		var appErr *Error
		require.ErrorAs(t, err, &appErr, tc.name)
		assert.Equal(t, tc.code, appErr.Detail, tc.name)
		assert.Equal(t, tc.param, appErr.Param, tc.name)
	}
	_, err = ParseGatewayConfig([]byte(`{"provider":"@a","input_guardrails":` + refs(50) + `}`))
	assert.NoError(t, err, "50 guardrails")
}

func TestWorkspaceGuardrailDefaults(t *testing.T) {
	ws := &Workspace{}
	ws.Apply(WorkspaceCreated{WorkspaceID: "ws-1", OrganisationID: "org", Name: "A", Slug: "a", At: t0})
	events, err := ws.Update(UpdateWorkspace{Defaults: map[string]any{"metadata": map[string]any{"team": "a"},
		"input_guardrails": []any{"pii", "3c3b8e9e-2a57-4f77-9c1f-0b6a1d3c2e10"}, "output_guardrails": []any{"tone"}}}, t0)
	require.NoError(t, err)
	ws.Apply(events[0])
	assert.Equal(t, WorkspaceGuardrails{Input: []string{"pii", "3c3b8e9e-2a57-4f77-9c1f-0b6a1d3c2e10"}, Output: []string{"tone"}}, ws.Guardrails())
	assert.Equal(t, []ConfigGuardrail{{Param: "defaults.input_guardrails[0]", Ref: "pii"},
		{Param: "defaults.input_guardrails[1]", Ref: "3c3b8e9e-2a57-4f77-9c1f-0b6a1d3c2e10"}, {Param: "defaults.output_guardrails[0]", Ref: "tone"}},
		DefaultGuardrailRefs(ws.Defaults))
	assert.Equal(t, WorkspaceGuardrails{}, (&Workspace{}).Guardrails())

	many := make([]any, 51)
	for i := range many {
		many[i] = "g"
	}
	for _, tc := range []struct {
		defaults map[string]any
		param    string
	}{
		{map[string]any{"input_guardrails": "pii"}, "defaults.input_guardrails"},
		{map[string]any{"output_guardrails": []any{"ok", 3}}, "defaults.output_guardrails[1]"},
		{map[string]any{"input_guardrails": []any{"Not A Slug"}}, "defaults.input_guardrails[0]"},
		{map[string]any{"input_guardrails": many}, "defaults.input_guardrails"},
	} {
		_, err := ws.Update(UpdateWorkspace{Defaults: tc.defaults}, t0)
		var appErr *Error
		require.ErrorAs(t, err, &appErr, tc.param)
		assert.Equal(t, tc.param, appErr.Param)
	}
}
