package analytics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrSpoolFull is returned by Append when the rows would take the spool past its bound; the
// rows are counted in Dropped so that health reports the loss.
var ErrSpoolFull = errors.New("analytics: spool full")

const (
	segmentPrefix = "seg-"
	segmentSuffix = ".jsonl"
	cursorFile    = "cursor"
	// Segments are kept small next to the bound so that acknowledged bytes are given back to
	// the disk soon, and large enough that a busy outage does not create thousands of files.
	minSegmentBytes = 4 << 10
	maxSegmentBytes = 16 << 20
)

// SpoolMark is a position in the spool: the line after the last one a Read returned.
type SpoolMark struct {
	Segment uint64 `json:"segment"`
	Offset  int64  `json:"offset"`
}

// Spool is a bounded on-disk queue of log rows: append-only segment files of JSON lines,
// fsynced per batch, and a read cursor persisted on acknowledgement, so that rows spooled
// before a crash are delivered after it. It has one reader (the pipeline's drain loop) and
// any number of writers.
type Spool struct {
	dir          string
	maxBytes     int64
	segmentBytes int64

	mu       sync.Mutex
	segments []uint64         // ids of the live segments, ascending; the last one is written
	sizes    map[uint64]int64 // bytes in each live segment
	cursor   SpoolMark
	out      *os.File // the last segment, open for appending
	closed   bool

	dropped atomic.Int64
	corrupt atomic.Int64
	// appended wakes the reader when rows arrive, so it need not poll an empty spool.
	appended chan struct{}
}

// OpenSpool opens (or creates) the spool in dir, holding at most maxBytes of unacknowledged
// rows. A partial line left at the end by a crash is cut off and counted in Corrupt.
func OpenSpool(dir string, maxBytes int64) (*Spool, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("analytics: spool bound must be positive, got %d", maxBytes)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("analytics: create spool: %w", err)
	}
	s := &Spool{
		dir:          dir,
		maxBytes:     maxBytes,
		segmentBytes: min(max(maxBytes/8, minSegmentBytes), maxSegmentBytes),
		sizes:        map[uint64]int64{},
		appended:     make(chan struct{}, 1),
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Spool) load() error {
	var err error
	if s.segments, err = segmentIDs(s.dir, segmentPrefix, segmentSuffix); err != nil {
		return fmt.Errorf("analytics: read spool: %w", err)
	}

	cur, err := s.readCursor()
	if err != nil {
		return err
	}
	// Segments before the cursor were acknowledged; a crash may have come before their removal.
	live := s.segments[:0]
	for _, id := range s.segments {
		if id < cur.Segment {
			if err := os.Remove(s.segmentPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("analytics: remove acknowledged segment: %w", err)
			}
			continue
		}
		live = append(live, id)
	}
	s.segments = live
	if len(s.segments) == 0 {
		s.segments = []uint64{max(cur.Segment, 1)}
		cur = SpoolMark{Segment: s.segments[0]}
	} else if cur.Segment != s.segments[0] {
		cur = SpoolMark{Segment: s.segments[0]}
	}

	for _, id := range s.segments {
		info, err := os.Stat(s.segmentPath(id))
		switch {
		case errors.Is(err, os.ErrNotExist):
			s.sizes[id] = 0
		case err != nil:
			return fmt.Errorf("analytics: stat segment: %w", err)
		default:
			s.sizes[id] = info.Size()
		}
	}
	if err := s.repairTail(); err != nil {
		return err
	}
	last := s.segments[len(s.segments)-1]
	cur.Offset = min(cur.Offset, s.sizes[cur.Segment])
	s.cursor = cur

	f, err := os.OpenFile(s.segmentPath(last), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("analytics: open segment: %w", err)
	}
	s.out = f
	return s.writeCursor(cur)
}

// repairTail cuts a line the last crash left half written: every complete line ends in '\n'.
func (s *Spool) repairTail() error {
	last := s.segments[len(s.segments)-1]
	size := s.sizes[last]
	if size == 0 {
		return nil
	}
	data, err := os.ReadFile(s.segmentPath(last))
	if err != nil {
		return fmt.Errorf("analytics: read segment: %w", err)
	}
	keep := int64(bytes.LastIndexByte(data, '\n') + 1)
	if keep == int64(len(data)) {
		return nil
	}
	if err := os.Truncate(s.segmentPath(last), keep); err != nil {
		return fmt.Errorf("analytics: cut partial line: %w", err)
	}
	s.corrupt.Add(1)
	s.sizes[last] = keep
	return nil
}

// Append writes rows as one batch and fsyncs it. It never blocks on a full spool: rows that do
// not fit are refused with ErrSpoolFull and counted in Dropped.
func (s *Spool) Append(rows []LogRecord) error {
	if len(rows) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			s.dropped.Add(int64(len(rows)))
			return fmt.Errorf("analytics: encode spooled row: %w", err)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.dropped.Add(int64(len(rows)))
		return errors.New("analytics: spool closed")
	}
	if s.bytesLocked()+int64(buf.Len()) > s.maxBytes {
		s.dropped.Add(int64(len(rows)))
		return ErrSpoolFull
	}
	last := s.segments[len(s.segments)-1]
	if s.sizes[last] >= s.segmentBytes {
		if err := s.rotateLocked(); err != nil {
			s.dropped.Add(int64(len(rows)))
			return err
		}
		last = s.segments[len(s.segments)-1]
	}
	before := s.sizes[last]
	if _, err := s.out.Write(buf.Bytes()); err != nil {
		s.undoLocked(before)
		s.dropped.Add(int64(len(rows)))
		return fmt.Errorf("analytics: write spool: %w", err)
	}
	if err := s.out.Sync(); err != nil {
		s.undoLocked(before)
		s.dropped.Add(int64(len(rows)))
		return fmt.Errorf("analytics: sync spool: %w", err)
	}
	s.sizes[last] = before + int64(buf.Len())
	select {
	case s.appended <- struct{}{}:
	default:
	}
	return nil
}

