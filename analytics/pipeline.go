package analytics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Options tunes the pipeline; the zero value takes the defaults.
type Options struct {
	// BatchSize is the most rows the pipeline holds before it hands them to the writer, which
	// it does at least every FlushInterval. The rows waiting are most of the pipeline's memory
	// (a record and its bodies, about 2.5 kB), so the defaults are as small as each store
	// takes well: 2000 rows, one INSERT, for ClickHouse (a few inserts a second at most); a
	// writer that is a BatchSizer names its own (SQLite: 1000, as it commits every 256 rows
	// within a batch).
	BatchSize     int
	FlushInterval time.Duration // longest a row waits in a batch; default 1 s
	// Buffer is how many rows Log holds for Run; a row logged when it is full is refused and
	// counted (Stats.BufferFull), never waited for. Default 10,000.
	Buffer        int
	InsertTimeout time.Duration // bound on one Insert, so a hung database cannot stall the pipeline; default 10 s
	RetryMin      time.Duration // first back-off after the writer fails; default 100 ms
	RetryMax      time.Duration // back-off ceiling; default 30 s
	// A PacedWriter's insert gives the processor back for Pause after each Slice of work, unless
	// it falls behind (a batch, or a quarter of the buffer, waits): a gateway that shares its
	// core with the pipeline then waits for it about a Slice at most, never for a whole batch.
	// Defaults 500 µs and 1 ms; a negative Pause never pauses.
	Slice time.Duration
	Pause time.Duration
	// Log hears the store going down (WARN) and coming back (INFO), once each time; default
	// slog.Default().
	Log *slog.Logger
	// Journal, when set, takes every row before Log returns (see Journal), and the rows a
	// previous run left in it are stored first by Run.
	Journal *Journal
}

