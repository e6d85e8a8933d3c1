package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
)

// ProviderDirectory resolves what a request's credential headers name beyond a provider and
// its key: managed providers (@slug, and virtual keys, their legacy spelling) with the
// integrations whose sealed credentials they use, and saved configs. Index implements it.
type ProviderDirectory interface {
	ManagedProviders(orgID, slug string) []ManagedProvider
	SavedConfig(orgID, ref string) (Versioned[domain.SavedConfig], bool)
}

// CredentialOpener opens a sealed credential in memory (commands.Sealer).
type CredentialOpener interface {
	Open(sealed, aad string) ([]byte, error)
}

// URLGuard checks a custom host on the address it resolves to (gateway/egress).
type URLGuard interface {
	CheckURL(raw string) error
}

// resolved is a request's plan with what routing decided it by.
type resolved struct {
	plan Plan
	// configID and configVersion name the saved config (its latest version's id) that
	// routed the request; empty for an inline config or none.
	configID, configVersion string
	// provider is what the request named: @slug, or a provider type.
	provider string
	// forward lists the header names that configs ask to pass on unprocessed.
	forward []string
	// leaves are the managed providers the plan may call, by leaf, for their limits and
	// budgets.
	leaves map[*providers.Target]ManagedProvider
	// cache is the config's cache setting (nil: none); cacheRoute names where the request
	// routes, for the cache's key: the saved config's version, the inline config, or the
	// provider headers.
	cache      *domain.Cache
	cacheRoute string
	// guardrailNodes are the guardrails the config's nodes name, by plan path ("0": the root).
	guardrailNodes map[string]nodeGuardrails
}

// destinationOptions are the provider options that choose where a call goes. A request or
// an inline config may not set them for a managed provider: its credential goes only to the
// base URL its admin configured.
var destinationOptions = map[string]bool{
	"base_url": true, "custom_host": true, "azure_resource_name": true, "resource_name": true, "azure_endpoint": true,
	"vertex_region": true, "vertex_project_id": true, "region": true, "project_id": true, "aws_region": true,
}

// resolve turns the credential headers (5.3) into a plan: a config, a managed provider, a
// custom host, or a provider name with the provider's key in Authorization.
func (s *Service) resolve(x *exchange) (resolved, error) {
	h := x.in.Header
	out := resolved{leaves: map[*providers.Target]ManagedProvider{}}
	if cfg := header(h, HeaderConfig); cfg != "" {
		raw := []byte(cfg)
		if !strings.HasPrefix(strings.TrimSpace(cfg), "{") {
			saved, ok := s.Directory.SavedConfig(x.actor.OrganisationID, cfg)
			if !ok || !saved.Value.Exists() || !canUseWorkspace(x.actor, saved.Value.WorkspaceID) {
				return out, domain.Invalid(HeaderConfig, "no saved config %q in this workspace", cfg)
			}
			latest := saved.Value.Latest()
			raw, out.configID, out.configVersion = []byte(latest.Config), saved.Value.ID, latest.ID
		}
		parsed, err := domain.ParseGatewayConfig(raw)
		if err != nil {
			return out, asHeaderError(err)
		}
		out.cache = parsed.Cache
		out.guardrailNodes = map[string]nodeGuardrails{}
		if guardrailRefs(&parsed.Target, "0", out.guardrailNodes); len(out.guardrailNodes) == 0 {
			out.guardrailNodes = nil
		}
		if out.configVersion != "" {
			out.cacheRoute = "config:" + out.configVersion
		} else {
			out.cacheRoute = "inline:" + digest(string(raw))
		}
		plan, err := s.toPlan(x, &out, parsed.Target, "")
		out.plan = plan
		return out, err
	}
	provider := header(h, HeaderProvider)
	slug, managed := strings.CutPrefix(provider, "@")
	if !managed && header(h, HeaderVirtualKey) != "" {
		slug, managed = header(h, HeaderVirtualKey), true
	}
	if managed {
		out.provider = "@" + slug
		if host := header(h, HeaderCustomHost); host != "" {
			return out, domain.Invalid(HeaderCustomHost, "%s cannot be used with the managed provider @%s: its credential goes only to the base URL its admin configured", HeaderCustomHost, slug)
		}
		t, mp, err := s.managed(x, slug, HeaderProvider)
		if err != nil {
			return out, err
		}
		out.leaves[t] = mp
		out.plan = Plan{Target: t}
		return out, nil
	}
	if provider == "" {
		return out, domain.Invalid(HeaderProvider, "name the provider: %s (with Authorization), @<provider slug>, or %s", HeaderProvider, HeaderConfig)
	}
	out.provider = strings.ToLower(provider)
	t := &providers.Target{Provider: out.provider, APIKey: bearer(h), Options: cloudOptions(h)}
	if host := header(h, HeaderCustomHost); host != "" {
		if err := s.Egress.CheckURL(host); err != nil {
			return out, domain.Invalid(HeaderCustomHost, "%v", err)
		}
		t.BaseURL, t.Client = strings.TrimSuffix(host, "/"), s.CustomHostClient
	}
	out.plan = Plan{Target: t}
	return out, nil
}

