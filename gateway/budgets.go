package gateway

import (
	"context"
	"strconv"
	"strings"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/ledger"
)

// Budgets are charged in two places. The request's own (its key's, its workspace's, and the
// usage-limit policies whose conditions it meets, per group_by entity) are reserved before the
// plan runs, at the worst case over every target the plan may call. A managed provider's, and
// its integration's in this workspace, are reserved when that target is first tried: a target
// whose budget cannot take the request is passed over by a fallback like a failing one. Every
// reservation is settled when the request ends, to what the serving target used.

// requestBudgets lists the budgets the request itself is charged to.
func (x *exchange) requestBudgets() ([]ledger.Budget, error) {
	var out []ledger.Budget
	k := &x.route.Key
	if u := k.UsageLimits; u != nil && u.CreditLimit != nil {
		out = append(out, budgetOf(ledger.KindAPIKey, k.ID, "", k.UsagePeriod(), *u, x.route.KeyVersion))
	}
	ws := x.route.Workspace
	if ws == nil {
		return out, nil
	}
	for _, u := range ws.UsageLimits {
		if u.CreditLimit != nil {
			out = append(out, budgetOf(ledger.KindWorkspace, ws.ID, u.Type, ws.UsagePeriod(), u, x.route.WorkspaceVersion))
		}
	}
	facts := x.facts()
	for _, v := range x.route.UsagePolicies {
		p := &v.Value
		if !p.Active() || !facts.matches(p.Conditions) {
			continue
		}
		valueKey := usageValueKey(p.GroupBy, facts)
		if en, ok := p.Entities[valueKey]; ok && en.Status == domain.UsageEntityExhausted {
			return nil, stateRefusal(analytics.Decider{Kind: string(ledger.KindPolicy), ID: p.ID, Sub: valueKey, Version: v.Version,
				Limit: p.CreditLimit, Used: en.CurrentUsage}, "the usage limit policy's entity "+valueKey+" is exhausted")
		}
		b := ledger.Budget{Kind: ledger.KindPolicy, ID: p.ID, Sub: valueKey, Period: p.EntityPeriod(valueKey), Type: p.Type,
			Limit: p.CreditLimit, Version: v.Version}
		if p.AlertThreshold != nil {
			b.Threshold = *p.AlertThreshold
		}
		out = append(out, b)
	}
	return out, nil
}

// usageValueKey names a usage-limit policy's entity by the request's values of its group_by
// keys, in the policy's order: "metadata._user:ann", "api_key:<id>,metadata.team:x".
func usageValueKey(groups []domain.GroupBy, f RequestFacts) string {
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		v, _ := f.value(g.Key)
		parts = append(parts, g.Key+":"+v)
	}
	return strings.Join(parts, ",")
}

func budgetOf(kind ledger.Kind, id, sub, period string, u domain.UsageLimits, version uint64) ledger.Budget {
	b := ledger.Budget{Kind: kind, ID: id, Sub: sub, Period: period, Type: u.Type, Limit: *u.CreditLimit, Version: version}
	if u.AlertThreshold != nil {
		b.Threshold = *u.AlertThreshold
	}
	return b
}

// leafModels names the model each leaf of the plan calls, by its path: the request's, or the
// one a config's override_params set on the way down.
func leafModels(p *Plan, model, path string, out map[string]*Plan, models map[string]string) {
	if m, ok := p.Override["model"].(string); ok && m != "" {
		model = m
	}
	if p.Target != nil {
		out[path], models[path] = p, model
		return
	}
	for i := range p.Targets {
		leafModels(&p.Targets[i], model, path+"."+strconv.Itoa(i), out, models)
	}
}

// worstCase is what the request may cost on one target: the prompt's estimate and the most
// output it allows, at that target's price.
func (s *Service) worstCase(x *exchange, provider, model string) ledger.Amount {
	u := providers.Usage{PromptTokens: x.tokens, CompletionTokens: x.output, TotalTokens: x.tokens + x.output}
	return ledger.Amount{Tokens: float64(u.TotalTokens), Cost: s.cost(x, provider, model, u)}
}

