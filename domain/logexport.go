package domain

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// LogExportPrefix names the streams of log export jobs.
const LogExportPrefix = "logexport"

// The states of an export: draft until started, in_progress while the worker writes its
// file, then success, failed or stopped (cancelled; the reference's name for it).
const (
	ExportDraft      = "draft"
	ExportInProgress = "in_progress"
	ExportSuccess    = "success"
	ExportFailed     = "failed"
	ExportStopped    = "stopped"
)

// Export file formats: JSON lines (one object per row) or CSV (RFC 4180).
const (
	ExportJSONL = "jsonl"
	ExportCSV   = "csv"
)

// Bounds of an export's filters.
const (
	// MaxExportRows is the most rows one export writes (the reference's page_size bound), and
	// its default.
	MaxExportRows = 50_000
	// MaxExportPage bounds current_page.
	MaxExportPage = 1_000_000
	// MaxExportFilterValues bounds each comma-separated filter list and the metadata pairs.
	MaxExportFilterValues = 100
)

// LogExportFields are the log fields an export may ask for (the reference's requested_data).
var LogExportFields = []string{
	"id", "trace_id", "created_at", "request", "response", "is_success", "ai_org", "ai_model",
	"req_units", "res_units", "total_units", "request_url", "cost", "cost_currency", "response_time",
	"response_status_code", "mode", "config", "prompt_slug", "metadata",
}

// LogExportFilters select the rows of an export, as the reference's GenerationsFilterSchema.
// Times are kept as the client wrote them (RFC 3339, or a date for a whole day); list filters
// are comma-separated (SplitExportList). Validate checks them; TimeRange and Window read them.
type LogExportFilters struct {
	TimeOfGenerationMin string            `json:"time_of_generation_min,omitempty"`
	TimeOfGenerationMax string            `json:"time_of_generation_max,omitempty"`
	TotalUnitsMin       *int              `json:"total_units_min,omitempty"`
	TotalUnitsMax       *int              `json:"total_units_max,omitempty"`
	CostMin             *float64          `json:"cost_min,omitempty"`
	CostMax             *float64          `json:"cost_max,omitempty"`
	AIModel             string            `json:"ai_model,omitempty"`
	PromptTokenMin      *int              `json:"prompt_token_min,omitempty"`
	PromptTokenMax      *int              `json:"prompt_token_max,omitempty"`
	CompletionTokenMin  *int              `json:"completion_token_min,omitempty"`
	CompletionTokenMax  *int              `json:"completion_token_max,omitempty"`
	StatusCode          string            `json:"status_code,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	AIOrgModel          string            `json:"ai_org_model,omitempty"`
	WeightedFeedbackMin *float64          `json:"weighted_feedback_min,omitempty"`
	WeightedFeedbackMax *float64          `json:"weighted_feedback_max,omitempty"`
	VirtualKeys         string            `json:"virtual_keys,omitempty"`
	TraceID             string            `json:"trace_id,omitempty"`
	Configs             string            `json:"configs,omitempty"`
	WorkspaceSlug       string            `json:"workspace_slug,omitempty"`
	PromptSlug          string            `json:"prompt_slug,omitempty"`
	PageSize            *int              `json:"page_size,omitempty"`
	CurrentPage         *int              `json:"current_page,omitempty"`
}

// LogExport is an export job: which rows and fields of a workspace's request logs, in which
// format, and how its run went.
type LogExport struct {
	ID             string           `json:"id"`
	OrganisationID string           `json:"organisation_id"`
	WorkspaceID    string           `json:"workspace_id"`
	Filters        LogExportFilters `json:"filters"`
	RequestedData  []string         `json:"requested_data"`
	Format         string           `json:"format"`
	Description    string           `json:"description"`
	Status         string           `json:"status"`
	CreatedBy      string           `json:"created_by"`
	CreatedAt      time.Time        `json:"created_at"`
	LastUpdatedAt  time.Time        `json:"last_updated_at"`
	StartedAt      *time.Time       `json:"started_at,omitempty"`
	FinishedAt     *time.Time       `json:"finished_at,omitempty"`
	RowCount       int64            `json:"row_count"`
	Bytes          int64            `json:"bytes"`
	FileName       string           `json:"file_name,omitempty"`
	FailureReason  string           `json:"failure_reason,omitempty"`
}

type LogExportCreated struct {
	ExportID       string           `json:"export_id"`
	OrganisationID string           `json:"organisation_id"`
	WorkspaceID    string           `json:"workspace_id"`
	Filters        LogExportFilters `json:"filters"`
	RequestedData  []string         `json:"requested_data"`
	Format         string           `json:"format"`
	Description    string           `json:"description,omitempty"`
	CreatedBy      string           `json:"created_by"`
	At             time.Time        `json:"at"`
}

// LogExportUpdated replaces what it carries; nil fields stay as they are.
type LogExportUpdated struct {
	ExportID      string            `json:"export_id"`
	Filters       *LogExportFilters `json:"filters,omitempty"`
	RequestedData []string          `json:"requested_data,omitempty"`
	Format        *string           `json:"format,omitempty"`
	Description   *string           `json:"description,omitempty"`
	At            time.Time         `json:"at"`
}

type LogExportStarted struct {
	ExportID string    `json:"export_id"`
	At       time.Time `json:"at"`
}

type LogExportCompleted struct {
	ExportID string    `json:"export_id"`
	RowCount int64     `json:"row_count"`
	Bytes    int64     `json:"bytes"`
	FileName string    `json:"file_name"`
	At       time.Time `json:"at"`
}

type LogExportFailed struct {
	ExportID string    `json:"export_id"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
}

