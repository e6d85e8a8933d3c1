package analytics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/internal/syncbuf"
)

// mapWriter is a real in-process Writer: a table keyed by row id, so Insert is idempotent by
// id as the interface requires. Switched down, it refuses inserts the way an unreachable
// database does, storing nothing.
type mapWriter struct {
	mu       sync.Mutex
	down     bool
	rows     map[string]LogRecord
	stored   int   // rows in successful inserts, duplicates included
	batches  []int // size of each successful insert
	attempts int
}

func newMapWriter() *mapWriter { return &mapWriter{rows: map[string]LogRecord{}} }

var _ Writer = (*mapWriter)(nil)

func (w *mapWriter) Insert(ctx context.Context, rows []LogRecord) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts++
	if w.down {
		return errors.New("dial tcp 127.0.0.1:9000: connect: connection refused")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, r := range rows {
		w.rows[r.ID] = r
	}
	w.stored += len(rows)
	w.batches = append(w.batches, len(rows))
	return nil
}

func (w *mapWriter) setDown(down bool) {
	w.mu.Lock()
	w.down = down
	w.mu.Unlock()
}

// counts returns the distinct ids stored and the rows received in successful inserts.
func (w *mapWriter) counts() (distinct, stored int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.rows), w.stored
}

func (w *mapWriter) batchSizes() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.batches...)
}

func record(i int) LogRecord {
	return LogRecord{
		ID:             fmt.Sprintf("req-%06d", i),
		TraceID:        fmt.Sprintf("trace-%06d", i),
		OrganisationID: "org-1",
		WorkspaceID:    "ws-1",
		Provider:       "@openai-prod",
		AIService:      "openai",
		Model:          "gpt-4o-mini",
		Endpoint:       "chatComplete",
		Method:         "POST",
		Path:           "/v1/chat/completions",
		StatusCode:     200,
		PromptTokens:   10,
		TotalTokens:    15,
		LatencyMS:      12.5,
		CacheStatus:    "MISS",
		LogFormat:      "v1",
		StartedAt:      time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC),
		EndedAt:        time.Date(2026, 11, 21, 0, 0, 1, 0, time.UTC),
	}
}

// publish logs n records into p, as the gateway does, starting at id first.
func publish(t *testing.T, p *Pipeline, first, n int) {
	t.Helper()
	before := p.Stats().BufferFull
	for i := first; i < first+n; i++ {
		p.Log(record(i))
	}
	require.Equal(t, before, p.Stats().BufferFull, "no row refused")
}

type running struct {
	p   *Pipeline
	err chan error
}

func startPipeline(t *testing.T, w Writer, spool *Spool, opts Options) running {
	t.Helper()
	p, err := NewPipeline(w, spool, opts)
	require.NoError(t, err)
	r := running{p: p, err: make(chan error, 1)}
	go func() { r.err <- p.Run(context.Background()) }()
	t.Cleanup(func() { _ = p.Close() })
	return r
}

func (r running) close(t *testing.T) error {
	t.Helper()
	err := r.p.Close()
	select {
	case runErr := <-r.err:
		require.NoError(t, runErr)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	return err
}

func openSpool(t *testing.T, dir string, maxBytes int64) *Spool {
	t.Helper()
	s, err := OpenSpool(dir, maxBytes)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestNewPipelineRefusesNil(t *testing.T) {
	spool := openSpool(t, t.TempDir(), 1<<20)
	for name, build := range map[string]func() (*Pipeline, error){
		"writer": func() (*Pipeline, error) { return NewPipeline(nil, spool, Options{}) },
		"spool":  func() (*Pipeline, error) { return NewPipeline(newMapWriter(), nil, Options{}) },
	} {
		t.Run(name, func(t *testing.T) {
			_, err := build()
			require.Error(t, err)
		})
	}
}

func TestPipelineBatches(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		rows int
		// before Close: the inserts the batching alone must have made
		want []int
	}{
		{name: "by size", opts: Options{BatchSize: 10, FlushInterval: time.Hour}, rows: 25, want: []int{10, 10}},
		{name: "by time", opts: Options{BatchSize: 1000, FlushInterval: 100 * time.Millisecond}, rows: 7, want: []int{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newMapWriter()
			r := startPipeline(t, w, openSpool(t, t.TempDir(), 1<<20), tt.opts)
			publish(t, r.p, 0, tt.rows)

			require.Eventually(t, func() bool { return len(w.batchSizes()) == len(tt.want) }, 5*time.Second, 5*time.Millisecond)
			assert.Equal(t, tt.want, w.batchSizes())
			require.NoError(t, r.close(t))
			distinct, stored := w.counts()
			assert.Equal(t, tt.rows, distinct)
			assert.Equal(t, tt.rows, stored)
		})
	}
}

func TestPipelineCloseFlushes(t *testing.T) {
	tests := []struct {
		name       string
		writerDown bool
	}{
		{name: "into the writer"},
		{name: "into the spool when the writer is down", writerDown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 42
			w := newMapWriter()
			w.setDown(tt.writerDown)
			spool := openSpool(t, t.TempDir(), 1<<20)
			r := startPipeline(t, w, spool, Options{BatchSize: 1000, FlushInterval: time.Hour, RetryMin: time.Hour})
			publish(t, r.p, 0, n)
			require.Eventually(t, func() bool { return r.p.Stats().Received == n }, 5*time.Second, time.Millisecond)
			require.Empty(t, w.batchSizes(), "nothing flushes before Close with these options")

			require.NoError(t, r.close(t))
			stats := r.p.Stats()
			distinct, _ := w.counts()
			if tt.writerDown {
				assert.Zero(t, distinct)
				assert.EqualValues(t, n, stats.Spooled)
				rows, _, err := spool.Read(1000)
				require.NoError(t, err)
				assert.Len(t, rows, n)
				assert.NotEmpty(t, stats.LastError)
				return
			}
			assert.Equal(t, n, distinct)
			assert.EqualValues(t, n, stats.Inserted)
			assert.Zero(t, stats.Spooled)
		})
	}
}