func (o Options) withDefaults(w Writer) Options {
	if o.BatchSize <= 0 {
		o.BatchSize = 2000
		if b, ok := w.(BatchSizer); ok {
			o.BatchSize = b.DefaultBatchSize()
		}
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Second
	}
	if o.Buffer <= 0 {
		o.Buffer = 10_000
	}
	if o.InsertTimeout <= 0 {
		o.InsertTimeout = 10 * time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 100 * time.Millisecond
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(30*time.Second, o.RetryMin)
	}
	if o.Slice <= 0 {
		o.Slice = 500 * time.Microsecond
	}
	if o.Pause == 0 {
		o.Pause = time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return o
}

// Stats is what health and the metrics report about the pipeline.
type Stats struct {
	Queued     int64  `json:"queued"`      // rows logged and not yet taken by the pipeline's loop
	Received   int64  `json:"received"`    // rows the gateway logged into the pipeline
	BufferFull int64  `json:"buffer_full"` // rows refused because the buffer was full (or the pipeline had stopped)
	Inserted   int64  `json:"inserted"`    // rows the writer stored, directly or from the spool
	Spooled    int64  `json:"spooled"`     // rows put in the spool because the writer failed
	SpoolBytes int64  `json:"spool_bytes"` // bytes waiting in the spool
	Dropped    int64  `json:"dropped"`     // rows lost because the spool was full or failing
	Corrupt    int64  `json:"corrupt"`     // spool lines skipped after a crash
	LastError  string `json:"last_error,omitempty"`
}

// Pipeline takes the gateway's log records (it is the gateway's LogSink) and writes them in
// batches; when the writer fails, batches go to the spool and a background loop sends them on
// later.
//
// Records are handed over in process as Go values, into a bounded buffer that Run swaps out
// whole: the request's goroutine copies its record and returns, and nothing encodes or
// decodes it on the way to the writer. (The hand-off went through a watermill GoChannel
// before, whose []byte payloads cost a JSON encoding and a decoding of every record on the
// gateway's processor: request logs no longer go through watermill.)
type Pipeline struct {
	w     Writer
	spool *Spool
	opts  Options
	// behind is how many rows waiting make an insert stop pausing: a quarter of the buffer,
	// or a batch, whichever is less.
	behind int

	mu     sync.Mutex
	queue  []LogRecord   // logged, not yet taken by Run
	closed bool          // the pipeline has stopped taking rows: Log refuses them
	wake   chan struct{} // signalled when the queue holds need rows
	need   int           // the rows that complete the batch Run holds (at most behind)

	started  atomic.Bool
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	closeErr error

	// writerDown sends batches straight to the spool while the drain loop finds the writer
	// failing, rather than making every flush wait out a failing insert first.
	writerDown atomic.Bool
	// outage is set from the first failed insert to the next successful one: the store's
	// going down and coming back are each logged once.
	outage     atomic.Bool
	received   atomic.Int64
	bufferFull atomic.Int64
	inserted   atomic.Int64
	spooled    atomic.Int64
	errMu      sync.Mutex
	lastErr    string
}

var _ LogSink = (*Pipeline)(nil)

// NewPipeline builds a pipeline writing the records logged into it to w, spooling to spool.
func NewPipeline(w Writer, spool *Spool, opts Options) (*Pipeline, error) {
	if w == nil || spool == nil {
		return nil, errors.New("analytics: pipeline needs a writer and a spool")
	}
	opts = opts.withDefaults(w)
	return &Pipeline{
		w:      w,
		spool:  spool,
		opts:   opts,
		behind: max(min(opts.Buffer/4, opts.BatchSize), 1),
		need:   max(min(opts.Buffer/4, opts.BatchSize), 1),
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}, nil
}

// Log takes rec for Run without waiting: a record that finds the buffer full, or the pipeline
// stopped, is counted in BufferFull.
func (p *Pipeline) Log(rec LogRecord) {
	if rec.ID == "" {
		// The writers store a row sent twice (a retry, the spool's redelivery) once by its id.
		rec.ID = uuid.NewString()
	}
	if j := p.opts.Journal; j != nil {
		if err := j.Append(&rec); err != nil {
			p.setErr(err)
		}
	}
	p.mu.Lock()
	if p.closed || len(p.queue) >= p.opts.Buffer {
		p.mu.Unlock()
		p.bufferFull.Add(1)
		// A refused row stays in the journal: the next start stores it.
		return
	}
	p.queue = append(p.queue, rec)
	full := len(p.queue) >= p.need
	p.mu.Unlock()
	p.received.Add(1)
	// Run takes the queue every FlushInterval, and is woken early only when a batch's worth
	// waits: waking it for every row would switch goroutines on every request, and hand the
	// core to the log path before the request's answer had left.
	if full {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// take returns the queued rows and puts spare, cleared, in their place: Log waits for a swap,
// never for a copy.
func (p *Pipeline) take(spare []LogRecord, close bool) []LogRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	taken := p.queue
	p.queue = spare[:0]
	if close {
		p.closed = true
	}
	return taken
}

// waiting is how many rows are queued behind the batch being inserted.
func (p *Pipeline) waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Run takes the logged rows until ctx ends or Close is called, then flushes what it holds.
// Inserts run on Run's goroutine, paced (see Options.Slice); rows logged meanwhile wait in the
// buffer, and when it is full they are refused, so memory stays bounded whatever the writer
// does.
func (p *Pipeline) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		select {
		case <-p.stop:
			return nil
		default:
		}
		return errors.New("analytics: pipeline already running")
	}
	defer close(p.done)
	select {
	case <-p.stop:
		p.finish(context.WithoutCancel(ctx))
		return nil
	default:
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var drained sync.WaitGroup
	drained.Go(func() { p.drain(runCtx) })
	// Inserts outlive ctx: a row taken is owed to the writer or the spool.
	insertCtx := context.WithoutCancel(ctx)
	if j := p.opts.Journal; j != nil {
		// The rows a run that did not stop cleanly left in the journal are stored first.
		if rows := j.Replay(); len(rows) > 0 {
			p.received.Add(int64(len(rows)))
			p.flushAll(insertCtx, p.add(insertCtx, nil, rows))
		}
	}

	// batch holds at most BatchSize rows; spare is the queue's other slice (see take). A row
	// waits at most FlushInterval: the ticker takes and stores whatever is queued.
	var batch, spare []LogRecord
	tick := time.NewTicker(p.opts.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-p.wake:
			taken := p.take(spare, false)
			batch = p.add(insertCtx, batch, taken)
			clear(taken) // the batch holds its rows now, or the writer has them
			spare = taken[:0]
			p.needFor(len(batch))
		case <-tick.C:
			if j := p.opts.Journal; j != nil {
				if err := j.Sync(); err != nil {
					p.setErr(fmt.Errorf("sync journal: %w", err))
				}
			}
			taken := p.take(spare, false)
			batch = p.flushAll(insertCtx, p.add(insertCtx, batch, taken))
			clear(taken)
			spare = taken[:0]
			p.needFor(len(batch))
		case <-p.stop:
			p.closeAndFlush(insertCtx, batch, spare)
			cancel()
			drained.Wait()
			return nil
		case <-ctx.Done():
			p.closeAndFlush(insertCtx, batch, spare)
			cancel()
			drained.Wait()
			return nil
		}
	}
}

