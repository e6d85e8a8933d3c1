package analytics

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway"
)

// bodyBase64 is the encoding of a body stored as a JSON string of the base64 of its bytes.
const bodyBase64 = "base64"

// storedBody is a body as read back, and its encoding. A body that is not valid UTF-8 would
// make any JSON holding it invalid: such a body (a row stored before bodies had an encoding,
// when the gateway passed a body's bytes on as they came) is read as the base64 of its bytes,
// marked so, which is how the gateway stores such a body now.
func storedBody(body, encoding string) (json.RawMessage, string) {
	if body == "" {
		return nil, ""
	}
	if !utf8.ValidString(body) {
		raw, _ := json.Marshal(base64.StdEncoding.EncodeToString([]byte(body)))
		return raw, bodyBase64
	}
	return json.RawMessage(body), encoding
}

// scanPageSize is how many rows ScanLogs reads per query: enough to make few queries, few
// enough to hold in memory.
var scanPageSize = 2000

// readLogs runs a query of log rows and reads them all.
func (e engine) readLogs(ctx context.Context, what, query string, args []any) ([]gateway.LogRecord, error) {
	rs, err := e.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	defer rs.Close()
	var out []gateway.LogRecord
	for rs.Next() {
		r, err := e.scanLog(rs.Scan)
		if err != nil {
			return nil, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("analytics: %s %s: %w", e.name, what, err)
	}
	return out, nil
}

// log answers one row of organisation orgID.
func (e engine) log(ctx context.Context, orgID, id string) (gateway.LogRecord, bool, error) {
	if orgID == "" {
		return gateway.LogRecord{}, false, domain.Invalid("organisation_id", "organisation_id is required")
	}
	rs, err := e.readLogs(ctx, "log", "SELECT "+e.logColumns+" FROM "+e.table+
		" WHERE organisation_id = ? AND id = ? LIMIT 1", []any{orgID, id})
	if err != nil || len(rs) == 0 {
		return gateway.LogRecord{}, false, err
	}
	return rs[0], true, nil
}

// logs answers one page of q, newest first.
func (e engine) logs(ctx context.Context, q LogsQuery) (LogsPage, error) {
	if err := q.Filter.Validate(); err != nil {
		return LogsPage{}, err
	}
	if err := validatePage(q.Page, &q.PageSize); err != nil {
		return LogsPage{}, err
	}
	where, args := e.where(q.Filter)
	var total int64
	if err := e.queryRow(ctx, "logs", "SELECT "+e.integer("count(*)")+" FROM "+e.table+" WHERE "+where, args,
		func(rs rows) error { return rs.Scan(&total) }); err != nil {
		return LogsPage{}, err
	}
	page := LogsPage{Total: int(total), Rows: []gateway.LogRecord{}}
	if q.Page*q.PageSize >= page.Total {
		return page, nil
	}
	got, err := e.readLogs(ctx, "logs", fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s DESC, id DESC LIMIT %d, %d",
		e.logColumns, e.table, where, e.ts, q.Page*q.PageSize, q.PageSize), args)
	if err != nil {
		return LogsPage{}, err
	}
	page.Rows = append(page.Rows, got...)
	return page, nil
}

// scanLogs reads f's rows a page at a time, oldest first, each page starting after the
// (started_at, id) of the previous one's last row: every query is a bounded read, however many
// rows match, and no query's cursor stays open while fn runs.
func (e engine) scanLogs(ctx context.Context, f Filter, fn func(gateway.LogRecord) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	where, args := e.where(f)
	var afterTS int64
	var afterID string
	for first := true; ; first = false {
		w, a := where, args
		if !first {
			// The same as (ts, id) > (afterTS, afterID), spelled so that ts >= bounds a range.
			w += " AND " + e.ts + " >= ? AND (" + e.ts + " > ? OR id > ?)"
			a = append(append([]any{}, args...), afterTS, afterTS, afterID)
		}
		page, err := e.readLogs(ctx, "scan logs", fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s ASC, id ASC LIMIT %d",
			e.logColumns, e.table, w, e.ts, scanPageSize), a)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < scanPageSize {
			return nil
		}
		last := page[len(page)-1]
		afterTS, afterID = unixMilli(last.StartedAt), last.ID
	}
}
