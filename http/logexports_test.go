package httpapi

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/sqlite"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/workers"
)

const exportsPath = "/logs/exports"

// exportAPI is the admin API with a real SQLite log store holding rows, an export directory
// and the export worker running, as cmd/ runs it.
type exportAPI struct {
	*testAPI
	Logs *sqlite.Store
	Dir  string
	WS   string // a workspace of the organisation, holding most rows
	Rows []analytics.LogRecord
}

// newExportAPI starts the worker over the log store, or over what wrap makes of it.
func newExportAPI(t *testing.T, wrap func(workers.LogScanner) workers.LogScanner) *exportAPI {
	t.Helper()
	api := newTestAPI(t)
	logs, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "logs.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = logs.Close() })
	dir := filepath.Join(t.TempDir(), "exports")
	api.AdminAPI.Analytics = logs
	api.AdminAPI.ExportDir = dir
	api.AdminAPI.Features.DataExports = true

	e := &exportAPI{testAPI: api, Logs: logs, Dir: dir, WS: api.seedWorkspace("team-a", nil)}
	other := api.seedWorkspace("team-b", nil)
	for i := 0; i < 60; i++ {
		ws := e.WS
		if i%3 == 2 {
			ws = other
		}
		r := analytics.LogRecord{ID: fmt.Sprintf("row-%02d", i), TraceID: "t", OrganisationID: api.OrgID, WorkspaceID: ws,
			AIService: "openai", Model: []string{"gpt-4o", "gpt-4o-mini"}[i%2], Endpoint: "chatComplete", Method: "POST",
			Path: "/v1/chat/completions", StatusCode: []int{200, 429, 200, 500}[i%4], PromptTokens: i, CompletionTokens: 2 * i,
			TotalTokens: 3 * i, Cost: float64(i) / 100, LatencyMS: 100, CacheStatus: "MISS", LogFormat: "v1",
			Metadata:    map[string]string{"team": []string{"a", "b"}[i%2]},
			RequestBody: json.RawMessage(`{"messages":[{"role":"user","content":"row ` + fmt.Sprint(i) + `"}],"api_key":"[REDACTED]"}`),
			StartedAt:   api.Now().Add(-time.Duration(60-i) * time.Minute)}
		r.EndedAt = r.StartedAt.Add(100 * time.Millisecond)
		e.Rows = append(e.Rows, r)
	}
	// A row of another organisation in the same workspace id, which no export may show.
	e.Rows = append(e.Rows, analytics.LogRecord{ID: "foreign", OrganisationID: "another-org", WorkspaceID: e.WS, Model: "gpt-4o",
		StatusCode: 200, StartedAt: api.Now().Add(-time.Minute)})
	require.NoError(t, logs.Insert(context.Background(), e.Rows))

	var scanner workers.LogScanner = logs
	if wrap != nil {
		scanner = wrap(logs)
	}
	worker, err := workers.NewLogExportWorker(api.Deps, api.Read, scanner, dir)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = worker.Run(ctx, 10*time.Millisecond)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})
	return e
}

