package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/causeway/causeway/gateway"
)

// Options tunes the pipeline; the zero value takes the defaults.
type Options struct {
	BatchSize     int           // rows per insert; default 5000
	FlushInterval time.Duration // longest a row waits in a batch; default 1 s
	InsertTimeout time.Duration // bound on one Insert, so a hung database cannot stall the bus; default 10 s
	RetryMin      time.Duration // first back-off after the writer fails; default 100 ms
	RetryMax      time.Duration // back-off ceiling; default 30 s
	// CloseQuiet is how long Close keeps taking rows still on their way through the bus: it
	// stops once none has come for this long. Default 100 ms.
	CloseQuiet time.Duration
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = 5000
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Second
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
	if o.CloseQuiet <= 0 {
		o.CloseQuiet = 100 * time.Millisecond
	}
	return o
}

// Stats is what health reports about the pipeline.
type Stats struct {
	Received   int64  `json:"received"`    // rows taken from the bus
	Inserted   int64  `json:"inserted"`    // rows the writer stored, directly or from the spool
	Spooled    int64  `json:"spooled"`     // rows put in the spool because the writer failed
	SpoolBytes int64  `json:"spool_bytes"` // bytes waiting in the spool
	Dropped    int64  `json:"dropped"`     // rows lost because the spool was full or failing
	Corrupt    int64  `json:"corrupt"`     // spool lines skipped after a crash
	Malformed  int64  `json:"malformed"`   // messages that were not a JSON log record
	LastError  string `json:"last_error,omitempty"`
}

// Pipeline consumes the gateway's log records from the bus and writes them in batches; when
// the writer fails, batches go to the spool and a background loop sends them on later.
type Pipeline struct {
	sub   message.Subscriber
	w     Writer
	spool *Spool
	opts  Options

	started  atomic.Bool
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	closeErr error

	// writerDown sends batches straight to the spool while the drain loop finds the writer
	// failing, rather than making every flush wait out a failing insert first.
	writerDown atomic.Bool
	received   atomic.Int64
	inserted   atomic.Int64
	spooled    atomic.Int64
	malformed  atomic.Int64
	errMu      sync.Mutex
	lastErr    string
}

// NewPipeline builds a pipeline reading gateway.LogTopic from sub into w, spooling to spool.
func NewPipeline(sub message.Subscriber, w Writer, spool *Spool, opts Options) (*Pipeline, error) {
	if sub == nil || w == nil || spool == nil {
		return nil, errors.New("analytics: pipeline needs a subscriber, a writer and a spool")
	}
	return &Pipeline{
		sub:   sub,
		w:     w,
		spool: spool,
		opts:  opts.withDefaults(),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}, nil
}

