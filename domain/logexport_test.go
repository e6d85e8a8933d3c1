package domain

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLogExportDecisions(t *testing.T) {
	fields := []string{"id", "ai_model", "cost"}
	filters := LogExportFilters{TimeOfGenerationMin: "2026-11-01", TimeOfGenerationMax: "2026-11-02", StatusCode: "200,429"}
	created := LogExportCreated{ExportID: "x-1", OrganisationID: "org", WorkspaceID: "ws-1", Filters: filters,
		RequestedData: fields, Format: ExportJSONL, CreatedBy: "u-1", At: t0}
	later := t0.Add(time.Minute)
	started := LogExportStarted{ExportID: "x-1", At: later}
	completed := LogExportCompleted{ExportID: "x-1", RowCount: 3, Bytes: 120, FileName: "x-1.jsonl", At: later}
	failed := LogExportFailed{ExportID: "x-1", Reason: "reading the request logs failed", At: later}
	cancelled := LogExportCancelled{ExportID: "x-1", At: later}

	create := func(mod func(*CreateLogExport)) func(*LogExport) ([]Event, error) {
		return func(x *LogExport) ([]Event, error) {
			c := CreateLogExport{ExportID: "x-1", OrganisationID: "org", WorkspaceID: "ws-1", Filters: filters,
				RequestedData: fields, CreatedBy: "u-1"}
			if mod != nil {
				mod(&c)
			}
			return x.Create(c, t0)
		}
	}
	createdWith := func(mod func(*LogExportCreated)) []Event {
		e := created
		mod(&e)
		return []Event{e}
	}
	start := func(x *LogExport) ([]Event, error) { return x.Start(later) }
	cancel := func(x *LogExport) ([]Event, error) { return x.Cancel(later) }
	complete := func(x *LogExport) ([]Event, error) { return x.Complete(3, 120, "x-1.jsonl", later) }
	fail := func(x *LogExport) ([]Event, error) { return x.Fail("reading the request logs failed", later) }
	update := func(c UpdateLogExport) func(*LogExport) ([]Event, error) {
		return func(x *LogExport) ([]Event, error) { return x.Update(c, later) }
	}

	runScenarios(t, func() *LogExport { return &LogExport{} }, []scenario[*LogExport]{
		{name: "create: jsonl by default", when: create(nil), then: []Event{created}},
		{name: "create csv", when: create(func(c *CreateLogExport) { c.Format = ExportCSV }),
			then: createdWith(func(e *LogExportCreated) { e.Format = ExportCSV })},
		{name: "create xml", when: create(func(c *CreateLogExport) { c.Format = "xml" }), wantCode: CodeInvalid, wantParam: "format"},
		{name: "create twice", given: []Event{created}, when: create(nil), wantCode: CodeConflict},
		{name: "no requested_data", when: create(func(c *CreateLogExport) { c.RequestedData = nil }),
			wantCode: CodeInvalid, wantParam: "requested_data"},
		{name: "every requested field", when: create(func(c *CreateLogExport) { c.RequestedData = LogExportFields }),
			then: createdWith(func(e *LogExportCreated) { e.RequestedData = LogExportFields })},
		{name: "unknown requested field", when: create(func(c *CreateLogExport) { c.RequestedData = []string{"id", "api_key"} }),
			wantCode: CodeInvalid, wantParam: "requested_data[1]"},
		{name: "a field twice", when: create(func(c *CreateLogExport) { c.RequestedData = []string{"id", "cost", "id"} }),
			wantCode: CodeInvalid, wantParam: "requested_data[2]"},
		{name: "description of 1024", when: create(func(c *CreateLogExport) { c.Description = strings.Repeat("d", 1024) }),
			then: createdWith(func(e *LogExportCreated) { e.Description = strings.Repeat("d", 1024) })},
		{name: "description of 1025", when: create(func(c *CreateLogExport) { c.Description = strings.Repeat("d", 1025) }),
			wantCode: CodeInvalid, wantParam: "description"},
		{name: "bad filters", when: create(func(c *CreateLogExport) { c.Filters = LogExportFilters{StatusCode: "600"} }),
			wantCode: CodeInvalid, wantParam: "filters.status_code"},

		{name: "start a draft", given: []Event{created}, when: start, then: []Event{started}},
		{name: "start a missing export", when: start, wantCode: CodeNotFound},
		{name: "start twice", given: []Event{created, started}, when: start, wantCode: CodeConflict},
		{name: "start a finished export", given: []Event{created, started, completed}, when: start, wantCode: CodeConflict},
		{name: "start a cancelled draft", given: []Event{created, cancelled}, when: start, wantCode: CodeConflict},

		{name: "complete a running export", given: []Event{created, started}, when: complete, then: []Event{completed}},
		{name: "complete a draft", given: []Event{created}, when: complete, wantCode: CodeConflict},
		{name: "complete a cancelled export", given: []Event{created, started, cancelled}, when: complete, wantCode: CodeConflict},
		{name: "fail a running export", given: []Event{created, started}, when: fail, then: []Event{failed}},
		{name: "fail a finished export", given: []Event{created, started, completed}, when: fail, wantCode: CodeConflict},

		{name: "cancel a draft", given: []Event{created}, when: cancel, then: []Event{cancelled}},
		{name: "cancel a running export", given: []Event{created, started}, when: cancel, then: []Event{cancelled}},
		{name: "cancel a missing export", when: cancel, wantCode: CodeNotFound},
		{name: "cancel a completed export", given: []Event{created, started, completed}, when: cancel, wantCode: CodeConflict},
		{name: "cancel a failed export", given: []Event{created, started, failed}, when: cancel, wantCode: CodeConflict},
		{name: "cancel twice", given: []Event{created, cancelled}, when: cancel, wantCode: CodeConflict},

		{name: "update a draft's fields and format", given: []Event{created},
			when: update(UpdateLogExport{RequestedData: []string{"metadata"}, Format: ptr(ExportCSV)}),
			then: []Event{LogExportUpdated{ExportID: "x-1", RequestedData: []string{"metadata"}, Format: ptr(ExportCSV), At: later}}},
		{name: "update nothing", given: []Event{created}, when: update(UpdateLogExport{}), wantCode: CodeInvalid},
		{name: "update to a bad format", given: []Event{created}, when: update(UpdateLogExport{Format: ptr("tsv")}),
			wantCode: CodeInvalid, wantParam: "format"},
		{name: "update to no fields", given: []Event{created}, when: update(UpdateLogExport{RequestedData: []string{}}),
			wantCode: CodeInvalid, wantParam: "requested_data"},
		{name: "update with bad filters", given: []Event{created},
			when:     update(UpdateLogExport{Filters: &LogExportFilters{CostMin: ptr(-1.0)}}),
			wantCode: CodeInvalid, wantParam: "filters.cost_min"},
		{name: "update a started export", given: []Event{created, started},
			when: update(UpdateLogExport{Description: ptr("x")}), wantCode: CodeConflict},
		{name: "update a missing export", when: update(UpdateLogExport{Description: ptr("x")}), wantCode: CodeNotFound},
	})
}

