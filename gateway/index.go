package gateway

import (
	"sort"
	"sync"

	"github.com/causeway/causeway/domain"
)

// Index is the routing index the hot path reads: built for one lookup per request. It is a
// projection of the control plane's aggregates, fed every changed aggregate in event order by
// the in-memory read model's fold (Put), and it keeps its own immutable snapshots, so a lookup
// copies nothing and never waits for a fold in progress beyond a read lock.
//
//   - Route(hash): the key, the actor it acts as, its workspace, and the rate-limit and
//     usage-limit policies of that workspace, indexed per workspace (not scanned per request).
//   - ManagedProviders(org, slug): the live managed providers holding a slug, with their
//     integrations.
//   - SavedConfig(org, ref): a saved config by id or slug.
//   - Guardrail(org, ref): a guardrail by id or slug; Route also resolves the guardrails the
//     key's workspace attaches to every request (its defaults' input_guardrails and
//     output_guardrails).
//   - Prompt(org, ref), PromptPartial(org, ref), PromptLabelByName(org, name) and
//     PromptSecurity(org): what rendering a prompt reads (index_prompts.go).
type Index struct {
	mu sync.RWMutex

	keys      map[string]*keyEntry // key id → entry
	keyByHash map[string]string    // current or previous hash → key id
	keysOfWS  map[string]map[string]bool
	keysOfUsr map[string]map[string]bool

	workspaces map[string]*wsEntry // workspace id → entry (policies included)
	users      map[string]*domain.User

	ratePolicies  map[string]Versioned[domain.RateLimitPolicy] // policy id → policy
	usagePolicies map[string]Versioned[domain.UsageLimitPolicy]

	providers    map[string]Versioned[domain.Provider]    // provider id → provider
	bySlug       map[string][]string                      // org + "\x00" + slug → provider ids, newest first
	integrations map[string]Versioned[domain.Integration] // integration id → integration
	configs      map[string]Versioned[domain.SavedConfig] // config id → config
	configSlugs  map[string]string                        // org + "\x00" + slug → config id

	guardrails     map[string]Versioned[domain.Guardrail] // guardrail id → guardrail
	guardrailSlugs map[string]string                      // org + "\x00" + slug → guardrail id

	promptTables // prompts, partials, labels and security settings (index_prompts.go)
}

// Versioned is a snapshot of an aggregate with its version, the number of events its stream
// holds (1 after its creation): the version decisions name in their provenance.
type Versioned[T any] struct {
	Value   T
	Version uint64
}

type keyEntry struct {
	key      domain.APIKey
	version  uint64
	actor    domain.Actor
	actorErr error
}

// wsEntry is a workspace with the active policies that apply to its traffic, oldest first.
type wsEntry struct {
	ws            domain.Workspace
	version       uint64
	guardrails    domain.WorkspaceGuardrails // what its defaults attach, read once
	ratePolicies  []Versioned[domain.RateLimitPolicy]
	usagePolicies []Versioned[domain.UsageLimitPolicy]
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{keys: map[string]*keyEntry{}, keyByHash: map[string]string{}, keysOfWS: map[string]map[string]bool{},
		keysOfUsr: map[string]map[string]bool{}, workspaces: map[string]*wsEntry{}, users: map[string]*domain.User{},
		ratePolicies: map[string]Versioned[domain.RateLimitPolicy]{}, usagePolicies: map[string]Versioned[domain.UsageLimitPolicy]{},
		providers: map[string]Versioned[domain.Provider]{}, bySlug: map[string][]string{},
		integrations: map[string]Versioned[domain.Integration]{}, configs: map[string]Versioned[domain.SavedConfig]{},
		configSlugs: map[string]string{}, guardrails: map[string]Versioned[domain.Guardrail]{}, guardrailSlugs: map[string]string{}}
}