// TestPipelineOutage is the outage test on the pipeline: the database is away while
// 5,000 requests pass, comes back, and every request is stored exactly once.
func TestPipelineOutage(t *testing.T) {
	const n = 5000
	w := newMapWriter()
	w.setDown(true)
	spool := openSpool(t, t.TempDir(), 64<<20)
	var logged syncbuf.Buffer
	r := startPipeline(t, w, spool, Options{
		BatchSize: 300, FlushInterval: 10 * time.Millisecond, RetryMin: 5 * time.Millisecond, RetryMax: 40 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&logged, nil)),
	})
	publish(t, r.p, 0, n)
	require.Eventually(t, func() bool { return r.p.Stats().Spooled == n }, 10*time.Second, 5*time.Millisecond)
	distinct, _ := w.counts()
	require.Zero(t, distinct)
	require.Positive(t, r.p.Stats().SpoolBytes)

	w.setDown(false)
	require.Eventually(t, func() bool {
		distinct, _ := w.counts()
		return distinct == n
	}, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return r.p.Stats().SpoolBytes == 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, r.close(t))

	distinct, stored := w.counts()
	assert.Equal(t, n, distinct, "every row stored")
	assert.Equal(t, n, stored, "no row sent twice")
	stats := r.p.Stats()
	assert.EqualValues(t, n, stats.Inserted)
	assert.Zero(t, stats.Dropped)
	// The outage is told once as it starts and once as it ends, and health's last error is
	// cleared.
	assert.Equal(t, 1, strings.Count(logged.String(), "level=WARN msg=\"request log store down"), logged.String())
	assert.Equal(t, 1, strings.Count(logged.String(), "level=INFO msg=\"request log store is back"), logged.String())
	assert.Empty(t, stats.LastError)
}

func TestPipelineRestartDeliversSpool(t *testing.T) {
	const n = 120
	dir := t.TempDir()

	first := newMapWriter()
	first.setDown(true)
	spool, err := OpenSpool(dir, 1<<20)
	require.NoError(t, err)
	r := startPipeline(t, first, spool, Options{BatchSize: 50, FlushInterval: time.Hour, RetryMin: time.Hour})
	publish(t, r.p, 0, n)
	require.Eventually(t, func() bool { return r.p.Stats().Received == n }, 5*time.Second, time.Millisecond)
	require.NoError(t, r.close(t))
	require.EqualValues(t, n, r.p.Stats().Spooled)
	require.NoError(t, spool.Close())

	second := newMapWriter()
	r2 := startPipeline(t, second, openSpool(t, dir, 1<<20), Options{BatchSize: 50, FlushInterval: 10 * time.Millisecond})
	require.Eventually(t, func() bool {
		distinct, _ := second.counts()
		return distinct == n
	}, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, r2.close(t))
	_, stored := second.counts()
	assert.Equal(t, n, stored)
}

func TestPipelineSpoolFullCountsDrops(t *testing.T) {
	const n = 400
	w := newMapWriter()
	w.setDown(true)
	r := startPipeline(t, w, openSpool(t, t.TempDir(), 8<<10), Options{BatchSize: 5, FlushInterval: time.Hour, RetryMin: time.Hour})
	publish(t, r.p, 0, n)
	require.Eventually(t, func() bool { return r.p.Stats().Received == n }, 5*time.Second, time.Millisecond)

	err := r.close(t)
	require.ErrorIs(t, err, ErrSpoolFull)
	stats := r.p.Stats()
	assert.Positive(t, stats.Dropped)
	assert.Positive(t, stats.Spooled)
	assert.EqualValues(t, n, stats.Spooled+stats.Dropped, "every row is either spooled or counted")
	assert.LessOrEqual(t, stats.SpoolBytes, int64(8<<10))
	assert.Contains(t, stats.LastError, "spool full")
}

// A record without an id gets one, so that the writer and the spool can still tell it apart.
func TestPipelineGivesRowsAnID(t *testing.T) {
	w := newMapWriter()
	r := startPipeline(t, w, openSpool(t, t.TempDir(), 1<<20), Options{BatchSize: 10, FlushInterval: 5 * time.Millisecond})
	for i := range 3 {
		rec := record(i)
		rec.ID = ""
		r.p.Log(rec)
	}
	require.NoError(t, r.close(t))
	distinct, stored := w.counts()
	assert.Equal(t, 3, distinct)
	assert.Equal(t, 3, stored)
	for id := range w.rows {
		assert.NotEmpty(t, id)
	}
}

