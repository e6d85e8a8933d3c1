package gateway

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

var promptT0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// fold applies events to a fresh aggregate and puts it in the index, as the read model's fold
// does, once per event.
func fold[A domain.Aggregate](x *Index, agg A, events ...domain.Event) A {
	for i, e := range events {
		agg.Apply(e)
		x.Put(agg, uint64(i+1))
	}
	return agg
}

// promptIndex is an index with a prompt of two versions (the default 1; 2 labelled
// production), partials of the workspace ("tone" in two versions, 1 the default and 2
// labelled production; "signature"), a partial of another workspace, and the labels.
func promptIndex(t testing.TB) *Index {
	t.Helper()
	x := NewIndex()
	fold(x, &domain.PromptLabel{}, domain.PromptLabelCreated{LabelID: "lab-prod", OrganisationID: "org", Name: "production", At: promptT0})
	fold(x, &domain.PromptLabel{}, domain.PromptLabelCreated{LabelID: "lab-other", OrganisationID: "org", WorkspaceID: "ws-b", Name: "theirs", At: promptT0})
	fold(x, &domain.PromptPartial{},
		domain.PromptPartialCreated{PartialID: "pp-tone", OrganisationID: "org", WorkspaceID: "ws", Slug: "tone", Name: "Tone",
			VersionID: "tone-v1", String: "Be {{tone}}. {{> signature}}", At: promptT0},
		domain.PromptPartialUpdated{PartialID: "pp-tone", VersionID: "tone-v2", String: "Be very {{tone}}.", At: promptT0},
		domain.PromptPartialVersionLabelled{PartialID: "pp-tone", Version: 2, LabelID: "lab-prod", At: promptT0})
	fold(x, &domain.PromptPartial{}, domain.PromptPartialCreated{PartialID: "pp-sig", OrganisationID: "org", WorkspaceID: "ws",
		Slug: "signature", Name: "Signature", VersionID: "sig-v1", String: "-- {{agent}}", At: promptT0})
	fold(x, &domain.PromptPartial{}, domain.PromptPartialCreated{PartialID: "pp-far", OrganisationID: "org", WorkspaceID: "ws-b",
		Slug: "far", Name: "Far", VersionID: "far-v1", String: "far away", At: promptT0})
	fold(x, &domain.Prompt{},
		domain.PromptCreated{PromptID: "p1", OrganisationID: "org", WorkspaceID: "ws", CollectionID: "c", Slug: "support", Name: "Support",
			VersionID: "v1", Template: domain.PromptTemplate{String: `[{"role":"system","content":"{{> tone}}"},{"role":"user","content":"{{question}}"}]`,
				Parameters: map[string]any{"temperature": 0.3, "max_tokens": 64.0}, Model: "gpt-4o-mini", VirtualKey: "primary",
				Tools: []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup"}}}, ToolChoice: "auto"}, At: promptT0},
		domain.PromptUpdated{PromptID: "p1", VersionID: "v2", Template: &domain.PromptTemplate{String: "Plain {{question}} {{> tone}}",
			Parameters: map[string]any{}, Model: "gpt-4o", VirtualKey: "@other"}, At: promptT0},
		domain.PromptVersionLabelled{PromptID: "p1", Version: 2, LabelID: "lab-prod", At: promptT0})
	return x
}

var wsKeyActor = domain.Actor{Kind: domain.ActorAPIKey, KeyType: domain.KeyWorkspaceService, OrganisationID: "org", WorkspaceID: "ws",
	WorkspaceRoles: map[string]domain.Role{"ws": domain.RoleManager}}

func renderJSON(t *testing.T, r RenderedPrompt) string {
	t.Helper()
	b, err := json.Marshal(r.Body)
	require.NoError(t, err)
	return string(b)
}

// The default version, its partials in their default versions (nested), the version's
// parameters, model and tools, the request's overrides over them and its messages after.
func TestRenderPromptDefaultVersion(t *testing.T) {
	x := promptIndex(t)
	got, err := renderPrompt(x, wsKeyActor, "support", []byte(`{"variables":{"tone":"kind","agent":"Bo","question":"Why?"},
		"max_tokens":10,"stream":true,"messages":[{"role":"assistant","content":"Hm."}]}`))
	require.NoError(t, err)
	assert.Equal(t, "p1", got.Prompt.ID)
	assert.Equal(t, 1, got.Version.Number)
	assert.Equal(t, "", got.Label)
	assert.Equal(t, "@primary", got.VirtualKey)
	assert.JSONEq(t, `{"model":"gpt-4o-mini","temperature":0.3,"max_tokens":10,"stream":true,"tool_choice":"auto",
		"tools":[{"type":"function","function":{"name":"lookup"}}],
		"messages":[{"role":"system","content":"Be kind. -- Bo"},{"role":"user","content":"Why?"},{"role":"assistant","content":"Hm."}]}`, renderJSON(t, got))
}

// A label chooses the prompt's version, and the partials' versions of the same label; a
// number, latest and an explicit partial version do too.
func TestRenderPromptVersionsAndLabels(t *testing.T) {
	x := promptIndex(t)
	vars := []byte(`{"variables":{"tone":"kind","agent":"Bo","question":"Why?"}}`)
	got, err := renderPrompt(x, wsKeyActor, "support@production", vars)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Version.Number)
	assert.Equal(t, "production", got.Label)
	assert.Equal(t, "@other", got.VirtualKey)
	assert.JSONEq(t, `{"model":"gpt-4o","messages":[{"role":"user","content":"Plain Why? Be very kind."}]}`, renderJSON(t, got),
		"the partial's production version")
	for ref, n := range map[string]int{"p1@2": 2, "support@latest": 2, "support@default": 1, "support@1": 1} {
		got, err := renderPrompt(x, wsKeyActor, ref, vars)
		require.NoError(t, err, ref)
		assert.Equal(t, n, got.Version.Number, ref)
	}
	for ref, param := range map[string]string{"support@3": "promptId", "support@staging": "promptId", "support@theirs": "promptId",
		"nope": "promptId", "@1": "promptId"} {
		_, err := renderPrompt(x, wsKeyActor, ref, vars)
		var e *domain.Error
		require.ErrorAs(t, err, &e, ref)
		assert.Equal(t, param, e.Param, ref)
	}
}

func TestRenderPromptRefusals(t *testing.T) {
	x := promptIndex(t)
	fold(x, &domain.Prompt{}, domain.PromptCreated{PromptID: "p2", OrganisationID: "org", WorkspaceID: "ws", Slug: "pinned", Name: "Pinned",
		VersionID: "p2v1", Template: domain.PromptTemplate{String: "{{> tone@2}} {{> far}}", Parameters: map[string]any{}}, At: promptT0})
	otherWS := wsKeyActor
	otherWS.WorkspaceID = "ws-b"
	for _, tc := range []struct {
		name   string
		actor  domain.Actor
		ref    string
		body   string
		param  string
		status domain.Code
	}{
		{"a prompt of another workspace", otherWS, "support", `{}`, "promptId", domain.CodeNotFound},
		{"another organisation", domain.Actor{OrganisationID: "org-2"}, "support", `{}`, "promptId", domain.CodeNotFound},
		{"missing variables", wsKeyActor, "support", `{"variables":{"question":"x"}}`, "variables", domain.CodeInvalid},
		{"variables not an object", wsKeyActor, "support", `{"variables":["tone"]}`, "variables", domain.CodeInvalid},
		{"messages not an array", wsKeyActor, "support", `{"variables":{"tone":"a","agent":"b","question":"c"},"messages":"hi"}`, "messages", domain.CodeInvalid},
		{"parameters under hyperparameters", wsKeyActor, "support", `{"hyperparameters":{"temperature":1}}`, "hyperparameters", domain.CodeInvalid},
		{"not an object", wsKeyActor, "support", `[1]`, "", domain.CodeInvalid},
		{"a partial of another workspace", wsKeyActor, "pinned", `{"variables":{"tone":"a"}}`, "partials", domain.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPrompt(x, tc.actor, tc.ref, []byte(tc.body))
			var e *domain.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.status, e.Code, e.Message)
			assert.Equal(t, tc.param, e.Param, e.Message)
		})
	}
	// An organisation key reaches every workspace's prompts; an empty body is no variables.
	_, err := renderPrompt(x, domain.Actor{Kind: domain.ActorAPIKey, KeyType: domain.KeyOrganisationService, OrganisationID: "org",
		OrgRole: domain.RoleAdmin}, "support", nil)
	var e *domain.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "variables", e.Param, "found, then refused for its variables")
}