func TestLogExportFold(t *testing.T) {
	var x LogExport
	later := t0.Add(time.Minute)
	x.Apply(LogExportCreated{ExportID: "x-1", OrganisationID: "org", WorkspaceID: "ws", RequestedData: []string{"id"},
		Format: ExportCSV, CreatedBy: "u", At: t0})
	assert.Equal(t, ExportDraft, x.Status)
	assert.False(t, x.Finished())
	f := LogExportFilters{AIModel: "gpt-4o"}
	x.Apply(LogExportUpdated{ExportID: "x-1", Filters: &f, Description: ptr("d"), At: t0})
	assert.Equal(t, f, x.Filters)
	assert.Equal(t, []string{"id"}, x.RequestedData, "absent fields stay")
	x.Apply(LogExportStarted{ExportID: "x-1", At: later})
	assert.Equal(t, ExportInProgress, x.Status)
	assert.Equal(t, later, *x.StartedAt)
	x.Apply(LogExportCompleted{ExportID: "x-1", RowCount: 5, Bytes: 9, FileName: "x-1.csv", At: later})
	assert.Equal(t, ExportSuccess, x.Status)
	assert.Equal(t, int64(5), x.RowCount)
	assert.Equal(t, "x-1.csv", x.FileName)
	assert.True(t, x.Finished())
	assert.Equal(t, later, x.LastUpdatedAt)
}

