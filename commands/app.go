package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// AppDeps are what the application's handlers are built from.
type AppDeps struct {
	Deps
	// Secret is the server secret: retried creates derive their key or invite token from it,
	// and provider and integration credentials are sealed under a key derived from it.
	Secret []byte
	// URLCheck checks the base URLs admins set on integrations, providers and configs (the
	// gateway's egress guard); nil: StaticURLCheck, a literal-address check.
	URLCheck URLChecker
	// Memberships says which workspaces a user belongs to (the read model), for removing a
	// user.
	Memberships MembershipIndex
	// Cache is the answer cache a purge empties; nil: caching is off.
	Cache CachePurger
	// Checks validates guardrail checks (the guardrail engine, through CheckValidatorFunc);
	// nil: WellFormedChecks, which accepts every check whose id is well formed.
	Checks domain.CheckValidator
	// Collections counts what a prompt collection holds (the read model), for deleting one.
	Collections CollectionContentsIndex
}

// App is the write side assembled: every command handler the admin API serves, built once at
// start (by cmd, and by the tests that build the router, through NewApp), with authorisation
// and the workspace prelude already applied as decorators.
type App struct {
	CreateAPIKey Handler[CreateAPIKey, CreatedAPIKey]
	UpdateAPIKey Handler[UpdateAPIKey, Result]
	DeleteAPIKey Handler[DeleteAPIKey, Result]
	RotateAPIKey Handler[RotateAPIKey, RotatedAPIKey]

	CreateSavedConfig  Handler[CreateSavedConfig, Result]
	UpdateSavedConfig  Handler[UpdateSavedConfig, Result]
	ArchiveSavedConfig Handler[ArchiveSavedConfig, Result]

	CreateGuardrail  Handler[CreateGuardrail, Result]
	UpdateGuardrail  Handler[UpdateGuardrail, Result]
	ArchiveGuardrail Handler[ArchiveGuardrail, Result]

	CreatePrompt              Handler[CreatePrompt, Result]
	UpdatePrompt              Handler[UpdatePrompt, Result]
	ArchivePrompt             Handler[ArchivePrompt, Result]
	MakePromptDefault         Handler[MakePromptDefault, Result]
	LabelPromptVersion        Handler[LabelPromptVersion, Result]
	CreatePromptPartial       Handler[CreatePromptPartial, Result]
	UpdatePromptPartial       Handler[UpdatePromptPartial, Result]
	ArchivePromptPartial      Handler[ArchivePromptPartial, Result]
	MakePromptPartialDefault  Handler[MakePromptPartialDefault, Result]
	LabelPromptPartialVersion Handler[LabelPromptPartialVersion, Result]
	CreatePromptLabel         Handler[CreatePromptLabel, Result]
	UpdatePromptLabel         Handler[UpdatePromptLabel, Result]
	ArchivePromptLabel        Handler[ArchivePromptLabel, Result]
	CreatePromptCollection    Handler[CreatePromptCollection, Result]
	UpdatePromptCollection    Handler[UpdatePromptCollection, Result]
	ArchivePromptCollection   Handler[ArchivePromptCollection, Result]

	CreateIntegration           Handler[CreateIntegration, Result]
	UpdateIntegration           Handler[UpdateIntegration, Result]
	ArchiveIntegration          Handler[ArchiveIntegration, Result]
	UpdateIntegrationWorkspaces Handler[UpdateIntegrationWorkspaces, Result]

	CreateProvider  Handler[CreateProvider, Result]
	UpdateProvider  Handler[UpdateProvider, Result]
	ArchiveProvider Handler[ArchiveProvider, Result]

	CreateWebhook       Handler[CreateWebhook, CreatedWebhook]
	UpdateWebhook       Handler[UpdateWebhook, Result]
	DeleteWebhook       Handler[DeleteWebhook, Result]
	RotateWebhookSecret Handler[RotateWebhookSecret, CreatedWebhook]

	CreateLogExport Handler[CreateLogExport, Result]
	UpdateLogExport Handler[UpdateLogExport, Result]
	StartLogExport  Handler[StartLogExport, Result]
	CancelLogExport Handler[CancelLogExport, Result]

	UpdateOrganisationSettings Handler[UpdateOrganisationSettings, Result]
	UpdateWorkspaceSecurity    Handler[UpdateWorkspaceSecurity, Result]

	SetModelPricing    Handler[SetModelPricing, Result]
	RemoveModelPricing Handler[RemoveModelPricing, Result]

	CreateRateLimitPolicy  Handler[CreateRateLimitPolicy, Result]
	UpdateRateLimitPolicy  Handler[UpdateRateLimitPolicy, Result]
	ArchiveRateLimitPolicy Handler[ArchiveRateLimitPolicy, Result]

	CreateUsageLimitPolicy      Handler[CreateUsageLimitPolicy, Result]
	UpdateUsageLimitPolicy      Handler[UpdateUsageLimitPolicy, Result]
	ArchiveUsageLimitPolicy     Handler[ArchiveUsageLimitPolicy, Result]
	ResetUsageLimitPolicyEntity Handler[ResetUsageLimitPolicyEntity, Result]

	UpdateUser Handler[UpdateUser, Result]
	RemoveUser Handler[RemoveUser, Result]

	CreateInvite Handler[CreateInvite, CreatedInvite]
	ResendInvite Handler[ResendInvite, CreatedInvite]
	CancelInvite Handler[CancelInvite, Result]
	AcceptInvite Handler[AcceptInvite, AcceptedInvite]

	CreateWorkspace           Handler[CreateWorkspace, Result]
	UpdateWorkspace           Handler[UpdateWorkspace, Result]
	ArchiveWorkspace          Handler[ArchiveWorkspace, Result]
	RestoreWorkspace          Handler[RestoreWorkspace, Result]
	AddWorkspaceMembers       Handler[AddWorkspaceMembers, Result]
	ChangeWorkspaceMemberRole Handler[ChangeWorkspaceMemberRole, Result]
	RemoveWorkspaceMember     Handler[RemoveWorkspaceMember, Result]
	PurgeCache                Handler[PurgeCache, PurgedCache]

	store EventStore // for Revision
}