// create creates an export as the admin key and returns its id.
func (e *exportAPI) create(body map[string]any) string {
	e.t.Helper()
	r := e.Admin(http.MethodPost, exportsPath, body)
	require.Equal(e.t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("id")
}

func (e *exportAPI) body(mods ...func(map[string]any)) map[string]any {
	b := map[string]any{"workspace_id": e.WS, "filters": map[string]any{}, "requested_data": []string{"id", "ai_model"}}
	for _, m := range mods {
		m(b)
	}
	return b
}

// waitStatus polls the export until it has status.
func (e *exportAPI) waitStatus(id, status string) response {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.Admin(http.MethodGet, exportsPath+"/"+id, nil)
		require.Equal(e.t, http.StatusOK, r.Status, string(r.Raw))
		if r.Str("status") == status {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("export %s is %s, not %s", id, r.Str("status"), status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fetch gets a URL without any API key.
func fetch(t *testing.T, link string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(link)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, data
}

// rowsOf returns the ids the file holds, in order.
func (e *exportAPI) wantIDs(keep func(analytics.LogRecord) bool) []string {
	var rows []analytics.LogRecord
	for _, r := range e.Rows {
		if r.OrganisationID == e.OrgID && r.WorkspaceID == e.WS && keep(r) {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].StartedAt.Before(rows[j].StartedAt) })
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// Every state an export goes through, and every transition refused, end to end: create
// (draft), update, start (in_progress), success, download through the signed link.
func TestLogExportLifecycle(t *testing.T) {
	e := newExportAPI(t, nil)

	created := e.Admin(http.MethodPost, exportsPath, e.body(func(b map[string]any) { b["description"] = "errors of team a" }))
	require.Equal(t, http.StatusOK, created.Status, string(created.Raw))
	assert.Equal(t, "export", created.Str("object"))
	assert.Equal(t, float64(0), created.Body["total"])
	id := created.Str("id")
	require.True(t, isUUID(id))

	got := e.Admin(http.MethodGet, exportsPath+"/"+id, nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	assert.Equal(t, domain.ExportDraft, got.Str("status"))
	assert.Equal(t, "jsonl", got.Str("format"), "JSON lines by default")
	assert.Equal(t, e.WS, got.Str("workspace_id"))
	assert.Equal(t, e.OrgID, got.Str("organisation_id"))
	assert.Equal(t, "errors of team a", got.Str("description"))
	assert.Equal(t, "export", got.Str("object"))
	assert.NotEmpty(t, got.Str("created_by"))
	assert.Equal(t, []any{"id", "ai_model"}, got.Body["requested_data"])
	assert.Equal(t, map[string]any{}, got.Body["filters"])

	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodGet, exportsPath+"/"+id+"/download", nil).Status, "a draft has no file")

	upd := e.Admin(http.MethodPut, exportsPath+"/"+id, map[string]any{"workspace_id": e.WS,
		"filters":        map[string]any{"status_code": "200", "metadata": map[string]string{"team": "a"}},
		"requested_data": []string{"id", "response_status_code", "metadata", "request"}, "format": "csv"})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	assert.Equal(t, id, upd.Str("id"))
	got = e.Admin(http.MethodGet, exportsPath+"/"+id, nil)
	assert.Equal(t, "csv", got.Str("format"))
	assert.Equal(t, map[string]any{"status_code": "200", "metadata": map[string]any{"team": "a"}}, got.Body["filters"])

	started := e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil)
	require.Equal(t, http.StatusOK, started.Status, string(started.Raw))
	assert.Equal(t, "export", started.Str("object"))
	assert.NotEmpty(t, started.Str("message"))
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil).Status, "start twice")
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodPut, exportsPath+"/"+id, map[string]any{"filters": map[string]any{}}).Status,
		"a started export's selection is fixed")

	done := e.waitStatus(id, domain.ExportSuccess)
	want := e.wantIDs(func(r analytics.LogRecord) bool { return r.StatusCode == 200 && r.Metadata["team"] == "a" })
	require.NotEmpty(t, want)
	assert.Equal(t, float64(len(want)), done.Body["row_count"])
	assert.NotEmpty(t, done.Str("started_at"))
	assert.NotEmpty(t, done.Str("finished_at"))
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodPost, exportsPath+"/"+id+"/cancel", nil).Status, "cancel a finished export")
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil).Status, "start a finished export")

	dl := e.Admin(http.MethodGet, exportsPath+"/"+id+"/download", nil)
	require.Equal(t, http.StatusOK, dl.Status, string(dl.Raw))
	link := dl.Str("signed_url")
	require.True(t, strings.HasPrefix(link, e.Server.URL+"/v1/logs/exports/"+id+"/file?token="), link)
	status, header, data := fetch(t, link)
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Equal(t, "text/csv; charset=utf-8", header.Get("Content-Type"))
	assert.Equal(t, `attachment; filename="`+id+`.csv"`, header.Get("Content-Disposition"))
	records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"id", "response_status_code", "metadata", "request"}, records[0])
	var ids []string
	for _, rec := range records[1:] {
		ids = append(ids, rec[0])
		assert.Equal(t, "200", rec[1])
		assert.JSONEq(t, `{"team":"a"}`, rec[2])
		assert.Contains(t, rec[3], `"api_key":"[REDACTED]"`, "bodies are exported as stored, redacted")
	}
	assert.Equal(t, want, ids)
	assert.NotContains(t, string(data), "foreign")

	list := e.Admin(http.MethodGet, exportsPath+"?workspace_id="+e.WS, nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	assert.Equal(t, "list", list.Str("object"))
	require.Len(t, list.Data(), 1)
	assert.Equal(t, id, list.Data()[0]["id"])
}

