package projections

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// Fold is the one projection logic of every read model (projections/memory and
// projections/postgres fold with it alike): decode the event, fold it into the
// aggregate of its stream by the domain's own Apply (agg is nil for a stream not seen yet),
// and make its audit record with the state before and after. Streams that no aggregate owns
// (refusals) give a nil aggregate and still an audit record.
func Fold(reg *domain.Registry, agg domain.Aggregate, rec eventstore.RecordedEvent) (domain.Aggregate, AuditRecord, error) {
	ev, err := reg.Decode(rec.Type, rec.Data)
	if err != nil {
		return agg, AuditRecord{}, err
	}
	prefix, id := SplitStream(rec.Stream)
	before := json.RawMessage("null")
	if agg != nil {
		before = MustJSON(agg)
	} else if fresh, ok := reg.NewAggregate(rec.Stream); ok {
		agg = fresh
	}
	after := json.RawMessage("null")
	if agg != nil {
		agg.Apply(ev)
		after = MustJSON(agg)
	}
	return agg, auditRecord(rec, prefix, id, ev, before, after), nil
}

// SplitStream splits a stream name into its aggregate prefix and id.
func SplitStream(stream string) (prefix, id string) {
	prefix = domain.StreamPrefix(stream)
	return prefix, strings.TrimPrefix(stream, prefix+"-")
}

func auditRecord(rec eventstore.RecordedEvent, prefix, id string, ev domain.Event, before, after json.RawMessage) AuditRecord {
	md := rec.Metadata
	r := AuditRecord{
		ID: rec.ID.String(), Position: uint64(rec.Position), Timestamp: rec.RecordedAt.UTC().Truncate(time.Microsecond), Action: ev.EventType(),
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

// MustJSON is v as JSON, or a JSON object naming the error when v cannot be encoded.
func MustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	return b
}
