package domain

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var promptV1 = PromptTemplate{String: "Hello {{name}}", Parameters: map[string]any{"temperature": 0.2}, Model: "gpt-4o",
	VirtualKey: "openai-prod", Description: "first"}

func promptCreated() PromptCreated {
	return PromptCreated{PromptID: "p1", OrganisationID: "org", WorkspaceID: "ws", CollectionID: "c1", Slug: "greet",
		Name: "Greet", VersionID: "v1", Template: promptV1, By: "u", At: t0}
}

func TestPromptCreate(t *testing.T) {
	spec := CreatePrompt{PromptID: "p1", OrganisationID: "org", WorkspaceID: "ws", CollectionID: "c1", Slug: "greet",
		Name: "Greet", VersionID: "v1", Template: promptV1, By: "u"}
	with := func(f func(*CreatePrompt)) CreatePrompt {
		c := spec
		f(&c)
		return c
	}
	runScenarios(t, func() *Prompt { return &Prompt{} }, []scenario[*Prompt]{
		{name: "a prompt is created with version 1", when: func(p *Prompt) ([]Event, error) { return p.Create(spec, t0) },
			then: []Event{promptCreated()}},
		{name: "twice is a conflict", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) { return p.Create(spec, t0) }, wantCode: CodeConflict},
		{name: "a name is required", when: func(p *Prompt) ([]Event, error) {
			return p.Create(with(func(c *CreatePrompt) { c.Name = " " }), t0)
		}, wantCode: CodeInvalid, wantParam: "name"},
		{name: "the template's text is required", when: func(p *Prompt) ([]Event, error) {
			return p.Create(with(func(c *CreatePrompt) { c.Template.String = "" }), t0)
		}, wantCode: CodeInvalid, wantParam: "string"},
		{name: "parameters are required", when: func(p *Prompt) ([]Event, error) {
			return p.Create(with(func(c *CreatePrompt) { c.Template.Parameters = nil }), t0)
		}, wantCode: CodeInvalid, wantParam: "parameters"},
		{name: "a virtual key is required", when: func(p *Prompt) ([]Event, error) {
			return p.Create(with(func(c *CreatePrompt) { c.Template.VirtualKey = "" }), t0)
		}, wantCode: CodeInvalid, wantParam: "virtual_key"},
		{name: "a slug is checked", when: func(p *Prompt) ([]Event, error) {
			return p.Create(with(func(c *CreatePrompt) { c.Slug = "Not A Slug" }), t0)
		}, wantCode: CodeInvalid, wantParam: "slug"},
	})
}