// A JSON lines export downloads as application/x-ndjson, one object per row.
func TestLogExportJSONLinesDownload(t *testing.T) {
	e := newExportAPI(t, nil)
	id := e.create(e.body(func(b map[string]any) {
		b["filters"] = map[string]any{"ai_model": "gpt-4o", "page_size": 5, "current_page": 1}
	}))
	require.Equal(t, http.StatusOK, e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil).Status)
	e.waitStatus(id, domain.ExportSuccess)
	dl := e.Admin(http.MethodGet, exportsPath+"/"+id+"/download", nil)
	require.Equal(t, http.StatusOK, dl.Status, string(dl.Raw))
	status, header, data := fetch(t, dl.Str("signed_url"))
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Equal(t, "application/x-ndjson", header.Get("Content-Type"))
	want := e.wantIDs(func(r analytics.LogRecord) bool { return r.Model == "gpt-4o" })[5:10]
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &row))
		assert.Len(t, row, 2)
		assert.Equal(t, "gpt-4o", row["ai_model"])
		ids = append(ids, row["id"].(string))
	}
	assert.Equal(t, want, ids)
}

// A draft can be cancelled; a cancelled export cannot be started, cancelled again or
// downloaded.
func TestLogExportCancelDraft(t *testing.T) {
	e := newExportAPI(t, nil)
	id := e.create(e.body())
	r := e.Admin(http.MethodPost, exportsPath+"/"+id+"/cancel", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	assert.Equal(t, "export", r.Str("object"))
	assert.Equal(t, domain.ExportStopped, e.Admin(http.MethodGet, exportsPath+"/"+id, nil).Str("status"))
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/start"}, {http.MethodPost, "/cancel"}, {http.MethodGet, "/download"},
	} {
		r := e.Admin(c.method, exportsPath+"/"+id+c.path, nil)
		assert.Equal(t, http.StatusConflict, r.Status, c.path)
		assert.Equal(t, "conflict", *errorCode(r), c.path)
	}
}

func errorCode(r response) *string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return &c
}

// pauseStore pauses each scan after its first row until released.
type pauseStore struct {
	workers.LogScanner
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func (p *pauseStore) ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error {
	first := true
	return p.LogScanner.ScanLogs(ctx, f, func(r analytics.LogRecord) error {
		if first {
			first = false
			p.once.Do(func() { close(p.reached) })
			select {
			case <-p.release:
			case <-ctx.Done():
			}
		}
		return fn(r)
	})
}

// Cancelling a running export stops its worker between rows and leaves no file.
func TestLogExportCancelRunning(t *testing.T) {
	pause := &pauseStore{reached: make(chan struct{}), release: make(chan struct{})}
	e := newExportAPI(t, func(s workers.LogScanner) workers.LogScanner { pause.LogScanner = s; return pause })
	defer close(pause.release)
	id := e.create(e.body())
	require.Equal(t, http.StatusOK, e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil).Status)
	select {
	case <-pause.reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the export did not start")
	}
	assert.Equal(t, domain.ExportInProgress, e.Admin(http.MethodGet, exportsPath+"/"+id, nil).Str("status"))
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodGet, exportsPath+"/"+id+"/download", nil).Status, "not finished")
	r := e.Admin(http.MethodPost, exportsPath+"/"+id+"/cancel", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	e.waitStatus(id, domain.ExportStopped)
	require.Eventually(t, func() bool {
		entries, err := os.ReadDir(e.Dir)
		return (err == nil && len(entries) == 0) || errors.Is(err, os.ErrNotExist)
	}, 10*time.Second, 5*time.Millisecond, "the partial file is removed")
}

// brokenStore fails every scan.
type brokenStore struct{ workers.LogScanner }

func (brokenStore) ScanLogs(context.Context, analytics.Filter, func(analytics.LogRecord) error) error {
	return errors.New("no such table: request_logs")
}

