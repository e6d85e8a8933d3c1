package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/migrations"
)

// pgBackend keeps a read model in PostgreSQL (migrations/postgres/0002): each aggregate as the
// JSON of its folded state in rm_documents, the audit log in rm_audit, and the checkpoint in
// rm_checkpoints, all written in one transaction per batch of events.
type pgBackend struct {
	pool *pgxpool.Pool
	reg  *domain.Registry
	name string
	// tables, so that replay can build into fresh ones.
	documents, audit string
	// beforeCheckpoint, when set (tests only), runs after a batch's rows are written and before
	// its checkpoint is; an error rolls both back.
	beforeCheckpoint func() error
}

// NewPostgres returns the PostgreSQL read model on pool (its schema from migrations/postgres,
// applied here), whose projection is called name. Its checkpoint starts at Start.
func NewPostgres(ctx context.Context, pool *pgxpool.Pool, reg *domain.Registry, name string) (*Model, error) {
	return newPostgresOn(ctx, pool, reg, name, "rm_documents", "rm_audit")
}

func newPostgresOn(ctx context.Context, pool *pgxpool.Pool, reg *domain.Registry, name, documents, audit string) (*Model, error) {
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO rm_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT DO NOTHING`, name); err != nil {
		return nil, fmt.Errorf("projections: checkpoint of %s: %w", name, err)
	}
	m := NewMemory(reg)
	m.name = name
	m.pg = &pgBackend{pool: pool, reg: reg, name: name, documents: documents, audit: audit}
	return m, nil
}

// SetBeforeCheckpoint installs a fault between a batch's rows and its checkpoint (tests).
func SetBeforeCheckpoint(m *Model, f func() error) { m.pg.beforeCheckpoint = f }

func (b *pgBackend) checkpoint(ctx context.Context) (eventstore.Position, error) {
	var pos int64
	err := b.pool.QueryRow(ctx, `SELECT position FROM rm_checkpoints WHERE name = $1`, b.name).Scan(&pos)
	return eventstore.Position(pos), err
}

// waitFor polls the checkpoint, which any process's runner may advance.
func (b *pgBackend) waitFor(ctx context.Context, pos eventstore.Position) error {
	// Start polling fast (a projector writes a batch in about a millisecond) and back off.
	delay := 250 * time.Microsecond
	for {
		cp, err := b.checkpoint(ctx)
		if err == nil && cp >= pos {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 20*time.Millisecond)
	}
}

func (b *pgBackend) decode(prefix, id string, doc []byte) (domain.Aggregate, error) {
	agg, ok := b.reg.NewAggregate(prefix + "-" + id)
	if !ok {
		return nil, fmt.Errorf("projections: no aggregate for %s", prefix)
	}
	if err := json.Unmarshal(doc, agg); err != nil {
		return nil, fmt.Errorf("projections: document %s-%s: %w", prefix, id, err)
	}
	return agg, nil
}

// view and scan read documents. A read that fails answers an error wrapping ErrUnavailable,
// never "not found"; reads never see half a write.
func (b *pgBackend) view(ctx context.Context, prefix, id string, fn func(domain.Aggregate)) (bool, error) {
	var doc []byte
	err := b.pool.QueryRow(ctx, `SELECT doc FROM `+b.documents+` WHERE kind = $1 AND id = $2`, prefix, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, unavailable(err)
	}
	agg, err := b.decode(prefix, id, doc)
	if err != nil {
		return false, err
	}
	fn(agg)
	return true, nil
}

func (b *pgBackend) scan(ctx context.Context, prefix string, fn func(domain.Aggregate)) error {
	rows, err := b.pool.Query(ctx, `SELECT id, doc FROM `+b.documents+` WHERE kind = $1`, prefix)
	if err != nil {
		return unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  string
			doc []byte
		)
		if err := rows.Scan(&id, &doc); err != nil {
			return unavailable(err)
		}
		agg, err := b.decode(prefix, id, doc)
		if err != nil {
			return err
		}
		fn(agg)
	}
	if err := rows.Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

// unavailable marks a failed read as the read model's unavailability.
func unavailable(err error) error {
	return fmt.Errorf("%w: postgres: %w", ErrUnavailable, err)
}

// applyBatch folds batch (all after from, in order) in one transaction: rows and checkpoint
// together, the checkpoint by compare-and-set from from.
func (b *pgBackend) applyBatch(ctx context.Context, from eventstore.Position, batch []eventstore.RecordedEvent) error {
	if len(batch) == 0 {
		return nil
	}
	return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		// Lock the checkpoint first: a second runner waits here for the first to commit, then
		// finds the checkpoint moved instead of colliding with its rows.
		var cp int64
		if err := tx.QueryRow(ctx, `SELECT position FROM rm_checkpoints WHERE name = $1 FOR UPDATE`, b.name).Scan(&cp); err != nil {
			return err
		}
		if eventstore.Position(cp) != from {
			return ErrCheckpointMoved
		}
		docs, err := b.load(ctx, tx, batch)
		if err != nil {
			return err
		}
		changed := map[string]eventstore.Position{}
		audits := make([][]any, 0, len(batch))
		for _, rec := range batch {
			agg, audit, err := fold(b.reg, docs[rec.Stream], rec)
			if err != nil {
				return fmt.Errorf("event %s at position %d (%s): %w", rec.ID, rec.Position, rec.Type, err)
			}
			if agg != nil {
				docs[rec.Stream], changed[rec.Stream] = agg, rec.Position
			}
			audits = append(audits, auditRow(audit))
		}
		upserts := &pgx.Batch{}
		for stream, pos := range changed {
			prefix, id := splitStream(stream)
			doc := mustJSON(docs[stream])
			var cols struct {
				OrganisationID string `json:"organisation_id"`
				WorkspaceID    string `json:"workspace_id"`
				Status         string `json:"status"`
			}
			_ = json.Unmarshal(doc, &cols)
			upserts.Queue(`INSERT INTO `+b.documents+` (kind, id, organisation_id, workspace_id, status, position, doc)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (kind, id) DO UPDATE SET organisation_id = EXCLUDED.organisation_id,
					workspace_id = EXCLUDED.workspace_id, status = EXCLUDED.status, position = EXCLUDED.position, doc = EXCLUDED.doc`,
				prefix, id, cols.OrganisationID, cols.WorkspaceID, cols.Status, int64(pos), doc)
		}
		if err := tx.SendBatch(ctx, upserts).Close(); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{b.audit}, auditColumns, pgx.CopyFromRows(audits)); err != nil {
			return err
		}
		if b.beforeCheckpoint != nil {
			if err := b.beforeCheckpoint(); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE rm_checkpoints SET position = $1 WHERE name = $2 AND position = $3`,
			int64(batch[len(batch)-1].Position), b.name, int64(from))
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return ErrCheckpointMoved
		}
		return nil
	})
}