type LogExportCancelled struct {
	ExportID string    `json:"export_id"`
	At       time.Time `json:"at"`
}

func (LogExportCreated) EventType() string   { return "LogExportCreated" }
func (LogExportUpdated) EventType() string   { return "LogExportUpdated" }
func (LogExportStarted) EventType() string   { return "LogExportStarted" }
func (LogExportCompleted) EventType() string { return "LogExportCompleted" }
func (LogExportFailed) EventType() string    { return "LogExportFailed" }
func (LogExportCancelled) EventType() string { return "LogExportCancelled" }

func logExportModule() module {
	return module{
		prefix:    LogExportPrefix,
		aggregate: func() Aggregate { return &LogExport{} },
		events: []Event{LogExportCreated{}, LogExportUpdated{}, LogExportStarted{}, LogExportCompleted{},
			LogExportFailed{}, LogExportCancelled{}},
	}
}

func (x *LogExport) Apply(e Event) {
	switch e := e.(type) {
	case LogExportCreated:
		*x = LogExport{ID: e.ExportID, OrganisationID: e.OrganisationID, WorkspaceID: e.WorkspaceID, Filters: e.Filters,
			RequestedData: e.RequestedData, Format: e.Format, Description: e.Description, Status: ExportDraft,
			CreatedBy: e.CreatedBy, CreatedAt: e.At, LastUpdatedAt: e.At}
	case LogExportUpdated:
		// Replaced, never changed in place: read models hand out shallow copies.
		if e.Filters != nil {
			x.Filters = *e.Filters
		}
		if e.RequestedData != nil {
			x.RequestedData = e.RequestedData
		}
		if e.Format != nil {
			x.Format = *e.Format
		}
		if e.Description != nil {
			x.Description = *e.Description
		}
		x.LastUpdatedAt = e.At
	case LogExportStarted:
		at := e.At
		x.Status, x.StartedAt, x.LastUpdatedAt = ExportInProgress, &at, e.At
	case LogExportCompleted:
		at := e.At
		x.Status, x.FinishedAt, x.LastUpdatedAt = ExportSuccess, &at, e.At
		x.RowCount, x.Bytes, x.FileName = e.RowCount, e.Bytes, e.FileName
	case LogExportFailed:
		at := e.At
		x.Status, x.FinishedAt, x.LastUpdatedAt, x.FailureReason = ExportFailed, &at, e.At, e.Reason
	case LogExportCancelled:
		at := e.At
		x.Status, x.FinishedAt, x.LastUpdatedAt = ExportStopped, &at, e.At
	}
}

// Exists reports whether the export has been created.
func (x *LogExport) Exists() bool { return x.ID != "" }

// Finished reports whether the export has reached an end state.
func (x *LogExport) Finished() bool {
	return x.Status == ExportSuccess || x.Status == ExportFailed || x.Status == ExportStopped
}

// CreateLogExport is the create command's input, already decoded. OrganisationID and
// WorkspaceID come from the actor, never from the body alone.
type CreateLogExport struct {
	ExportID       string
	OrganisationID string
	WorkspaceID    string
	Filters        LogExportFilters
	RequestedData  []string
	Format         string
	Description    string
	CreatedBy      string
}

