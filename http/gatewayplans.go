package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
	"github.com/causeway/causeway/gateway/providers"
)

// ProviderDirectory is what resolving configs and managed providers reads: the in-memory
// routing tables, which alone hold the sealed credentials.
type ProviderDirectory interface {
	ManagedProviderBySlug(orgID, workspaceID, slug string) (domain.Provider, bool)
	ManagedProvidersBySlug(orgID, slug string) []domain.Provider
	Integration(orgID, id string) (domain.Integration, bool)
	SavedConfig(orgID, ref string) (domain.SavedConfig, bool)
}

// Plans resolves configs (inline or saved) and managed providers (@slug, or the legacy
// virtual key) into plans, opening their credentials in memory.
type Plans struct {
	Directory ProviderDirectory
	Sealer    commands.Sealer
	Egress    URLGuard
	Client    *http.Client // for custom hosts: checks every dial and redirect again
}

var _ PlanResolver = Plans{}

// ConfigPlan turns x-gateway-config (a JSON object, or a saved config's id or slug) into a plan
// and the saved config's id.
func (p Plans) ConfigPlan(ctx context.Context, actor domain.Actor, ref string) (gateway.Plan, string, error) {
	raw, id := []byte(ref), ""
	if !strings.HasPrefix(strings.TrimSpace(ref), "{") {
		saved, ok := p.Directory.SavedConfig(actor.OrganisationID, ref)
		if !ok || !saved.Exists() || !canUseWorkspace(actor, saved.WorkspaceID) {
			return gateway.Plan{}, "", domain.Invalid(hConfig, "no saved config %q in this workspace", ref)
		}
		raw, id = []byte(saved.Latest().Config), saved.ID
	}
	cfg, err := domain.ParseGatewayConfig(raw)
	if err != nil {
		return gateway.Plan{}, id, asHeaderError(err)
	}
	plan, err := p.toPlan(actor, cfg.Target, hConfig)
	return plan, id, err
}

// ProviderPlan resolves a managed provider of the actor's workspace.
func (p Plans) ProviderPlan(ctx context.Context, actor domain.Actor, slug string) (gateway.Plan, error) {
	t, err := p.managed(actor, slug)
	if err != nil {
		return gateway.Plan{}, err
	}
	return gateway.Plan{Target: t}, nil
}

// managed finds @slug in the actor's workspace (an organisation key: the one workspace that has
// it) and opens its credential, its own or its integration's.
func (p Plans) managed(actor domain.Actor, slug string) (*providers.Target, error) {
	var prov domain.Provider
	ok := false
	if actor.WorkspaceID != "" {
		prov, ok = p.Directory.ManagedProviderBySlug(actor.OrganisationID, actor.WorkspaceID, slug)
	} else if all := p.Directory.ManagedProvidersBySlug(actor.OrganisationID, slug); len(all) == 1 {
		prov, ok = all[0], true
	} else if len(all) > 1 {
		return nil, domain.Invalid(hProvider, "@%s names a provider in %d workspaces; use a workspace API key", slug, len(all))
	}
	if !ok || prov.Status != domain.StatusActive {
		return nil, domain.Invalid(hProvider, "no active provider @%s in this workspace", slug)
	}
	t := &providers.Target{Provider: prov.AIProviderID, Options: map[string]string{}}
	sealed, aad := prov.Sealed, domain.CredentialAAD(domain.Stream(domain.ProviderPrefix, prov.ID), "key")
	configs := prov.Configurations
	if sealed.Key == "" && prov.IntegrationID != "" {
		integ, ok := p.Directory.Integration(actor.OrganisationID, prov.IntegrationID)
		if !ok || integ.Status != domain.StatusActive {
			return nil, domain.Invalid(hProvider, "the integration behind @%s is archived", slug)
		}
		sealed, aad = integ.Sealed, domain.CredentialAAD(domain.Stream(domain.IntegrationPrefix, integ.ID), "key")
		if len(configs) == 0 {
			configs = integ.Configurations
		}
	}
	if sealed.Key != "" {
		key, err := p.Sealer.Open(sealed.Key, aad)
		if err != nil {
			return nil, fmt.Errorf("open the credential of @%s: %w", slug, err)
		}
		t.APIKey = string(key)
	}
	for k, v := range configs {
		if s, ok := v.(string); ok {
			t.Options[k] = s
		}
	}
	base := t.Options["base_url"]
	if base == "" {
		base = t.Options["custom_host"] // the reference's name for it
	}
	if base != "" {
		if err := p.Egress.CheckURL(base); err != nil {
			return nil, domain.Invalid(hProvider, "the base URL of @%s is refused: %v", slug, err)
		}
		t.BaseURL, t.Client = strings.TrimSuffix(base, "/"), p.Client
	}
	return t, nil
}

// toPlan turns a config node into a plan node; param names the header for errors.
func (p Plans) toPlan(actor domain.Actor, t domain.Target, param string) (gateway.Plan, error) {
	plan := gateway.Plan{Override: t.OverrideParams}
	if t.Weight != nil {
		plan.Weight = *t.Weight
	}
	if t.Retry != nil {
		plan.Retry = gateway.Retry{Attempts: t.Retry.Attempts, OnStatusCodes: t.Retry.OnStatusCodes}
	}
	if t.RequestTimeout > 0 {
		plan.Timeout = time.Duration(t.RequestTimeout) * time.Millisecond
	}
	if len(t.Targets) > 0 {
		plan.Mode = domain.StrategySingle
		if t.Strategy != nil {
			plan.Mode, plan.OnStatusCodes = t.Strategy.Mode, t.Strategy.OnStatusCodes
		}
		for _, child := range t.Targets {
			sub, err := p.toPlan(actor, child, param)
			if err != nil {
				return gateway.Plan{}, err
			}
			plan.Targets = append(plan.Targets, sub)
		}
		return plan, nil
	}
	var target *providers.Target
	switch {
	case strings.HasPrefix(t.Provider, "@") || t.VirtualKey != "":
		slug := strings.TrimPrefix(t.Provider, "@")
		if t.VirtualKey != "" {
			slug = t.VirtualKey
		}
		managed, err := p.managed(actor, slug)
		if err != nil {
			return gateway.Plan{}, err
		}
		target = managed
	default:
		target = &providers.Target{Provider: t.Provider, APIKey: t.APIKey, Options: map[string]string{}}
	}
	for k, v := range t.Options {
		target.Options[k] = v
	}
	if t.AnthropicBeta != "" {
		target.Options["anthropic_beta"] = t.AnthropicBeta
	}
	if t.StrictOpenAICompliance != nil {
		target.StrictOpenAI = *t.StrictOpenAICompliance
	}
	if t.CustomHost != "" {
		if err := p.Egress.CheckURL(t.CustomHost); err != nil {
			return gateway.Plan{}, domain.Invalid(param, "custom_host is refused: %v", err)
		}
		target.BaseURL, target.Client = strings.TrimSuffix(t.CustomHost, "/"), p.Client
	}
	plan.Target = target
	return plan, nil
}

// canUseWorkspace: a workspace key uses its own workspace's configs; organisation keys any.
func canUseWorkspace(actor domain.Actor, workspaceID string) bool {
	return actor.WorkspaceID == "" || actor.WorkspaceID == workspaceID
}

// asHeaderError keeps a config error's AB code and path, naming the header it came in.
func asHeaderError(err error) error {
	if appErr, ok := err.(*domain.Error); ok {
		e := *appErr
		e.Param = strings.TrimSuffix(hConfig+"."+appErr.Param, ".")
		return &e
	}
	return domain.Invalid(hConfig, "%v", err)
}
