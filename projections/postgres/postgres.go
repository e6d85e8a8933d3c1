package postgres

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
	"github.com/causeway/causeway/projections"
)

// Model is the server mode's read model, shared by every process: each aggregate as the JSON
// of its folded state in rm_documents, the audit log in rm_audit, and the checkpoint in
// rm_checkpoints (migrations/postgres/0002), all written in one transaction per batch of
// events, folded by projections.Fold as the in-memory model folds them. Its reads are the
// shared projections.Queries over those documents; a read that fails answers an error
// wrapping projections.ErrUnavailable, never "not found".
type Model struct {
	projections.Queries

	pool *pgxpool.Pool
	reg  *domain.Registry
	name string
	// tables, so that replay can build into fresh ones.
	documents, audit string
	// beforeCheckpoint, when set (tests only), runs after a batch's rows are written and before
	// its checkpoint is; an error rolls both back.
	beforeCheckpoint func() error
}

var _ projections.ReadModel = (*Model)(nil)

// New returns the PostgreSQL read model on pool (its schema from migrations/postgres, applied
// here), whose projection is called name. Its checkpoint starts at Start.
func New(ctx context.Context, pool *pgxpool.Pool, reg *domain.Registry, name string) (*Model, error) {
	return newOn(ctx, pool, reg, name, "rm_documents", "rm_audit")
}