// Create decides the creation of an export, in draft.
func (x *LogExport) Create(c CreateLogExport, now time.Time) ([]Event, error) {
	if x.Exists() {
		return nil, Errorf(CodeConflict, "log export %s exists already", c.ExportID)
	}
	if c.Format == "" {
		c.Format = ExportJSONL
	}
	if err := validateExportFormat(c.Format); err != nil {
		return nil, err
	}
	if err := validateRequestedData(c.RequestedData); err != nil {
		return nil, err
	}
	if err := validateNote("description", c.Description); err != nil {
		return nil, err
	}
	if err := c.Filters.Validate(); err != nil {
		return nil, err
	}
	return []Event{LogExportCreated{ExportID: c.ExportID, OrganisationID: c.OrganisationID, WorkspaceID: c.WorkspaceID,
		Filters: c.Filters, RequestedData: c.RequestedData, Format: c.Format, Description: c.Description,
		CreatedBy: c.CreatedBy, At: now}}, nil
}

// UpdateLogExport replaces an export's filters, fields, format or description; nil fields
// stay as they are.
type UpdateLogExport struct {
	Filters       *LogExportFilters
	RequestedData []string
	Format        *string
	Description   *string
}

// Update decides a change of a draft export; once started, an export's selection is fixed.
func (x *LogExport) Update(c UpdateLogExport, now time.Time) ([]Event, error) {
	if !x.Exists() {
		return nil, Errorf(CodeNotFound, "log export not found")
	}
	if x.Status != ExportDraft {
		return nil, Errorf(CodeConflict, "log export %s is %s; only a draft export can be updated", x.ID, x.Status)
	}
	if c.Filters == nil && c.RequestedData == nil && c.Format == nil && c.Description == nil {
		return nil, Invalid("", "nothing to update: give filters, requested_data, format or description")
	}
	if c.Format != nil {
		if err := validateExportFormat(*c.Format); err != nil {
			return nil, err
		}
	}
	if c.RequestedData != nil {
		if err := validateRequestedData(c.RequestedData); err != nil {
			return nil, err
		}
	}
	if c.Description != nil {
		if err := validateNote("description", *c.Description); err != nil {
			return nil, err
		}
	}
	if c.Filters != nil {
		if err := c.Filters.Validate(); err != nil {
			return nil, err
		}
	}
	return []Event{LogExportUpdated{ExportID: x.ID, Filters: c.Filters, RequestedData: c.RequestedData,
		Format: c.Format, Description: c.Description, At: now}}, nil
}

// Start decides the start of a draft export: the worker picks it up.
func (x *LogExport) Start(now time.Time) ([]Event, error) {
	if !x.Exists() {
		return nil, Errorf(CodeNotFound, "log export not found")
	}
	if x.Status != ExportDraft {
		return nil, Errorf(CodeConflict, "log export %s is %s; only a draft export can be started", x.ID, x.Status)
	}
	return []Event{LogExportStarted{ExportID: x.ID, At: now}}, nil
}

// Complete records the file of a running export.
func (x *LogExport) Complete(rows, bytes int64, fileName string, now time.Time) ([]Event, error) {
	if err := x.running("completed"); err != nil {
		return nil, err
	}
	return []Event{LogExportCompleted{ExportID: x.ID, RowCount: rows, Bytes: bytes, FileName: fileName, At: now}}, nil
}

// Fail records why a running export stopped without a file.
func (x *LogExport) Fail(reason string, now time.Time) ([]Event, error) {
	if err := x.running("failed"); err != nil {
		return nil, err
	}
	return []Event{LogExportFailed{ExportID: x.ID, Reason: reason, At: now}}, nil
}

// Cancel stops a draft or running export; a finished one is left as it is.
func (x *LogExport) Cancel(now time.Time) ([]Event, error) {
	if !x.Exists() {
		return nil, Errorf(CodeNotFound, "log export not found")
	}
	if x.Finished() {
		return nil, Errorf(CodeConflict, "log export %s is %s already; only a draft or running export can be cancelled", x.ID, x.Status)
	}
	return []Event{LogExportCancelled{ExportID: x.ID, At: now}}, nil
}

func (x *LogExport) running(outcome string) error {
	if !x.Exists() {
		return Errorf(CodeNotFound, "log export not found")
	}
	if x.Status != ExportInProgress {
		return Errorf(CodeConflict, "log export %s is %s; only a running export can be %s", x.ID, x.Status, outcome)
	}
	return nil
}

