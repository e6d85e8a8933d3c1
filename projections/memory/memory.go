package memory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
)

// Model is the in-memory read model of the control plane: every aggregate folded from its
// events by projections.Fold (the domain's own Apply), answered by the shared
// projections.Queries, and the audit log with each change's before and after. It is the
// embedded mode's read model, rebuilt at every start, and in every serving process the
// routing tables that authentication and the gateway read without I/O (OnFold feeds the
// gateway's index). Its reads never fail.
type Model struct {
	projections.Queries

	reg  *domain.Registry
	name string

	mu        sync.RWMutex
	position  eventstore.Position
	advanced  chan struct{} // closed and replaced whenever position moves
	byPrefix  map[string]map[string]domain.Aggregate
	keyIDs    map[string]string // key hash (current or previous) → key id
	audit     []projections.AuditRecord
	keepAudit bool
	failed    error
	onFold    func(domain.Aggregate, uint64)
	// idempotency: actor id + "\x00" + idempotency key → the first request that used it.
	idempotency map[string]IdempotentRequest
}

var _ projections.ReadModel = (*Model)(nil)

// Options shape an in-memory model.
type Options struct {
	// NoAudit leaves the audit log out: routing tables in server mode, where PostgreSQL keeps
	// it, need only the state.
	NoAudit bool
	// OnFold is told of every aggregate an event changed, in event order, with its version
	// (the number of events its stream holds, so 1 after its first); it runs under the model's
	// lock and must copy what it keeps (the gateway's routing index, gateway.Index.Put).
	OnFold func(agg domain.Aggregate, revision uint64)
}

// New returns an empty in-memory read model.
func New(reg *domain.Registry, opts ...Options) *Model {
	m := &Model{reg: reg, name: "memory", advanced: make(chan struct{}), byPrefix: map[string]map[string]domain.Aggregate{},
		keyIDs: map[string]string{}, keepAudit: true}
	for _, o := range opts {
		m.keepAudit, m.onFold = !o.NoAudit, o.OnFold
	}
	m.Queries = projections.Queries{Docs: m}
	return m
}

// Name is the projection's name, its checkpoint key.
func (m *Model) Name() string { return m.name }

// Apply folds one recorded event into the in-memory model. Events must arrive in position
// order; an event at or before the current position is skipped, so a replay is harmless.
func (m *Model) Apply(rec eventstore.RecordedEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rec.Position <= m.position {
		return nil
	}
	prefix, id := projections.SplitStream(rec.Stream)
	current, known := m.byPrefix[prefix][id]
	if !known {
		current = nil
	}
	agg, audit, err := projections.Fold(m.reg, current, rec)
	if err != nil {
		return err
	}
	if agg != nil && !known {
		if m.byPrefix[prefix] == nil {
			m.byPrefix[prefix] = map[string]domain.Aggregate{}
		}
		m.byPrefix[prefix][id] = agg
	}
	if k, ok := agg.(*domain.APIKey); ok {
		m.indexKey(k)
	}
	if agg != nil && m.onFold != nil {
		m.onFold(agg, rec.Revision+1) // the version: how many events the stream holds
	}
	if m.keepAudit {
		m.audit = append(m.audit, audit)
	}
	m.indexIdempotency(rec.Metadata)
	m.position = rec.Position
	close(m.advanced)
	m.advanced = make(chan struct{})
	return nil
}

// indexKey keeps the hash index of a key current: its current hash, and its previous one
// while a rotation's transition runs (Accepts decides whether that one still works).
func (m *Model) indexKey(k *domain.APIKey) {
	if k.Hash != "" {
		m.keyIDs[k.Hash] = k.ID
	}
	if k.PreviousHash != "" {
		m.keyIDs[k.PreviousHash] = k.ID
	}
}

// Position is the position of the last event folded in.
func (m *Model) Position() eventstore.Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.position
}

// WaitFor returns once the model has folded in the event at pos, or ctx ends: the
// read-your-writes wait of every admin write.
func (m *Model) WaitFor(ctx context.Context, pos eventstore.Position) error {
	for {
		m.mu.RLock()
		reached, advanced, failed := m.position >= pos, m.advanced, m.failed
		m.mu.RUnlock()
		if reached {
			return nil
		}
		if failed != nil {
			return failed
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Failed reports the error that stopped the model, if one did.
func (m *Model) Failed() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.failed
}

// Checkpoint is the model's position (projections.Projection).
func (m *Model) Checkpoint(context.Context) (eventstore.Position, error) { return m.Position(), nil }

// ApplyBatch folds a batch into the model event by event (projections.Projection).
func (m *Model) ApplyBatch(_ context.Context, from eventstore.Position, batch []eventstore.RecordedEvent) error {
	if m.Position() != from {
		return projections.ErrCheckpointMoved
	}
	for _, rec := range batch {
		if err := m.Apply(rec); err != nil {
			return fmt.Errorf("event %s at position %d (%s): %w", rec.ID, rec.Position, rec.Type, err)
		}
	}
	return nil
}

// Fail stops the model (projections.Failer): waiting writes are told, health reports it.
func (m *Model) Fail(err error) {
	m.mu.Lock()
	m.failed = err
	close(m.advanced)
	m.advanced = make(chan struct{})
	m.mu.Unlock()
}

// View calls fn with the aggregate of prefix and id, if there is one (projections.Documents).
// fn runs under the read lock and must copy what it keeps.
func (m *Model) View(_ context.Context, prefix, id string, fn func(domain.Aggregate)) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	agg, ok := m.byPrefix[prefix][id]
	if ok {
		fn(agg)
	}
	return ok, nil
}

// none reports, in memory, that the model holds no aggregate of prefix: a lookup on the
// gateway's path then need not even build the id it would look for.
func (m *Model) none(prefix string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.byPrefix[prefix]) == 0
}