// An export whose rows cannot be read fails, with a reason that tells nothing internal.
func TestLogExportFails(t *testing.T) {
	e := newExportAPI(t, func(s workers.LogScanner) workers.LogScanner { return brokenStore{s} })
	id := e.create(e.body())
	require.Equal(t, http.StatusOK, e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil).Status)
	r := e.waitStatus(id, domain.ExportFailed)
	assert.Equal(t, "reading the request logs failed", r.Str("failure_reason"))
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodGet, exportsPath+"/"+id+"/download", nil).Status)
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodPost, exportsPath+"/"+id+"/cancel", nil).Status)
	assert.Equal(t, http.StatusConflict, e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil).Status)
}

// Every bound of the create body at its edge and one step past it, with the param named.
func TestLogExportCreateBounds(t *testing.T) {
	e := newExportAPI(t, nil)
	set := func(k string, v any) func(map[string]any) { return func(b map[string]any) { b[k] = v } }
	filter := func(k string, v any) func(map[string]any) {
		return func(b map[string]any) { b["filters"] = map[string]any{k: v} }
	}
	del := func(k string) func(map[string]any) { return func(b map[string]any) { delete(b, k) } }
	models := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprintf("m%d", i)
		}
		return strings.Join(v, ",")
	}
	cases := []struct {
		name   string
		mod    func(map[string]any)
		status int
		param  string
	}{
		{"csv", set("format", "csv"), 200, ""},
		{"jsonl", set("format", "jsonl"), 200, ""},
		{"xml", set("format", "xml"), 400, "format"},
		{"every field", set("requested_data", domain.LogExportFields), 200, ""},
		{"no requested_data", del("requested_data"), 400, "requested_data"},
		{"empty requested_data", set("requested_data", []string{}), 400, "requested_data"},
		{"unknown field", set("requested_data", []string{"id", "api_key_hash"}), 400, "requested_data[1]"},
		{"a field twice", set("requested_data", []string{"id", "id"}), 400, "requested_data[1]"},
		{"no filters", del("filters"), 400, "filters"},
		{"description of 1024", set("description", strings.Repeat("d", 1024)), 200, ""},
		{"description of 1025", set("description", strings.Repeat("d", 1025)), 400, "description"},
		{"page_size 1", filter("page_size", 1), 200, ""},
		{"page_size 0", filter("page_size", 0), 400, "filters.page_size"},
		{"page_size 50000", filter("page_size", 50000), 200, ""},
		{"page_size 50001", filter("page_size", 50001), 400, "filters.page_size"},
		{"current_page 1000000", filter("current_page", 1000000), 200, ""},
		{"current_page 1000001", filter("current_page", 1000001), 400, "filters.current_page"},
		{"current_page -1", filter("current_page", -1), 400, "filters.current_page"},
		{"status 599", filter("status_code", "599"), 200, ""},
		{"status 600", filter("status_code", "600"), 400, "filters.status_code"},
		{"status 100", filter("status_code", "100"), 200, ""},
		{"status 99", filter("status_code", "99"), 400, "filters.status_code"},
		{"100 models", filter("ai_model", models(100)), 200, ""},
		{"101 models", filter("ai_model", models(101)), 400, "filters.ai_model"},
		{"cost_min 0", filter("cost_min", 0), 200, ""},
		{"cost_min below 0", filter("cost_min", -0.001), 400, "filters.cost_min"},
		{"total_units_min 0", filter("total_units_min", 0), 200, ""},
		{"total_units_min -1", filter("total_units_min", -1), 400, "filters.total_units_min"},
		{"time range of one instant", func(b map[string]any) {
			b["filters"] = map[string]any{"time_of_generation_min": "2026-11-20T10:00:00Z", "time_of_generation_max": "2026-11-20T10:00:00Z"}
		}, 200, ""},
		{"time range reversed", func(b map[string]any) {
			b["filters"] = map[string]any{"time_of_generation_min": "2026-11-20T10:00:00.001Z", "time_of_generation_max": "2026-11-20T10:00:00Z"}
		}, 400, "filters.time_of_generation_min"},
		{"a bad time", filter("time_of_generation_max", "soon"), 400, "filters.time_of_generation_max"},
		{"metadata value of 255", filter("metadata", map[string]string{"team": strings.Repeat("v", 255)}), 200, ""},
		{"metadata value of 256", filter("metadata", map[string]string{"team": strings.Repeat("v", 256)}), 400, "filters.metadata.team"},
		{"metadata value not text", filter("metadata", map[string]any{"team": 5}), 400, "filters.metadata"},
		{"a filter of the wrong type", filter("page_size", "ten"), 400, "filters.page_size"},
		{"filters not an object", set("filters", []int{1}), 400, "filters"},
		{"feedback", filter("weighted_feedback_min", 0.5), 400, "filters.weighted_feedback_min"},
		{"the workspace's slug", filter("workspace_slug", "team-a"), 200, ""},
		{"another workspace's slug", filter("workspace_slug", "team-b"), 400, "filters.workspace_slug"},
		{"an unknown filter", filter("colour", "red"), 400, "filters.colour"},
		{"an unknown field", set("organisation_id", "x"), 400, "organisation_id"},
		{"no workspace with an organisation key", del("workspace_id"), 400, "workspace_id"},
		{"a missing workspace", set("workspace_id", "7b0d0e9e-0000-4000-8000-000000000000"), 404, "workspace_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Admin(http.MethodPost, exportsPath, e.body(tc.mod))
			require.Equal(t, tc.status, r.Status, string(r.Raw))
			if tc.status >= 400 {
				assert.Equal(t, tc.param, r.ErrorParam(), r.ErrorMessage())
				assert.NotEmpty(t, r.ErrorMessage())
			}
		})
	}
	r := e.Admin(http.MethodPost, exportsPath, "{")
	assert.Equal(t, http.StatusBadRequest, r.Status)

	// The same bounds hold on update.
	id := e.create(e.body())
	for _, c := range []struct {
		body   map[string]any
		status int
		param  string
	}{
		{map[string]any{"filters": map[string]any{"page_size": 50000}}, 200, ""},
		{map[string]any{"filters": map[string]any{"page_size": 50001}}, 400, "filters.page_size"},
		{map[string]any{"requested_data": []string{"id"}}, 400, "filters"},
		{map[string]any{"filters": map[string]any{}, "format": "tsv"}, 400, "format"},
		{map[string]any{"filters": map[string]any{}, "workspace_id": "7b0d0e9e-0000-4000-8000-000000000000"}, 400, "workspace_id"},
	} {
		r := e.Admin(http.MethodPut, exportsPath+"/"+id, c.body)
		require.Equal(t, c.status, r.Status, string(r.Raw))
		assert.Equal(t, c.param, r.ErrorParam(), r.ErrorMessage())
	}
}

