package workers

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/sqlite"
	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	eventsqlite "github.com/causeway/causeway/eventstore/sqlite"
	"github.com/causeway/causeway/projections/memory"

	clusterpg "github.com/causeway/causeway/cluster/postgres"
	"github.com/causeway/causeway/migrations/migrationstest"
	"github.com/jackc/pgx/v5/pgxpool"
)

var _ ExportsInProgress = (*memory.Model)(nil)
var _ LogScanner = (*sqlite.Store)(nil)

// exportWorld is an event store, its read model, a real SQLite log store holding rows, and
// an export directory.
type exportWorld struct {
	t    *testing.T
	d    commands.Deps
	read *memory.Model
	logs *sqlite.Store
	dir  string
	rows []analytics.LogRecord
	ctx  context.Context // as the system actor of org-1
}

const (
	exportOrg = "org-1"
	exportWS  = "ws-1"
)

// exportClock is when exports start: rows after it are not exported.
var exportClock = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func newExportWorld(t *testing.T) *exportWorld {
	t.Helper()
	d := testDeps(t)
	d.Now = func() time.Time { return exportClock }
	logs, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "logs.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = logs.Close() })
	w := &exportWorld{t: t, d: d, read: memory.New(d.Registry), logs: logs, dir: filepath.Join(t.TempDir(), "exports"),
		ctx: commands.WithRequest(context.Background(), commands.Request{Actor: domain.System(exportOrg), RequestID: "test"})}
	for _, ws := range []struct{ org, id, slug string }{{exportOrg, exportWS, "team-a"}, {exportOrg, "ws-2", "team-b"}, {"org-2", "ws-3", "team-c"}} {
		appendEvent(t, d, domain.Stream(domain.WorkspacePrefix, ws.id),
			domain.WorkspaceCreated{WorkspaceID: ws.id, OrganisationID: ws.org, Name: ws.slug, Slug: ws.slug, At: exportClock})
	}
	w.rows = exportRows()
	require.NoError(t, logs.Insert(context.Background(), w.rows))
	w.fold()
	return w
}

// exportRows are rows of every kind the filters tell apart: two organisations, three
// workspaces, providers, models, status codes, metadata, bodies, and some after the clock.
func exportRows() []analytics.LogRecord {
	services := []string{"openai", "anthropic", "azure"}
	models := []string{"gpt-4o", "claude-3", "gpt-4o-mini"}
	statuses := []int{200, 200, 429, 500, 201}
	var rows []analytics.LogRecord
	for i := 0; i < 240; i++ {
		ws, org := exportWS, exportOrg
		switch i % 6 {
		case 4:
			ws = "ws-2"
		case 5:
			ws, org = "ws-3", "org-2"
		}
		r := analytics.LogRecord{
			ID: fmt.Sprintf("row-%03d", i), TraceID: fmt.Sprintf("trace-%d", i%10), SpanID: "s", OrganisationID: org,
			WorkspaceID: ws, APIKeyID: "key-" + strconv.Itoa(i%3), Provider: "@prov-" + strconv.Itoa(i%4),
			AIService: services[i%3], Model: models[(i/3)%3], ConfigID: "cfg-" + strconv.Itoa(i%2), PromptID: "prompt-" + strconv.Itoa(i%5),
			Endpoint: "chatComplete", Method: "POST", Path: "/v1/chat/completions", StatusCode: statuses[i%5],
			PromptTokens: i % 50, CompletionTokens: (i * 7) % 40, Cost: float64(i%17) * 0.0125, LatencyMS: float64(100 + i),
			CacheStatus: "MISS", LogFormat: "v1",
			// One row every 5 minutes, from 16 hours before the clock to 4 hours after it.
			StartedAt: exportClock.Add(-16 * time.Hour).Add(time.Duration(i) * 5 * time.Minute),
		}
		r.TotalTokens = r.PromptTokens + r.CompletionTokens
		r.EndedAt = r.StartedAt.Add(time.Duration(r.LatencyMS) * time.Millisecond)
		switch i % 4 {
		case 0:
			r.Metadata = map[string]string{"team": "a", "_user": "u-" + strconv.Itoa(i%3)}
		case 1:
			r.Metadata = map[string]string{"team": "b, \"quoted\"\nline"}
		}
		if i%3 == 0 {
			r.RequestBody = json.RawMessage(`{"model":"` + r.Model + `","messages":[{"role":"user","content":"hi, \"there\""}],"api_key":"[REDACTED]"}`)
			r.ResponseBody = json.RawMessage(`{"choices":[{"message":{"content":"a,b\nc"}}]}`)
		}
		rows = append(rows, r)
	}
	return rows
}

