package httpapi

import (
	"sort"
	"strings"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/ledger"
	"github.com/causeway/causeway/projections"
)

// UsageReader is the usage ledger as the admin API reads it: the settled usage of a budget in
// its period, and the counters of one resource (a usage-limit policy's entities).
type UsageReader interface {
	Used(b ledger.Budget) float64
	Counters(kind ledger.Kind, id string) []ledger.Counter
}

// completeReadModel is every reader the admin API finds on its read model.
type completeReadModel interface {
	ReadModel
	GatewayResourceReader
	LogExportReader
	pricingOverrideReader
}

// WithLiveUsage answers current_usage from the usage ledger: keys, workspaces, managed
// providers and usage-limit policy entities show what the gateway has charged them, not only
// the figure their last threshold or exhaustion event recorded. A read model that lacks one of
// the admin API's readers is returned as it is.
func WithLiveUsage(read ReadModel, usage UsageReader) ReadModel {
	full, ok := read.(completeReadModel)
	if !ok || usage == nil {
		return read
	}
	return liveUsage{completeReadModel: full, usage: usage}
}

type liveUsage struct {
	completeReadModel
	usage UsageReader
}

// live is the greater of the ledger's figure for the period and the recorded one: the ledger
// holds every charge; an event's figure stands when the ledger has none (a history from before
// the ledger, or one whose rows were lost).
func (l liveUsage) live(kind ledger.Kind, id, sub, period string, recorded float64) float64 {
	return max(recorded, l.usage.Used(ledger.Budget{Kind: kind, ID: id, Sub: sub, Period: period}))
}

func (l liveUsage) key(k domain.APIKey) domain.APIKey {
	k.CurrentUsage = l.live(ledger.KindAPIKey, k.ID, "", k.UsagePeriod(), k.CurrentUsage)
	return k
}

// workspace shows the usage of the workspace's budget, the one of the type that is exhausted
// or else its first (a workspace has at most one budget of each type).
func (l liveUsage) workspace(w domain.Workspace) domain.Workspace {
	typ := w.ExhaustedLimit
	if typ == "" && len(w.UsageLimits) > 0 {
		typ = w.UsageLimits[0].Type
	}
	if typ != "" {
		w.CurrentUsage = l.live(ledger.KindWorkspace, w.ID, typ, w.UsagePeriod(), w.CurrentUsage)
	}
	return w
}

func (l liveUsage) provider(p domain.Provider) domain.Provider {
	p.CurrentUsage = l.live(ledger.KindProvider, p.ID, "", p.UsagePeriod(), p.CurrentUsage)
	return p
}

// policy merges the ledger's entities of the current period into the policy's: an entity the
// gateway charged appears with its usage before any threshold or exhaustion was recorded.
func (l liveUsage) policy(p domain.UsageLimitPolicy) domain.UsageLimitPolicy {
	counters := l.usage.Counters(ledger.KindPolicy, p.ID)
	if len(counters) == 0 {
		return p
	}
	entities := make(map[string]domain.UsageLimitEntity, len(p.Entities)+len(counters))
	for k, en := range p.Entities {
		entities[k] = en
	}
	for _, c := range counters {
		if c.Period != p.EntityPeriod(c.Sub) {
			continue
		}
		en, ok := entities[c.Sub]
		if !ok {
			en = domain.UsageLimitEntity{ID: domain.UsageEntityID(p.ID, c.Sub), ValueKey: c.Sub, Status: domain.UsageEntityActive,
				CreatedAt: p.CreatedAt, LastUpdatedAt: p.LastUpdatedAt}
		}
		en.CurrentUsage = max(en.CurrentUsage, c.Used)
		entities[c.Sub] = en
	}
	p.Entities = entities
	return p
}

func (l liveUsage) APIKey(orgID, id string) (domain.APIKey, bool) {
	k, ok := l.completeReadModel.APIKey(orgID, id)
	return l.key(k), ok
}

func (l liveUsage) APIKeys(f projections.KeyFilter) []domain.APIKey {
	return each(l.completeReadModel.APIKeys(f), l.key)
}

// each applies live to every item of a list the read model answered (a fresh slice).
func each[T any](items []T, live func(T) T) []T {
	for i := range items {
		items[i] = live(items[i])
	}
	return items
}

func (l liveUsage) Workspace(orgID, id string) (domain.Workspace, bool) {
	w, ok := l.completeReadModel.Workspace(orgID, id)
	return l.workspace(w), ok
}

func (l liveUsage) WorkspaceBySlug(orgID, slug string) (domain.Workspace, bool) {
	w, ok := l.completeReadModel.WorkspaceBySlug(orgID, slug)
	return l.workspace(w), ok
}

func (l liveUsage) Workspaces(f projections.WorkspaceFilter) []domain.Workspace {
	return each(l.completeReadModel.Workspaces(f), l.workspace)
}

func (l liveUsage) ManagedProvider(orgID, id string) (domain.Provider, bool) {
	p, ok := l.completeReadModel.ManagedProvider(orgID, id)
	return l.provider(p), ok
}

func (l liveUsage) ManagedProviders(f projections.ManagedProviderFilter) []domain.Provider {
	return each(l.completeReadModel.ManagedProviders(f), l.provider)
}

func (l liveUsage) UsageLimitPolicy(orgID, id string) (domain.UsageLimitPolicy, bool) {
	p, ok := l.completeReadModel.UsageLimitPolicy(orgID, id)
	return l.policy(p), ok
}

func (l liveUsage) UsageLimitPolicies(f projections.PolicyFilter, typ string) []domain.UsageLimitPolicy {
	return each(l.completeReadModel.UsageLimitPolicies(f, typ), l.policy)
}

// UsageLimitPolicyEntities lists the policy's entities, the ledger's included, filtered and
// ordered as the read model's are.
func (l liveUsage) UsageLimitPolicyEntities(orgID, id string, f projections.UsageEntityFilter) ([]domain.UsageLimitEntity, bool) {
	p, ok := l.UsageLimitPolicy(orgID, id)
	if !ok {
		return nil, false
	}
	search := strings.ToLower(f.Search)
	out := []domain.UsageLimitEntity{}
	for _, en := range p.Entities {
		if (f.Statuses == nil || f.Statuses[en.Status]) && strings.Contains(strings.ToLower(en.ValueKey), search) {
			out = append(out, en)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ValueKey < out[j].ValueKey })
	return out, true
}

func (l liveUsage) ManagedProviderBySlug(orgID, workspaceID, slug string) (domain.Provider, bool) {
	p, ok := l.completeReadModel.ManagedProviderBySlug(orgID, workspaceID, slug)
	return l.provider(p), ok
}

func (l liveUsage) ManagedProvidersBySlug(orgID, slug string) []domain.Provider {
	return each(l.completeReadModel.ManagedProvidersBySlug(orgID, slug), l.provider)
}
