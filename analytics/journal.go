package analytics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Journal is where a log row goes first. Pipeline.Log appends the row, one JSON line, to the
// journal's current segment before it counts as handed over: one write(2) and no fsync, so a
// process that crashes (kill -9, a panic, the OOM killer) loses nothing, since the kernel
// holds the bytes. The pipeline's Run syncs the segment every FlushInterval, which bounds what
// a machine crash or a power cut can lose to that interval's rows.
//
// Rows are counted per segment as they are appended, and again once stored (inserted, or
// safe in the fsynced spool); a segment that is full and whose rows are all stored is deleted.
// Segments found at start belong to a run that did not stop cleanly: OpenJournal reads them
// back, and the pipeline stores their rows before it deletes them. The stores keep a row sent
// twice once, by its id, so a row both stored and replayed counts once.
//
// One process owns a journal directory; cmd keeps a second process off its data directory.
type Journal struct {
	dir          string
	segmentBytes int64

	mu       sync.Mutex
	out      *os.File // the current segment, open for appending
	current  uint64
	size     int64            // bytes in the current segment
	pending  map[uint64]int64 // rows appended to a segment and not yet stored
	sealed   map[uint64]bool  // segments no longer appended to
	lastErr  error
	closed   bool
	replayed []LogRecord // rows read back at open, for the pipeline to store
}

const (
	journalPrefix = "journal-"
	journalSuffix = ".jsonl"
	// defaultJournalSegment is a segment's size before a new one is started: small enough that
	// stored rows give their disk back soon, large enough to start few files.
	defaultJournalSegment = 8 << 20
)

// OpenJournal opens the journal in dir (creating it), reading back the rows of the segments a
// previous run left: Replay hands them to the pipeline.
func OpenJournal(dir string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("analytics: create journal: %w", err)
	}
	j := &Journal{dir: dir, segmentBytes: defaultJournalSegment, pending: map[uint64]int64{}, sealed: map[uint64]bool{}}
	ids, err := segmentIDs(dir, journalPrefix, journalSuffix)
	if err != nil {
		return nil, fmt.Errorf("analytics: read journal: %w", err)
	}
	for _, id := range ids {
		rows, err := readJournalSegment(j.path(id))
		if err != nil {
			return nil, err
		}
		for i := range rows {
			rows[i].journal = id
		}
		j.replayed = append(j.replayed, rows...)
		j.sealed[id] = true
		j.pending[id] = int64(len(rows))
		j.current = max(j.current, id)
		if len(rows) == 0 {
			_ = os.Remove(j.path(id))
			delete(j.pending, id)
		}
	}
	if err := j.startLocked(j.current + 1); err != nil {
		return nil, err
	}
	return j, nil
}

// Replay returns, once, the rows a previous run journaled: the pipeline stores them first.
func (j *Journal) Replay() []LogRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	rows := j.replayed
	j.replayed = nil
	return rows
}

func (j *Journal) path(id uint64) string {
	return filepath.Join(j.dir, fmt.Sprintf("%s%020d%s", journalPrefix, id, journalSuffix))
}

// readJournalSegment reads a segment's rows; a line cut short by a crash, or one that does
// not decode, is skipped.
func readJournalSegment(path string) ([]LogRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("analytics: read journal segment: %w", err)
	}
	defer f.Close()
	var rows []LogRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var rec LogRecord
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.ID != "" {
			rows = append(rows, rec)
		}
	}
	if err := sc.Err(); err != nil {
		return rows, fmt.Errorf("analytics: read journal segment: %w", err)
	}
	return rows, nil
}

// startLocked opens segment id as the current one.
func (j *Journal) startLocked(id uint64) error {
	f, err := os.OpenFile(j.path(id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("analytics: create journal segment: %w", err)
	}
	if j.out != nil {
		_ = j.out.Close()
		j.sealed[j.current] = true
		j.trimLocked(j.current)
	}
	j.out, j.current, j.size = f, id, 0
	return nil
}

// lineBuffers hold the lines Append encodes, so that logging a row allocates no buffer of its
// own; a buffer grown past maxPooledLine (a row with large bodies) is left to the collector.
var lineBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledLine = 64 << 10

// Append writes rec, marking it with its segment. The line is encoded by the caller's
// goroutine, outside the lock; the write is one call under it.
func (j *Journal) Append(rec *LogRecord) error {
	buf := lineBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledLine {
			buf.Reset()
			lineBuffers.Put(buf)
		}
	}()
	// Encode writes into buf without the copy json.Marshal makes, and ends the line.
	if err := json.NewEncoder(buf).Encode(rec); err != nil {
		return fmt.Errorf("analytics: encode journal row: %w", err)
	}
	line := buf.Bytes()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return errors.New("analytics: journal closed")
	}
	if j.size >= j.segmentBytes {
		if err := j.startLocked(j.current + 1); err != nil {
			j.lastErr = err
			return err
		}
	}
	if _, err := j.out.Write(line); err != nil {
		j.lastErr = err
		return fmt.Errorf("analytics: write journal: %w", err)
	}
	j.size += int64(len(line))
	j.pending[j.current]++
	rec.journal = j.current
	return nil
}

// Stored counts rows as stored, and deletes the full segments whose rows all are.
func (j *Journal) Stored(rows []LogRecord) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range rows {
		id := rows[i].journal
		if id == 0 {
			continue
		}
		rows[i].journal = 0
		if j.pending[id]--; j.pending[id] <= 0 {
			j.trimLocked(id)
		}
	}
}

// trimLocked deletes segment id when it is sealed and holds no row still to store.
func (j *Journal) trimLocked(id uint64) {
	if !j.sealed[id] || j.pending[id] > 0 {
		return
	}
	if err := os.Remove(j.path(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		j.lastErr = err
		return
	}
	delete(j.pending, id)
	delete(j.sealed, id)
}

// Sync writes the current segment to the disk.
func (j *Journal) Sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed || j.out == nil {
		return nil
	}
	return j.out.Sync()
}

// Close closes the journal; when every row is stored (a clean stop), its segments are deleted.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	err := j.out.Close()
	j.sealed[j.current] = true
	for id := range j.sealed {
		j.trimLocked(id)
	}
	return err
}
