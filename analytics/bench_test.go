package analytics_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/analytics/chserver"
	"github.com/causeway/causeway/analytics/clickhouse"
	"github.com/causeway/causeway/analytics/sqlite"
	"github.com/causeway/causeway/migrations/migrationstest"
)

// benchOrg owns every generated row. Its version names the generator: change benchRecord and
// bump it, so that datasets cached by an earlier run are loaded again.
const benchOrg = "org-bench-v1"

// benchModels are the traffic's models, most common first, with their prices in dollars per
// million tokens and a typical latency.
var benchModels = []struct {
	service, provider, model string
	in, out                  float64
	latencyMS                float64
}{
	{"openai", "@openai-prod", "gpt-4o-mini", 0.15, 0.6, 450},
	{"openai", "@openai-prod", "gpt-4o", 2.5, 10, 900},
	{"anthropic", "@anthropic", "claude-3-5-sonnet-20241022", 3, 15, 1400},
	{"google", "@vertex", "gemini-1.5-flash", 0.075, 0.3, 400},
	{"anthropic", "@anthropic", "claude-3-5-haiku-20241022", 0.8, 4, 600},
	{"openai", "@openai-prod", "text-embedding-3-small", 0.02, 0, 80},
	{"openai", "@openai-prod", "gpt-4.1", 2, 8, 1100},
	{"google", "@vertex", "gemini-1.5-pro", 1.25, 5, 1200},
	{"groq", "@groq", "llama-3.1-70b-versatile", 0.59, 0.79, 300},
	{"mistral-ai", "@mistral", "mistral-large-latest", 2, 6, 1000},
	{"openai", "@openai-prod", "o3-mini", 1.1, 4.4, 2500},
	{"cohere", "@cohere", "command-r-plus", 2.5, 10, 1300},
}

// Bodies are shared between rows: the generator then costs little memory, while each row
// still carries bodies of a realistic size (they are most of a row's bytes).
var benchRequestBodies, benchResponseBodies = func() ([]json.RawMessage, []json.RawMessage) {
	var req, resp []json.RawMessage
	for i := range 8 {
		content := strings.Repeat(fmt.Sprintf("Summarise ticket %d for the on-call engineer. ", i), 2+i%3)
		r, _ := json.Marshal(map[string]any{"model": benchModels[i].model, "max_tokens": 512,
			"messages": []map[string]string{{"role": "system", "content": "You are a helpful assistant."},
				{"role": "user", "content": content}}})
		req = append(req, r)
		answer := strings.Repeat(fmt.Sprintf("The ticket %d concerns a failed deploy; roll back and page the owner. ", i), 2+i%4)
		s, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", i), "object": "chat.completion",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]string{"role": "assistant", "content": answer}}}})
		resp = append(resp, s)
	}
	return req, resp
}()

// benchStart is the first generated row's start; row i starts i half-seconds later, so ten
// million rows span two months (three partitions of request_logs).
var benchStart = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)