// managed finds @slug in the actor's workspace (an organisation key: the one workspace that
// has it) and opens its credential, its own or its integration's, in memory. param names the
// header or config field for errors.
func (s *Service) managed(x *exchange, slug, param string) (*providers.Target, ManagedProvider, error) {
	all := s.Directory.ManagedProviders(x.actor.OrganisationID, slug)
	var mp ManagedProvider
	found := false
	switch {
	case x.actor.WorkspaceID != "":
		for _, p := range all {
			if p.Provider.Value.WorkspaceID == x.actor.WorkspaceID {
				mp, found = p, true
			}
		}
	case len(all) == 1:
		mp, found = all[0], true
	case len(all) > 1:
		return nil, mp, domain.Invalid(param, "@%s names a provider in %d workspaces; use a workspace API key", slug, len(all))
	}
	prov := mp.Provider.Value
	if !found || prov.Status != domain.StatusActive {
		return nil, mp, domain.Invalid(param, "no active provider @%s in this workspace", slug)
	}
	t := &providers.Target{Provider: prov.AIProviderID, Options: map[string]string{}}
	sealed, aad := prov.Sealed, domain.CredentialAAD(domain.Stream(domain.ProviderPrefix, prov.ID), "key")
	configs := prov.Configurations
	if prov.IntegrationID != "" {
		if mp.Integration == nil || mp.Integration.Value.Status != domain.StatusActive {
			return nil, mp, domain.Invalid(param, "the integration behind @%s is archived", slug)
		}
		integ := mp.Integration.Value
		if sealed.Key == "" {
			sealed, aad = integ.Sealed, domain.CredentialAAD(domain.Stream(domain.IntegrationPrefix, integ.ID), "key")
		}
		if len(configs) == 0 {
			configs = integ.Configurations
		}
	}
	if sealed.Key != "" {
		key, err := s.Opener.Open(sealed.Key, aad)
		if err != nil {
			return nil, mp, fmt.Errorf("open the credential of @%s: %w", slug, err)
		}
		t.APIKey = string(key)
	}
	for k, v := range configs {
		if str, ok := v.(string); ok {
			t.Options[k] = str
		}
	}
	base := t.Options["base_url"]
	if base == "" {
		base = t.Options["custom_host"] // the reference's name for it
	}
	if base != "" {
		if err := s.Egress.CheckURL(base); err != nil {
			return nil, mp, domain.Invalid(param, "the base URL of @%s is refused: %v", slug, err)
		}
		t.BaseURL, t.Client = strings.TrimSuffix(base, "/"), s.CustomHostClient
	}
	return t, mp, nil
}