// exportKey creates a key: an organisation service key, or a workspace service key of ws.
func exportKey(t *testing.T, api *testAPI, ws string, scopes ...string) string {
	t.Helper()
	path, body := "/api-keys/organisation/service", map[string]any{"name": "exports", "scopes": scopes}
	if ws != "" {
		path, body["workspace_id"] = "/api-keys/workspace/service", ws
	}
	r := api.Admin(http.MethodPost, path, body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Str("key")
}

// 401 without a key; 403 without the logs.export scope or outside the key's workspace; 404
// for an export that does not exist or that the key cannot see; 400 for a malformed id.
func TestLogExportAccess(t *testing.T) {
	e := newExportAPI(t, nil)
	other := e.seedWorkspace("team-c", nil)
	mine := exportKey(t, e.testAPI, e.WS, "logs.export")
	theirs := e.create(e.body(func(b map[string]any) { b["workspace_id"] = other }))

	for _, c := range []struct{ method, path string }{
		{http.MethodGet, exportsPath}, {http.MethodPost, exportsPath}, {http.MethodGet, exportsPath + "/" + theirs},
		{http.MethodPut, exportsPath + "/" + theirs}, {http.MethodPost, exportsPath + "/" + theirs + "/start"},
		{http.MethodPost, exportsPath + "/" + theirs + "/cancel"}, {http.MethodGet, exportsPath + "/" + theirs + "/download"},
	} {
		assert.Equal(t, http.StatusUnauthorized, e.Do(c.method, c.path, "", nil).Status, "%s %s without a key", c.method, c.path)
		assert.Equal(t, http.StatusUnauthorized, e.Do(c.method, c.path, "cw-wrong", nil).Status, "%s %s with a wrong key", c.method, c.path)
	}

	noScope := exportKey(t, e.testAPI, "", "logs.view", "logs.list")
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, exportsPath, noScope, e.body()).Status)
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, exportsPath, noScope, nil).Status)
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, exportsPath+"/"+theirs, noScope, nil).Status)
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, exportsPath+"/"+theirs+"/download", noScope, nil).Status)
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, exportsPath+"/"+theirs+"/start", noScope, nil).Status)

	// A workspace key exports its own workspace, whatever the body says.
	r := e.Do(http.MethodPost, exportsPath, mine, map[string]any{"filters": map[string]any{}, "requested_data": []string{"id"}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	own := r.Str("id")
	assert.Equal(t, e.WS, e.Admin(http.MethodGet, exportsPath+"/"+own, nil).Str("workspace_id"))
	r = e.Do(http.MethodPost, exportsPath, mine, e.body(func(b map[string]any) { b["workspace_id"] = other }))
	assert.Equal(t, http.StatusForbidden, r.Status, "another workspace")

	list := e.Do(http.MethodGet, exportsPath, mine, nil)
	require.Equal(t, http.StatusOK, list.Status)
	require.Len(t, list.Data(), 1, "a workspace key lists its workspace's exports only")
	assert.Equal(t, own, list.Data()[0]["id"])
	assert.Len(t, e.Admin(http.MethodGet, exportsPath, nil).Data(), 2, "an organisation key lists every workspace's")
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, exportsPath+"?workspace_id="+other, mine, nil).Status)
	assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, exportsPath+"/"+theirs, mine, nil).Status)
	assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, exportsPath+"/"+theirs+"/download", mine, nil).Status)
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, exportsPath+"/"+theirs+"/start", mine, nil).Status)
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, exportsPath+"/"+theirs+"/cancel", mine, nil).Status)
	assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPut, exportsPath+"/"+theirs, mine, map[string]any{"filters": map[string]any{}}).Status)

	missing := exportsPath + "/7b0d0e9e-0000-4000-8000-000000000000"
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, missing}, {http.MethodPut, missing}, {http.MethodPost, missing + "/start"},
		{http.MethodPost, missing + "/cancel"}, {http.MethodGet, missing + "/download"},
	} {
		var body any
		if c.method == http.MethodPut {
			body = map[string]any{"filters": map[string]any{}}
		}
		assert.Equal(t, http.StatusNotFound, e.Admin(c.method, c.path, body).Status, "%s %s", c.method, c.path)
		r := e.Admin(c.method, strings.Replace(c.path, "7b0d0e9e-0000-4000-8000-000000000000", "not-a-uuid", 1), body)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s %s", c.method, c.path)
		assert.Equal(t, "exportId", r.ErrorParam())
	}
}

