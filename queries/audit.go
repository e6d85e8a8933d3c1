package queries

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/projections"
)

// RequireAuditReader: the audit log is for organisation owners and admins with
// audit_logs.list.
func RequireAuditReader(actor domain.Actor) error {
	if !actor.IsOrgAdmin() {
		return domain.Errorf(domain.CodeForbidden, "only organisation owners and admins may read the audit log")
	}
	return RequireScope(actor, "audit_logs.list")
}

// AuditRecords answers a page of the audit records of the actor's organisation that f selects,
// and how many it selects in all.
func (q *Queries) AuditRecords(ctx context.Context, actor domain.Actor, f projections.AuditFilter, offset, limit int) ([]projections.AuditRecord, int, error) {
	f.OrganisationID = actor.OrganisationID
	recs, total, err := q.Read.AuditRecords(ctx, f, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	if recs == nil {
		recs = []projections.AuditRecord{}
	}
	return recs, total, nil
}

// AuditRecord is one record of the actor's organisation, as the log held it at at (zero: now):
// not found when there is none, or it was written after at.
func (q *Queries) AuditRecord(ctx context.Context, actor domain.Actor, id string, at time.Time) (projections.AuditRecord, error) {
	rec, ok, err := q.Read.AuditRecord(ctx, actor.OrganisationID, id)
	if err != nil {
		return projections.AuditRecord{}, err
	}
	if !ok {
		return projections.AuditRecord{}, domain.Errorf(domain.CodeNotFound, "audit log record %s not found", id)
	}
	if !at.IsZero() && rec.Timestamp.After(at) {
		return projections.AuditRecord{}, domain.Errorf(domain.CodeNotFound, "audit log record %s did not exist at %s", id, at.UTC().Format(time.RFC3339Nano))
	}
	return rec, nil
}