// Route is what one lookup by key hash gives: the key, the actor it acts as (or why it cannot
// act), its workspace and the policies that apply to it.
type Route struct {
	Key        domain.APIKey
	KeyVersion uint64
	Actor      domain.Actor
	// ActorErr says why a known key cannot act: its workspace is archived, or its user is no
	// longer a member.
	ActorErr error
	// Workspace is nil for an organisation key.
	Workspace        *domain.Workspace
	WorkspaceVersion uint64
	RatePolicies     []Versioned[domain.RateLimitPolicy]
	UsagePolicies    []Versioned[domain.UsageLimitPolicy]
	// InputGuardrails and OutputGuardrails are the guardrails the workspace attaches to each
	// of its requests (its defaults' input_guardrails and output_guardrails), in order: on the
	// request, and on the answer.
	InputGuardrails  []AttachedGuardrail
	OutputGuardrails []AttachedGuardrail
}

// AttachedGuardrail is a guardrail that a workspace (or a config) attaches, as it names it,
// and what that resolves to now: nil when no live guardrail that the workspace may use holds
// the name (it was deleted, or belongs to another workspace). Whether to refuse the request
// then is the gateway's decision.
type AttachedGuardrail struct {
	Ref       string
	Guardrail *Versioned[domain.Guardrail]
}

// Route looks a presented key's hash up.
func (x *Index) Route(hash string) (Route, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	id, ok := x.keyByHash[hash]
	if !ok {
		return Route{}, false
	}
	k := x.keys[id]
	r := Route{Key: k.key, KeyVersion: k.version, Actor: k.actor, ActorErr: k.actorErr}
	if w := x.workspaces[k.key.WorkspaceID]; w != nil && k.key.WorkspaceID != "" {
		r.Workspace, r.WorkspaceVersion = &w.ws, w.version
		r.RatePolicies, r.UsagePolicies = w.ratePolicies, w.usagePolicies
		r.InputGuardrails = x.attached(w.ws.OrganisationID, w.ws.ID, w.guardrails.Input)
		r.OutputGuardrails = x.attached(w.ws.OrganisationID, w.ws.ID, w.guardrails.Output)
	}
	return r, true
}

// attached resolves the guardrails a workspace names; nil when it names none. The caller
// holds the read lock.
func (x *Index) attached(orgID, workspaceID string, refs []string) []AttachedGuardrail {
	if len(refs) == 0 {
		return nil
	}
	out := make([]AttachedGuardrail, len(refs))
	for i, ref := range refs {
		out[i].Ref = ref
		if g, ok := x.guardrail(orgID, ref); ok && g.Value.Exists() && g.Value.UsableBy(workspaceID) {
			out[i].Guardrail = &g
		}
	}
	return out
}

// Guardrail returns a guardrail of the organisation by its id (deleted or not: see Exists) or
// by the slug a live guardrail holds. Whether a workspace may use it is UsableBy.
func (x *Index) Guardrail(orgID, ref string) (Versioned[domain.Guardrail], bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.guardrail(orgID, ref)
}

func (x *Index) guardrail(orgID, ref string) (Versioned[domain.Guardrail], bool) {
	if g, ok := x.guardrails[ref]; ok && g.Value.OrganisationID == orgID {
		return g, true
	}
	if id, ok := x.guardrailSlugs[orgID+"\x00"+ref]; ok {
		return x.guardrails[id], true
	}
	return Versioned[domain.Guardrail]{}, false
}

// ManagedProvider is a managed provider with the integration whose credential it may use.
type ManagedProvider struct {
	Provider    Versioned[domain.Provider]
	Integration *Versioned[domain.Integration] // nil: the provider carries its own credential
}

// ManagedProviders lists the organisation's live providers that hold slug, one per workspace
// at most, newest first.
func (x *Index) ManagedProviders(orgID, slug string) []ManagedProvider {
	x.mu.RLock()
	defer x.mu.RUnlock()
	ids := x.bySlug[orgID+"\x00"+slug]
	out := make([]ManagedProvider, 0, len(ids))
	for _, id := range ids {
		p := x.providers[id]
		mp := ManagedProvider{Provider: p}
		if p.Value.IntegrationID != "" {
			if i, ok := x.integrations[p.Value.IntegrationID]; ok {
				mp.Integration = &i
			}
		}
		out = append(out, mp)
	}
	return out
}