func validateExportFormat(f string) error {
	if f != ExportJSONL && f != ExportCSV {
		return Invalid("format", "format must be jsonl or csv (got %q)", f)
	}
	return nil
}

// validateRequestedData checks the fields an export asks for: at least one, each from
// LogExportFields, none twice.
func validateRequestedData(fields []string) error {
	if len(fields) == 0 {
		return Invalid("requested_data", "requested_data must name at least 1 field, from %s", strings.Join(LogExportFields, ", "))
	}
	seen := map[string]bool{}
	for i, f := range fields {
		p := "requested_data[" + strconv.Itoa(i) + "]"
		if !isExportField(f) {
			return Invalid(p, "%s must be one of %s (got %q)", p, strings.Join(LogExportFields, ", "), f)
		}
		if seen[f] {
			return Invalid(p, "%s repeats the field %q; each field may be asked once", p, f)
		}
		seen[f] = true
	}
	return nil
}

func isExportField(f string) bool {
	for _, known := range LogExportFields {
		if f == known {
			return true
		}
	}
	return false
}

// Validate checks every filter against its bound; params are named filters.<field>.
func (f LogExportFilters) Validate() error {
	from, err := parseExportTime("filters.time_of_generation_min", f.TimeOfGenerationMin, false)
	if err != nil {
		return err
	}
	to, err := parseExportTime("filters.time_of_generation_max", f.TimeOfGenerationMax, true)
	if err != nil {
		return err
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return Invalid("filters.time_of_generation_min", "filters.time_of_generation_min must be at or before filters.time_of_generation_max")
	}
	for _, r := range []struct {
		name     string
		min, max *int
	}{
		{"total_units", f.TotalUnitsMin, f.TotalUnitsMax},
		{"prompt_token", f.PromptTokenMin, f.PromptTokenMax},
		{"completion_token", f.CompletionTokenMin, f.CompletionTokenMax},
	} {
		if err := validateIntRange("filters."+r.name, r.min, r.max); err != nil {
			return err
		}
	}
	if err := validateCostRange(f.CostMin, f.CostMax); err != nil {
		return err
	}
	if f.WeightedFeedbackMin != nil {
		return Invalid("filters.weighted_feedback_min", "filters.weighted_feedback_min is not supported: request logs carry no feedback")
	}
	if f.WeightedFeedbackMax != nil {
		return Invalid("filters.weighted_feedback_max", "filters.weighted_feedback_max is not supported: request logs carry no feedback")
	}
	for _, l := range []struct{ name, value string }{
		{"ai_model", f.AIModel}, {"ai_org_model", f.AIOrgModel}, {"virtual_keys", f.VirtualKeys},
		{"configs", f.Configs}, {"prompt_slug", f.PromptSlug}, {"status_code", f.StatusCode},
	} {
		if err := validateExportList("filters."+l.name, l.value); err != nil {
			return err
		}
	}
	for _, s := range SplitExportList(f.StatusCode) {
		if c, err := strconv.Atoi(s); err != nil || c < 100 || c > 599 {
			return Invalid("filters.status_code", "filters.status_code must list status codes from 100 to 599 (got %q)", s)
		}
	}
	for _, pair := range SplitExportList(f.AIOrgModel) {
		if org, model, ok := strings.Cut(pair, "__"); !ok || org == "" || model == "" {
			return Invalid("filters.ai_org_model", "filters.ai_org_model must list provider__model pairs, such as openai__gpt-4o (got %q)", pair)
		}
	}
	if err := ValidateName("filters.trace_id", f.TraceID, false); err != nil {
		return err
	}
	if err := ValidateName("filters.workspace_slug", f.WorkspaceSlug, false); err != nil {
		return err
	}
	if err := validateExportMetadata(f.Metadata); err != nil {
		return err
	}
	if f.PageSize != nil && (*f.PageSize < 1 || *f.PageSize > MaxExportRows) {
		return Invalid("filters.page_size", "filters.page_size must be from 1 to %d (got %d)", MaxExportRows, *f.PageSize)
	}
	if f.CurrentPage != nil && (*f.CurrentPage < 0 || *f.CurrentPage > MaxExportPage) {
		return Invalid("filters.current_page", "filters.current_page must be from 0 to %d (got %d)", MaxExportPage, *f.CurrentPage)
	}
	return nil
}

