package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// Memory is the in-memory read model: every aggregate folded from its events by the domain's
// own Apply, indexed for the admin API's reads and for authentication, plus the audit log
// with each change's before and after. It is rebuilt from the events at every start and kept
// current by a subscription (Run).
type Memory struct {
	reg *domain.Registry

	mu       sync.RWMutex
	position eventstore.Position
	advanced chan struct{} // closed and replaced whenever position moves
	byPrefix map[string]map[string]domain.Aggregate
	keyIDs   map[string]string // key hash (current or previous) → key id
	audit    []AuditRecord
	failed   error
}

// NewMemory returns an empty read model.
func NewMemory(reg *domain.Registry) *Memory {
	return &Memory{reg: reg, advanced: make(chan struct{}), byPrefix: map[string]map[string]domain.Aggregate{},
		keyIDs: map[string]string{}}
}

// AuditRecord is one entry of the audit log: one event, who caused it and from where, and the
// state of the resource before and after it.
type AuditRecord struct {
	ID             string            `json:"id"`
	Position       uint64            `json:"position"`
	Timestamp      time.Time         `json:"timestamp"`
	Action         string            `json:"action"`
	ResourceType   string            `json:"resource_type"`
	ResourceID     string            `json:"resource_id"`
	ActorID        string            `json:"user_id"`
	ActorType      string            `json:"user_type"`
	OrganisationID string            `json:"organisation_id"`
	WorkspaceID    string            `json:"workspace_id,omitempty"`
	RequestID      string            `json:"request_id,omitempty"`
	ClientIP       string            `json:"client_ip,omitempty"`
	UserAgent      string            `json:"user_agent,omitempty"`
	Method         string            `json:"method,omitempty"`
	URI            string            `json:"uri,omitempty"`
	StatusCode     int               `json:"response_status_code"`
	Details        map[string]string `json:"details,omitempty"`
	Before         json.RawMessage   `json:"before"`
	After          json.RawMessage   `json:"after"`
}

// Apply folds one recorded event into the model. Events must arrive in position order; an
// event at or before the current position is skipped, so a replay is harmless.
func (m *Memory) Apply(rec eventstore.RecordedEvent) error {
	ev, err := m.reg.Decode(rec.Type, rec.Data)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if rec.Position <= m.position {
		return nil
	}
	prefix := domain.StreamPrefix(rec.Stream)
	id := strings.TrimPrefix(rec.Stream, prefix+"-")
	before := json.RawMessage("null")
	agg, known := m.byPrefix[prefix][id]
	if known {
		before = mustJSON(agg)
	} else if fresh, ok := m.reg.NewAggregate(rec.Stream); ok {
		agg = fresh
		if m.byPrefix[prefix] == nil {
			m.byPrefix[prefix] = map[string]domain.Aggregate{}
		}
		m.byPrefix[prefix][id] = agg
	}
	after := json.RawMessage("null")
	if agg != nil {
		agg.Apply(ev)
		after = mustJSON(agg)
	}
	if k, ok := agg.(*domain.APIKey); ok {
		m.indexKey(k)
	}
	m.audit = append(m.audit, auditRecord(rec, prefix, id, ev, before, after))
	m.position = rec.Position
	close(m.advanced)
	m.advanced = make(chan struct{})
	return nil
}

// indexKey keeps the hash index of a key current: its current hash, and its previous one
// while a rotation's transition runs (Accepts decides whether that one still works).
func (m *Memory) indexKey(k *domain.APIKey) {
	if k.Hash != "" {
		m.keyIDs[k.Hash] = k.ID
	}
	if k.PreviousHash != "" {
		m.keyIDs[k.PreviousHash] = k.ID
	}
}

func auditRecord(rec eventstore.RecordedEvent, prefix, id string, ev domain.Event, before, after json.RawMessage) AuditRecord {
	md := rec.Metadata
	r := AuditRecord{
		ID: rec.ID.String(), Position: uint64(rec.Position), Timestamp: rec.RecordedAt, Action: ev.EventType(),
		ResourceType: prefix, ResourceID: id, ActorID: md.ActorID, ActorType: string(md.ActorKind),
		OrganisationID: md.OrganisationID, WorkspaceID: md.WorkspaceID, RequestID: md.RequestID,
		ClientIP: md.ClientIP, UserAgent: md.UserAgent, Method: md.Extra["method"], URI: md.Extra["path"],
		StatusCode: 200, Before: before, After: after,
	}
	if denied, ok := ev.(domain.AccessDenied); ok {
		r.StatusCode, r.ResourceType, r.ResourceID = denied.Status, denied.ResourceType, ""
		r.Details = map[string]string{"reason": denied.Reason}
		r.Method, r.URI = denied.Method, denied.Path
	}
	return r
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	return b
}

// Position is the position of the last event folded in.
func (m *Memory) Position() eventstore.Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.position
}

// WaitFor returns once the model has folded in the event at pos, or ctx ends: the
// read-your-writes wait of every admin write.
func (m *Memory) WaitFor(ctx context.Context, pos eventstore.Position) error {
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
func (m *Memory) Failed() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.failed
}

func (m *Memory) fail(err error) {
	m.mu.Lock()
	m.failed = err
	close(m.advanced)
	m.advanced = make(chan struct{})
	m.mu.Unlock()
}

// Run folds the event store into the model from the beginning, then live, until ctx ends. An
// event that cannot be folded stops the model (never skipped): reads go on answering from
// the last good state and health reports the failure.
func (m *Memory) Run(ctx context.Context, store eventstore.Store) error {
	sub, err := store.Subscribe(ctx, m.Position())
	if err != nil {
		return err
	}
	defer sub.Close()
	for {
		rec, err := sub.Recv(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := m.Apply(rec); err != nil {
			err = fmt.Errorf("read model stopped at event %s (position %d, %s): %w", rec.ID, rec.Position, rec.Type, err)
			m.fail(err)
			return err
		}
	}
}

// get returns a copy of the aggregate of prefix and id.
func get[A any](m *Memory, prefix, id string) (A, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	agg, ok := any(m.byPrefix[prefix][id]).(*A)
	if !ok {
		var zero A
		return zero, false
	}
	return *agg, true
}

// all returns copies of every aggregate of prefix that keep says to keep, sorted by less.
func all[A any](m *Memory, prefix string, keep func(*A) bool, less func(a, b *A) bool) []A {
	m.mu.RLock()
	out := make([]A, 0, len(m.byPrefix[prefix]))
	for _, agg := range m.byPrefix[prefix] {
		if a, ok := any(agg).(*A); ok && keep(a) {
			out = append(out, *a)
		}
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return less(&out[i], &out[j]) })
	return out
}