// Every filter bound at its edge and one step past it.
func TestLogExportFilterBounds(t *testing.T) {
	list := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = "m" + strconv.Itoa(i)
		}
		return strings.Join(v, ",")
	}
	md := func(n int) map[string]string {
		out := map[string]string{}
		for i := 0; i < n; i++ {
			out["k"+strconv.Itoa(i)] = "v"
		}
		return out
	}
	long := strings.Repeat("a", MaxNameLength)
	cases := []struct {
		name      string
		f         LogExportFilters
		wantParam string // empty: valid
	}{
		{"nothing", LogExportFilters{}, ""},
		{"rfc 3339 times", LogExportFilters{TimeOfGenerationMin: "2026-11-01T00:00:00Z", TimeOfGenerationMax: "2026-11-02T10:00:00.5+02:00"}, ""},
		{"min equal to max", LogExportFilters{TimeOfGenerationMin: "2026-11-01T00:00:00Z", TimeOfGenerationMax: "2026-11-01T00:00:00Z"}, ""},
		{"min after max", LogExportFilters{TimeOfGenerationMin: "2026-11-01T00:00:00.001Z", TimeOfGenerationMax: "2026-11-01T00:00:00Z"}, "filters.time_of_generation_min"},
		{"bad min", LogExportFilters{TimeOfGenerationMin: "yesterday"}, "filters.time_of_generation_min"},
		{"bad max", LogExportFilters{TimeOfGenerationMax: "2026-13-01"}, "filters.time_of_generation_max"},
		{"units 0", LogExportFilters{TotalUnitsMin: ptr(0), TotalUnitsMax: ptr(0)}, ""},
		{"units min -1", LogExportFilters{TotalUnitsMin: ptr(-1)}, "filters.total_units_min"},
		{"units max -1", LogExportFilters{TotalUnitsMax: ptr(-1)}, "filters.total_units_max"},
		{"units min over max", LogExportFilters{TotalUnitsMin: ptr(2), TotalUnitsMax: ptr(1)}, "filters.total_units_min"},
		{"prompt tokens min over max", LogExportFilters{PromptTokenMin: ptr(2), PromptTokenMax: ptr(1)}, "filters.prompt_token_min"},
		{"completion tokens -1", LogExportFilters{CompletionTokenMax: ptr(-1)}, "filters.completion_token_max"},
		{"cost 0", LogExportFilters{CostMin: ptr(0.0), CostMax: ptr(0.0)}, ""},
		{"cost -0.01", LogExportFilters{CostMax: ptr(-0.01)}, "filters.cost_max"},
		{"cost NaN", LogExportFilters{CostMin: ptr(math.NaN())}, "filters.cost_min"},
		{"cost min over max", LogExportFilters{CostMin: ptr(2.0), CostMax: ptr(1.0)}, "filters.cost_min"},
		{"status 100 and 599", LogExportFilters{StatusCode: "100, 599"}, ""},
		{"status 99", LogExportFilters{StatusCode: "99"}, "filters.status_code"},
		{"status 600", LogExportFilters{StatusCode: "200,600"}, "filters.status_code"},
		{"status text", LogExportFilters{StatusCode: "ok"}, "filters.status_code"},
		{"100 models", LogExportFilters{AIModel: list(100)}, ""},
		{"101 models", LogExportFilters{AIModel: list(101)}, "filters.ai_model"},
		{"model of 255", LogExportFilters{AIModel: long}, ""},
		{"model of 256", LogExportFilters{AIModel: long + "a"}, "filters.ai_model"},
		{"101 configs", LogExportFilters{Configs: list(101)}, "filters.configs"},
		{"101 virtual keys", LogExportFilters{VirtualKeys: list(101)}, "filters.virtual_keys"},
		{"101 prompts", LogExportFilters{PromptSlug: list(101)}, "filters.prompt_slug"},
		{"provider model pairs", LogExportFilters{AIOrgModel: "openai__gpt-4o, anthropic__claude-3"}, ""},
		{"a pair without provider", LogExportFilters{AIOrgModel: "__gpt-4o"}, "filters.ai_org_model"},
		{"a pair without separator", LogExportFilters{AIOrgModel: "openai-gpt-4o"}, "filters.ai_org_model"},
		{"trace id of 255", LogExportFilters{TraceID: long}, ""},
		{"trace id of 256", LogExportFilters{TraceID: long + "a"}, "filters.trace_id"},
		{"workspace slug of 256", LogExportFilters{WorkspaceSlug: long + "a"}, "filters.workspace_slug"},
		{"100 metadata pairs", LogExportFilters{Metadata: md(100)}, ""},
		{"101 metadata pairs", LogExportFilters{Metadata: md(101)}, "filters.metadata"},
		{"metadata key of 256", LogExportFilters{Metadata: map[string]string{long + "a": "v"}}, "filters.metadata"},
		{"empty metadata key", LogExportFilters{Metadata: map[string]string{"": "v"}}, "filters.metadata"},
		{"metadata value of 255", LogExportFilters{Metadata: map[string]string{"team": long}}, ""},
		{"metadata value of 256", LogExportFilters{Metadata: map[string]string{"team": long + "a"}}, "filters.metadata.team"},
		{"feedback", LogExportFilters{WeightedFeedbackMin: ptr(0.5)}, "filters.weighted_feedback_min"},
		{"feedback max", LogExportFilters{WeightedFeedbackMax: ptr(0.5)}, "filters.weighted_feedback_max"},
		{"page size 1", LogExportFilters{PageSize: ptr(1)}, ""},
		{"page size 0", LogExportFilters{PageSize: ptr(0)}, "filters.page_size"},
		{"page size 50000", LogExportFilters{PageSize: ptr(MaxExportRows)}, ""},
		{"page size 50001", LogExportFilters{PageSize: ptr(MaxExportRows + 1)}, "filters.page_size"},
		{"page 0", LogExportFilters{CurrentPage: ptr(0)}, ""},
		{"page -1", LogExportFilters{CurrentPage: ptr(-1)}, "filters.current_page"},
		{"page 1000000", LogExportFilters{CurrentPage: ptr(MaxExportPage)}, ""},
		{"page 1000001", LogExportFilters{CurrentPage: ptr(MaxExportPage + 1)}, "filters.current_page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Validate()
			if tc.wantParam == "" {
				assert.NoError(t, err)
				return
			}
			var appErr *Error
			if assert.ErrorAs(t, err, &appErr) {
				assert.Equal(t, CodeInvalid, appErr.Code)
				assert.Equal(t, tc.wantParam, appErr.Param, appErr.Message)
				assert.Contains(t, appErr.Message, tc.wantParam)
			}
		})
	}
}

func TestLogExportTimeRangeAndWindow(t *testing.T) {
	day := LogExportFilters{TimeOfGenerationMin: "2026-11-01", TimeOfGenerationMax: "2026-11-02"}
	from, to := day.TimeRange()
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), from)
	assert.Equal(t, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC), to, "a date as the end includes its whole day")

	instant := LogExportFilters{TimeOfGenerationMax: "2026-11-02T10:00:00.5+02:00"}
	from, to = instant.TimeRange()
	assert.True(t, from.IsZero())
	assert.Equal(t, time.Date(2026, 11, 2, 8, 0, 0, 501_000_000, time.UTC), to, "a time as the end includes its millisecond")

	skip, limit := LogExportFilters{}.Window()
	assert.Equal(t, int64(0), skip)
	assert.Equal(t, int64(MaxExportRows), limit)
	skip, limit = LogExportFilters{PageSize: ptr(10), CurrentPage: ptr(3)}.Window()
	assert.Equal(t, int64(30), skip)
	assert.Equal(t, int64(10), limit)

	assert.Equal(t, []string{"a", "b"}, SplitExportList(" a, ,b,"))
	assert.Empty(t, SplitExportList(""))
}
