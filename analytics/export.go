package analytics

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/domain"
)

// ExportFilter is what an export reads: the filter the log store applies, scoped to the
// export's organisation and workspace (taken from the export, never from its filters).
func ExportFilter(x domain.LogExport, retention time.Duration) Filter {
	f := x.Filters
	from, to := f.TimeRange()
	q := Filter{
		OrganisationID: x.OrganisationID,
		WorkspaceIDs:   []string{x.WorkspaceID},
		From:           from,
		To:             to,
		ConfigIDs:      domain.SplitExportList(f.Configs),
		Models:         domain.SplitExportList(f.AIModel),
		PromptIDs:      domain.SplitExportList(f.PromptSlug),
		Metadata:       f.Metadata,
		TraceID:        f.TraceID,
		MinCost:        f.CostMin, MaxCost: f.CostMax,
		MinTokens: f.TotalUnitsMin, MaxTokens: f.TotalUnitsMax,
		MinPromptTokens: f.PromptTokenMin, MaxPromptTokens: f.PromptTokenMax,
		MinCompletionTokens: f.CompletionTokenMin, MaxCompletionTokens: f.CompletionTokenMax,
	}
	// Virtual keys are the legacy name of providers, which log rows record as @slug.
	for _, vk := range domain.SplitExportList(f.VirtualKeys) {
		q.Providers = append(q.Providers, "@"+strings.TrimPrefix(vk, "@"))
	}
	for _, s := range domain.SplitExportList(f.StatusCode) {
		code, _ := strconv.Atoi(s)
		q.StatusCodes = append(q.StatusCodes, code)
	}
	// An export covers the rows that started before it did, so that a run repeated after a
	// restart writes the same rows; and no row older than the retention shown.
	if x.StartedAt != nil {
		if q.To.IsZero() || x.StartedAt.Before(q.To) {
			q.To = *x.StartedAt
		}
		if retention > 0 {
			if oldest := x.StartedAt.Add(-retention); oldest.After(q.From) {
				q.From = oldest
			}
		}
	}
	for _, p := range domain.SplitExportList(f.AIOrgModel) {
		service, model, _ := strings.Cut(p, "__")
		q.ServiceModels = append(q.ServiceModels, ServiceModel{AIService: service, Model: model})
	}
	return q
}

// exportCurrency is the currency of log rows' cost, which pricing keeps in USD.
const exportCurrency = "USD"

// exportValue is a requested field's value of a row, as a JSON line holds it. Bodies are the
// stored ones, redacted when they were logged; nothing else of the row is added.
func exportValue(r LogRecord, field string) any {
	switch field {
	case "id":
		return r.ID
	case "trace_id":
		return r.TraceID
	case "created_at":
		return r.StartedAt.UTC().Format(time.RFC3339Nano)
	case "request":
		return exportBody(r.RequestBody)
	case "response":
		return exportBody(r.ResponseBody)
	case "is_success":
		return r.StatusCode >= 200 && r.StatusCode < 300
	case "ai_org":
		return r.AIService
	case "ai_model":
		return r.Model
	case "req_units":
		return r.PromptTokens
	case "res_units":
		return r.CompletionTokens
	case "total_units":
		return r.TotalTokens
	case "request_url":
		return r.Path
	case "cost":
		return domain.RoundMoney(r.Cost)
	case "cost_currency":
		return exportCurrency
	case "response_time":
		return r.LatencyMS
	case "response_status_code":
		return r.StatusCode
	case "mode":
		return r.Endpoint
	case "config":
		return r.ConfigID
	case "prompt_slug":
		return r.PromptID
	case "metadata":
		if r.Metadata == nil {
			return map[string]string{}
		}
		return r.Metadata
	}
	return nil
}

// exportBody is a stored body as JSON: itself when it is JSON, a string when it is not, null
// when there is none.
func exportBody(b json.RawMessage) any {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return nil
	case json.Valid(b):
		return json.RawMessage(b)
	}
	return string(b)
}

// ExportWriter writes an export's rows in its format, counting the bytes written.
type ExportWriter interface {
	Write(LogRecord) error
	// Close flushes what is buffered; the file itself is the caller's.
	Close() error
	Bytes() int64
}

// NewExportWriter writes the fields of each row to out, in format (domain.ExportJSONL or
// domain.ExportCSV).
func NewExportWriter(format string, fields []string, out io.Writer) (ExportWriter, error) {
	cw := &countingWriter{w: out}
	buf := bufio.NewWriterSize(cw, 64<<10)
	switch format {
	case domain.ExportJSONL:
		return &jsonlWriter{buf: buf, count: cw, fields: fields}, nil
	case domain.ExportCSV:
		w := csv.NewWriter(buf)
		w.UseCRLF = true // RFC 4180
		if err := w.Write(fields); err != nil {
			return nil, err
		}
		return &csvWriter{buf: buf, count: cw, w: w, fields: fields, record: make([]string, len(fields))}, nil
	}
	return nil, fmt.Errorf("analytics: unknown export format %q", format)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// jsonlWriter writes one JSON object per line, its keys in the requested order.
type jsonlWriter struct {
	buf    *bufio.Writer
	count  *countingWriter
	fields []string
	line   []byte
}

func (j *jsonlWriter) Write(r LogRecord) error {
	j.line = append(j.line[:0], '{')
	for i, f := range j.fields {
		if i > 0 {
			j.line = append(j.line, ',')
		}
		j.line = strconv.AppendQuote(j.line, f)
		v, err := json.Marshal(exportValue(r, f))
		if err != nil {
			return fmt.Errorf("analytics: export field %s of row %s: %w", f, r.ID, err)
		}
		j.line = append(append(j.line, ':'), v...)
	}
	j.line = append(j.line, '}', '\n')
	_, err := j.buf.Write(j.line)
	return err
}

func (j *jsonlWriter) Close() error { return j.buf.Flush() }
func (j *jsonlWriter) Bytes() int64 { return j.count.n }

// csvWriter writes a header of the requested fields, then one record per row. Bodies and
// metadata are JSON text in their column.
type csvWriter struct {
	buf    *bufio.Writer
	count  *countingWriter
	w      *csv.Writer
	fields []string
	record []string
}

func (c *csvWriter) Write(r LogRecord) error {
	for i, f := range c.fields {
		s, err := csvValue(exportValue(r, f))
		if err != nil {
			return fmt.Errorf("analytics: export field %s of row %s: %w", f, r.ID, err)
		}
		c.record[i] = s
	}
	return c.w.Write(c.record)
}

func csvValue(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int:
		return strconv.Itoa(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case json.RawMessage:
		var out bytes.Buffer
		if err := json.Compact(&out, v); err != nil {
			return "", err
		}
		return out.String(), nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return err
	}
	return c.buf.Flush()
}

func (c *csvWriter) Bytes() int64 { return c.count.n }