// Scan calls fn with every aggregate of prefix, on the same terms as View.
func (m *Model) Scan(_ context.Context, prefix string, fn func(domain.Aggregate)) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, agg := range m.byPrefix[prefix] {
		fn(agg)
	}
	return nil
}

// memoryGet returns a copy of the aggregate of prefix and id held in memory.
func memoryGet[A any](m *Model, prefix, id string) (A, bool) {
	var out A
	found := false
	m.mu.RLock()
	defer m.mu.RUnlock()
	if a, ok := any(m.byPrefix[prefix][id]).(*A); ok {
		out, found = *a, true
	}
	return out, found
}

// Authenticate resolves a presented client key to its actor, reading only memory. The
// reasons for refusal are kept apart so that the caller can log them; the client sees one
// 401 for a key that is unknown, deleted, expired or rotated out.
func (m *Model) Authenticate(presented string, now time.Time) (domain.Actor, error) {
	if presented == "" {
		return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "missing x-gateway-api-key header")
	}
	hash := domain.HashKey(presented)
	m.mu.RLock()
	id := m.keyIDs[hash]
	m.mu.RUnlock()
	k, ok := memoryGet[domain.APIKey](m, domain.APIKeyPrefix, id)
	if !ok {
		return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "invalid API key")
	}
	if accepted, reason := k.Accepts(hash, now); !accepted {
		if reason == "expired" {
			return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "this API key has expired")
		}
		return domain.Actor{}, domain.Errorf(domain.CodeUnauthorized, "invalid API key")
	}
	if k.IsOrganisationKey() {
		return domain.KeyActor(&k, nil, nil)
	}
	var (
		ws   *domain.Workspace
		user *domain.User
	)
	if w, ok := memoryGet[domain.Workspace](m, domain.WorkspacePrefix, k.WorkspaceID); ok {
		ws = &w
	}
	if u, ok := memoryGet[domain.User](m, domain.UserPrefix, k.UserID); ok {
		user = &u
	}
	return domain.KeyActor(&k, ws, user)
}

// Overrides is the model's price overrides as the gateway's pricing reads them on every
// request it logs (pricing.Overrides): from memory, without a context or an error to handle.
func (m *Model) Overrides() PricingOverrides { return PricingOverrides{m: m} }

// PricingOverrides answers the price override in force from an in-memory model.
type PricingOverrides struct{ m *Model }

// ModelPricingOverride returns the override in force for provider's model in a workspace
// (projections.Queries.ModelPricingOverride), at no cost when no override was ever set.
func (o PricingOverrides) ModelPricingOverride(orgID, workspaceID, provider, model string) (domain.ModelPricingOverride, bool) {
	if o.m.none(domain.ModelPricingPrefix) {
		return domain.ModelPricingOverride{}, false
	}
	p, ok, _ := o.m.Queries.ModelPricingOverride(context.Background(), orgID, workspaceID, provider, model)
	return p, ok
}

// AuditLog returns every record f selects, in f's order.
func (m *Model) AuditLog(f projections.AuditFilter) []projections.AuditRecord {
	out, _, _ := m.AuditRecords(context.Background(), f, 0, 0)
	return out
}

// AuditRecords returns the records f selects from the offset-th on, at most limit of them (0:
// all), in f's order, and how many f selects in all.
func (m *Model) AuditRecords(_ context.Context, f projections.AuditFilter, offset, limit int) ([]projections.AuditRecord, int, error) {
	if f.ResourceType != "" {
		f.ResourceType = projections.AnsweredResourceType(f.ResourceType)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var picked []int
	for i := range m.audit {
		if f.Keep(&m.audit[i]) {
			picked = append(picked, i)
		}
	}
	if f.NewestFirst {
		for i, j := 0, len(picked)-1; i < j; i, j = i+1, j-1 {
			picked[i], picked[j] = picked[j], picked[i]
		}
	}
	total := len(picked)
	picked = picked[min(offset, total):]
	if limit > 0 && len(picked) > limit {
		picked = picked[:limit]
	}
	out := make([]projections.AuditRecord, len(picked))
	for i, at := range picked {
		out[i] = m.audit[at]
		out[i].ResourceType = projections.AnsweredResourceType(out[i].ResourceType)
	}
	return out, total, nil
}

// AuditRecord returns one record by its event id.
func (m *Model) AuditRecord(_ context.Context, orgID, id string) (projections.AuditRecord, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, r := range m.audit {
		if r.ID == id && r.OrganisationID == orgID {
			r.ResourceType = projections.AnsweredResourceType(r.ResourceType)
			return r, true, nil
		}
	}
	return projections.AuditRecord{}, false, nil
}
