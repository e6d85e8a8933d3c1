package commands

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/guardrails"
)

// fakeEngine stands in for the guardrail engine's registry as cmd adapts it
// (CheckValidatorFunc): it knows default.regexMatch, which needs a rule.
func fakeEngine(id string, params map[string]any) error {
	if id != "default.regexMatch" {
		return domain.ErrUnknownCheck
	}
	if _, ok := params["rule"].(string); !ok {
		return &guardrails.ParamError{Param: "rule", Message: "rule is required: a regular expression"}
	}
	return nil
}

const (
	regexChecks = `[{"id":"default.regexMatch","parameters":{"rule":"x+"}}]`
	denyActions = `{"deny":true}`
)

// guardrailActors are who may or may not write guardrails: an organisation admin key; a
// workspace service key (its workspace's manager); a workspace user key of a member; a
// manager of another workspace; an admin key without the configs scopes.
func guardrailActors() map[string]domain.Actor {
	key := func(id, ws string, typ string, role domain.Role) domain.Actor {
		return domain.Actor{Kind: domain.ActorAPIKey, ID: id, OrganisationID: "org-1", KeyType: typ, WorkspaceID: ws,
			UserID: "u-" + id, OrgRole: domain.RoleMember, WorkspaceRoles: map[string]domain.Role{ws: role}, Scopes: domain.AllScopes()}
	}
	admin := RequestFrom(adminCtx("org-1")).Actor
	unscoped := admin
	unscoped.ID, unscoped.Scopes = "k-unscoped", []string{"configs.read", "configs.list"}
	return map[string]domain.Actor{
		"admin":           admin,
		"manager":         key("k-manager", "ws-1", domain.KeyWorkspaceService, domain.RoleManager),
		"member":          key("k-member", "ws-1", domain.KeyWorkspaceUser, domain.RoleMember),
		"other workspace": key("k-other", "ws-2", domain.KeyWorkspaceService, domain.RoleManager),
		"no scope":        unscoped,
	}
}

func as(a domain.Actor) context.Context {
	return WithRequest(context.Background(), Request{Actor: a, RequestID: "r-" + a.ID})
}

func guardrailApp(t *testing.T) (Deps, *App) {
	t.Helper()
	d := testDeps(t)
	seedWorkspace(t, d, "org-1", "ws-1")
	seedWorkspace(t, d, "org-1", "ws-2")
	app, err := NewApp(AppDeps{Deps: d, Secret: make([]byte, 32), Memberships: noMemberships{}, Collections: noMemberships{}, Checks: CheckValidatorFunc(fakeEngine)})
	require.NoError(t, err)
	return d, app
}

func createGuardrail(t *testing.T, app *App, ctx context.Context, c CreateGuardrail) string {
	t.Helper()
	if c.Checks == nil {
		c.Checks, c.Actions = []byte(regexChecks), []byte(denyActions)
	}
	res, err := app.CreateGuardrail.Handle(ctx, c)
	require.NoError(t, err)
	return res.ID
}