// needFor sets how many queued rows wake Run, now that its batch holds held rows: those that
// complete the batch (at most behind), so that a batch is inserted as soon as its rows are
// logged. Rows queued meanwhile may be enough already.
func (p *Pipeline) needFor(held int) {
	p.mu.Lock()
	p.need = max(min(p.behind, p.opts.BatchSize-held), 1)
	ready := len(p.queue) >= p.need
	p.mu.Unlock()
	if ready {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// closeAndFlush stops Log taking rows and flushes every row taken or queued.
func (p *Pipeline) closeAndFlush(ctx context.Context, batch, spare []LogRecord) {
	p.flushAll(ctx, p.add(ctx, batch, p.take(spare, true)))
}

// finish is closeAndFlush for a pipeline whose Run never ran.
func (p *Pipeline) finish(ctx context.Context) { p.closeAndFlush(ctx, nil, nil) }

// add appends rows to batch, flushing it each time it reaches BatchSize, and returns what is
// left in it: a batch never holds more than BatchSize rows, however many were queued.
func (p *Pipeline) add(ctx context.Context, batch, rows []LogRecord) []LogRecord {
	for len(rows) > 0 {
		n := min(len(rows), p.opts.BatchSize-len(batch))
		batch = append(batch, rows[:n]...)
		rows = rows[n:]
		if len(batch) == p.opts.BatchSize {
			batch = p.flushAll(ctx, batch)
		}
	}
	return batch
}

// flushAll inserts batch and returns it empty.
func (p *Pipeline) flushAll(ctx context.Context, batch []LogRecord) []LogRecord {
	if len(batch) > 0 {
		p.flush(ctx, batch)
	}
	clear(batch)
	return batch[:0]
}

// flush inserts a batch, or spools it when the writer fails or is known to be down.
func (p *Pipeline) flush(ctx context.Context, batch []LogRecord) {
	if !p.writerDown.Load() {
		err := p.insert(ctx, batch)
		if err == nil {
			p.inserted.Add(int64(len(batch)))
			p.stored(batch)
			p.recovered()
			return
		}
		p.writerDown.Store(true)
		p.failed(fmt.Errorf("insert: %w", err))
	}
	if err := p.spool.Append(batch); err != nil {
		p.setErr(fmt.Errorf("spool %d rows: %w", len(batch), err))
		p.errMu.Lock()
		p.closeErr = err
		p.errMu.Unlock()
		return // the rows stay in the journal, if there is one: the next start stores them
	}
	p.spooled.Add(int64(len(batch)))
	p.stored(batch)
}

// stored tells the journal that batch is stored (in the writer or the fsynced spool).
func (p *Pipeline) stored(batch []LogRecord) {
	if j := p.opts.Journal; j != nil {
		j.Stored(batch)
	}
}

func (p *Pipeline) insert(ctx context.Context, rows []LogRecord) error {
	ctx, cancel := context.WithTimeout(ctx, p.opts.InsertTimeout)
	defer cancel()
	if pw, ok := p.w.(PacedWriter); ok && p.opts.Pause > 0 {
		return pw.InsertPaced(ctx, rows, p.pacer())
	}
	return p.w.Insert(ctx, rows)
}

// pacer is the yield of one paced insert: after each Slice of work it sleeps for Pause, which
// lets the Go scheduler run the goroutines waiting on the network (runtime.Gosched would not:
// with one processor it picks the yielding goroutine again before it polls the network). It
// does not sleep while the insert falls behind, nor while stopping.
func (p *Pipeline) pacer() func() {
	since := time.Now()
	return func() {
		if time.Since(since) < p.opts.Slice {
			return
		}
		select {
		case <-p.stop:
			return
		default:
		}
		if p.waiting() < p.behind {
			time.Sleep(p.opts.Pause)
		}
		since = time.Now()
	}
}

// drain sends spooled rows to the writer, backing off exponentially while it fails. The
// spool acknowledges a batch only after Insert succeeds, so each row is sent until stored
// and, with the writer idempotent by id, stored once.
func (p *Pipeline) drain(ctx context.Context) {
	backoff := p.opts.RetryMin
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-p.spool.appended:
			return true
		case <-t.C:
			return true
		}
	}
	for ctx.Err() == nil {
		rows, mark, err := p.spool.Read(p.opts.BatchSize)
		if err != nil {
			p.setErr(fmt.Errorf("read spool: %w", err))
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, p.opts.RetryMax)
			continue
		}
		if len(rows) == 0 {
			// Only corrupt lines, or nothing: move past them, then wait for rows. The timer
			// also probes a writer marked down when nothing is spooled to test it with.
			if err := p.spool.Ack(mark); err != nil {
				p.setErr(fmt.Errorf("acknowledge spool: %w", err))
			}
			p.writerDown.Store(false)
			if !wait(p.opts.FlushInterval) {
				return
			}
			continue
		}
		if err := p.insert(ctx, rows); err != nil {
			if ctx.Err() != nil {
				return
			}
			p.writerDown.Store(true)
			p.failed(fmt.Errorf("insert spooled rows: %w", err))
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, p.opts.RetryMax)
			continue
		}
		backoff = p.opts.RetryMin
		p.inserted.Add(int64(len(rows)))
		p.recovered()
		if err := p.spool.Ack(mark); err != nil {
			p.setErr(fmt.Errorf("acknowledge spool: %w", err))
			if !sleep(ctx, backoff) {
				return
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Close stops Run and waits for it to flush what it holds and what is queued (spooling it if
// the writer fails); rows logged afterwards are refused. It reports an error only when rows
// were lost because the spool refused them.
func (p *Pipeline) Close() error {
	p.stopOnce.Do(func() { close(p.stop) })
	if p.started.CompareAndSwap(false, true) {
		// Run never ran: flush what was logged here.
		p.finish(context.Background())
		close(p.done)
	}
	<-p.done
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.closeErr
}

// Stats reports the pipeline's counters for health.
func (p *Pipeline) Stats() Stats {
	p.errMu.Lock()
	last := p.lastErr
	p.errMu.Unlock()
	return Stats{
		Queued:     int64(p.waiting()),
		Received:   p.received.Load(),
		BufferFull: p.bufferFull.Load(),
		Inserted:   p.inserted.Load(),
		Spooled:    p.spooled.Load(),
		SpoolBytes: p.spool.Bytes(),
		Dropped:    p.spool.Dropped(),
		Corrupt:    p.spool.Corrupt(),
		LastError:  last,
	}
}

// failed records an insert's failure; the first of an outage is logged.
func (p *Pipeline) failed(err error) {
	p.setErr(err)
	if p.outage.CompareAndSwap(false, true) {
		p.opts.Log.Warn("request log store down: rows go to the spool until it is back", "err", err,
			"spool_bytes", p.spool.Bytes())
	}
}

// recovered ends an outage at a successful insert: it is logged, and the last error cleared.
func (p *Pipeline) recovered() {
	if p.outage.CompareAndSwap(true, false) {
		p.errMu.Lock()
		p.lastErr = ""
		p.errMu.Unlock()
		p.opts.Log.Info("request log store is back: spooled rows are being sent", "spool_bytes", p.spool.Bytes())
	}
}

func (p *Pipeline) setErr(err error) {
	p.errMu.Lock()
	p.lastErr = err.Error()
	p.errMu.Unlock()
}