// undoLocked cuts a batch whose write failed, so no half batch is read back as rows.
func (s *Spool) undoLocked(size int64) {
	_ = s.out.Truncate(size)
}

func (s *Spool) rotateLocked() error {
	next := s.segments[len(s.segments)-1] + 1
	f, err := os.OpenFile(s.segmentPath(next), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("analytics: create segment: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		_ = f.Close()
		return err
	}
	_ = s.out.Close()
	s.out = f
	s.segments = append(s.segments, next)
	s.sizes[next] = 0
	return nil
}

// Read returns up to limit rows from the cursor on, and the mark to acknowledge them with.
// Lines that do not decode are skipped and counted in Corrupt; the mark passes over them.
func (s *Spool) Read(limit int) ([]LogRecord, SpoolMark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mark := s.cursor
	var rows []LogRecord
	for len(rows) < limit {
		size := s.sizes[mark.Segment]
		if mark.Offset >= size {
			i := slices.Index(s.segments, mark.Segment)
			if i < 0 || i == len(s.segments)-1 {
				break
			}
			mark = SpoolMark{Segment: s.segments[i+1]}
			continue
		}
		next, err := s.readSegment(mark, size, limit-len(rows), &rows)
		if err != nil {
			return nil, s.cursor, err
		}
		mark = next
	}
	return rows, mark, nil
}

func (s *Spool) readSegment(from SpoolMark, size int64, limit int, rows *[]LogRecord) (SpoolMark, error) {
	f, err := os.Open(s.segmentPath(from.Segment))
	if err != nil {
		return from, fmt.Errorf("analytics: open segment: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(io.NewSectionReader(f, from.Offset, size-from.Offset))
	mark := from
	for n := 0; n < limit; {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return mark, fmt.Errorf("analytics: read segment: %w", err)
		}
		mark.Offset += int64(len(line))
		var rec LogRecord
		if line[len(line)-1] != '\n' || json.Unmarshal(line, &rec) != nil {
			s.corrupt.Add(1)
			continue
		}
		*rows = append(*rows, rec)
		n++
	}
	return mark, nil
}

// Ack records that every row before mark is stored, persists the cursor and removes the
// segments it has passed. A crash before the cursor is persisted redelivers the rows, which
// the writer's idempotence by id makes harmless.
func (s *Spool) Ack(mark SpoolMark) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("analytics: spool closed")
	}
	if mark == s.cursor {
		return nil
	}
	last := s.segments[len(s.segments)-1]
	if mark.Segment == last && mark.Offset == s.sizes[last] {
		// Everything is acknowledged: start a fresh segment so the old one's bytes go back now.
		if err := s.rotateLocked(); err != nil {
			return err
		}
		mark = SpoolMark{Segment: s.segments[len(s.segments)-1]}
	}
	if err := s.writeCursor(mark); err != nil {
		return err
	}
	s.cursor = mark
	live := s.segments[:0]
	for _, id := range s.segments {
		if id < mark.Segment {
			if err := os.Remove(s.segmentPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("analytics: remove acknowledged segment: %w", err)
			}
			delete(s.sizes, id)
			continue
		}
		live = append(live, id)
	}
	s.segments = live
	return nil
}

// Bytes is the size of the rows not yet acknowledged.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytesLocked()
}

func (s *Spool) bytesLocked() int64 {
	var n int64
	for _, id := range s.segments {
		n += s.sizes[id]
	}
	return n - s.cursor.Offset
}

// Dropped counts the rows the spool refused, full or failing; health reports it.
func (s *Spool) Dropped() int64 { return s.dropped.Load() }

// Corrupt counts the lines skipped because a crash left them unreadable.
func (s *Spool) Corrupt() int64 { return s.corrupt.Load() }

// Close closes the segment being written; spooled rows stay on disk for the next OpenSpool.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.out.Close()
}

// segmentIDs lists the ids of the segment files in dir named prefix<id>suffix, ascending: the
// spool's and the journal's.
func segmentIDs(dir, prefix, suffix string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []uint64
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !strings.HasSuffix(name, suffix) {
			continue
		}
		if id, err := strconv.ParseUint(strings.TrimSuffix(name, suffix), 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (s *Spool) segmentPath(id uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%020d%s", segmentPrefix, id, segmentSuffix))
}

func (s *Spool) readCursor() (SpoolMark, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, cursorFile))
	if errors.Is(err, os.ErrNotExist) {
		return SpoolMark{}, nil
	}
	if err != nil {
		return SpoolMark{}, fmt.Errorf("analytics: read spool cursor: %w", err)
	}
	var m SpoolMark
	if err := json.Unmarshal(data, &m); err != nil {
		// The cursor is written by rename, so this is damage from outside; starting from the
		// first live segment redelivers rows, which the idempotent writer absorbs.
		s.corrupt.Add(1)
		return SpoolMark{}, nil
	}
	return m, nil
}

// writeCursor replaces the cursor file atomically: a temporary file, fsynced, then renamed.
func (s *Spool) writeCursor(m SpoolMark) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("analytics: encode spool cursor: %w", err)
	}
	tmp := filepath.Join(s.dir, cursorFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("analytics: write spool cursor: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("analytics: write spool cursor: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("analytics: sync spool cursor: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("analytics: write spool cursor: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, cursorFile)); err != nil {
		return fmt.Errorf("analytics: write spool cursor: %w", err)
	}
	return syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("analytics: open spool directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("analytics: sync spool directory: %w", err)
	}
	return nil
}