// mix is splitmix64: one well-spread pseudo-random word per (row, purpose).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// benchRecord is row i of generated traffic for org: deterministic, so every engine and every
// run loads the same rows, with real traffic's skew: a few models take most requests, 50 API
// keys, mostly 200s, a latency tail, some cache hits, and bodies of a few hundred bytes.
func benchRecord(org string, i int) analytics.LogRecord {
	h := func(k uint64) uint64 { return mix(uint64(i)*32 + k) }
	unit := func(k uint64) float64 { return float64(h(k)>>11) / (1 << 53) }

	// Model k has weight 12-k: the first is twelve times as common as the last.
	pick := int(h(0) % 78)
	m := 0
	for w := len(benchModels); pick >= w; w-- {
		pick -= w
		m++
	}
	model := benchModels[m]

	status := 200
	switch r := h(1) % 100; {
	case r < 3:
		status = 429
	case r < 5:
		status = 500
	case r < 6:
		status = 400
	case r < 7:
		status = 502
	}
	cache := "MISS"
	switch r := h(2) % 100; {
	case r < 15:
		cache = "HIT"
	case r < 30:
		cache = "DISABLED"
	}
	prompt := 20 + int(h(3)%2000)
	completion := 5 + int(h(4)%800)
	if model.out == 0 || status != 200 {
		completion = 0
	}
	latency := model.latencyMS * (0.6 + 0.8*unit(5))
	if h(6)%100 < 2 {
		latency *= 3 + 7*unit(7)
	}
	if cache == "HIT" {
		latency = 3 + 27*unit(8)
	}
	cost := (float64(prompt)*model.in + float64(completion)*model.out) / 1e6
	if cache == "HIT" || status != 200 {
		cost = 0
	}
	var ttft float64
	stream := h(9)%3 == 0
	if stream {
		ttft = latency * (0.1 + 0.2*unit(10))
	}
	prompts := ""
	if p := h(11) % 10; p < 3 {
		prompts = fmt.Sprintf("prompt-%d", p)
	}
	config := ""
	if c := h(12) % 10; c < 8 {
		config = fmt.Sprintf("cfg-%d", c)
	}
	started := benchStart.Add(time.Duration(i) * 500 * time.Millisecond)
	return analytics.LogRecord{
		ID:               fmt.Sprintf("%016x%08x", h(13), i),
		TraceID:          fmt.Sprintf("%016x", h(14)),
		SpanID:           fmt.Sprintf("%08x", h(15)),
		SpanName:         "llm",
		OrganisationID:   org,
		WorkspaceID:      fmt.Sprintf("ws-%d", h(16)%5),
		APIKeyID:         fmt.Sprintf("key-%02d", h(17)%50),
		Provider:         model.provider,
		AIService:        model.service,
		Model:            model.model,
		ConfigID:         config,
		PromptID:         prompts,
		Endpoint:         "chatComplete",
		Method:           "POST",
		Path:             "/v1/chat/completions",
		StatusCode:       status,
		PromptTokens:     prompt,
		CompletionTokens: completion,
		TotalTokens:      prompt + completion,
		CachedTokens:     int(h(18) % 64),
		Cost:             cost,
		LatencyMS:        math.Round(latency*100) / 100,
		TTFTMS:           math.Round(ttft*100) / 100,
		Stream:           stream,
		CacheStatus:      cache,
		RetryCount:       int(h(19) % 2),
		Target:           model.provider,
		Metadata:         map[string]string{analytics.UserMetadataKey: fmt.Sprintf("user-%03d", h(20)%500), "env": []string{"prod", "staging"}[h(21)%2]},
		RequestBody:      benchRequestBodies[i%len(benchRequestBodies)],
		ResponseBody:     benchResponseBodies[i%len(benchResponseBodies)],
		LogFormat:        "v1",
		StartedAt:        started,
		EndedAt:          started.Add(time.Duration(latency * float64(time.Millisecond))),
	}
}

func benchRecords(org string, first, n int) []analytics.LogRecord {
	rows := make([]analytics.LogRecord, n)
	for i := range rows {
		rows[i] = benchRecord(org, first+i)
	}
	return rows
}

// benchPipeline is a pipeline running as cmd/causeway runs it.
type benchPipeline struct {
	p   *analytics.Pipeline
	err chan error
}

func startBenchPipeline(tb testing.TB, w analytics.Writer, spool *analytics.Spool, opts analytics.Options) *benchPipeline {
	tb.Helper()
	p, err := analytics.NewPipeline(w, spool, opts)
	if err != nil {
		tb.Fatal(err)
	}
	bp := &benchPipeline{p: p, err: make(chan error, 1)}
	go func() { bp.err <- p.Run(context.Background()) }()
	tb.Cleanup(func() { _ = p.Close() })
	return bp
}

// close stops the pipeline and checks that Run ended cleanly.
func (bp *benchPipeline) close(tb testing.TB) {
	tb.Helper()
	if err := bp.p.Close(); err != nil {
		tb.Fatalf("close pipeline: %v", err)
	}
	select {
	case err := <-bp.err:
		if err != nil {
			tb.Fatalf("pipeline Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		tb.Fatal("pipeline Run did not return after Close")
	}
}

// awaitStats polls the pipeline's stats until done holds, failing after timeout.
func awaitStats(tb testing.TB, p *analytics.Pipeline, timeout time.Duration, done func(analytics.Stats) bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := p.Stats()
		if done(st) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("pipeline did not get there within %s: %+v", timeout, st)
		}
		time.Sleep(time.Millisecond)
	}
}

// startBenchFeed starts a pipeline into w, with a spool of spoolBytes, holding up to buffer
// records logged into it.
func startBenchFeed(b *testing.B, w analytics.Writer, spoolBytes int64, buffer int) *benchPipeline {
	b.Helper()
	spool, err := analytics.OpenSpool(b.TempDir(), spoolBytes)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = spool.Close() })
	return startBenchPipeline(b, w, spool, analytics.Options{FlushInterval: 100 * time.Millisecond, Buffer: buffer})
}