// Who may write which guardrail: organisation guardrails organisation admins alone;
// workspace guardrails also their workspace's managers; nobody without the configs scopes.
func TestGuardrailAuthorisation(t *testing.T) {
	d, app := guardrailApp(t)
	actors := guardrailActors()
	admin := as(actors["admin"])
	orgGuard := createGuardrail(t, app, admin, CreateGuardrail{Organisation: true, Name: "Org"})
	wsGuard := createGuardrail(t, app, admin, CreateGuardrail{WorkspaceID: "ws-1", Name: "Team"})

	cases := []struct {
		actor string
		org   bool // an organisation guardrail, else one of ws-1
		want  domain.Code
	}{
		{"admin", true, ""}, {"admin", false, ""},
		{"manager", true, domain.CodeForbidden}, {"manager", false, ""},
		{"member", true, domain.CodeForbidden}, {"member", false, domain.CodeForbidden},
		{"other workspace", true, domain.CodeForbidden}, {"other workspace", false, domain.CodeForbidden},
		{"no scope", true, domain.CodeForbidden}, {"no scope", false, domain.CodeForbidden},
	}
	for _, tc := range cases {
		name := tc.actor + map[bool]string{true: " on the organisation's", false: " on the workspace's"}[tc.org]
		t.Run(name, func(t *testing.T) {
			ctx := as(actors[tc.actor])
			create := CreateGuardrail{WorkspaceID: "ws-1", Name: "New", Checks: []byte(regexChecks), Actions: []byte(denyActions)}
			target := wsGuard
			if tc.org {
				create.WorkspaceID, create.Organisation, target = "", true, orgGuard
			}
			_, err := app.CreateGuardrail.Handle(ctx, create)
			assert.Equal(t, tc.want, codeOf(err), "create: %v", err)
			_, err = app.UpdateGuardrail.Handle(ctx, UpdateGuardrail{GuardrailID: target, Name: ptrTo("Renamed")})
			assert.Equal(t, tc.want, codeOf(err), "update: %v", err)
			if tc.want != "" {
				_, err = app.ArchiveGuardrail.Handle(ctx, ArchiveGuardrail{GuardrailID: target})
				assert.Equal(t, tc.want, codeOf(err), "delete: %v", err)
			}
		})
	}
	// A workspace key creates in its own workspace when it names none, and not in another.
	mine := createGuardrail(t, app, as(actors["manager"]), CreateGuardrail{Name: "Mine"})
	g, err := Load(admin, d, "guardrail-"+mine, newGuardrail)
	require.NoError(t, err)
	assert.Equal(t, "ws-1", g.WorkspaceID)
	_, err = app.CreateGuardrail.Handle(as(actors["manager"]), CreateGuardrail{WorkspaceID: "ws-2", Name: "Theirs",
		Checks: []byte(regexChecks), Actions: []byte(denyActions)})
	assert.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = app.CreateGuardrail.Handle(admin, CreateGuardrail{Name: "Nowhere", Checks: []byte(regexChecks), Actions: []byte(denyActions)})
	assert.Equal(t, "workspace_id", paramOf(err), "an organisation key names the workspace or the organisation")
	_, err = app.CreateGuardrail.Handle(admin, CreateGuardrail{WorkspaceID: "ws-9", Name: "Gone", Checks: []byte(regexChecks), Actions: []byte(denyActions)})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))

	_, err = app.ArchiveGuardrail.Handle(as(actors["manager"]), ArchiveGuardrail{GuardrailID: wsGuard})
	require.NoError(t, err, "a manager deletes its workspace's guardrail")
	_, err = app.UpdateGuardrail.Handle(admin, UpdateGuardrail{GuardrailID: wsGuard, Name: ptrTo("x")})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "a deleted guardrail is not found")
	_, err = app.UpdateGuardrail.Handle(as(domain.System("org-2")), UpdateGuardrail{GuardrailID: orgGuard, Name: ptrTo("x")})
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another organisation's guardrail is not found")
}

// codeOf is an error's code, "" for none.
func codeOf(err error) domain.Code {
	if err == nil {
		return ""
	}
	return domain.ErrorCode(err)
}

func paramOf(err error) string {
	var appErr *domain.Error
	if errors.As(err, &appErr) {
		return appErr.Param
	}
	return ""
}