// Revision is the last revision of a resource's stream: its ETag, which a write may send back
// as If-Match (Request.IfMatch). false: the stream holds nothing.
func (app *App) Revision(ctx context.Context, stream string) (uint64, bool, error) {
	recs, err := app.store.ReadStream(ctx, stream, eventstore.Backwards, eventstore.StreamEnd, 1)
	if err != nil || len(recs) == 0 {
		return 0, false, err
	}
	return recs[0].Revision, true, nil
}

// NewApp builds every handler from d; it refuses with the first constructor's error when a
// dependency is missing.
func NewApp(d AppDeps) (app *App, err error) {
	hosts := d.URLCheck
	if hosts == nil {
		hosts = StaticURLCheck{}
	}
	checks := d.Checks
	if checks == nil {
		checks = WellFormedChecks{}
	}
	sealer, err := NewSealerFromSecret(d.Secret)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			refused, ok := r.(wiringError)
			if !ok {
				panic(r)
			}
			app, err = nil, refused.err
		}
	}()
	deps := d.Deps
	return &App{
		store: deps.Store,

		CreateAPIKey: wired(NewCreateAPIKeyHandler(deps, d.Secret)),
		UpdateAPIKey: wired(NewUpdateAPIKeyHandler(deps)),
		DeleteAPIKey: wired(NewDeleteAPIKeyHandler(deps)),
		RotateAPIKey: wired(NewRotateAPIKeyHandler(deps, d.Secret)),

		CreateSavedConfig:  wired(NewCreateSavedConfigHandler(deps, hosts)),
		UpdateSavedConfig:  wired(NewUpdateSavedConfigHandler(deps, hosts)),
		ArchiveSavedConfig: wired(NewArchiveSavedConfigHandler(deps)),

		CreateGuardrail:  wired(NewCreateGuardrailHandler(deps, checks)),
		UpdateGuardrail:  wired(NewUpdateGuardrailHandler(deps, checks)),
		ArchiveGuardrail: wired(NewArchiveGuardrailHandler(deps)),

		CreatePrompt:              wired(NewCreatePromptHandler(deps)),
		UpdatePrompt:              wired(NewUpdatePromptHandler(deps)),
		ArchivePrompt:             wired(NewArchivePromptHandler(deps)),
		MakePromptDefault:         wired(NewMakePromptDefaultHandler(deps)),
		LabelPromptVersion:        wired(NewLabelPromptVersionHandler(deps)),
		CreatePromptPartial:       wired(NewCreatePromptPartialHandler(deps)),
		UpdatePromptPartial:       wired(NewUpdatePromptPartialHandler(deps)),
		ArchivePromptPartial:      wired(NewArchivePromptPartialHandler(deps)),
		MakePromptPartialDefault:  wired(NewMakePromptPartialDefaultHandler(deps)),
		LabelPromptPartialVersion: wired(NewLabelPromptPartialVersionHandler(deps)),
		CreatePromptLabel:         wired(NewCreatePromptLabelHandler(deps)),
		UpdatePromptLabel:         wired(NewUpdatePromptLabelHandler(deps)),
		ArchivePromptLabel:        wired(NewArchivePromptLabelHandler(deps)),
		CreatePromptCollection:    wired(NewCreatePromptCollectionHandler(deps)),
		UpdatePromptCollection:    wired(NewUpdatePromptCollectionHandler(deps)),
		ArchivePromptCollection:   wired(NewArchivePromptCollectionHandler(deps, d.Collections)),

		CreateIntegration:           wired(NewCreateIntegrationHandler(deps, sealer, hosts)),
		UpdateIntegration:           wired(NewUpdateIntegrationHandler(deps, sealer, hosts)),
		ArchiveIntegration:          wired(NewArchiveIntegrationHandler(deps)),
		UpdateIntegrationWorkspaces: wired(NewUpdateIntegrationWorkspacesHandler(deps, sealer)),

		CreateProvider:  wired(NewCreateProviderHandler(deps, sealer, hosts)),
		UpdateProvider:  wired(NewUpdateProviderHandler(deps, sealer, hosts)),
		ArchiveProvider: wired(NewArchiveProviderHandler(deps)),

		CreateWebhook:       wired(NewCreateWebhookHandler(deps, sealer, hosts, d.Secret)),
		UpdateWebhook:       wired(NewUpdateWebhookHandler(deps, hosts)),
		DeleteWebhook:       wired(NewDeleteWebhookHandler(deps)),
		RotateWebhookSecret: wired(NewRotateWebhookSecretHandler(deps, sealer, d.Secret)),

		CreateLogExport: wired(NewCreateLogExportHandler(deps)),
		UpdateLogExport: wired(NewUpdateLogExportHandler(deps)),
		StartLogExport:  wired(NewStartLogExportHandler(deps)),
		CancelLogExport: wired(NewCancelLogExportHandler(deps)),

		UpdateOrganisationSettings: wired(NewUpdateOrganisationSettingsHandler(deps)),
		UpdateWorkspaceSecurity:    wired(NewUpdateWorkspaceSecurityHandler(deps)),

		SetModelPricing:    wired(NewSetModelPricingHandler(deps)),
		RemoveModelPricing: wired(NewRemoveModelPricingHandler(deps)),

		CreateRateLimitPolicy:  wired(NewCreateRateLimitPolicyHandler(deps)),
		UpdateRateLimitPolicy:  wired(NewUpdateRateLimitPolicyHandler(deps)),
		ArchiveRateLimitPolicy: wired(NewArchiveRateLimitPolicyHandler(deps)),

		CreateUsageLimitPolicy:      wired(NewCreateUsageLimitPolicyHandler(deps)),
		UpdateUsageLimitPolicy:      wired(NewUpdateUsageLimitPolicyHandler(deps)),
		ArchiveUsageLimitPolicy:     wired(NewArchiveUsageLimitPolicyHandler(deps)),
		ResetUsageLimitPolicyEntity: wired(NewResetUsageLimitPolicyEntityHandler(deps)),

		UpdateUser: wired(NewUpdateUserHandler(deps)),
		RemoveUser: wired(NewRemoveUserHandler(deps, d.Memberships)),

		CreateInvite: wired(NewCreateInviteHandler(deps, d.Secret)),
		ResendInvite: wired(NewResendInviteHandler(deps, d.Secret)),
		CancelInvite: wired(NewCancelInviteHandler(deps)),
		AcceptInvite: wired(NewAcceptInviteHandler(deps)),

		CreateWorkspace:           wired(NewCreateWorkspaceHandler(deps)),
		UpdateWorkspace:           wired(NewUpdateWorkspaceHandler(deps)),
		ArchiveWorkspace:          wired(NewArchiveWorkspaceHandler(deps)),
		RestoreWorkspace:          wired(NewRestoreWorkspaceHandler(deps)),
		AddWorkspaceMembers:       wired(NewAddWorkspaceMembersHandler(deps)),
		ChangeWorkspaceMemberRole: wired(NewChangeWorkspaceMemberRoleHandler(deps)),
		RemoveWorkspaceMember:     wired(NewRemoveWorkspaceMemberHandler(deps)),
		PurgeCache:                wired(NewPurgeCacheHandler(deps, d.Cache)),
	}, nil
}

// wiringError carries a constructor's refusal out of NewApp's literal.
type wiringError struct{ err error }

// wired unwraps a handler constructor's answer; a refusal ends NewApp with its error.
func wired[H any](h H, err error) H {
	if err != nil {
		panic(wiringError{err})
	}
	return h
}