// Log never waits: a record that finds the buffer full, or the pipeline stopped, is refused
// and counted, and Close still stores every record it took.
func TestPipelineBufferFullRefusesWithoutWaiting(t *testing.T) {
	w := newMapWriter()
	p, err := NewPipeline(w, openSpool(t, t.TempDir(), 1<<20), Options{Buffer: 10})
	require.NoError(t, err)
	// Run is not running: nothing takes the rows, so the buffer fills.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 15 {
			p.Log(record(i))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Log waited for a full buffer")
	}
	st := p.Stats()
	assert.EqualValues(t, 10, st.Received)
	assert.EqualValues(t, 5, st.BufferFull)

	require.NoError(t, p.Close())
	distinct, _ := w.counts()
	assert.Equal(t, 10, distinct, "Close flushes what was taken")
	p.Log(record(99))
	assert.EqualValues(t, 6, p.Stats().BufferFull, "a stopped pipeline refuses rows")
	require.NoError(t, p.Run(context.Background()), "Run after Close returns at once")
}

// pacedWriter works through a batch in parts as a database would, calling yield between
// them, and records how long each yield of its first insert held it.
type pacedWriter struct {
	*mapWriter
	part    time.Duration // the work of one part
	parts   int
	mu      sync.Mutex
	pauses  []time.Duration
	started chan struct{} // closed when the first insert starts
	goOn    chan struct{} // the first insert waits for it before its first part
	once    sync.Once
}

func (w *pacedWriter) InsertPaced(ctx context.Context, rows []LogRecord, yield func()) error {
	first := false
	w.once.Do(func() {
		first = true
		close(w.started)
		<-w.goOn
	})
	for range w.parts {
		time.Sleep(w.part)
		at := time.Now()
		yield()
		if first {
			w.mu.Lock()
			w.pauses = append(w.pauses, time.Since(at))
			w.mu.Unlock()
		}
	}
	return w.Insert(ctx, rows)
}

// paused counts the yields that slept for at least d.
func (w *pacedWriter) paused(d time.Duration) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.pauses {
		if p >= d {
			n++
		}
	}
	return n
}

// A long insert gives the processor back after each Slice of its work, so that the gateway
// sharing it waits for a slice at most; when rows pile up behind it, it stops pausing.
func TestPipelinePacesInserts(t *testing.T) {
	const pause = 20 * time.Millisecond
	for _, tt := range []struct {
		name    string
		behind  bool
		paused  func(n int) bool
		explain string
	}{
		{name: "keeping up", paused: func(n int) bool { return n >= 4 }, explain: "every other part is followed by a pause"},
		{name: "behind", behind: true, paused: func(n int) bool { return n == 0 }, explain: "no pause while rows wait"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &pacedWriter{mapWriter: newMapWriter(), part: 600 * time.Microsecond, parts: 10,
				started: make(chan struct{}), goOn: make(chan struct{})}
			r := startPipeline(t, w, openSpool(t, t.TempDir(), 1<<20), Options{BatchSize: 4, Buffer: 16,
				FlushInterval: time.Hour, Slice: time.Millisecond, Pause: pause})
			publish(t, r.p, 0, 4)
			<-w.started
			if tt.behind {
				publish(t, r.p, 4, 8) // a quarter of the buffer, and more: the insert is behind
			}
			close(w.goOn)
			require.Eventually(t, func() bool { d, _ := w.counts(); return d >= 4 }, 5*time.Second, time.Millisecond)
			assert.True(t, tt.paused(w.paused(pause)), "%s: %d pauses of %d yields", tt.explain, w.paused(pause), w.parts)
			require.NoError(t, r.close(t))
		})
	}
}

// TestPipelineRedeliversUnacknowledged covers a crash between a successful insert and the
// spool's acknowledgement: the rows are sent again, and the writer's idempotence by id keeps
// one copy of each.
func TestPipelineRedeliversUnacknowledged(t *testing.T) {
	const n = 60
	dir := t.TempDir()
	spool, err := OpenSpool(dir, 1<<20)
	require.NoError(t, err)
	require.NoError(t, spool.Append(records(0, n)))
	w := newMapWriter()
	rows, _, err := spool.Read(n)
	require.NoError(t, err)
	require.NoError(t, w.Insert(context.Background(), rows))
	require.NoError(t, spool.Close()) // the crash: no Ack

	r := startPipeline(t, w, openSpool(t, dir, 1<<20), Options{BatchSize: 25, FlushInterval: 10 * time.Millisecond})
	require.Eventually(t, func() bool { return r.p.Stats().Inserted == n }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, r.close(t))
	distinct, stored := w.counts()
	assert.Equal(t, n, distinct)
	assert.Equal(t, 2*n, stored, "sent again after the unknown outcome")
	assert.Zero(t, r.p.Stats().SpoolBytes)
}
