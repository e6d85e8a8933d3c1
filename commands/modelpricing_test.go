package commands

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

func TestModelPricingAuthorisation(t *testing.T) {
	prices := domain.ModelPrices{RequestToken: &domain.TokenPrice{Price: 0.0002}, ResponseToken: &domain.TokenPrice{Price: 0.0008}}
	actorCtx := func(a domain.Actor) context.Context { return WithRequest(context.Background(), Request{Actor: a}) }
	admin := domain.Actor{Kind: domain.ActorAPIKey, ID: "k-admin", OrganisationID: "org-1",
		KeyType: domain.KeyOrganisationService, OrgRole: domain.RoleAdmin, Scopes: domain.AllScopes()}
	adminWithout := admin
	adminWithout.Scopes = []string{"organisations.read"}
	workspaceKey := domain.Actor{Kind: domain.ActorAPIKey, ID: "k-ws", OrganisationID: "org-1", KeyType: domain.KeyWorkspaceService,
		WorkspaceID: "ws-1", OrgRole: domain.RoleMember, Scopes: domain.WorkspaceScopes(),
		WorkspaceRoles: map[string]domain.Role{"ws-1": domain.RoleManager}}
	// A workspace key of an organisation admin acts as admin of its workspace only (5.2).
	adminsWorkspaceKey := domain.Actor{Kind: domain.ActorAPIKey, ID: "k-wsu", OrganisationID: "org-1", KeyType: domain.KeyWorkspaceUser,
		WorkspaceID: "ws-1", UserID: "u-1", OrgRole: domain.RoleMember, Scopes: domain.AllScopes(),
		WorkspaceRoles: map[string]domain.Role{"ws-1": domain.RoleAdmin}}

	cases := []struct {
		name     string
		actor    domain.Actor
		ws       string
		wantCode domain.Code
	}{
		{"admin key sets the organisation's price", admin, "", ""},
		{"admin key sets a workspace's price", admin, "ws-1", ""},
		{"admin key without organisations.update", adminWithout, "", domain.CodeForbidden},
		{"workspace key", workspaceKey, "", domain.CodeForbidden},
		{"workspace key for its own workspace", workspaceKey, "ws-1", domain.CodeForbidden},
		{"an admin's workspace key", adminsWorkspaceKey, "ws-1", domain.CodeForbidden},
		{"unknown workspace", admin, "ws-missing", domain.CodeNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := testDeps(t)
			seedWorkspace(t, d, "org-1", "ws-1")
			set, err := NewSetModelPricingHandler(d)
			require.NoError(t, err)
			remove, err := NewRemoveModelPricingHandler(d)
			require.NoError(t, err)
			res, err := set.Handle(actorCtx(tc.actor), SetModelPricing{WorkspaceID: tc.ws, Provider: "OpenAI", Model: "gpt-4o", PayAsYouGo: prices})
			if tc.wantCode != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantCode, domain.ErrorCode(err), err.Error())
				assert.Zero(t, eventTypes(t, d)["ModelPricingOverrideSet"], "a refusal writes nothing")
				_, err = remove.Handle(actorCtx(tc.actor), RemoveModelPricing{WorkspaceID: tc.ws, Provider: "openai", Model: "gpt-4o"})
				assert.Equal(t, tc.wantCode, domain.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, domain.ModelPricingOverrideID("org-1", tc.ws, "openai", "gpt-4o"), res.ID)
			o, err := Load(context.Background(), d, domain.Stream(domain.ModelPricingPrefix, res.ID), newModelPricingOverride)
			require.NoError(t, err)
			assert.True(t, o.Active())
			assert.Equal(t, "openai", o.Provider, "the provider is kept normalised")
			assert.Equal(t, tc.ws, o.WorkspaceID)

			again, err := set.Handle(actorCtx(tc.actor), SetModelPricing{WorkspaceID: tc.ws, Provider: "openai", Model: "GPT-4o", PayAsYouGo: prices})
			require.NoError(t, err)
			assert.Zero(t, again.Position, "the same price again writes nothing")

			_, err = remove.Handle(actorCtx(tc.actor), RemoveModelPricing{WorkspaceID: tc.ws, Provider: "openai", Model: "gpt-4o"})
			require.NoError(t, err)
			_, err = remove.Handle(actorCtx(tc.actor), RemoveModelPricing{WorkspaceID: tc.ws, Provider: "openai", Model: "gpt-4o"})
			assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "nothing left to remove")
			assert.Equal(t, 1, eventTypes(t, d)["ModelPricingOverrideSet"])
			assert.Equal(t, 1, eventTypes(t, d)["ModelPricingOverrideRemoved"])
		})
	}
}

func TestModelPricingHandlersRefuseMissingDependencies(t *testing.T) {
	_, err := NewSetModelPricingHandler(Deps{})
	assert.Error(t, err)
	_, err = NewRemoveModelPricingHandler(Deps{})
	assert.Error(t, err)
}