// feedPipeline logs rowsPerOp records per op into the pipeline, waits each time until taken
// (the rows the pipeline has dealt with) reaches them, and reports rows/s; the timer is
// stopped when it returns.
func feedPipeline(b *testing.B, bp *benchPipeline, rowsPerOp int, taken func(analytics.Stats) int64) {
	b.Helper()
	b.ResetTimer()
	for op := range b.N {
		b.StopTimer()
		rows := benchRecords(benchOrg, op*rowsPerOp, rowsPerOp)
		b.StartTimer()
		for _, r := range rows {
			bp.p.Log(r)
		}
		want := int64((op + 1) * rowsPerOp)
		awaitStats(b, bp.p, 10*time.Minute, func(st analytics.Stats) bool { return taken(st) >= want })
	}
	b.StopTimer()
	reportRowsPerSecond(b, b.N*rowsPerOp)
}

func reportRowsPerSecond(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

func openPrivateClickHouse(b *testing.B) (*chserver.Server, *clickhouse.Store) {
	b.Helper()
	srv := chserver.New(b)
	store, err := clickhouse.Open(context.Background(), srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return srv, store
}

// BenchmarkClickHouseIngest is the ingest rate into ClickHouse: Insert in the pipeline's
// batch size (the baseline) and a larger one, then the whole path a gateway's records take,
// logged into the pipeline → ClickHouse, measured until the last row is stored.
func BenchmarkClickHouseIngest(b *testing.B) {
	const rowsPerOp = 200_000
	for _, batch := range []int{2_000, 10_000} {
		name := fmt.Sprintf("insert-batch%d", batch)
		if batch == 2_000 {
			name = "baseline-" + name
		}
		b.Run(name, func(b *testing.B) {
			_, store := openPrivateClickHouse(b)
			ctx := context.Background()
			b.ResetTimer()
			for op := range b.N {
				for first := op * rowsPerOp; first < (op+1)*rowsPerOp; first += batch {
					b.StopTimer()
					rows := benchRecords(benchOrg, first, batch)
					b.StartTimer()
					if err := store.Insert(ctx, rows); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportRowsPerSecond(b, b.N*rowsPerOp)
		})
	}
	b.Run("pipeline", func(b *testing.B) {
		_, store := openPrivateClickHouse(b)
		bp := startBenchFeed(b, store, 1<<30, rowsPerOp)
		feedPipeline(b, bp, rowsPerOp, func(st analytics.Stats) int64 { return st.Inserted + st.Spooled })
		bp.close(b)
		if st := bp.p.Stats(); st.BufferFull != 0 || st.Spooled != 0 || st.Dropped != 0 {
			b.Fatalf("the pipeline must store every row directly: stats %+v", st)
		}
	})
}

// BenchmarkSpoolWhileDown is how fast the pipeline takes records while ClickHouse is down,
// every batch going to the disk spool, against the spool's own Append in the same batches.
func BenchmarkSpoolWhileDown(b *testing.B) {
	const rowsPerOp = 200_000
	const batch = 5_000 // the pipeline's default batch size
	b.Run("baseline-spool-append", func(b *testing.B) {
		spool, err := analytics.OpenSpool(b.TempDir(), 8<<30)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = spool.Close() })
		b.ResetTimer()
		for op := range b.N {
			for first := op * rowsPerOp; first < (op+1)*rowsPerOp; first += batch {
				b.StopTimer()
				rows := benchRecords(benchOrg, first, batch)
				b.StartTimer()
				if err := spool.Append(rows); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportRowsPerSecond(b, b.N*rowsPerOp)
	})
	b.Run("pipeline-clickhouse-down", func(b *testing.B) {
		srv, store := openPrivateClickHouse(b)
		srv.Stop()
		bp := startBenchFeed(b, store, 8<<30, rowsPerOp)
		feedPipeline(b, bp, rowsPerOp, func(st analytics.Stats) int64 { return st.Spooled + st.Dropped })
		st := bp.p.Stats()
		if st.BufferFull != 0 || st.Dropped != 0 || st.Inserted != 0 {
			b.Fatalf("with ClickHouse down every row must be spooled: stats %+v", st)
		}
		b.ReportMetric(float64(st.SpoolBytes)/float64(st.Spooled), "spool-B/row")
		bp.close(b)
	})
}

// groupsQuerier is what the latency benchmark asks of a store.
type groupsQuerier interface {
	Groups(ctx context.Context, q analytics.GroupsQuery) (analytics.GroupsResult, error)
}

// BenchmarkGroupsLatency is a groups query with percentile columns at 1 and 10 million rows
// on ClickHouse and 1 million on SQLite, each run many times: p50/p95/p99 of the query's
// latency, with ClickHouse at 1 million rows as the baseline.
//
// The datasets are kept between runs: in the databases causeway_bench_1m and
// causeway_bench_10m of the TEST_CLICKHOUSE_URL server, and under .benchdata/ at the
// repository's root for SQLite. A dataset whose row count is off is loaded again.
func BenchmarkGroupsLatency(b *testing.B) {
	type dataset struct {
		name  string
		store groupsQuerier
		runs  int
	}
	datasets := []dataset{
		{"baseline-clickhouse-1M", clickHouseDataset(b, "1m", 1_000_000), 30},
		{"clickhouse-10M", clickHouseDataset(b, "10m", 10_000_000), 15},
		{"sqlite-1M", sqliteDataset(b, "1m", 1_000_000), 10},
	}
	for _, groupBy := range []string{analytics.GroupModel, analytics.GroupAPIKey} {
		b.Run(groupBy, func(b *testing.B) {
			for _, ds := range datasets {
				b.Run(ds.name, func(b *testing.B) {
					q := analytics.GroupsQuery{GroupBy: groupBy, Columns: []string{analytics.ColCost,
						analytics.ColAvgLatency, analytics.ColP95Latency, analytics.ColP99Latency}}
					q.OrganisationID = benchOrg
					measureGroups(b, ds.store, q, ds.runs)
				})
			}
		})
	}
}

func measureGroups(b *testing.B, s groupsQuerier, q analytics.GroupsQuery, runs int) {
	ctx := context.Background()
	// One query first, untimed: it warms the engine's caches as a dashboard's first load would.
	res, err := s.Groups(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Groups) == 0 || res.Groups[0].Values[analytics.ColP99Latency] <= 0 {
		b.Fatalf("the query found nothing: %+v", res)
	}
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		for range runs {
			start := time.Now()
			if _, err := s.Groups(ctx, q); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
	}
	b.StopTimer()
	slices.Sort(took)
	// Nearest rank: the smallest latency that p of the runs do not exceed.
	at := func(p float64) float64 {
		i := max(int(math.Ceil(p*float64(len(took))))-1, 0)
		return float64(took[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(len(took)), "queries")
}

// clickHouseDataset returns the store of database causeway_bench_<label> on the
// TEST_CLICKHOUSE_URL server holding the first rows generated rows, loading them when it does
// not hold exactly those.
func clickHouseDataset(b *testing.B, label string, rows int) *clickhouse.Store {
	b.Helper()
	base := os.Getenv("TEST_CLICKHOUSE_URL")
	if base == "" {
		migrationstest.Unavailable(b, "TEST_CLICKHOUSE_URL is unset")
	}
	ctx := context.Background()
	opts, err := ch.ParseDSN(base)
	if err != nil {
		b.Fatalf("TEST_CLICKHOUSE_URL: %v", err)
	}
	opts.Protocol = ch.Native
	opts.ReadTimeout = 30 * time.Minute // OPTIMIZE of ten million rows
	admin, err := ch.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	if err := admin.Ping(ctx); err != nil {
		migrationstest.Unavailable(b, "ClickHouse at TEST_CLICKHOUSE_URL is not reachable: %v", err)
	}

	db := "causeway_bench_" + label
	u, err := url.Parse(base)
	if err != nil {
		b.Fatalf("TEST_CLICKHOUSE_URL: %v", err)
	}
	u.Path = "/" + db
	if held, err := clickHouseRows(ctx, admin, db); err == nil && held == uint64(rows) {
		// A run stopped while merging leaves the rows unmerged: finish the merge.
		if err := mergePartitions(ctx, admin, db, 30*time.Minute); err != nil {
			b.Fatal(err)
		}
		return openBenchClickHouse(b, u.String())
	}

	b.Logf("loading %d rows into ClickHouse database %s", rows, db)
	start := time.Now()
	if err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
		b.Fatal(err)
	}
	if err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		b.Fatal(err)
	}
	store := openBenchClickHouse(b, u.String())
	loadBatches(b, rows, 100_000, func(rows []analytics.LogRecord) error { return store.Insert(ctx, rows) })
	loaded := time.Since(start)
	if err := mergePartitions(ctx, admin, db, 30*time.Minute); err != nil {
		b.Fatal(err)
	}
	if held, err := clickHouseRows(ctx, admin, db); err != nil || held != uint64(rows) {
		b.Fatalf("after loading, %s holds %d of %d rows (%v)", db, held, rows, err)
	}
	b.Logf("loaded %d rows into %s in %s (%.0f rows/s), merged in %s", rows, db,
		loaded.Round(time.Second), float64(rows)/loaded.Seconds(), (time.Since(start) - loaded).Round(time.Second))
	return store
}

// mergePartitions merges each partition of db.request_logs into one part, as background
// merges leave a table that has stopped growing, and which collapses the copies of a row.
// OPTIMIZE FINAL names each partition, since release 18.16 merges none of a table of several
// without one; and it is repeated, since OPTIMIZE does nothing, silently, for a partition a
// background merge is working on.
func mergePartitions(ctx context.Context, conn driver.Conn, db string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		rows, err := conn.Query(ctx, `SELECT partition FROM system.parts WHERE active AND database = ?
			AND table = 'request_logs' GROUP BY partition HAVING count() > 1`, db)
		if err != nil {
			return fmt.Errorf("list %s's partitions: %w", db, err)
		}
		var partitions []string
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return err
			}
			partitions = append(partitions, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(partitions) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("partitions %v of %s.request_logs still hold several parts after %s", partitions, db, timeout)
		}
		for _, p := range partitions {
			if err := conn.Exec(ctx, "OPTIMIZE TABLE "+db+".request_logs PARTITION "+p+" FINAL"); err != nil {
				return fmt.Errorf("merge %s.request_logs partition %s: %w", db, p, err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clickHouseRows counts db's rows, or fails when any row is not a generated one.
func clickHouseRows(ctx context.Context, conn driver.Conn, db string) (uint64, error) {
	var all, ours uint64
	if err := conn.QueryRow(ctx, "SELECT count(), countIf(organisation_id = ?) FROM "+db+".request_logs", benchOrg).
		Scan(&all, &ours); err != nil {
		return 0, err
	}
	if all != ours {
		return 0, fmt.Errorf("%s holds %d rows of another generator", db, all-ours)
	}
	return all, nil
}

func openBenchClickHouse(b *testing.B, rawURL string) *clickhouse.Store {
	b.Helper()
	store, err := clickhouse.Open(context.Background(), rawURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return store
}

// sqliteDataset returns the SQLite store under .benchdata/ holding the first rows generated
// rows, loading them when it does not hold exactly those.
func sqliteDataset(b *testing.B, label string, rows int) *sqlite.Store {
	b.Helper()
	dir := filepath.Join(repoRoot(b), ".benchdata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("analytics-sqlite-%s-%s.db", label, benchOrg))
	held, err := sqliteRows(path)
	if err == nil && held == int64(rows) {
		return openBenchSQLite(b, path)
	}
	b.Logf("loading %d rows into %s", rows, path)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.Fatal(err)
		}
	}
	start := time.Now()
	store := openBenchSQLite(b, path)
	loadBatches(b, rows, 10_000, func(rows []analytics.LogRecord) error { return store.Insert(context.Background(), rows) })
	if held, err := sqliteRows(path); err != nil || held != int64(rows) {
		b.Fatalf("after loading, %s holds %d of %d rows (%v)", path, held, rows, err)
	}
	b.Logf("loaded %d rows into %s in %s", rows, path, time.Since(start).Round(time.Second))
	return store
}

// sqliteRows counts the generated rows at path; an interrupted load leaves fewer, since each
// batch is one transaction.
func sqliteRows(path string) (int64, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var all, ours int64
	if err := db.QueryRow("SELECT COUNT(*), COALESCE(SUM(organisation_id = ?), 0) FROM request_logs", benchOrg).
		Scan(&all, &ours); err != nil {
		return 0, err
	}
	if all != ours {
		return 0, fmt.Errorf("%s holds %d rows of another generator", path, all-ours)
	}
	return all, nil
}

func openBenchSQLite(b *testing.B, path string) *sqlite.Store {
	b.Helper()
	store, err := sqlite.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return store
}

// loadBatches generates rows rows in batches and hands each to insert, generating the next
// batch while the last is inserted.
func loadBatches(b *testing.B, rows, batch int, insert func([]analytics.LogRecord) error) {
	b.Helper()
	batches := make(chan []analytics.LogRecord, 1)
	go func() {
		defer close(batches)
		for first := 0; first < rows; first += batch {
			batches <- benchRecords(benchOrg, first, min(batch, rows-first))
		}
	}()
	for rows := range batches {
		if err := insert(rows); err != nil {
			for range batches {
			}
			b.Fatal(err)
		}
	}
}

// repoRoot is the directory of go.mod, above the package's own.
func repoRoot(b *testing.B) string {
	b.Helper()
	dir, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			b.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// BenchmarkLogPath is what the request log path costs a gateway that shares one core with it
// (as `make bench` pins it): records are logged into the pipeline at a gateway's rate, with
// GOMAXPROCS 1, and stored in SQLite or ClickHouse. Each op is one second of traffic at
// logPathRate rows/s. It reports the process's CPU per row (getrusage, the pipeline's and the
// store's work included, until the last row is stored) and how late a probe goroutine, which
// stands for a request waiting for the core, wakes from 500 µs sleeps: p99 and max lateness.
// The baseline logs nowhere, so its figures are the probe's and the feeder's own.
func BenchmarkLogPath(b *testing.B) {
	const logPathRate = 5000
	rows := benchRecords(benchOrg, 0, logPathRate*10)
	run := func(b *testing.B, sink analytics.LogSink, stored func() int64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		probe := startProbe(500 * time.Microsecond)
		cpu0 := processCPU()
		b.ResetTimer()
		next, sent := time.Now(), 0
		for range b.N {
			// One second of traffic, a millisecond's rows at a time.
			for range 1000 {
				for range logPathRate / 1000 {
					// As the gateway logs them: a time-ordered id (a UUIDv7), started now.
					r := rows[sent%len(rows)]
					r.ID = uuid.Must(uuid.NewV7()).String()
					r.StartedAt = time.Now()
					r.EndedAt = r.StartedAt.Add(time.Duration(r.LatencyMS * float64(time.Millisecond)))
					sink.Log(r)
					sent++
				}
				next = next.Add(time.Millisecond)
				time.Sleep(time.Until(next))
			}
		}
		for stored() < int64(sent) {
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		cpu := processCPU() - cpu0
		late := probe.stop()
		b.ReportMetric(float64(cpu.Microseconds())/float64(sent), "cpu-µs/row")
		b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "probe-p99-µs")
		b.ReportMetric(float64(late[len(late)-1].Microseconds()), "probe-max-µs")
	}
	b.Run("baseline-nowhere", func(b *testing.B) {
		var n atomic.Int64
		run(b, countingSink{&n}, n.Load)
	})
	pipeline := func(b *testing.B, w analytics.Writer) {
		spool, err := analytics.OpenSpool(b.TempDir(), 1<<30)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = spool.Close() })
		bp := startBenchPipeline(b, w, spool, analytics.Options{}) // as cmd/causeway runs it
		run(b, bp.p, func() int64 { st := bp.p.Stats(); return st.Inserted + st.Spooled + st.BufferFull })
		bp.close(b)
		if st := bp.p.Stats(); st.BufferFull != 0 || st.Spooled != 0 {
			b.Fatalf("every row must be stored directly: %+v", st)
		}
	}
	b.Run("sqlite", func(b *testing.B) {
		store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "analytics.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = store.Close() })
		pipeline(b, store)
	})
	b.Run("clickhouse", func(b *testing.B) {
		pipeline(b, openBenchClickHouse(b, migrationstest.ClickHouseURL(b)))
	})
}

// countingSink counts the records logged into it and keeps none.
type countingSink struct{ n *atomic.Int64 }

func (s countingSink) Log(analytics.LogRecord) { s.n.Add(1) }

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// probe sleeps for a period again and again, recording how late it wakes each time.
type probe struct {
	done chan struct{}
	late chan []time.Duration
}

func startProbe(period time.Duration) probe {
	p := probe{done: make(chan struct{}), late: make(chan []time.Duration, 1)}
	go func() {
		var late []time.Duration
		for {
			select {
			case <-p.done:
				p.late <- late
				return
			default:
			}
			at := time.Now()
			time.Sleep(period)
			late = append(late, time.Since(at)-period)
		}
	}()
	return p
}

// stop ends the probe and returns its lateness, sorted.
func (p probe) stop() []time.Duration {
	close(p.done)
	late := <-p.late
	slices.Sort(late)
	if len(late) == 0 {
		late = []time.Duration{0}
	}
	return late
}