// load reads the documents of the streams a batch touches, by stream name.
func (b *pgBackend) load(ctx context.Context, tx pgx.Tx, batch []eventstore.RecordedEvent) (map[string]domain.Aggregate, error) {
	var kinds, ids []string
	seen := map[string]bool{}
	for _, rec := range batch {
		if seen[rec.Stream] {
			continue
		}
		seen[rec.Stream] = true
		prefix, id := splitStream(rec.Stream)
		kinds, ids = append(kinds, prefix), append(ids, id)
	}
	rows, err := tx.Query(ctx, `SELECT d.kind, d.id, d.doc FROM `+b.documents+` d
		JOIN unnest($1::text[], $2::text[]) AS k(kind, id) ON d.kind = k.kind AND d.id = k.id`, kinds, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	docs := map[string]domain.Aggregate{}
	for rows.Next() {
		var (
			kind, id string
			doc      []byte
		)
		if err := rows.Scan(&kind, &id, &doc); err != nil {
			return nil, err
		}
		agg, err := b.decode(kind, id, doc)
		if err != nil {
			return nil, err
		}
		docs[kind+"-"+id] = agg
	}
	return docs, rows.Err()
}

var auditColumns = []string{"position", "id", "recorded_at", "action", "resource_type", "resource_id", "actor_id",
	"actor_type", "organisation_id", "workspace_id", "request_id", "client_ip", "user_agent", "method", "uri",
	"response_status_code", "details", "before", "after"}

func auditRow(r AuditRecord) []any {
	var details any
	if r.Details != nil {
		details = mustJSON(r.Details)
	}
	return []any{int64(r.Position), r.ID, r.Timestamp, r.Action, r.ResourceType, r.ResourceID, r.ActorID, r.ActorType,
		r.OrganisationID, r.WorkspaceID, r.RequestID, r.ClientIP, r.UserAgent, r.Method, r.URI, r.StatusCode,
		details, []byte(r.Before), []byte(r.After)}
}

const auditSelect = `SELECT position, id, recorded_at, action, resource_type, resource_id, actor_id, actor_type,
	organisation_id, workspace_id, request_id, client_ip, user_agent, method, uri, response_status_code,
	details, before, after FROM `

// auditRecords is AuditRecords in SQL: the same selection as AuditFilter.keep, in the
// filter's order of positions, a page of it and the count of all.
func (b *pgBackend) auditRecords(ctx context.Context, f AuditFilter, offset, limit int) ([]AuditRecord, int, error) {
	ts := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	}
	var types []string
	if f.ResourceType != "" {
		types = StoredSpellings(f.ResourceType)
	}
	where := `
		WHERE (organisation_id = $1 OR (organisation_id = '' AND response_status_code >= 400))
		  AND ($2::timestamptz IS NULL OR recorded_at >= $2) AND ($3::timestamptz IS NULL OR recorded_at <= $3)
		  AND ($4 = '' OR lower(actor_id) = lower($4)) AND ($5 = '' OR lower(actor_type) = lower($5))
		  AND ($6 = '' OR lower(workspace_id) = lower($6)) AND ($7::text[] IS NULL OR lower(resource_type) = ANY($7))
		  AND ($8 = '' OR lower(resource_id) = lower($8)) AND ($9 = '' OR lower(action) = lower($9))
		  AND ($10 = '' OR lower(method) = lower($10)) AND ($11 = 0 OR response_status_code = $11)
		  AND ($12 = '' OR lower(request_id) = lower($12)) AND ($13 = '' OR lower(client_ip) = lower($13))`
	args := []any{f.OrganisationID, ts(f.From), ts(f.To), f.ActorID, f.ActorType, f.WorkspaceID, types, f.ResourceID,
		f.Action, f.Method, f.StatusCode, f.RequestID, f.ClientIP}
	var total int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM `+b.audit+where, args...).Scan(&total); err != nil {
		return nil, 0, unavailable(fmt.Errorf("audit log: %w", err))
	}
	order := " ORDER BY position"
	if f.NewestFirst {
		order += " DESC"
	}
	page := fmt.Sprintf(" OFFSET %d", max(offset, 0))
	if limit > 0 {
		page = fmt.Sprintf(" LIMIT %d", limit) + page
	}
	if offset >= total {
		return []AuditRecord{}, total, nil
	}
	rows, err := b.pool.Query(ctx, auditSelect+b.audit+where+order+page, args...)
	if err != nil {
		return nil, 0, unavailable(fmt.Errorf("audit log: %w", err))
	}
	out, err := scanAudit(rows)
	if err != nil {
		return nil, 0, unavailable(fmt.Errorf("audit log: %w", err))
	}
	return out, total, nil
}

func (b *pgBackend) auditRecord(ctx context.Context, orgID, id string) (AuditRecord, bool, error) {
	rows, err := b.pool.Query(ctx, auditSelect+b.audit+` WHERE id = $1 AND organisation_id = $2`, id, orgID)
	if err != nil {
		return AuditRecord{}, false, unavailable(fmt.Errorf("audit log: %w", err))
	}
	out, err := scanAudit(rows)
	if err != nil {
		return AuditRecord{}, false, unavailable(fmt.Errorf("audit log: %w", err))
	}
	if len(out) == 0 {
		return AuditRecord{}, false, nil
	}
	return out[0], true, nil
}

func scanAudit(rows pgx.Rows) ([]AuditRecord, error) {
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var (
			r                      AuditRecord
			pos                    int64
			details, before, after []byte
		)
		if err := rows.Scan(&pos, &r.ID, &r.Timestamp, &r.Action, &r.ResourceType, &r.ResourceID, &r.ActorID, &r.ActorType,
			&r.OrganisationID, &r.WorkspaceID, &r.RequestID, &r.ClientIP, &r.UserAgent, &r.Method, &r.URI, &r.StatusCode,
			&details, &before, &after); err != nil {
			return nil, err
		}
		r.Position, r.Timestamp = uint64(pos), r.Timestamp.UTC()
		r.ResourceType = AnsweredResourceType(r.ResourceType)
		r.Before, r.After = rawOrNull(before), rawOrNull(after)
		if len(details) > 0 {
			_ = json.Unmarshal(details, &r.Details)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func rawOrNull(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// ErrCheckpointMoved: another runner advanced the projection since this batch was read; the
// batch was rolled back and the runner resumes from the new checkpoint.
var ErrCheckpointMoved = errors.New("projections: checkpoint moved: another runner advanced this projection")