// Run consumes until ctx ends or Close is called, then flushes the batch it holds.
//
// A message is acknowledged once its row is in the batch, not after the insert: watermill's
// subscribers (GoChannel among them) hand over the next message only after the last is
// acknowledged, so holding acknowledgements would make every batch one row. Close's final
// flush, and the spool behind it, are what keep a clean stop from losing rows.
func (p *Pipeline) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("analytics: pipeline already running")
	}
	defer close(p.done)
	select {
	case <-p.stop:
		return nil
	default:
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs, err := p.sub.Subscribe(runCtx, gateway.LogTopic)
	if err != nil {
		return fmt.Errorf("analytics: subscribe to %s: %w", gateway.LogTopic, err)
	}

	var drained sync.WaitGroup
	drained.Go(func() { p.drain(runCtx) })

	batch := make([]gateway.LogRecord, 0, p.opts.BatchSize)
	timer := time.NewTimer(p.opts.FlushInterval)
	timer.Stop()
	defer timer.Stop()
	// Batches are inserted by a goroutine of their own, so that the bus is read while a batch
	// is being inserted; one more batch may wait for it, then reading waits too (backpressure
	// on the sink's buffer rather than unbounded memory). Inserts outlive ctx: a batch taken
	// from the bus is owed to the writer or the spool.
	batches := make(chan []gateway.LogRecord, 1)
	var inserted sync.WaitGroup
	inserted.Go(func() {
		for b := range batches {
			p.flush(context.WithoutCancel(ctx), b)
		}
	})
	flush := func() {
		timer.Stop()
		if len(batch) == 0 {
			return
		}
		batches <- batch
		batch = make([]gateway.LogRecord, 0, p.opts.BatchSize)
	}

	take := func(msg *message.Message) {
		var rec gateway.LogRecord
		if err := json.Unmarshal(msg.Payload, &rec); err != nil {
			// Redelivering a message that can never decode would block the topic forever.
			p.malformed.Add(1)
			p.setErr(fmt.Errorf("decode log record %s: %w", msg.UUID, err))
			msg.Ack()
			return
		}
		if rec.ID == "" {
			// The message id is stable across redeliveries, so the writer still sees one row.
			rec.ID = msg.UUID
		}
		batch = append(batch, rec)
		p.received.Add(1)
		msg.Ack()
		if len(batch) == 1 {
			timer.Reset(p.opts.FlushInterval)
		}
	}

	open := true
loop:
	for {
		select {
		case msg, ok := <-msgs:
			if !ok {
				open = false
				break loop
			}
			take(msg)
			if len(batch) >= p.opts.BatchSize {
				flush()
			}
		case <-timer.C:
			flush()
		case <-p.stop:
			break loop
		case <-ctx.Done():
			break loop
		}
	}

	// Rows published before the stop may still be on their way through the bus (GoChannel
	// hands each message over from a goroutine of its own): take them until the bus is quiet.
	quiet := time.NewTimer(p.opts.CloseQuiet)
	defer quiet.Stop()
	for open {
		select {
		case msg, ok := <-msgs:
			if !ok {
				open = false
				continue
			}
			take(msg)
			if len(batch) >= p.opts.BatchSize {
				flush()
			}
			quiet.Reset(p.opts.CloseQuiet)
		case <-quiet.C:
			open = false
		}
	}
	flush()
	close(batches)
	inserted.Wait()
	cancel()
	drained.Wait()
	return nil
}

// flush inserts a batch, or spools it when the writer fails or is known to be down.
func (p *Pipeline) flush(ctx context.Context, batch []gateway.LogRecord) {
	if !p.writerDown.Load() {
		err := p.insert(ctx, batch)
		if err == nil {
			p.inserted.Add(int64(len(batch)))
			return
		}
		p.writerDown.Store(true)
		p.setErr(fmt.Errorf("insert: %w", err))
	}
	if err := p.spool.Append(batch); err != nil {
		p.setErr(fmt.Errorf("spool %d rows: %w", len(batch), err))
		p.errMu.Lock()
		p.closeErr = err
		p.errMu.Unlock()
		return
	}
	p.spooled.Add(int64(len(batch)))
}

func (p *Pipeline) insert(ctx context.Context, rows []gateway.LogRecord) error {
	ctx, cancel := context.WithTimeout(ctx, p.opts.InsertTimeout)
	defer cancel()
	return p.w.Insert(ctx, rows)
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
			p.setErr(fmt.Errorf("insert spooled rows: %w", err))
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, p.opts.RetryMax)
			continue
		}
		backoff = p.opts.RetryMin
		p.inserted.Add(int64(len(rows)))
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

// Close stops Run and waits for it to flush the batch it holds (spooling it if the writer
// fails). It reports an error only when rows were lost because the spool refused them.
func (p *Pipeline) Close() error {
	p.stopOnce.Do(func() { close(p.stop) })
	if p.started.Load() {
		<-p.done
	}
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
		Received:   p.received.Load(),
		Inserted:   p.inserted.Load(),
		Spooled:    p.spooled.Load(),
		SpoolBytes: p.spool.Bytes(),
		Dropped:    p.spool.Dropped(),
		Corrupt:    p.spool.Corrupt(),
		Malformed:  p.malformed.Load(),
		LastError:  last,
	}
}

func (p *Pipeline) setErr(err error) {
	p.errMu.Lock()
	p.lastErr = err.Error()
	p.errMu.Unlock()
}