// fold brings the read model up to the store.
func (w *exportWorld) fold() {
	w.t.Helper()
	evs, err := w.d.Store.(eventstore.Store).ReadAll(context.Background(), w.read.Position(), 10_000)
	require.NoError(w.t, err)
	for _, ev := range evs {
		require.NoError(w.t, w.read.Apply(ev))
	}
}

func (w *exportWorld) worker(logs LogScanner) *LogExportWorker {
	w.t.Helper()
	wk, err := NewLogExportWorker(w.d, w.read, logs, w.dir)
	require.NoError(w.t, err)
	return wk
}

// started creates and starts an export of exportWS, and returns it as the worker will see it.
func (w *exportWorld) started(c commands.CreateLogExport) domain.LogExport {
	w.t.Helper()
	if c.WorkspaceID == "" {
		c.WorkspaceID = exportWS
	}
	res, err := must(commands.NewCreateLogExportHandler(w.d)).Handle(w.ctx, c)
	require.NoError(w.t, err)
	_, err = must(commands.NewStartLogExportHandler(w.d)).Handle(w.ctx, commands.StartLogExport{ExportID: res.ID})
	require.NoError(w.t, err)
	w.fold()
	return w.export(res.ID)
}

func (w *exportWorld) export(id string) domain.LogExport {
	w.t.Helper()
	w.fold()
	x, ok, err := w.read.LogExport(context.Background(), exportOrg, id)
	require.NoError(w.t, err)
	require.True(w.t, ok)
	return x
}

// runAll makes passes until nothing is in progress.
func (w *exportWorld) runAll(wk *LogExportWorker) {
	w.t.Helper()
	for i := 0; i < 20; i++ {
		w.fold()
		inProgress, err := w.read.LogExportsInProgress(context.Background())
		require.NoError(w.t, err)
		if len(inProgress) == 0 {
			return
		}
		require.NoError(w.t, wk.Tick(context.Background()))
		wk.Wait()
	}
	w.t.Fatal("exports still in progress after 20 passes")
}