// 4.3: with patch the fields not sent are the latest version's; without it a new version
// needs what a create needs and holds only what was sent. Name and collection alone make no
// version.
func TestPromptUpdatePatchAndVersions(t *testing.T) {
	text := "Bye {{name}}"
	model := "gpt-4o-mini"
	second := PromptUpdated{PromptID: "p1", VersionID: "v2", Template: &PromptTemplate{String: "v2 {{x}}",
		Parameters: map[string]any{}, VirtualKey: "openai-prod"}, By: "u", At: t0}
	runScenarios(t, func() *Prompt { return &Prompt{} }, []scenario[*Prompt]{
		{name: "patch keeps the latest version's other fields", given: []Event{promptCreated(), second},
			when: func(p *Prompt) ([]Event, error) {
				return p.Update(UpdatePrompt{Patch: true, VersionID: "v3", By: "u",
					Fields: PromptVersionFields{Model: &model, Sent: map[string]bool{"model": true}}}, t0)
			},
			then: []Event{PromptUpdated{PromptID: "p1", VersionID: "v3", Template: &PromptTemplate{String: "v2 {{x}}",
				Parameters: map[string]any{}, VirtualKey: "openai-prod", Model: "gpt-4o-mini"}, By: "u", At: t0}}},
		{name: "without patch the version is what was sent", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) {
				vk := "other"
				return p.Update(UpdatePrompt{VersionID: "v2", By: "u", Fields: PromptVersionFields{String: &text,
					Parameters: map[string]any{"top_p": 0.5}, VirtualKey: &vk,
					Sent: map[string]bool{"string": true, "parameters": true, "virtual_key": true}}}, t0)
			},
			then: []Event{PromptUpdated{PromptID: "p1", VersionID: "v2", Template: &PromptTemplate{String: text,
				Parameters: map[string]any{"top_p": 0.5}, VirtualKey: "other"}, By: "u", At: t0}}},
		{name: "without patch parameters are required", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) {
				return p.Update(UpdatePrompt{VersionID: "v2", By: "u", Fields: PromptVersionFields{String: &text,
					Sent: map[string]bool{"string": true}}}, t0)
			}, wantCode: CodeInvalid, wantParam: "parameters"},
		{name: "without patch a model alone is refused", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) {
				return p.Update(UpdatePrompt{VersionID: "v2", By: "u", Fields: PromptVersionFields{Model: &model,
					Sent: map[string]bool{"model": true}}}, t0)
			}, wantCode: CodeInvalid, wantParam: "string"},
		{name: "a rename makes no version", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) {
				return p.Update(UpdatePrompt{Name: ptr("Hello"), VersionID: "unused", By: "u"}, t0)
			},
			then: []Event{PromptUpdated{PromptID: "p1", Name: ptr("Hello"), By: "u", At: t0}}},
		{name: "nothing to update", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) { return p.Update(UpdatePrompt{By: "u"}, t0) }, wantCode: CodeInvalid},
		{name: "a deleted prompt is not found", given: []Event{promptCreated(), PromptArchived{PromptID: "p1"}},
			when: func(p *Prompt) ([]Event, error) { return p.Update(UpdatePrompt{Name: ptr("x")}, t0) }, wantCode: CodeNotFound},
	})

	p := &Prompt{}
	for _, e := range []Event{promptCreated(), second} {
		p.Apply(e)
	}
	assert.Equal(t, 2, p.Latest().Number)
	assert.Equal(t, 1, p.DefaultVersion, "a new version is not the default until makeDefault says so")
	assert.Equal(t, "v1", p.Default().ID)
}

// makeDefault names an existing version; labels point at one version each and move.
func TestPromptDefaultAndLabels(t *testing.T) {
	second := PromptUpdated{PromptID: "p1", VersionID: "v2", Template: &promptV1, By: "u", At: t0}
	runScenarios(t, func() *Prompt { return &Prompt{} }, []scenario[*Prompt]{
		{name: "version 2 becomes the default", given: []Event{promptCreated(), second},
			when: func(p *Prompt) ([]Event, error) { return p.MakeDefault(2, "u", t0) },
			then: []Event{PromptDefaultSet{PromptID: "p1", Version: 2, By: "u", At: t0}}},
		{name: "the default already", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) { return p.MakeDefault(1, "u", t0) }},
		{name: "an unknown version is not found", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) { return p.MakeDefault(3, "u", t0) }, wantCode: CodeNotFound, wantParam: "version"},
		{name: "a label points at a version", given: []Event{promptCreated(), second},
			when: func(p *Prompt) ([]Event, error) { return p.LabelVersion("v2", "prod", "u", t0) },
			then: []Event{PromptVersionLabelled{PromptID: "p1", Version: 2, LabelID: "prod", By: "u", At: t0}}},
		{name: "labelling again changes nothing",
			given: []Event{promptCreated(), second, PromptVersionLabelled{PromptID: "p1", Version: 2, LabelID: "prod"}},
			when:  func(p *Prompt) ([]Event, error) { return p.LabelVersion("v2", "prod", "u", t0) }},
		{name: "an unknown version id is not found", given: []Event{promptCreated()},
			when: func(p *Prompt) ([]Event, error) { return p.LabelVersion("nope", "prod", "u", t0) }, wantCode: CodeNotFound, wantParam: "versionId"},
	})

	p := &Prompt{}
	for _, e := range []Event{promptCreated(), second,
		PromptVersionLabelled{PromptID: "p1", Version: 1, LabelID: "prod"},
		PromptVersionLabelled{PromptID: "p1", Version: 1, LabelID: "staging"}} {
		p.Apply(e)
	}
	assert.Equal(t, map[string]int{"staging": 1}, p.Labels, "one label per version: staging took version 1 from prod")
	shared := p.Labels
	p.Apply(PromptVersionLabelled{PromptID: "p1", Version: 2, LabelID: "staging"})
	assert.Equal(t, map[string]int{"staging": 2}, p.Labels, "the label moved to version 2")
	assert.Equal(t, map[string]int{"staging": 1}, shared, "copy on write: a copy held elsewhere is untouched")
	v, ok := p.Select(VersionSelector{Kind: SelectLabel, Label: "staging"}, "staging")
	require.True(t, ok)
	assert.Equal(t, 2, v.Number)
	p.Apply(PromptVersionLabelled{PromptID: "p1", Version: 2})
	assert.Empty(t, p.Labels, "an empty label id takes the version's label away")
	_, ok = p.Select(VersionSelector{Kind: SelectLabel, Label: "staging"}, "staging")
	assert.False(t, ok)
}