// The download link works without a key, for its export only, until it expires; a link
// altered in any way is refused.
func TestLogExportDownloadLink(t *testing.T) {
	e := newExportAPI(t, nil)
	id := e.create(e.body())
	other := e.create(e.body())
	for _, x := range []string{id, other} {
		require.Equal(t, http.StatusOK, e.Admin(http.MethodPost, exportsPath+"/"+x+"/start", nil).Status)
		e.waitStatus(x, domain.ExportSuccess)
	}
	dl := e.Admin(http.MethodGet, exportsPath+"/"+id+"/download", nil)
	require.Equal(t, http.StatusOK, dl.Status)
	link := dl.Str("signed_url")
	status, _, _ := fetch(t, link)
	require.Equal(t, http.StatusOK, status)

	u, err := url.Parse(link)
	require.NoError(t, err)
	token := u.Query().Get("token")
	for name, bad := range map[string]string{
		"another export's path": strings.Replace(link, id, other, 1),
		"no token":              e.Server.URL + "/v1/logs/exports/" + id + "/file",
		"a forged signature":    e.Server.URL + "/v1/logs/exports/" + id + "/file?token=" + url.QueryEscape(token[:strings.Index(token, ".")]+".AAAA"),
		"a token of garbage":    e.Server.URL + "/v1/logs/exports/" + id + "/file?token=abc",
	} {
		status, _, data := fetch(t, bad)
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", name, data)
	}

	e.Advance(downloadLinkTTL - time.Second)
	status, _, _ = fetch(t, link)
	assert.Equal(t, http.StatusOK, status, "a second before it expires")
	e.Advance(time.Second)
	status, _, data := fetch(t, link)
	assert.Equal(t, http.StatusForbidden, status, "expired: %s", data)
	assert.Contains(t, string(data), "expired")
}