func newOn(ctx context.Context, pool *pgxpool.Pool, reg *domain.Registry, name, documents, audit string) (*Model, error) {
	if err := migrations.ApplyPostgres(ctx, pool, migrations.Postgres); err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO rm_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT DO NOTHING`, name); err != nil {
		return nil, fmt.Errorf("projections: checkpoint of %s: %w", name, err)
	}
	m := &Model{pool: pool, reg: reg, name: name, documents: documents, audit: audit}
	m.Queries = projections.Queries{Docs: m}
	return m, nil
}

// SetBeforeCheckpoint installs a fault between a batch's rows and its checkpoint (tests).
func SetBeforeCheckpoint(m *Model, f func() error) { m.beforeCheckpoint = f }

// Name is the projection's name, its checkpoint key.
func (m *Model) Name() string { return m.name }

// Checkpoint is the stored checkpoint, which any process's runner may advance.
func (m *Model) Checkpoint(ctx context.Context) (eventstore.Position, error) {
	pos, err := m.checkpoint(ctx)
	if err != nil {
		return 0, unavailable(err)
	}
	return pos, nil
}

// Position is the stored checkpoint, or Start when it cannot be read.
func (m *Model) Position() eventstore.Position {
	pos, _ := m.checkpoint(context.Background())
	return pos
}

// WaitFor returns once the model has folded in the event at pos, or ctx ends: the
// read-your-writes wait of every admin write.
func (m *Model) WaitFor(ctx context.Context, pos eventstore.Position) error {
	return m.waitFor(ctx, pos)
}

// ApplyBatch folds a batch into the model in one transaction with the checkpoint.
func (m *Model) ApplyBatch(ctx context.Context, from eventstore.Position, batch []eventstore.RecordedEvent) error {
	return m.applyBatch(ctx, from, batch)
}

// View calls fn with the fresh aggregate of prefix and id, if there is one (Documents).
func (m *Model) View(ctx context.Context, prefix, id string, fn func(domain.Aggregate)) (bool, error) {
	return m.view(ctx, prefix, id, fn)
}

// Scan calls fn with every aggregate of prefix (Documents).
func (m *Model) Scan(ctx context.Context, prefix string, fn func(domain.Aggregate)) error {
	return m.scan(ctx, prefix, fn)
}

// ScanStatus calls fn with every aggregate of prefix whose status is status
// (projections.StatusScanner): the status column selects them, unread documents stay unread.
func (m *Model) ScanStatus(ctx context.Context, prefix, status string, fn func(domain.Aggregate)) error {
	return m.scanWhere(ctx, prefix, status, fn)
}

var _ projections.StatusScanner = (*Model)(nil)

// AuditRecords returns the records f selects from the offset-th on, at most limit of them (0:
// all), in f's order, and how many f selects in all.
func (m *Model) AuditRecords(ctx context.Context, f projections.AuditFilter, offset, limit int) ([]projections.AuditRecord, int, error) {
	return m.auditRecords(ctx, f, offset, limit)
}

// AuditRecord returns one record by its event id.
func (m *Model) AuditRecord(ctx context.Context, orgID, id string) (projections.AuditRecord, bool, error) {
	return m.auditRecord(ctx, orgID, id)
}

func (b *Model) checkpoint(ctx context.Context) (eventstore.Position, error) {
	var pos int64
	err := b.pool.QueryRow(ctx, `SELECT position FROM rm_checkpoints WHERE name = $1`, b.name).Scan(&pos)
	return eventstore.Position(pos), err
}

// waitFor polls the checkpoint, which any process's runner may advance.
func (b *Model) waitFor(ctx context.Context, pos eventstore.Position) error {
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

func (b *Model) decode(prefix, id string, doc []byte) (domain.Aggregate, error) {
	agg, ok := b.reg.NewAggregate(prefix + "-" + id)
	if !ok {
		return nil, fmt.Errorf("projections: no aggregate for %s", prefix)
	}
	if err := json.Unmarshal(doc, agg); err != nil {
		return nil, fmt.Errorf("projections: document %s-%s: %w", prefix, id, err)
	}
	return agg, nil
}

// view and scan read documents. A read that fails answers an error wrapping projections.ErrUnavailable,
// never "not found"; reads never see half a write.
func (b *Model) view(ctx context.Context, prefix, id string, fn func(domain.Aggregate)) (bool, error) {
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

func (b *Model) scan(ctx context.Context, prefix string, fn func(domain.Aggregate)) error {
	return b.scanWhere(ctx, prefix, "", fn)
}

// scanWhere is scan, of the documents whose status is status when it is not empty.
func (b *Model) scanWhere(ctx context.Context, prefix, status string, fn func(domain.Aggregate)) error {
	rows, err := b.pool.Query(ctx, `SELECT id, doc FROM `+b.documents+` WHERE kind = $1 AND ($2 = '' OR status = $2)`, prefix, status)
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
	return fmt.Errorf("%w: postgres: %w", projections.ErrUnavailable, err)
}

// applyBatch folds batch (all after from, in order) in one transaction: rows and checkpoint
// together, the checkpoint by compare-and-set from from.
func (b *Model) applyBatch(ctx context.Context, from eventstore.Position, batch []eventstore.RecordedEvent) error {
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
			return projections.ErrCheckpointMoved
		}
		docs, err := b.load(ctx, tx, batch)
		if err != nil {
			return err
		}
		changed := map[string]eventstore.Position{}
		audits := make([][]any, 0, len(batch))
		for _, rec := range batch {
			agg, audit, err := projections.Fold(b.reg, docs[rec.Stream], rec)
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
			prefix, id := projections.SplitStream(stream)
			doc := projections.MustJSON(docs[stream])
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
			return projections.ErrCheckpointMoved
		}
		return nil
	})
}

// load reads the documents of the streams a batch touches, by stream name.
func (b *Model) load(ctx context.Context, tx pgx.Tx, batch []eventstore.RecordedEvent) (map[string]domain.Aggregate, error) {
	var kinds, ids []string
	seen := map[string]bool{}
	for _, rec := range batch {
		if seen[rec.Stream] {
			continue
		}
		seen[rec.Stream] = true
		prefix, id := projections.SplitStream(rec.Stream)
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

func auditRow(r projections.AuditRecord) []any {
	var details any
	if r.Details != nil {
		details = projections.MustJSON(r.Details)
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
func (b *Model) auditRecords(ctx context.Context, f projections.AuditFilter, offset, limit int) ([]projections.AuditRecord, int, error) {
	ts := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	}
	var types []string
	if f.ResourceType != "" {
		types = projections.StoredSpellings(f.ResourceType)
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
		return []projections.AuditRecord{}, total, nil
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

func (b *Model) auditRecord(ctx context.Context, orgID, id string) (projections.AuditRecord, bool, error) {
	rows, err := b.pool.Query(ctx, auditSelect+b.audit+` WHERE id = $1 AND organisation_id = $2`, id, orgID)
	if err != nil {
		return projections.AuditRecord{}, false, unavailable(fmt.Errorf("audit log: %w", err))
	}
	out, err := scanAudit(rows)
	if err != nil {
		return projections.AuditRecord{}, false, unavailable(fmt.Errorf("audit log: %w", err))
	}
	if len(out) == 0 {
		return projections.AuditRecord{}, false, nil
	}
	return out[0], true, nil
}

func scanAudit(rows pgx.Rows) ([]projections.AuditRecord, error) {
	defer rows.Close()
	var out []projections.AuditRecord
	for rows.Next() {
		var (
			r                      projections.AuditRecord
			pos                    int64
			details, before, after []byte
		)
		if err := rows.Scan(&pos, &r.ID, &r.Timestamp, &r.Action, &r.ResourceType, &r.ResourceID, &r.ActorID, &r.ActorType,
			&r.OrganisationID, &r.WorkspaceID, &r.RequestID, &r.ClientIP, &r.UserAgent, &r.Method, &r.URI, &r.StatusCode,
			&details, &before, &after); err != nil {
			return nil, err
		}
		r.Position, r.Timestamp = uint64(pos), r.Timestamp.UTC()
		r.ResourceType = projections.AnsweredResourceType(r.ResourceType)
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