func TestParseVersionRef(t *testing.T) {
	for raw, want := range map[string]VersionSelector{
		"greet": {}, "greet@default": {}, "greet@latest": {Kind: SelectLatest},
		"greet@12": {Kind: SelectNumber, Number: 12}, "greet@production": {Kind: SelectLabel, Label: "production"},
	} {
		ref, sel, err := ParseVersionRef("promptId", raw)
		require.NoError(t, err, raw)
		assert.Equal(t, "greet", ref, raw)
		assert.Equal(t, want, sel, raw)
	}
	for _, raw := range []string{"@latest", "greet@0", "greet@", "greet@a b", "greet@x@y"} {
		_, _, err := ParseVersionRef("promptId", raw)
		require.Error(t, err, raw)
		assert.Equal(t, CodeInvalid, ErrorCode(err), raw)
	}
}

func TestParsePromptTemplateNamesTheField(t *testing.T) {
	sent := func(fields ...string) map[string]bool {
		m := map[string]bool{}
		for _, f := range fields {
			m[f] = true
		}
		return m
	}
	long := strings.Repeat("x", MaxPromptTemplateBytes+1)
	for _, tc := range []struct {
		name  string
		f     PromptVersionFields
		param string
	}{
		{"text too long", PromptVersionFields{String: &long, Sent: sent("string")}, "string"},
		{"parameters null", PromptVersionFields{Sent: sent("parameters")}, "parameters"},
		{"messages in parameters", PromptVersionFields{Parameters: map[string]any{"messages": []any{}}, Sent: sent("parameters")}, "parameters.messages"},
		{"a virtual key that is no slug", PromptVersionFields{VirtualKey: ptr("Open AI"), Sent: sent("virtual_key")}, "virtual_key"},
		{"a tool that is no object", PromptVersionFields{Tools: []any{"x"}, Sent: sent("tools")}, "tools[0]"},
		{"too many functions", PromptVersionFields{Functions: make([]any, MaxPromptTools+1), Sent: sent("functions")}, "functions"},
		{"an unknown tool choice", PromptVersionFields{ToolChoice: "sometimes", Sent: sent("tool_choice")}, "tool_choice"},
		{"a description too long", PromptVersionFields{Description: ptr(strings.Repeat("d", MaxVersionDescription+1)), Sent: sent("version_description")}, "version_description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ParsePromptTemplate(tc.f)
			require.Error(t, err)
			var appErr *Error
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, tc.param, appErr.Param, appErr.Message)
		})
	}
	require.NoError(t, ParsePromptTemplate(PromptVersionFields{VirtualKey: ptr("@openai-prod"), ToolChoice: "auto",
		Tools: []any{map[string]any{"type": "function"}}, Sent: sent("virtual_key", "tool_choice", "tools")}))
}

