package sqlstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/domain"
)

// bodyBase64 is the encoding of a body stored as a JSON string of the base64 of its bytes.
const bodyBase64 = "base64"

// StoredBody is a body as read back, and its encoding. A body that is not valid UTF-8 would
// make any JSON holding it invalid: such a body (a row stored before bodies had an encoding,
// when the gateway passed a body's bytes on as they came) is read as the base64 of its bytes,
// marked so, which is how the gateway stores such a body now.
func StoredBody(body, encoding string) (json.RawMessage, string) {
	if body == "" {
		return nil, ""
	}
	if !utf8.ValidString(body) {
		raw, _ := json.Marshal(base64.StdEncoding.EncodeToString([]byte(body)))
		return raw, bodyBase64
	}
	return json.RawMessage(body), encoding
}

// ScanPageSize is how many rows ScanLogs reads per query: enough to make few queries, few
// enough to hold in memory.
var ScanPageSize = 2000

// readLogs runs a query of log rows and reads them all.
func (e Engine) readLogs(ctx context.Context, what, query string, args []any) ([]analytics.LogRecord, error) {
	rs, err := e.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	defer rs.Close()
	var out []analytics.LogRecord
	for rs.Next() {
		r, err := e.ScanLog(rs.Scan)
		if err != nil {
			return nil, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("analytics: %s %s: %w", e.Name, what, err)
	}
	return out, nil
}

// Log answers one row of organisation orgID.
func (e Engine) Log(ctx context.Context, orgID, id string) (analytics.LogRecord, bool, error) {
	if orgID == "" {
		return analytics.LogRecord{}, false, domain.Invalid("organisation_id", "organisation_id is required")
	}
	rs, err := e.readLogs(ctx, "log", "SELECT "+e.LogColumns+" FROM "+e.Table+
		" WHERE organisation_id = ? AND id = ? LIMIT 1", []any{orgID, id})
	if err != nil || len(rs) == 0 {
		return analytics.LogRecord{}, false, err
	}
	return rs[0], true, nil
}

// Logs answers one page of q, newest first.
func (e Engine) Logs(ctx context.Context, q analytics.LogsQuery) (analytics.LogsPage, error) {
	if err := q.Validate(); err != nil {
		return analytics.LogsPage{}, err
	}
	where, args := e.where(q.Filter)
	var total int64
	if err := e.queryRow(ctx, "logs", "SELECT "+e.Integer("count(*)")+" FROM "+e.Table+" WHERE "+where, args,
		func(rs Rows) error { return rs.Scan(&total) }); err != nil {
		return analytics.LogsPage{}, err
	}
	page := analytics.LogsPage{Total: int(total), Rows: []analytics.LogRecord{}}
	if q.Page*q.PageSize >= page.Total {
		return page, nil
	}
	got, err := e.readLogs(ctx, "logs", fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s DESC, id DESC LIMIT %d, %d",
		e.LogColumns, e.Table, where, e.TS, q.Page*q.PageSize, q.PageSize), args)
	if err != nil {
		return analytics.LogsPage{}, err
	}
	page.Rows = append(page.Rows, got...)
	return page, nil
}

// ScanLogs reads f's rows a page at a time, oldest first, each page starting after the
// (started_at, id) of the previous one's last row: every query is a bounded read, however many
// rows match, and no query's cursor stays open while fn runs.
func (e Engine) ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error {
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
			w += " AND " + e.TS + " >= ? AND (" + e.TS + " > ? OR id > ?)"
			a = append(append([]any{}, args...), afterTS, afterTS, afterID)
		}
		page, err := e.readLogs(ctx, "scan logs", fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s ASC, id ASC LIMIT %d",
			e.LogColumns, e.Table, w, e.TS, ScanPageSize), a)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < ScanPageSize {
			return nil
		}
		last := page[len(page)-1]
		afterTS, afterID = UnixMilli(last.StartedAt), last.ID
	}
}