func (s *Service) cost(x *exchange, provider, model string, u providers.Usage) float64 {
	if s.Prices == nil || provider == "" || model == "" {
		return 0
	}
	return s.Prices.UsageCost(x.route.Key.OrganisationID, x.route.Key.WorkspaceID, provider, model, u)
}

// reserve reserves the request's own budgets at the worst case over the plan's targets, and
// sets each leaf's admission: its own rate limits and budgets, checked when it is first tried.
func (s *Service) reserve(x *exchange, res *resolved) error {
	leaves, models := map[string]*Plan{}, map[string]string{}
	leafModels(&res.plan, x.model, "0", leaves, models)
	x.leafModels = models
	var worst ledger.Amount
	for path, leaf := range leaves {
		w := s.worstCase(x, leaf.Target.Provider, models[path])
		worst.Tokens, worst.Cost = max(worst.Tokens, w.Tokens), max(worst.Cost, w.Cost)
		if mp, ok := res.leaves[leaf.Target]; ok {
			leaf.Admit = s.admission(x, leaf.Target, mp, models[path])
		}
	}
	budgets, err := x.requestBudgets()
	if err != nil {
		return err
	}
	if len(budgets) == 0 || s.Ledger == nil {
		return nil
	}
	r, refused := s.Ledger.Reserve(budgets, worst)
	if refused != nil {
		return budgetRefusal(refused)
	}
	x.reservation = r
	return nil
}

// admission checks a managed provider's target before it is first tried: the provider's and
// its integration's status, rate limits and budgets in this workspace.
func (s *Service) admission(x *exchange, t *providers.Target, mp ManagedProvider, model string) func(ctx context.Context, path string) error {
	return func(_ context.Context, path string) error {
		a, err := s.admit(x, t, mp, s.worstCase(x, t.Provider, model))
		if err != nil {
			return err
		}
		x.leaves[path] = a
		return nil
	}
}

// admit takes what a call to a managed provider's target needs: the provider and its
// integration active and not exhausted, a place in their rate limits, and a reservation of
// their budgets at the call's worst case. What it took is settled by the caller.
func (s *Service) admit(x *exchange, t *providers.Target, mp ManagedProvider, worst ledger.Amount) (*leafAdmission, error) {
	now := s.Now()
	prov := &mp.Provider.Value
	switch prov.StatusAt(now) {
	case domain.ProviderExhausted:
		return nil, stateRefusal(analytics.Decider{Kind: string(ledger.KindProvider), ID: prov.ID, Version: mp.Provider.Version},
			"the provider @"+prov.Slug+"'s usage limit is exhausted")
	case domain.ProviderExpired:
		return nil, domain.Errorf(domain.CodeForbidden, "the provider @%s has expired", prov.Slug)
	}
	a := &leafAdmission{target: t, provider: "@" + prov.Slug}
	a.limits = OwnLimits(string(ledger.KindProvider), prov.ID, mp.Provider.Version, prov.RateLimits)
	var budgets []ledger.Budget
	if u := prov.UsageLimits; u != nil && u.CreditLimit != nil {
		budgets = append(budgets, budgetOf(ledger.KindProvider, prov.ID, "", prov.UsagePeriod(), *u, mp.Provider.Version))
	}
	if mp.Integration != nil {
		integ := &mp.Integration.Value
		if access, ok := integ.Workspaces[prov.WorkspaceID]; ok {
			if access.BudgetExhausted {
				return nil, stateRefusal(analytics.Decider{Kind: string(ledger.KindIntegrationWorkspace), ID: integ.ID, Sub: prov.WorkspaceID,
					Version: mp.Integration.Version}, "this workspace's budget for the integration "+integ.Slug+" is exhausted")
			}
			a.limits = append(a.limits, OwnLimits(string(ledger.KindIntegrationWorkspace), integ.ID, mp.Integration.Version, access.RateLimits)...)
			for _, u := range access.UsageLimits {
				if u.CreditLimit != nil {
					budgets = append(budgets, budgetOf(ledger.KindIntegrationWorkspace, integ.ID, prov.WorkspaceID,
						integ.WorkspaceUsagePeriod(prov.WorkspaceID), u, mp.Integration.Version))
				}
			}
		}
	}
	if len(a.limits) > 0 {
		d := s.Limiter.Allow(a.limits)
		if !d.Allowed {
			return nil, &RefusalError{By: d.Limit.By, Err: &domain.Error{Code: domain.CodeRateLimited, Detail: "rate_limit_exceeded",
				Message: d.Refusal(s.Now(), "@"+prov.Slug)}}
		}
	}
	if len(budgets) > 0 && s.Ledger != nil {
		r, refused := s.Ledger.Reserve(budgets, worst)
		if refused != nil {
			return nil, budgetRefusal(refused)
		}
		a.reservation = r
	}
	return a, nil
}