// SavedConfig returns a config of the organisation by its id (archived or not) or by the slug
// a live config holds.
func (x *Index) SavedConfig(orgID, ref string) (Versioned[domain.SavedConfig], bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if c, ok := x.configs[ref]; ok && c.Value.OrganisationID == orgID {
		return c, true
	}
	if id, ok := x.configSlugs[orgID+"\x00"+ref]; ok {
		return x.configs[id], true
	}
	return Versioned[domain.SavedConfig]{}, false
}

// Put folds one changed aggregate in: the in-memory read model calls it after each event, in
// order, with the aggregate as that event left it (the index copies what it keeps).
func (x *Index) Put(agg domain.Aggregate, version uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch a := agg.(type) {
	case *domain.APIKey:
		x.putKey(*a, version)
	case *domain.Workspace:
		x.putWorkspace(*a, version)
	case *domain.User:
		u := *a
		x.users[u.ID] = &u
		for id := range x.keysOfUsr[u.ID] {
			x.rebuildKey(id)
		}
	case *domain.RateLimitPolicy:
		x.ratePolicies[a.ID] = Versioned[domain.RateLimitPolicy]{*a, version}
		x.rebuildPolicies(a.WorkspaceID)
	case *domain.UsageLimitPolicy:
		x.usagePolicies[a.ID] = Versioned[domain.UsageLimitPolicy]{*a, version}
		x.rebuildPolicies(a.WorkspaceID)
	case *domain.Provider:
		x.putProvider(*a, version)
	case *domain.Integration:
		x.integrations[a.ID] = Versioned[domain.Integration]{*a, version}
	case *domain.SavedConfig:
		c := *a
		x.configs[c.ID] = Versioned[domain.SavedConfig]{c, version}
		slug := c.OrganisationID + "\x00" + c.Slug
		if c.Exists() {
			x.configSlugs[slug] = c.ID
		} else if x.configSlugs[slug] == c.ID {
			delete(x.configSlugs, slug)
		}
	case *domain.Guardrail:
		g := *a
		x.guardrails[g.ID] = Versioned[domain.Guardrail]{g, version}
		slug := g.OrganisationID + "\x00" + g.Slug
		if g.Exists() {
			x.guardrailSlugs[slug] = g.ID
		} else if x.guardrailSlugs[slug] == g.ID {
			delete(x.guardrailSlugs, slug)
		}
	case *domain.Prompt, *domain.PromptPartial, *domain.PromptLabel, *domain.Organisation:
		x.putPrompts(agg, version)
	}
}

func (x *Index) putKey(k domain.APIKey, version uint64) {
	if old, ok := x.keys[k.ID]; ok {
		for _, h := range []string{old.key.Hash, old.key.PreviousHash} {
			if h != "" && x.keyByHash[h] == k.ID {
				delete(x.keyByHash, h)
			}
		}
	}
	if !k.Exists() {
		delete(x.keys, k.ID)
		delete(x.keysOfWS[k.WorkspaceID], k.ID)
		delete(x.keysOfUsr[k.UserID], k.ID)
		return
	}
	x.keys[k.ID] = &keyEntry{key: k, version: version}
	for _, h := range []string{k.Hash, k.PreviousHash} {
		if h != "" {
			x.keyByHash[h] = k.ID
		}
	}
	addTo(x.keysOfWS, k.WorkspaceID, k.ID)
	addTo(x.keysOfUsr, k.UserID, k.ID)
	x.rebuildKey(k.ID)
}

func addTo(m map[string]map[string]bool, outer, inner string) {
	if outer == "" {
		return
	}
	if m[outer] == nil {
		m[outer] = map[string]bool{}
	}
	m[outer][inner] = true
}

// rebuildKey works out a key's actor again, from its workspace and user as they are now. The
// entry is replaced, never changed, since lookups hold it without the lock.
func (x *Index) rebuildKey(id string) {
	old, ok := x.keys[id]
	if !ok {
		return
	}
	e := &keyEntry{key: old.key, version: old.version}
	var ws *domain.Workspace
	if w := x.workspaces[e.key.WorkspaceID]; w != nil {
		ws = &w.ws
	}
	e.actor, e.actorErr = domain.KeyActor(&e.key, ws, x.users[e.key.UserID])
	x.keys[id] = e
}

