package analytics

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func journalFiles(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, journalPrefix+"*"+journalSuffix))
	require.NoError(t, err)
	return matches
}

// A process that dies with rows logged and not yet stored (here: a pipeline that never ran,
// so nothing was inserted or spooled) loses none of them: the next start reads them back from
// the journal and stores each once, then deletes the journal's segments.
func TestJournalKeepsRowsThroughACrash(t *testing.T) {
	dir := t.TempDir()
	j, err := OpenJournal(dir)
	require.NoError(t, err)
	p, err := NewPipeline(newMapWriter(), openSpool(t, filepath.Join(dir, "spool"), 1<<20), Options{Journal: j})
	require.NoError(t, err)
	publish(t, p, 0, 250)
	// kill -9: no Close, no flush; the journal's file is all that is left.

	again, err := OpenJournal(dir)
	require.NoError(t, err)
	w := newMapWriter()
	r := startPipeline(t, w, openSpool(t, filepath.Join(dir, "spool2"), 1<<20), Options{Journal: again, FlushInterval: 10 * time.Millisecond})
	require.Eventually(t, func() bool { d, _ := w.counts(); return d == 250 }, 5*time.Second, 5*time.Millisecond)
	publish(t, r.p, 250, 10)
	require.NoError(t, r.close(t))
	require.NoError(t, again.Close())
	distinct, stored := w.counts()
	require.Equal(t, 260, distinct)
	require.Equal(t, 260, stored, "each row stored once")
	require.Empty(t, journalFiles(t, dir), "a clean stop leaves no journal")
}

// Full segments whose rows are all stored are deleted while the pipeline runs; rows spooled
// (the store down) count as stored, since the spool is on disk.
func TestJournalTrimsStoredSegments(t *testing.T) {
	dir := t.TempDir()
	j, err := OpenJournal(dir)
	require.NoError(t, err)
	j.segmentBytes = 4 << 10 // a few rows a segment
	w := newMapWriter()
	w.setDown(true)
	r := startPipeline(t, w, openSpool(t, filepath.Join(dir, "spool"), 1<<24), Options{Journal: j, FlushInterval: 10 * time.Millisecond, BatchSize: 20})
	publish(t, r.p, 0, 200)
	require.Eventually(t, func() bool { return r.p.Stats().Spooled == 200 }, 5*time.Second, 5*time.Millisecond)
	// The journal is trimmed once the spool has the rows, just after it counts them.
	require.Eventually(t, func() bool { return len(journalFiles(t, dir)) <= 1 }, 5*time.Second, 5*time.Millisecond,
		"only the segment being written is left")

	w.setDown(false)
	require.Eventually(t, func() bool { d, _ := w.counts(); return d == 200 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, r.close(t))
	require.NoError(t, j.Close())
	require.Empty(t, journalFiles(t, dir))
}

// A line cut short by a crash is skipped when the journal is read back.
func TestJournalSkipsAPartialLine(t *testing.T) {
	dir := t.TempDir()
	j, err := OpenJournal(dir)
	require.NoError(t, err)
	for i := range 3 {
		rec := record(i)
		require.NoError(t, j.Append(&rec))
	}
	f, err := os.OpenFile(j.path(j.current), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"req-000099","trace_id":"tr`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	again, err := OpenJournal(dir)
	require.NoError(t, err)
	rows := again.Replay()
	require.Len(t, rows, 3)
	require.Equal(t, "req-000002", rows[2].ID)
	require.Empty(t, again.Replay(), "replayed once")
}

// A hit's savings come back from the journal after a crash as they were logged.
func TestJournalKeepsCacheSavings(t *testing.T) {
	dir := t.TempDir()
	j, err := OpenJournal(dir)
	require.NoError(t, err)
	hit := record(1)
	hit.CacheStatus, hit.CacheSavedCost, hit.CacheSavedMS = CacheHit, 0.0042, 812.5
	for _, r := range []LogRecord{record(0), hit} {
		require.NoError(t, j.Append(&r))
	}
	require.NoError(t, j.Sync())
	// kill -9: the journal's file is all that is left.

	again, err := OpenJournal(dir)
	require.NoError(t, err)
	defer again.Close()
	rows := again.Replay()
	require.Len(t, rows, 2)
	for i, want := range []LogRecord{record(0), hit} {
		require.Equal(t, want.CacheStatus, rows[i].CacheStatus)
		require.Equal(t, want.CacheSavedCost, rows[i].CacheSavedCost)
		require.Equal(t, want.CacheSavedMS, rows[i].CacheSavedMS)
	}
}
