package analytics

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func records(first, n int) []LogRecord {
	rows := make([]LogRecord, n)
	for i := range rows {
		rows[i] = record(first + i)
	}
	return rows
}

func ids(rows []LogRecord) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, segmentPrefix+"*"+segmentSuffix))
	require.NoError(t, err)
	return files
}

func TestSpoolAppendReadAck(t *testing.T) {
	dir := t.TempDir()
	// A small bound makes small segments, so the rows span several files.
	s := openSpool(t, dir, 64<<10)
	for i := range 10 {
		require.NoError(t, s.Append(records(i*10, 10)))
	}
	require.Greater(t, len(segmentFiles(t, dir)), 1)

	var got []string
	for {
		rows, mark, err := s.Read(7)
		require.NoError(t, err)
		if len(rows) == 0 {
			break
		}
		got = append(got, ids(rows)...)
		require.NoError(t, s.Ack(mark))
	}
	assert.Equal(t, ids(records(0, 100)), got, "every row once, in order")
	assert.Zero(t, s.Bytes())
	assert.Len(t, segmentFiles(t, dir), 1, "acknowledged segments are removed")
}

func TestSpoolSurvivesReopen(t *testing.T) {
	tests := []struct {
		name  string
		acked int // rows acknowledged before the restart
	}{
		{name: "nothing acknowledged", acked: 0},
		{name: "part acknowledged", acked: 30},
		{name: "all acknowledged", acked: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenSpool(dir, 1<<20)
			require.NoError(t, err)
			require.NoError(t, s.Append(records(0, 50)))
			if tt.acked > 0 {
				_, mark, err := s.Read(tt.acked)
				require.NoError(t, err)
				require.NoError(t, s.Ack(mark))
			}
			require.NoError(t, s.Close())

			reopened := openSpool(t, dir, 1<<20)
			rows, _, err := reopened.Read(1000)
			require.NoError(t, err)
			assert.Equal(t, ids(records(tt.acked, 50-tt.acked)), ids(rows))
		})
	}
}

func TestSpoolFullRefusesWithoutBlocking(t *testing.T) {
	s := openSpool(t, t.TempDir(), 4<<10)
	var refused int
	for i := range 50 {
		done := make(chan error, 1)
		go func() { done <- s.Append(records(i*2, 2)) }()
		select {
		case err := <-done:
			if err != nil {
				require.ErrorIs(t, err, ErrSpoolFull)
				refused += 2
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Append blocked on a full spool")
		}
	}
	require.Positive(t, refused)
	assert.EqualValues(t, refused, s.Dropped())
	assert.LessOrEqual(t, s.Bytes(), int64(4<<10))

	// Acknowledging makes room again.
	_, mark, err := s.Read(1000)
	require.NoError(t, err)
	require.NoError(t, s.Ack(mark))
	require.NoError(t, s.Append(records(1000, 2)))
}

// TestSpoolCorruptLines simulates what a crash leaves: a batch cut half written at the end, or
// a damaged line in the middle. Each is skipped and counted; the rows around it are delivered.
func TestSpoolCorruptLines(t *testing.T) {
	tests := []struct {
		name   string
		damage string
		tail   bool // written after the good rows rather than between them
	}{
		{name: "partial trailing line", damage: `{"id":"req-9999","trace_id":"tr`, tail: true},
		{name: "garbled line in the middle", damage: "\x00\x00garbage\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenSpool(dir, 1<<20)
			require.NoError(t, err)
			require.NoError(t, s.Append(records(0, 3)))
			require.NoError(t, s.Close())

			files := segmentFiles(t, dir)
			require.Len(t, files, 1)
			f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.WriteString(tt.damage)
			require.NoError(t, err)
			require.NoError(t, f.Close())

			reopened := openSpool(t, dir, 1<<20)
			if !tt.tail {
				require.NoError(t, reopened.Append(records(3, 2)))
			}
			require.NoError(t, reopened.Append(records(10, 2)))
			rows, mark, err := reopened.Read(1000)
			require.NoError(t, err)
			want := slices.Concat(ids(records(0, 3)), ids(records(10, 2)))
			if !tt.tail {
				want = slices.Concat(ids(records(0, 3)), ids(records(3, 2)), ids(records(10, 2)))
			}
			assert.Equal(t, want, ids(rows))
			assert.EqualValues(t, 1, reopened.Corrupt())
			require.NoError(t, reopened.Ack(mark))
			assert.Zero(t, reopened.Bytes())
		})
	}
}

func TestOpenSpoolRefusesNonPositiveBound(t *testing.T) {
	_, err := OpenSpool(t.TempDir(), 0)
	require.Error(t, err)
}

// BenchmarkSpoolAppend measures the spool's intake while the database is down: batches of the
// pipeline's default size, each fsynced.
func BenchmarkSpoolAppend(b *testing.B) {
	s, err := OpenSpool(b.TempDir(), 1<<40)
	require.NoError(b, err)
	defer s.Close()
	batch := records(0, 2000)
	for b.Loop() {
		require.NoError(b, s.Append(batch))
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "rows/s")
}

// A hit's savings go through the spool as they came (the spool holds rows as JSON lines).
func TestSpoolKeepsCacheSavings(t *testing.T) {
	s := openSpool(t, t.TempDir(), 1<<20)
	hit := record(1)
	hit.CacheStatus, hit.CacheSavedCost, hit.CacheSavedMS = CacheSemanticHit, 0.0042, 812.5
	require.NoError(t, s.Append([]LogRecord{record(0), hit}))
	rows, _, err := s.Read(10)
	require.NoError(t, err)
	assert.Equal(t, []LogRecord{record(0), hit}, rows)
}