func (x *Index) putWorkspace(w domain.Workspace, version uint64) {
	e := &wsEntry{ws: w, version: version, guardrails: w.Guardrails()}
	if old := x.workspaces[w.ID]; old != nil {
		e.ratePolicies, e.usagePolicies = old.ratePolicies, old.usagePolicies
	}
	x.workspaces[w.ID] = e
	for id := range x.keysOfWS[w.ID] {
		x.rebuildKey(id)
	}
}

// rebuildPolicies indexes a workspace's active policies again, oldest first (the order a
// request meets them in, and names its refusals by).
func (x *Index) rebuildPolicies(workspaceID string) {
	old := x.workspaces[workspaceID]
	if old == nil {
		old = &wsEntry{ws: domain.Workspace{ID: workspaceID}}
	}
	e := &wsEntry{ws: old.ws, version: old.version, guardrails: old.guardrails}
	for _, p := range x.ratePolicies {
		if p.Value.WorkspaceID == workspaceID && p.Value.Status == domain.StatusActive {
			e.ratePolicies = append(e.ratePolicies, p)
		}
	}
	for _, p := range x.usagePolicies {
		if p.Value.WorkspaceID == workspaceID && p.Value.Status == domain.StatusActive {
			e.usagePolicies = append(e.usagePolicies, p)
		}
	}
	sort.Slice(e.ratePolicies, func(i, j int) bool {
		return olderFirst(e.ratePolicies[i].Value.CreatedAt.UnixNano(), e.ratePolicies[j].Value.CreatedAt.UnixNano(),
			e.ratePolicies[i].Value.ID, e.ratePolicies[j].Value.ID)
	})
	sort.Slice(e.usagePolicies, func(i, j int) bool {
		return olderFirst(e.usagePolicies[i].Value.CreatedAt.UnixNano(), e.usagePolicies[j].Value.CreatedAt.UnixNano(),
			e.usagePolicies[i].Value.ID, e.usagePolicies[j].Value.ID)
	})
	x.workspaces[workspaceID] = e
}

func olderFirst(a, b int64, idA, idB string) bool {
	if a != b {
		return a < b
	}
	return idA < idB
}

func (x *Index) putProvider(p domain.Provider, version uint64) {
	old, had := x.providers[p.ID]
	x.providers[p.ID] = Versioned[domain.Provider]{p, version}
	if had {
		x.reslug(old.Value.OrganisationID, old.Value.Slug)
	}
	x.reslug(p.OrganisationID, p.Slug)
}

// reslug lists the live providers holding a slug again, newest first.
func (x *Index) reslug(orgID, slug string) {
	key := orgID + "\x00" + slug
	var ids []string
	for _, id := range x.bySlugCandidates(key) {
		if p, ok := x.providers[id]; ok && p.Value.Exists() && p.Value.Slug == slug && p.Value.OrganisationID == orgID {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := x.providers[ids[i]].Value, x.providers[ids[j]].Value
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	if len(ids) == 0 {
		delete(x.bySlug, key)
		return
	}
	x.bySlug[key] = ids
}

// bySlugCandidates are the providers that may hold a slug: those listed under it, and every
// provider of the same organisation and slug (a rename or a new provider).
func (x *Index) bySlugCandidates(key string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range x.bySlug[key] {
		seen[id] = true
		out = append(out, id)
	}
	for id, p := range x.providers {
		if !seen[id] && p.Value.OrganisationID+"\x00"+p.Value.Slug == key {
			out = append(out, id)
		}
	}
	return out
}

// Organisation returns the organisation of a budget-bearing resource (a key, workspace,
// managed provider, integration or usage-limit policy), or "" when the index has none.
func (x *Index) Organisation(kind, id string) string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	switch kind {
	case "api_key":
		if k, ok := x.keys[id]; ok {
			return k.key.OrganisationID
		}
	case "workspace":
		if w, ok := x.workspaces[id]; ok {
			return w.ws.OrganisationID
		}
	case "provider":
		return x.providers[id].Value.OrganisationID
	case "integration_workspace":
		return x.integrations[id].Value.OrganisationID
	case "usage_limit_policy":
		return x.usagePolicies[id].Value.OrganisationID
	}
	return ""
}