// A retried create (same idempotency key) writes nothing twice and answers the same
// guardrail; a deleted guardrail's slug is free again.
func TestGuardrailCreateIsIdempotentAndDeleteFreesTheSlug(t *testing.T) {
	d, app := guardrailApp(t)
	admin := RequestFrom(adminCtx("org-1")).Actor
	ctx := WithRequest(context.Background(), Request{Actor: admin, RequestID: "r-1", IdempotencyKey: "idem-1"})
	c := CreateGuardrail{WorkspaceID: "ws-1", Name: "PII", Slug: ptrTo("pii"), Checks: []byte(regexChecks), Actions: []byte(denyActions)}
	first, err := app.CreateGuardrail.Handle(ctx, c)
	require.NoError(t, err)
	before := eventTypes(t, d)
	again, err := app.CreateGuardrail.Handle(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.True(t, again.Replayed)
	assert.Equal(t, before, eventTypes(t, d), "a retry writes nothing")
	assert.Equal(t, 1, before["GuardrailCreated"])

	plain := as(admin)
	_, err = app.CreateGuardrail.Handle(plain, CreateGuardrail{Organisation: true, Name: "PII", Slug: ptrTo("pii"),
		Checks: []byte(regexChecks), Actions: []byte(denyActions)})
	assert.Equal(t, domain.CodeConflict, domain.ErrorCode(err), "slugs are unique in the organisation, workspace or not")
	_, err = app.ArchiveGuardrail.Handle(plain, ArchiveGuardrail{GuardrailID: first.ID})
	require.NoError(t, err)
	_, err = app.CreateGuardrail.Handle(plain, CreateGuardrail{Organisation: true, Name: "PII", Slug: ptrTo("pii"),
		Checks: []byte(regexChecks), Actions: []byte(denyActions)})
	assert.NoError(t, err, "a deleted guardrail's slug is free")
}

// The engine's refusals reach the client naming the field: an unknown check its id, a
// parameter its path; a refused guardrail holds no slug.
func TestGuardrailChecksAreValidatedByTheEngine(t *testing.T) {
	d, app := guardrailApp(t)
	admin := as(RequestFrom(adminCtx("org-1")).Actor)
	for checks, param := range map[string]string{
		`[{"id":"default.nope"}]`: "checks[0].id",
		`[{"id":"default.regexMatch","parameters":{"rule":"a"}},{"id":"default.regexMatch","parameters":{"rule":7}}]`: "checks[1].parameters.rule",
	} {
		_, err := app.CreateGuardrail.Handle(admin, CreateGuardrail{Organisation: true, Name: "G", Slug: ptrTo("g"),
			Checks: []byte(checks), Actions: []byte(denyActions)})
		assert.Equal(t, param, paramOf(err), "%v", err)
	}
	assert.Zero(t, eventTypes(t, d)["NameReserved"], "a refused guardrail reserves no slug")
	id := createGuardrail(t, app, admin, CreateGuardrail{Organisation: true, Name: "G", Slug: ptrTo("g")})
	_, err := app.UpdateGuardrail.Handle(admin, UpdateGuardrail{GuardrailID: id, Checks: []byte(`[{"id":"default.regexMatch"}]`)})
	assert.Equal(t, "checks[0].parameters.rule", paramOf(err))

	v := CheckValidatorFunc(fakeEngine)
	assert.ErrorIs(t, v.Validate("acme.scan", nil), domain.ErrUnknownCheck)
	var paramErr *domain.CheckParamError
	require.ErrorAs(t, v.Validate("default.regexMatch", map[string]any{}), &paramErr)
	assert.Equal(t, domain.CheckParamError{Param: "rule", Message: "rule is required: a regular expression"}, *paramErr)
	assert.NoError(t, WellFormedChecks{}.Validate("acme.scan", nil))
}

// A saved config, and a workspace's defaults, may name only live guardrails of the
// organisation or of their own workspace: anything else is refused naming the field (AB16
// for configs).
func TestConfigsAndWorkspacesAttachUsableGuardrailsOnly(t *testing.T) {
	_, app := guardrailApp(t)
	admin := as(RequestFrom(adminCtx("org-1")).Actor)
	createGuardrail(t, app, admin, CreateGuardrail{Organisation: true, Name: "Org", Slug: ptrTo("org-pii")})
	mine := createGuardrail(t, app, admin, CreateGuardrail{WorkspaceID: "ws-1", Name: "Mine", Slug: ptrTo("mine")})
	createGuardrail(t, app, admin, CreateGuardrail{WorkspaceID: "ws-2", Name: "Theirs", Slug: ptrTo("theirs")})
	gone := createGuardrail(t, app, admin, CreateGuardrail{Organisation: true, Name: "Gone", Slug: ptrTo("gone")})
	_, err := app.ArchiveGuardrail.Handle(admin, ArchiveGuardrail{GuardrailID: gone})
	require.NoError(t, err)

	cfg := func(field string) []byte {
		return []byte(`{"strategy":{"mode":"single"},"targets":[{"provider":"@a","` + field + `}]}`)
	}
	for name, tc := range map[string]struct {
		config []byte
		param  string
	}{
		"the organisation's by slug": {cfg(`input_guardrails":["org-pii"]`), ""},
		"its workspace's by id":      {cfg(`after_request_hooks":[{"id":"` + mine + `"}]`), ""},
		"another workspace's":        {cfg(`output_guardrails":["org-pii","theirs"]`), "config.targets[0].output_guardrails[1]"},
		"a deleted one":              {cfg(`before_request_hooks":[{"id":"gone"}]`), "config.targets[0].before_request_hooks[0].id"},
		"a deleted one by id":        {cfg(`input_guardrails":["` + gone + `"]`), "config.targets[0].input_guardrails[0]"},
		"none such":                  {cfg(`input_guardrails":["nope"]`), "config.targets[0].input_guardrails[0]"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := app.CreateSavedConfig.Handle(admin, CreateSavedConfig{WorkspaceID: "ws-1", Name: "c", Config: tc.config})
			if tc.param == "" {
				require.NoError(t, err)
				_, err = app.UpdateSavedConfig.Handle(admin, UpdateSavedConfig{ConfigID: res.ID, Config: tc.config})
				require.NoError(t, err, "and again as a new version")
				return
			}
			var appErr *domain.Error
			require.ErrorAs(t, err, &appErr)
			assert.Equal(t, tc.param, appErr.Param, appErr.Message)
			assert.Equal(t, domain.ConfigErrGuardrails, appErr.Detail)
		})
	}
	saved, err := app.CreateSavedConfig.Handle(admin, CreateSavedConfig{WorkspaceID: "ws-2", Name: "c", Config: []byte(`{"provider":"@a"}`)})
	require.NoError(t, err)
	_, err = app.UpdateSavedConfig.Handle(admin, UpdateSavedConfig{ConfigID: saved.ID, Config: cfg(`input_guardrails":["mine"]`)})
	assert.Equal(t, "config.targets[0].input_guardrails[0]", paramOf(err), "a new version is checked against its config's workspace")

	_, err = app.UpdateWorkspace.Handle(admin, UpdateWorkspace{WorkspaceID: "ws-1", UpdateWorkspace: domain.UpdateWorkspace{
		Defaults: map[string]any{"input_guardrails": []any{"org-pii", "mine"}, "output_guardrails": []any{mine}}}})
	require.NoError(t, err)
	_, err = app.UpdateWorkspace.Handle(admin, UpdateWorkspace{WorkspaceID: "ws-2", UpdateWorkspace: domain.UpdateWorkspace{
		Defaults: map[string]any{"input_guardrails": []any{"org-pii", "mine"}}}})
	assert.Equal(t, "defaults.input_guardrails[1]", paramOf(err))
	_, err = app.CreateWorkspace.Handle(admin, CreateWorkspace{Name: "New", Defaults: map[string]any{"output_guardrails": []any{"org-pii"}}})
	require.NoError(t, err)
	_, err = app.CreateWorkspace.Handle(admin, CreateWorkspace{Name: "Newer", Defaults: map[string]any{"output_guardrails": []any{"mine"}}})
	assert.Equal(t, "defaults.output_guardrails[0]", paramOf(err), "a new workspace attaches the organisation's guardrails only")
}

func TestGuardrailHandlersRefuseMissingDependencies(t *testing.T) {
	d := testDeps(t)
	for name, err := range map[string]error{
		"create without a validator": second(NewCreateGuardrailHandler(d, nil)),
		"update without a validator": second(NewUpdateGuardrailHandler(d, nil)),
		"create without a store":     second(NewCreateGuardrailHandler(Deps{}, WellFormedChecks{})),
		"archive without a store":    second(NewArchiveGuardrailHandler(Deps{})),
	} {
		assert.Error(t, err, name)
	}
}