// toPlan turns a config node into a plan node; path is its place in the config, for errors.
func (s *Service) toPlan(x *exchange, out *resolved, t domain.Target, path string) (Plan, error) {
	param := HeaderConfig
	if path != "" {
		param += "." + path
	}
	out.forward = append(out.forward, t.ForwardHeaders...)
	plan := Plan{Override: t.OverrideParams}
	if t.Weight != nil {
		plan.Weight = *t.Weight
	}
	if t.Retry != nil {
		plan.Retry = Retry{Attempts: t.Retry.Attempts, OnStatusCodes: t.Retry.OnStatusCodes}
	}
	if t.RequestTimeout > 0 {
		plan.Timeout = time.Duration(t.RequestTimeout) * time.Millisecond
		plan.TimeoutFrom = "the config's request_timeout"
		if path != "" {
			plan.TimeoutFrom = "the config's " + path + ".request_timeout"
		}
	}
	if len(t.Targets) > 0 {
		plan.Mode = domain.StrategySingle
		if t.Strategy != nil {
			plan.Mode, plan.OnStatusCodes = t.Strategy.Mode, t.Strategy.OnStatusCodes
		}
		for i, child := range t.Targets {
			sub, err := s.toPlan(x, out, child, joinConfigPath(path, fmt.Sprintf("targets[%d]", i)))
			if err != nil {
				return Plan{}, err
			}
			plan.Targets = append(plan.Targets, sub)
		}
		return plan, nil
	}
	var target *providers.Target
	if slug, ok := strings.CutPrefix(t.Provider, "@"); ok || t.VirtualKey != "" {
		if t.VirtualKey != "" {
			slug = t.VirtualKey
		}
		if t.CustomHost != "" {
			return Plan{}, domain.Invalid(param+".custom_host", "custom_host cannot be used with the managed provider @%s: its credential goes only to the base URL its admin configured", slug)
		}
		for k := range t.Options {
			if destinationOptions[k] {
				return Plan{}, domain.Invalid(param+"."+k, "%s cannot be set for the managed provider @%s: its credential goes only to the destination its admin configured", k, slug)
			}
		}
		managed, mp, err := s.managed(x, slug, param)
		if err != nil {
			return Plan{}, err
		}
		if !ok && t.Provider != "" && !strings.EqualFold(t.Provider, managed.Provider) {
			return Plan{}, domain.Invalid(param+".provider", "provider %s cannot use the credential of @%s, a %s provider", t.Provider, slug, managed.Provider)
		}
		out.leaves[managed] = mp
		target = managed
	} else {
		target = &providers.Target{Provider: t.Provider, APIKey: t.APIKey, Options: map[string]string{}}
		if t.CustomHost != "" {
			if err := s.Egress.CheckURL(t.CustomHost); err != nil {
				return Plan{}, domain.Invalid(param+".custom_host", "custom_host is refused: %v", err)
			}
			target.BaseURL, target.Client = strings.TrimSuffix(t.CustomHost, "/"), s.CustomHostClient
		}
	}
	for k, v := range t.Options {
		target.Options[k] = v
	}
	if t.AnthropicBeta != "" {
		target.Options["anthropic_beta"] = t.AnthropicBeta
	}
	if t.AzureEntraScope != "" {
		target.Options["azure_entra_scope"] = t.AzureEntraScope
	}
	if t.StrictOpenAICompliance != nil {
		target.StrictOpenAI = *t.StrictOpenAICompliance
	}
	plan.Target = target
	return plan, nil
}

func joinConfigPath(path, next string) string {
	if path == "" {
		return next
	}
	return path + "." + next
}

// canUseWorkspace: a workspace key uses its own workspace's configs; organisation keys any.
func canUseWorkspace(actor domain.Actor, workspaceID string) bool {
	return actor.WorkspaceID == "" || actor.WorkspaceID == workspaceID
}

// asHeaderError keeps a config error's AB code and path, naming the header it came in.
func asHeaderError(err error) error {
	if appErr, ok := err.(*domain.Error); ok {
		e := *appErr
		e.Param = strings.TrimSuffix(HeaderConfig+"."+appErr.Param, ".")
		return &e
	}
	return domain.Invalid(HeaderConfig, "%v", err)
}

// leavesOf lists a plan's leaves.
func leavesOf(p *Plan, out []*Plan) []*Plan {
	if p.Target != nil {
		return append(out, p)
	}
	for i := range p.Targets {
		out = leavesOf(&p.Targets[i], out)
	}
	return out
}

// passHeaders are the request headers that shape a pass-through body and go with it
// unchanged: its type (a multipart upload needs its boundary), its encoding (a gzip upload
// must be declared as such), what the client accepts, and its language.
var passHeaders = []string{"Content-Type", "Content-Encoding", "Accept", "Content-Language"}

func withPassHeaders(dst, src http.Header) http.Header {
	if dst == nil {
		dst = http.Header{}
	}
	for _, h := range passHeaders {
		if v := src.Values(h); len(v) > 0 {
			dst[h] = v
		}
	}
	return dst
}