// The index follows prompts, partials and labels: a deleted prompt frees its slug (its id
// still reads), a renamed label moves its name, the organisation's settings are kept.
func TestIndexPrompts(t *testing.T) {
	x := promptIndex(t)
	p, ok := x.Prompt("org", "support")
	require.True(t, ok)
	assert.EqualValues(t, 3, p.Version, "the stream's version")
	_, ok = x.Prompt("org-2", "p1")
	assert.False(t, ok, "another organisation's")
	fold(x, &p.Value, domain.PromptArchived{PromptID: "p1", At: promptT0})
	_, ok = x.Prompt("org", "support")
	assert.False(t, ok, "a deleted prompt gives its slug up")
	p, ok = x.Prompt("org", "p1")
	require.True(t, ok)
	assert.False(t, p.Value.Exists())

	l, ok := x.PromptLabelByName("org", "production")
	require.True(t, ok)
	l.Apply(domain.PromptLabelUpdated{LabelID: "lab-prod", Name: ptrTo("live"), At: promptT0})
	x.Put(&l, 2)
	_, ok = x.PromptLabelByName("org", "production")
	assert.False(t, ok, "the old name is free")
	_, ok = x.PromptLabelByName("org", "live")
	assert.True(t, ok)

	assert.Equal(t, domain.DefaultSecuritySettings(), x.PromptSecurity("org"))
	org := fold(x, &domain.Organisation{}, domain.OrganisationCreated{OrganisationID: "org", Name: "Org", At: promptT0})
	sec := domain.DefaultSecuritySettings()
	sec.MembersViewPrompts = false
	fold(x, org, domain.OrganisationSettingsUpdated{OrganisationID: "org", Security: &sec, At: promptT0})
	assert.False(t, x.PromptSecurity("org").MembersViewPrompts)
}

func ptrTo[T any](v T) *T { return &v }

// The cost renderPromptCall adds to a chat completion on the hot path: the index lookups,
// the template's parse, the partials' walk and render, the body's encoding.
func BenchmarkRenderPrompt(b *testing.B) {
	x := promptIndex(b)
	body := []byte(`{"variables":{"tone":"kind","agent":"Bo","question":"Where is my order?"},"max_tokens":32}`)
	b.ReportAllocs()
	for b.Loop() {
		r, err := renderPrompt(x, wsKeyActor, "support", body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(r.Body); err != nil {
			b.Fatal(err)
		}
	}
}