func TestValidateLabelName(t *testing.T) {
	for _, ok := range []string{"production", "staging-2", "v1_candidate", "prod.eu"} {
		assert.NoError(t, ValidateLabelName("name", ok), ok)
	}
	for _, bad := range []string{"", "latest", "default", "42", "has space", "a@b", "a.b.c"} {
		assert.Error(t, ValidateLabelName("name", bad), bad)
	}
}

// The four prompt settings, by role: admins always; managers and members as their settings
// say, for seeing and for changing.
func TestPromptAccess(t *testing.T) {
	member := Actor{Kind: ActorAPIKey, KeyType: KeyWorkspaceUser, WorkspaceID: "ws", OrgRole: RoleMember,
		WorkspaceRoles: map[string]Role{"ws": RoleMember}}
	manager := Actor{Kind: ActorAPIKey, KeyType: KeyWorkspaceService, WorkspaceID: "ws", OrgRole: RoleMember,
		WorkspaceRoles: map[string]Role{"ws": RoleManager}}
	wsAdmin := Actor{Kind: ActorAPIKey, KeyType: KeyWorkspaceUser, WorkspaceID: "ws", OrgRole: RoleMember,
		WorkspaceRoles: map[string]Role{"ws": RoleAdmin}}
	orgAdmin := Actor{Kind: ActorAPIKey, KeyType: KeyOrganisationService, OrgRole: RoleAdmin}
	off := SecuritySettings{}
	for _, tc := range []struct {
		name    string
		actor   Actor
		sec     SecuritySettings
		write   bool
		setting string // "" : allowed
	}{
		{"member sees by default", member, DefaultSecuritySettings(), false, ""},
		{"member may not write by default", member, DefaultSecuritySettings(), true, "membersWritePrompts"},
		{"member may write when allowed", member, SecuritySettings{MembersWritePrompts: true}, true, ""},
		{"member hidden", member, off, false, "membersViewPrompts"},
		{"manager writes by default", manager, DefaultSecuritySettings(), true, ""},
		{"manager may not write", manager, off, true, "managersWritePrompts"},
		{"manager hidden", manager, off, false, "managersViewPrompts"},
		{"manager's write does not follow members'", manager, SecuritySettings{MembersWritePrompts: true, ManagersViewPrompts: true}, true, "managersWritePrompts"},
		{"workspace admin always", wsAdmin, off, true, ""},
		{"organisation admin always", orgAdmin, off, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := PromptAccess(tc.actor, "ws", tc.sec, tc.write)
			if tc.setting == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, CodeForbidden, ErrorCode(err))
			assert.Contains(t, err.Error(), tc.setting)
		})
	}
	assert.Equal(t, CodeForbidden, ErrorCode(PromptAccess(member, "other", DefaultSecuritySettings(), false)), "another workspace")
}