// budgetRefusal answers a budget that cannot take the request, naming it, its limit and its
// usage.
func budgetRefusal(r *ledger.Refusal) error {
	b := r.Budget
	d := analytics.Decider{Kind: string(b.Kind), ID: b.ID, Sub: b.Sub, Version: b.Version, Limit: b.Limit, Used: r.Used}
	detail := "budget_exceeded"
	if r.Exhausted {
		detail = "budget_exhausted"
	}
	return &RefusalError{By: d, Err: &domain.Error{Code: domain.CodeForbidden, Detail: detail,
		Message: r.Error() + " (" + d.String() + ")"}}
}

func stateRefusal(d analytics.Decider, msg string) error {
	return &RefusalError{By: d, Err: &domain.Error{Code: domain.CodeForbidden, Detail: "budget_exhausted",
		Message: msg + " (" + d.String() + ")"}}
}

// settle charges what the request used: to its token rate limits, to its own budgets, and to
// the budgets of the target that served (the others tried are released at zero). Its usage
// and cost go into the log row, and the budgets charged into its provenance.
func (s *Service) settle(x *exchange) {
	u := x.usage
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	x.rec.PromptTokens, x.rec.CompletionTokens, x.rec.TotalTokens = u.PromptTokens, u.CompletionTokens, u.TotalTokens
	x.rec.CachedTokens, x.rec.CacheWriteTokens, x.rec.ReasoningTokens = u.CachedTokens, u.CacheWriteTokens, u.ReasoningTokens
	served := x.leaves[x.served]
	if x.usageKnown && x.rec.AIService != "" {
		x.rec.Cost = s.cost(x, x.rec.AIService, x.leafModels[x.served], u)
	}
	own := ledger.Amount{Cost: x.rec.Cost, Tokens: float64(u.TotalTokens)}
	actual, tokens := own, u.TotalTokens // the request's own budgets' share: its call and its embedding
	if e := x.embedding; e != nil {
		// The semantic cache's embedding is the request's spending too: its own budgets and
		// token limits are charged with it, and its provider's with it alone.
		spent := e.amount()
		if a := e.admitted; a != nil {
			if a.reservation != nil {
				e.charges = a.reservation.Settle(spent)
			}
			if e.usage.TotalTokens > 0 {
				s.Limiter.Charge(a.limits, e.usage.TotalTokens)
			}
		}
		actual.Cost += spent.Cost
		actual.Tokens += spent.Tokens
		tokens += e.usage.TotalTokens
	}
	if x.reservation != nil {
		x.charged(x.reservation.Settle(actual))
	}
	for path, a := range x.leaves {
		if a.reservation == nil {
			continue
		}
		if path == x.served {
			x.charged(a.reservation.Settle(own))
		} else {
			a.reservation.Settle(ledger.Amount{})
		}
	}
	if tokens > 0 {
		s.Limiter.Charge(x.limits, tokens)
	}
	if u.TotalTokens > 0 && served != nil {
		s.Limiter.Charge(served.limits, u.TotalTokens)
	}
}

func (x *exchange) charged(charges []ledger.Charge) {
	x.prov.Charged = appendCharges(x.prov.Charged, charges)
}

// appendCharges adds the ledger's charges to a log row's, as its provenance names them.
func appendCharges(to []analytics.Charge, charges []ledger.Charge) []analytics.Charge {
	for _, c := range charges {
		b := c.Budget
		to = append(to, analytics.Charge{Amount: c.Amount,
			Decider: analytics.Decider{Kind: string(b.Kind), ID: b.ID, Sub: b.Sub, Version: b.Version, Limit: b.Limit, Used: c.Used}})
	}
	return to
}