func validateIntRange(param string, min, max *int) error {
	if min != nil && *min < 0 {
		return Invalid(param+"_min", "%s_min must be at least 0 (got %d)", param, *min)
	}
	if max != nil && *max < 0 {
		return Invalid(param+"_max", "%s_max must be at least 0 (got %d)", param, *max)
	}
	if min != nil && max != nil && *min > *max {
		return Invalid(param+"_min", "%s_min must be at most %s_max (%d > %d)", param, param, *min, *max)
	}
	return nil
}

func validateCostRange(min, max *float64) error {
	for _, c := range []struct {
		param string
		v     *float64
	}{{"filters.cost_min", min}, {"filters.cost_max", max}} {
		if c.v != nil && (*c.v < 0 || math.IsNaN(*c.v) || math.IsInf(*c.v, 0)) {
			return Invalid(c.param, "%s must be a number of at least 0 (got %v)", c.param, *c.v)
		}
	}
	if min != nil && max != nil && *min > *max {
		return Invalid("filters.cost_min", "filters.cost_min must be at most filters.cost_max (%v > %v)", *min, *max)
	}
	return nil
}

func validateExportList(param, raw string) error {
	values := SplitExportList(raw)
	if len(values) > MaxExportFilterValues {
		return Invalid(param, "%s must list at most %d values (got %d)", param, MaxExportFilterValues, len(values))
	}
	for _, v := range values {
		if n := utf8.RuneCountInString(v); n > MaxNameLength {
			return Invalid(param, "each value of %s must be at most %d characters (got %d)", param, MaxNameLength, n)
		}
	}
	return nil
}

func validateExportMetadata(md map[string]string) error {
	if len(md) > MaxExportFilterValues {
		return Invalid("filters.metadata", "filters.metadata must hold at most %d pairs (got %d)", MaxExportFilterValues, len(md))
	}
	for k, v := range md {
		p := "filters.metadata." + k
		if k == "" {
			return Invalid("filters.metadata", "filters.metadata keys must not be empty")
		}
		if n := utf8.RuneCountInString(k); n > MaxNameLength {
			return Invalid("filters.metadata", "filters.metadata keys must be at most %d characters (got %d)", MaxNameLength, n)
		}
		if n := utf8.RuneCountInString(v); n > MaxNameLength {
			return Invalid(p, "%s must be at most %d characters (got %d)", p, MaxNameLength, n)
		}
	}
	return nil
}

// SplitExportList splits a comma-separated filter into its trimmed, non-empty values.
func SplitExportList(raw string) []string {
	var out []string
	for _, v := range strings.Split(raw, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// exportTimeLayouts are what a time filter accepts: RFC 3339, the same without a zone (UTC),
// or a date, which means the whole day.
var exportTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"}

// parseExportTime reads a time bound. The start of a range is its first instant; the end
// (upTo) is the first instant after it, rows being kept to the millisecond: a date's end is
// the next midnight, a time's end the next millisecond, so that the end is included.
func parseExportTime(param, raw string, upTo bool) (time.Time, error) {
	if raw == "" {
		return time.Time{}, nil
	}
	for _, layout := range exportTimeLayouts {
		t, err := time.Parse(layout, raw)
		if err != nil {
			continue
		}
		t = t.UTC()
		if !upTo {
			return t, nil
		}
		if layout == "2006-01-02" {
			return t.AddDate(0, 0, 1), nil
		}
		return t.Truncate(time.Millisecond).Add(time.Millisecond), nil
	}
	return time.Time{}, Invalid(param, "%s must be an RFC 3339 time or a date YYYY-MM-DD (got %q)", param, raw)
}

// TimeRange returns the filters' time bounds as [from, to): zero where unbounded. Call it on
// validated filters.
func (f LogExportFilters) TimeRange() (from, to time.Time) {
	from, _ = parseExportTime("", f.TimeOfGenerationMin, false)
	to, _ = parseExportTime("", f.TimeOfGenerationMax, true)
	return from, to
}

// Window returns how many matching rows the export skips and the most it writes:
// current_page pages of page_size rows, and page_size (MaxExportRows by default).
func (f LogExportFilters) Window() (skip, limit int64) {
	limit = MaxExportRows
	if f.PageSize != nil {
		limit = int64(*f.PageSize)
	}
	if f.CurrentPage != nil {
		skip = int64(*f.CurrentPage) * limit
	}
	return skip, limit
}