// files lists the export directory.
func (w *exportWorld) files() []string {
	entries, err := os.ReadDir(w.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(w.t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// testDeps is an event store in a temporary SQLite file, a registry and a fixed clock.
func testDeps(t *testing.T) commands.Deps {
	t.Helper()
	s, err := eventsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "events.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	return commands.Deps{Store: s, Registry: domain.NewRegistry(), Now: func() time.Time { return now }}
}

// appendEvent writes ev as the first event of stream, as the system actor of exportOrg.
func appendEvent(t *testing.T, d commands.Deps, stream string, ev domain.Event) {
	t.Helper()
	data, err := json.Marshal(ev)
	require.NoError(t, err)
	actor := domain.System(exportOrg)
	_, err = d.Store.Append(context.Background(), stream, eventstore.NoStream, eventstore.EventData{
		ID: uuid.New(), Type: ev.EventType(), SchemaVersion: 1, Data: data,
		Metadata: eventstore.Metadata{ActorID: actor.ID, ActorKind: eventstore.ActorKind(actor.Kind),
			OrganisationID: actor.OrganisationID, RequestID: "test", CorrelationID: "test"}})
	require.NoError(t, err)
}

// eventTypes counts the events of the store by type.
func eventTypes(t *testing.T, d commands.Deps) map[string]int {
	t.Helper()
	evs, err := d.Store.(eventstore.Store).ReadAll(context.Background(), eventstore.Start, 1000)
	require.NoError(t, err)
	out := map[string]int{}
	for _, ev := range evs {
		out[ev.Type]++
	}
	return out
}

func must[H any](h H, err error) H {
	if err != nil {
		panic(err)
	}
	return h
}

// matching is the plain Go answer: the rows of exportWS that f selects and that started
// before the export did, oldest first, cut to the export's window.
func matching(rows []analytics.LogRecord, x domain.LogExport, keep func(analytics.LogRecord) bool) []analytics.LogRecord {
	var out []analytics.LogRecord
	for _, r := range rows {
		if r.OrganisationID == x.OrganisationID && r.WorkspaceID == x.WorkspaceID && r.StartedAt.Before(*x.StartedAt) && keep(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	skip, limit := x.Filters.Window()
	out = out[min(int(skip), len(out)):]
	return out[:min(int(limit), len(out))]
}

// wantJSON is a field of a row as a decoded JSON line holds it.
func wantJSON(r analytics.LogRecord, field string) any {
	body := func(b json.RawMessage) any {
		if len(b) == 0 {
			return nil
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			panic(err)
		}
		return v
	}
	meta := map[string]any{}
	for k, v := range r.Metadata {
		meta[k] = v
	}
	return map[string]any{
		"id": r.ID, "trace_id": r.TraceID, "created_at": r.StartedAt.UTC().Format(time.RFC3339Nano),
		"request": body(r.RequestBody), "response": body(r.ResponseBody),
		"is_success": r.StatusCode >= 200 && r.StatusCode < 300, "ai_org": r.AIService, "ai_model": r.Model,
		"req_units": float64(r.PromptTokens), "res_units": float64(r.CompletionTokens), "total_units": float64(r.TotalTokens),
		"request_url": r.Path, "cost": domain.RoundMoney(r.Cost), "cost_currency": "USD", "response_time": r.LatencyMS,
		"response_status_code": float64(r.StatusCode), "mode": r.Endpoint, "config": r.ConfigID, "prompt_slug": r.PromptID,
		"metadata": meta,
	}[field]
}

// checkJSONL reads a JSON lines file: one object per wanted row, its keys exactly the fields
// in their order, each value the row's.
func checkJSONL(t *testing.T, data []byte, fields []string, want []analytics.LogRecord) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(want) == 0 {
		require.Empty(t, data)
		return
	}
	require.Len(t, lines, len(want))
	for i, line := range lines {
		dec := json.NewDecoder(strings.NewReader(line))
		var keys []string
		tok, err := dec.Token()
		require.NoError(t, err)
		require.Equal(t, json.Delim('{'), tok)
		for dec.More() {
			k, err := dec.Token()
			require.NoError(t, err)
			keys = append(keys, k.(string))
			var skip json.RawMessage
			require.NoError(t, dec.Decode(&skip))
		}
		require.Equal(t, fields, keys, "line %d", i)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		for _, f := range fields {
			assert.Equal(t, wantJSON(want[i], f), got[f], "line %d field %s", i, f)
		}
	}
}

// checkCSV reads a CSV file: a header of the fields, then one record per wanted row; bodies
// and metadata are JSON text.
func checkCSV(t *testing.T, data []byte, fields []string, want []analytics.LogRecord) {
	t.Helper()
	if len(data) > 0 {
		assert.True(t, bytes.HasSuffix(data, []byte("\r\n")), "RFC 4180 ends records with CRLF")
	}
	records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, len(want)+1)
	require.Equal(t, fields, records[0])
	for i, rec := range records[1:] {
		for j, f := range fields {
			w := wantJSON(want[i], f)
			switch f {
			case "request", "response", "metadata":
				if w == nil {
					assert.Equal(t, "", rec[j], "row %d field %s", i, f)
					continue
				}
				var got any
				require.NoError(t, json.Unmarshal([]byte(rec[j]), &got), "row %d field %s", i, f)
				assert.Equal(t, w, got, "row %d field %s", i, f)
			case "cost", "response_time", "req_units", "res_units", "total_units", "response_status_code":
				got, err := strconv.ParseFloat(rec[j], 64)
				require.NoError(t, err)
				assert.Equal(t, w, got, "row %d field %s", i, f)
			case "is_success":
				assert.Equal(t, strconv.FormatBool(w.(bool)), rec[j], "row %d", i)
			default:
				assert.Equal(t, w, rec[j], "row %d field %s", i, f)
			}
		}
	}
}

// The file of each export holds exactly the rows its filters select, in its workspace only,
// oldest first, with the requested fields, in either format.
func TestLogExportWorkerWritesExactlyTheMatchingRows(t *testing.T) {
	w := newExportWorld(t)
	wk := w.worker(w.logs)
	all := func(analytics.LogRecord) bool { return true }
	cases := []struct {
		name    string
		filters domain.LogExportFilters
		fields  []string
		keep    func(analytics.LogRecord) bool
	}{
		{"every field, no filter", domain.LogExportFilters{}, domain.LogExportFields, all},
		{"a subset in another order", domain.LogExportFilters{}, []string{"metadata", "id", "cost", "request"}, all},
		{"a time range of dates", domain.LogExportFilters{TimeOfGenerationMin: "2026-11-19", TimeOfGenerationMax: "2026-11-19"},
			[]string{"id", "created_at"}, func(r analytics.LogRecord) bool { return r.StartedAt.Day() == 19 }},
		{"a time range of instants, both ends included", domain.LogExportFilters{TimeOfGenerationMin: "2026-11-20T00:00:00Z",
			TimeOfGenerationMax: "2026-11-20T01:00:00Z"}, []string{"id"}, func(r analytics.LogRecord) bool {
			return !r.StartedAt.Before(exportClock.Add(-12*time.Hour)) && !r.StartedAt.After(exportClock.Add(-11*time.Hour))
		}},
		{"status codes and models", domain.LogExportFilters{StatusCode: "429, 500", AIModel: "gpt-4o,claude-3"},
			[]string{"id", "response_status_code", "ai_model", "is_success"}, func(r analytics.LogRecord) bool {
				return (r.StatusCode == 429 || r.StatusCode == 500) && (r.Model == "gpt-4o" || r.Model == "claude-3")
			}},
		{"metadata", domain.LogExportFilters{Metadata: map[string]string{"team": "a"}}, []string{"id", "metadata"},
			func(r analytics.LogRecord) bool { return r.Metadata["team"] == "a" }},
		{"cost and token ranges", domain.LogExportFilters{CostMin: ptrTo(0.05), CostMax: ptrTo(0.15), TotalUnitsMin: ptrTo(10),
			TotalUnitsMax: ptrTo(60), PromptTokenMax: ptrTo(40), CompletionTokenMin: ptrTo(5)}, []string{"id", "cost", "total_units"},
			func(r analytics.LogRecord) bool {
				return r.Cost >= 0.05 && r.Cost <= 0.15 && r.TotalTokens >= 10 && r.TotalTokens <= 60 && r.PromptTokens <= 40 && r.CompletionTokens >= 5
			}},
		{"provider and model pairs", domain.LogExportFilters{AIOrgModel: "openai__gpt-4o,anthropic__claude-3"},
			[]string{"id", "ai_org", "ai_model"}, func(r analytics.LogRecord) bool {
				return (r.AIService == "openai" && r.Model == "gpt-4o") || (r.AIService == "anthropic" && r.Model == "claude-3")
			}},
		{"virtual keys, configs, prompts and a trace", domain.LogExportFilters{VirtualKeys: "prov-0,@prov-2", Configs: "cfg-0",
			PromptSlug: "prompt-0,prompt-2,prompt-4", TraceID: "trace-2"}, []string{"id", "config", "prompt_slug", "trace_id"},
			func(r analytics.LogRecord) bool {
				return (r.Provider == "@prov-0" || r.Provider == "@prov-2") && r.ConfigID == "cfg-0" &&
					slices.Contains([]string{"prompt-0", "prompt-2", "prompt-4"}, r.PromptID) && r.TraceID == "trace-2"
			}},
		{"the third page of seven", domain.LogExportFilters{PageSize: ptrTo(7), CurrentPage: ptrTo(2)}, []string{"id"}, all},
		{"a page past the end", domain.LogExportFilters{PageSize: ptrTo(50), CurrentPage: ptrTo(10)}, []string{"id"}, all},
		{"a range that begins after the export started", domain.LogExportFilters{TimeOfGenerationMin: "2026-11-21"}, []string{"id"},
			func(analytics.LogRecord) bool { return false }},
		{"nothing matches", domain.LogExportFilters{TraceID: "no-such-trace"}, []string{"id"}, func(analytics.LogRecord) bool { return false }},
	}
	for _, tc := range cases {
		for _, format := range []string{domain.ExportJSONL, domain.ExportCSV} {
			t.Run(tc.name+" "+format, func(t *testing.T) {
				x := w.started(commands.CreateLogExport{Filters: tc.filters, RequestedData: tc.fields, Format: format})
				w.runAll(wk)
				done := w.export(x.ID)
				require.Equal(t, domain.ExportSuccess, done.Status, done.FailureReason)
				want := matching(w.rows, x, tc.keep)
				if tc.name == "every field, no filter" {
					require.NotEmpty(t, want)
					assert.Less(t, len(want), len(w.rows), "other workspaces, organisations and later rows are left out")
				}
				require.Equal(t, x.ID+"."+format, done.FileName)
				data, err := os.ReadFile(filepath.Join(w.dir, done.FileName))
				require.NoError(t, err)
				assert.Equal(t, int64(len(data)), done.Bytes)
				assert.Equal(t, int64(len(want)), done.RowCount)
				if format == domain.ExportJSONL {
					checkJSONL(t, data, tc.fields, want)
				} else {
					checkCSV(t, data, tc.fields, want)
				}
				assert.NotContains(t, w.files(), done.FileName+partialSuffix)
			})
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// Rows older than the retention shown are left out of an export.
func TestLogExportWorkerHonoursRetention(t *testing.T) {
	w := newExportWorld(t)
	wk := w.worker(w.logs)
	wk.Retention = 3 * time.Hour
	x := w.started(commands.CreateLogExport{RequestedData: []string{"id"}})
	w.runAll(wk)
	done := w.export(x.ID)
	require.Equal(t, domain.ExportSuccess, done.Status)
	data, err := os.ReadFile(filepath.Join(w.dir, done.FileName))
	require.NoError(t, err)
	checkJSONL(t, data, []string{"id"}, matching(w.rows, x, func(r analytics.LogRecord) bool {
		return !r.StartedAt.Before(exportClock.Add(-3 * time.Hour))
	}))
}

// pausingStore is the real store, paused after a number of rows until released; it counts
// the scans that run at once.
type pausingStore struct {
	LogScanner
	after    int
	reached  chan struct{}
	release  chan struct{}
	mu       sync.Mutex
	active   int
	maxSeen  int
	reachedN int
}

func newPausingStore(s LogScanner, after int) *pausingStore {
	return &pausingStore{LogScanner: s, after: after, reached: make(chan struct{}, 16), release: make(chan struct{})}
}

func (p *pausingStore) ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error {
	p.mu.Lock()
	p.active++
	p.maxSeen = max(p.maxSeen, p.active)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.active--
		p.mu.Unlock()
	}()
	n := 0
	return p.LogScanner.ScanLogs(ctx, f, func(r analytics.LogRecord) error {
		n++
		if n == p.after {
			p.reached <- struct{}{}
			<-p.release
		}
		return fn(r)
	})
}

func waitFor(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the export did not reach the pause")
	}
}

// A cancel stops a running export between rows: no file, not even a partial one, and no
// completion.
func TestLogExportWorkerCancelStopsMidway(t *testing.T) {
	w := newExportWorld(t)
	store := newPausingStore(w.logs, 10)
	wk := w.worker(store)
	x := w.started(commands.CreateLogExport{RequestedData: []string{"id", "request"}, Format: domain.ExportCSV})
	require.NoError(t, wk.Tick(context.Background()))
	waitFor(t, store.reached)
	assert.Equal(t, []string{x.ID + ".csv" + partialSuffix}, w.files(), "the rows so far are in a partial file")

	_, err := must(commands.NewCancelLogExportHandler(w.d)).Handle(w.ctx, commands.CancelLogExport{ExportID: x.ID})
	require.NoError(t, err)
	require.NoError(t, wk.Tick(context.Background()), "the pass that notices the cancel")
	close(store.release)
	wk.Wait()

	assert.Equal(t, domain.ExportStopped, w.export(x.ID).Status)
	assert.Empty(t, w.files())
	types := eventTypes(t, w.d)
	assert.Zero(t, types["LogExportCompleted"])
	assert.Zero(t, types["LogExportFailed"])
}

// failingStore is the real store failing after some rows, or at once.
type failingStore struct {
	LogScanner
	after int
}

var errStoreDown = errors.New("database disk image is malformed")

func (s failingStore) ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error {
	if s.after == 0 {
		return errStoreDown
	}
	n := 0
	err := s.LogScanner.ScanLogs(ctx, f, func(r analytics.LogRecord) error {
		if n++; n > s.after {
			return errStoreDown
		}
		return fn(r)
	})
	return err
}

// A store that fails, at once or midway, fails the export with a reason for its readers;
// the cause goes to OnError, and no file is left.
func TestLogExportWorkerFailsWithTheStore(t *testing.T) {
	for _, after := range []int{0, 5} {
		t.Run(fmt.Sprintf("after %d rows", after), func(t *testing.T) {
			w := newExportWorld(t)
			wk := w.worker(failingStore{LogScanner: w.logs, after: after})
			var heard []error
			var mu sync.Mutex
			wk.OnError = func(err error) { mu.Lock(); heard = append(heard, err); mu.Unlock() }
			x := w.started(commands.CreateLogExport{RequestedData: []string{"id"}})
			w.runAll(wk)
			done := w.export(x.ID)
			assert.Equal(t, domain.ExportFailed, done.Status)
			assert.Equal(t, "reading the request logs failed", done.FailureReason)
			assert.NotContains(t, done.FailureReason, errStoreDown.Error(), "internal details stay in the log")
			assert.Empty(t, w.files())
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, heard, 1)
			assert.ErrorIs(t, heard[0], errStoreDown)
		})
	}
}

// A process that stops mid-export leaves it in_progress; the next process's worker runs it
// again from its first row, over whatever partial file was left, and the file is whole.
func TestLogExportWorkerResumesAfterARestart(t *testing.T) {
	w := newExportWorld(t)
	x := w.started(commands.CreateLogExport{RequestedData: []string{"id", "cost"}})

	t.Run("a clean stop", func(t *testing.T) {
		store := newPausingStore(w.logs, 10)
		wk := w.worker(store)
		ctx, stop := context.WithCancel(context.Background())
		ran := make(chan error)
		go func() { ran <- wk.Run(ctx, time.Hour) }()
		waitFor(t, store.reached)
		stop()
		close(store.release)
		require.NoError(t, <-ran)
		assert.Equal(t, domain.ExportInProgress, w.export(x.ID).Status, "a stop is not a failure")
		assert.Empty(t, w.files(), "nothing half-written is left")
	})

	t.Run("a crash that left a partial file", func(t *testing.T) {
		require.NoError(t, os.MkdirAll(w.dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(w.dir, x.ID+".jsonl"+partialSuffix), []byte(`{"id":"row-000","co`), 0o600))
		wk := w.worker(w.logs)
		w.runAll(wk)
		done := w.export(x.ID)
		require.Equal(t, domain.ExportSuccess, done.Status)
		data, err := os.ReadFile(filepath.Join(w.dir, done.FileName))
		require.NoError(t, err)
		checkJSONL(t, data, []string{"id", "cost"}, matching(w.rows, x, func(analytics.LogRecord) bool { return true }))
		assert.Equal(t, []string{done.FileName}, w.files())
	})
}

// A pass removes the partial files of exports no longer in progress: what a crash left of an
// export cancelled before the next start.
func TestLogExportWorkerSweepsOrphanedPartialFiles(t *testing.T) {
	w := newExportWorld(t)
	x := w.started(commands.CreateLogExport{RequestedData: []string{"id"}})
	_, err := must(commands.NewCancelLogExportHandler(w.d)).Handle(w.ctx, commands.CancelLogExport{ExportID: x.ID})
	require.NoError(t, err)
	w.fold()
	require.NoError(t, os.MkdirAll(w.dir, 0o700))
	orphan := filepath.Join(w.dir, x.ID+".jsonl"+partialSuffix)
	require.NoError(t, os.WriteFile(orphan, []byte("half"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "notes.txt"), []byte("kept"), 0o600))
	wk := w.worker(w.logs)
	require.NoError(t, wk.Tick(context.Background()))
	wk.Wait()
	assert.Equal(t, []string{"notes.txt"}, w.files())
}

// Exports run at most Concurrency at a time, oldest start first; the rest wait their turn.
func TestLogExportWorkerBoundsConcurrency(t *testing.T) {
	for _, limit := range []int{0, 2} {
		t.Run(fmt.Sprintf("concurrency %d", limit), func(t *testing.T) {
			w := newExportWorld(t)
			store := newPausingStore(w.logs, 1)
			wk := w.worker(store)
			wk.Concurrency = limit
			var xs []domain.LogExport
			for i := 0; i < 3; i++ {
				xs = append(xs, w.started(commands.CreateLogExport{RequestedData: []string{"id"}}))
			}
			want := max(limit, 1)
			require.NoError(t, wk.Tick(context.Background()))
			for i := 0; i < want; i++ {
				waitFor(t, store.reached)
			}
			require.NoError(t, wk.Tick(context.Background()), "a pass while the slots are full starts nothing")
			store.mu.Lock()
			assert.Equal(t, want, store.active)
			store.mu.Unlock()
			close(store.release)
			w.runAll(wk)
			store.mu.Lock()
			assert.Equal(t, want, store.maxSeen)
			store.mu.Unlock()
			for _, x := range xs {
				assert.Equal(t, domain.ExportSuccess, w.export(x.ID).Status)
			}
		})
	}
}

func TestLogExportWorkerRefusesMissingDependencies(t *testing.T) {
	w := newExportWorld(t)
	_, err := NewLogExportWorker(w.d, nil, w.logs, w.dir)
	assert.Error(t, err)
	_, err = NewLogExportWorker(w.d, w.read, nil, w.dir)
	assert.Error(t, err)
	_, err = NewLogExportWorker(w.d, w.read, w.logs, "")
	assert.Error(t, err)
	_, err = NewLogExportWorker(commands.Deps{}, w.read, w.logs, w.dir)
	assert.Error(t, err)
}

// With several instances, each export is run by the one that claims it (cluster.Claims on
// PostgreSQL): while A runs an export, B's passes leave it alone; once A is done and has
// released it, nothing is left to run.
func TestLogExportWorkerRunsAnExportOnceAcrossInstances(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), migrationstest.PostgresURL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	claims, err := clusterpg.Open(context.Background(), pool)
	require.NoError(t, err)

	w := newExportWorld(t)
	store := newPausingStore(w.logs, 3)
	a := w.worker(store)
	a.Claims, a.Holder = claims, "instance-a"
	b, err := NewLogExportWorker(w.d, w.read, w.logs, filepath.Join(t.TempDir(), "exports-b"))
	require.NoError(t, err)
	b.Claims, b.Holder = claims, "instance-b"

	x := w.started(commands.CreateLogExport{RequestedData: []string{"id"}, Format: domain.ExportJSONL})
	require.NoError(t, a.Tick(context.Background()))
	waitFor(t, store.reached)
	require.NoError(t, b.Tick(context.Background()))
	b.Wait()
	assert.False(t, b.isRunning(x.ID), "B leaves the export A claimed")

	held, err := claims.Claim(context.Background(), claimItem(x.ID), "instance-b", time.Minute)
	require.NoError(t, err)
	assert.False(t, held, "A holds the claim while it runs")
	close(store.release)
	a.Wait()
	assert.Equal(t, domain.ExportSuccess, w.export(x.ID).Status)
	assert.Equal(t, 1, eventTypes(t, w.d)["LogExportCompleted"])
	held, err = claims.Claim(context.Background(), claimItem(x.ID), "instance-b", time.Minute)
	require.NoError(t, err)
	assert.True(t, held, "A released its claim when the run ended")
}