// With DATA_EXPORTS_ENABLED=OFF every export route answers 403 in the error shape, naming it.
func TestLogExportDisabled(t *testing.T) {
	e := newExportAPI(t, nil)
	id := e.create(e.body())
	require.Equal(t, http.StatusOK, e.Admin(http.MethodPost, exportsPath+"/"+id+"/start", nil).Status)
	e.waitStatus(id, domain.ExportSuccess)
	link := e.Admin(http.MethodGet, exportsPath+"/"+id+"/download", nil).Str("signed_url")
	require.NotEmpty(t, link)

	// A second API over the same state, with exports switched off.
	off := &Admin{Log: e.AdminAPI.Log, Read: e.Read, Commands: e.AdminAPI.Commands, Deps: e.Deps, Secret: e.AdminAPI.Secret, Now: e.Now, WriteWait: 5 * time.Second,
		Features: Features{APIAccess: true, Policy: true, UsageLimits: true, AuditLogs: true}, Analytics: e.Logs, ExportDir: e.Dir}
	srv := httptest.NewServer(NewRouter(Deps{Admin: off, Health: &Health{}}))
	defer srv.Close()
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, exportsPath}, {http.MethodGet, exportsPath}, {http.MethodGet, exportsPath + "/" + id},
		{http.MethodPut, exportsPath + "/" + id}, {http.MethodPost, exportsPath + "/" + id + "/start"},
		{http.MethodPost, exportsPath + "/" + id + "/cancel"}, {http.MethodGet, exportsPath + "/" + id + "/download"},
		{http.MethodGet, strings.TrimPrefix(link, e.Server.URL+"/v1")},
	} {
		raw, err := json.Marshal(e.body())
		require.NoError(t, err)
		req, err := http.NewRequest(c.method, srv.URL+"/v1"+c.path, bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("x-gateway-api-key", e.AdminKey)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		r := response{Status: resp.StatusCode, Raw: body}
		require.NoError(t, json.Unmarshal(body, &r.Body), string(body))
		assert.Equal(t, http.StatusForbidden, r.Status, "%s %s", c.method, c.path)
		assert.Equal(t, "disabled", *errorCode(r), "%s %s", c.method, c.path)
		assert.Contains(t, r.ErrorMessage(), "DATA_EXPORTS_ENABLED", "%s %s", c.method, c.path)
	}
}

// A member whose logs are limited to their own keys' (membersViewAllData off) may not export
// the workspace's; with the setting on, they may.
func TestLogExportRefusedWhenViewAllDataIsOff(t *testing.T) {
	e := newExportAPI(t, nil)
	member := e.seedUser("member@example.com", domain.RoleMember)
	e.seedEvents(domain.Stream(domain.WorkspacePrefix, e.WS),
		domain.WorkspaceMemberAdded{WorkspaceID: e.WS, UserID: member, Role: domain.RoleMember, At: e.Now()})
	k := e.Admin(http.MethodPost, "/api-keys/workspace/user", map[string]any{"name": "mem", "workspace_id": e.WS, "user_id": member,
		"scopes": []string{"logs.export"}})
	require.Equal(t, http.StatusOK, k.Status, string(k.Raw))
	key := k.Str("key")
	body := map[string]any{"filters": map[string]any{}, "requested_data": []string{"id"}}

	assert.Equal(t, http.StatusOK, e.Do(http.MethodPost, exportsPath, key, body).Status, "allowed by default")
	s := e.Admin(http.MethodPut, "/workspaces/"+e.WS+"/settings", map[string]any{"security_settings": map[string]bool{"membersViewAllData": false}})
	require.Equal(t, http.StatusOK, s.Status, string(s.Raw))
	r := e.Do(http.MethodPost, exportsPath, key, body)
	assert.Equal(t, http.StatusForbidden, r.Status, string(r.Raw))
	assert.Contains(t, r.ErrorMessage(), "membersViewAllData")
	assert.Equal(t, http.StatusOK, e.Admin(http.MethodPost, exportsPath, e.body()).Status, "admins are never limited")
}