func TestPromptCollectionRules(t *testing.T) {
	created := PromptCollectionCreated{CollectionID: "c1", OrganisationID: "org", WorkspaceID: "ws", Name: "Sales", Slug: "sales", By: "u", At: t0}
	def := PromptCollectionCreated{CollectionID: "d", OrganisationID: "org", WorkspaceID: "ws", Name: "Default", Slug: "default", IsDefault: true, By: "u", At: t0}
	runScenarios(t, func() *PromptCollection { return &PromptCollection{} }, []scenario[*PromptCollection]{
		{name: "a child of a collection of the same workspace",
			when: func(c *PromptCollection) ([]Event, error) {
				return c.Create(CreatePromptCollection{CollectionID: "c2", OrganisationID: "org", WorkspaceID: "ws", Name: "EU",
					Slug: "eu", Parent: &PromptCollection{ID: "c1", WorkspaceID: "ws", Status: StatusActive}, By: "u"}, t0)
			},
			then: []Event{PromptCollectionCreated{CollectionID: "c2", OrganisationID: "org", WorkspaceID: "ws", Name: "EU",
				Slug: "eu", ParentID: "c1", By: "u", At: t0}}},
		{name: "a parent of another workspace is not found",
			when: func(c *PromptCollection) ([]Event, error) {
				return c.Create(CreatePromptCollection{CollectionID: "c2", WorkspaceID: "ws", Name: "EU", Slug: "eu",
					Parent: &PromptCollection{ID: "c1", WorkspaceID: "other", Status: StatusActive}}, t0)
			}, wantCode: CodeNotFound, wantParam: "parent_collection_id"},
		{name: "the default collection is made once", given: []Event{def},
			when: func(c *PromptCollection) ([]Event, error) {
				return c.Create(CreatePromptCollection{CollectionID: "d", WorkspaceID: "ws", Name: "Default", Slug: "default", IsDefault: true}, t0)
			}},
		{name: "an empty collection is deleted", given: []Event{created},
			when: func(c *PromptCollection) ([]Event, error) { return c.Archive(CollectionContents{}, "u", t0) },
			then: []Event{PromptCollectionArchived{CollectionID: "c1", By: "u", At: t0}}},
		{name: "one holding prompts is not", given: []Event{created},
			when:     func(c *PromptCollection) ([]Event, error) { return c.Archive(CollectionContents{Prompts: 2}, "u", t0) },
			wantCode: CodeConflict},
		{name: "the default collection is not", given: []Event{def},
			when:     func(c *PromptCollection) ([]Event, error) { return c.Archive(CollectionContents{}, "u", t0) },
			wantCode: CodeConflict},
		{name: "a rename", given: []Event{created},
			when: func(c *PromptCollection) ([]Event, error) { return c.Rename("Sales EU", "u", t0) },
			then: []Event{PromptCollectionRenamed{CollectionID: "c1", Name: "Sales EU", By: "u", At: t0}}},
	})
}

func TestPromptPartialUpdate(t *testing.T) {
	created := PromptPartialCreated{PartialID: "pp", OrganisationID: "org", WorkspaceID: "ws", CollectionID: "d", Slug: "tone",
		Name: "Tone", VersionID: "v1", String: "Be kind.", By: "u", At: t0}
	runScenarios(t, func() *PromptPartial { return &PromptPartial{} }, []scenario[*PromptPartial]{
		{name: "new text is a new version", given: []Event{created},
			when: func(p *PromptPartial) ([]Event, error) {
				return p.Update(UpdatePromptPartial{String: ptr("Be brief."), Description: ptr("shorter"), VersionID: "v2", By: "u"}, t0)
			},
			then: []Event{PromptPartialUpdated{PartialID: "pp", VersionID: "v2", String: "Be brief.", Description: "shorter", By: "u", At: t0}}},
		{name: "a description without text", given: []Event{created},
			when: func(p *PromptPartial) ([]Event, error) {
				return p.Update(UpdatePromptPartial{Description: ptr("x"), VersionID: "v2"}, t0)
			}, wantCode: CodeInvalid, wantParam: "description"},
		{name: "empty text", given: []Event{created},
			when: func(p *PromptPartial) ([]Event, error) {
				return p.Update(UpdatePromptPartial{String: ptr(" "), VersionID: "v2"}, t0)
			}, wantCode: CodeInvalid, wantParam: "string"},
		{name: "version 2 of 1 is not found", given: []Event{created},
			when: func(p *PromptPartial) ([]Event, error) { return p.MakeDefault(2, "u", t0) }, wantCode: CodeNotFound, wantParam: "version"},
	})
}
