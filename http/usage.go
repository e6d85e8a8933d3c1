package httpapi

import (
	"context"
	"sort"

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

// WithLiveUsage answers current_usage from the usage ledger: keys, workspaces, managed
// providers and usage-limit policy entities show what the gateway has charged them, not only
// the figure their last threshold or exhaustion event recorded.
func WithLiveUsage(read ReadModel, usage UsageReader) ReadModel {
	if usage == nil {
		return read
	}
	return liveUsage{ReadModel: read, usage: usage}
}

type liveUsage struct {
	ReadModel
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

func (l liveUsage) APIKey(ctx context.Context, orgID, id string) (domain.APIKey, bool, error) {
	k, ok, err := l.ReadModel.APIKey(ctx, orgID, id)
	return l.key(k), ok, err
}

func (l liveUsage) APIKeys(ctx context.Context, f projections.KeyFilter) ([]domain.APIKey, error) {
	return each(l.ReadModel.APIKeys(ctx, f))(l.key)
}

// each applies live to every item of a list the read model answered (a fresh slice).
func each[T any](items []T, err error) func(live func(T) T) ([]T, error) {
	return func(live func(T) T) ([]T, error) {
		for i := range items {
			items[i] = live(items[i])
		}
		return items, err
	}
}

func (l liveUsage) Workspace(ctx context.Context, orgID, id string) (domain.Workspace, bool, error) {
	w, ok, err := l.ReadModel.Workspace(ctx, orgID, id)
	return l.workspace(w), ok, err
}

func (l liveUsage) WorkspaceBySlug(ctx context.Context, orgID, slug string) (domain.Workspace, bool, error) {
	w, ok, err := l.ReadModel.WorkspaceBySlug(ctx, orgID, slug)
	return l.workspace(w), ok, err
}

func (l liveUsage) Workspaces(ctx context.Context, f projections.WorkspaceFilter) ([]domain.Workspace, error) {
	return each(l.ReadModel.Workspaces(ctx, f))(l.workspace)
}

func (l liveUsage) ManagedProvider(ctx context.Context, orgID, id string) (domain.Provider, bool, error) {
	p, ok, err := l.ReadModel.ManagedProvider(ctx, orgID, id)
	return l.provider(p), ok, err
}

func (l liveUsage) ManagedProviders(ctx context.Context, f projections.ManagedProviderFilter) ([]domain.Provider, error) {
	return each(l.ReadModel.ManagedProviders(ctx, f))(l.provider)
}

func (l liveUsage) UsageLimitPolicy(ctx context.Context, orgID, id string) (domain.UsageLimitPolicy, bool, error) {
	p, ok, err := l.ReadModel.UsageLimitPolicy(ctx, orgID, id)
	return l.policy(p), ok, err
}

func (l liveUsage) UsageLimitPolicies(ctx context.Context, f projections.PolicyFilter, typ string) ([]domain.UsageLimitPolicy, error) {
	return each(l.ReadModel.UsageLimitPolicies(ctx, f, typ))(l.policy)
}

// UsageLimitPolicyEntities lists the policy's entities, the ledger's included, filtered and
// ordered as the read model's are.
func (l liveUsage) UsageLimitPolicyEntities(ctx context.Context, orgID, id string, f projections.UsageEntityFilter) ([]domain.UsageLimitEntity, bool, error) {
	p, ok, err := l.UsageLimitPolicy(ctx, orgID, id)
	if err != nil || !ok {
		return nil, false, err
	}
	out := []domain.UsageLimitEntity{}
	for _, en := range p.Entities {
		if f.Keep(en) {
			out = append(out, en)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ValueKey < out[j].ValueKey })
	return out, true, nil
}

func (l liveUsage) ManagedProviderBySlug(ctx context.Context, orgID, workspaceID, slug string) (domain.Provider, bool, error) {
	p, ok, err := l.ReadModel.ManagedProviderBySlug(ctx, orgID, workspaceID, slug)
	return l.provider(p), ok, err
}

func (l liveUsage) ManagedProvidersBySlug(ctx context.Context, orgID, slug string) ([]domain.Provider, error) {
	return each(l.ReadModel.ManagedProvidersBySlug(ctx, orgID, slug))(l.provider)
}
