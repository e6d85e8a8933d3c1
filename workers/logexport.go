package workers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
)

// LogScanner is what the export worker reads rows from: an analytics.Store (analytics/sqlite
// or analytics/clickhouse). ScanLogs calls fn for every row of f, oldest first, and stops at
// fn's first error.
type LogScanner interface {
	ScanLogs(ctx context.Context, f analytics.Filter, fn func(analytics.LogRecord) error) error
}

// ExportsInProgress is what the export worker reads of the read model: the exports started
// and not finished, oldest start first.
type ExportsInProgress interface {
	LogExportsInProgress(ctx context.Context) ([]domain.LogExport, error)
}

// Claims hands an item of work to one instance at a time (cluster.Claims).
type Claims interface {
	Claim(ctx context.Context, item, holder string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, item, holder string) error
}

// claimTTL is how long an export's claim lasts without renewal: a run renews it every third of
// that, so the export of an instance that died is taken over within claimTTL.
const claimTTL = 30 * time.Second

// partialSuffix marks a file an export is still writing; only a rename gives it its name.
const partialSuffix = ".partial"

// LogExportWorker writes the files of started exports, as the system actor: it reads the rows
// of each from the log store, writes the requested fields to a temporary file, syncs it and
// renames it into place, then records the export completed (or failed) through commands
// (CompleteLogExport, FailLogExport). A crash therefore never leaves a file that looks
// complete.
//
// Exports left in_progress by a process that stopped are resumed: the worker of the next
// process finds them in the read model and runs them again from their first row. That is
// safe because an export covers only rows that started before the export did, so the run
// writes the same rows. One worker should serve an export directory.
type LogExportWorker struct {
	d        commands.Deps
	complete completeLogExport
	fail     failLogExport
	exports  ExportsInProgress
	logs     LogScanner
	dir      string
	// Concurrency bounds how many exports run at once; zero means one at a time.
	Concurrency int
	// Retention, when set, leaves out rows that started longer than this before the export
	// did (LOG_RETENTION_DISPLAY), as the logs routes do.
	Retention time.Duration
	// OnError, when set, hears what went wrong in passes and runs; the details of a failed
	// export go here, while the export records only a reason fit for its readers.
	OnError func(error)
	// Claims, with several instances on one database, hands each export to one of them
	// (cluster.Claims), under Holder (the instance id); nil: this worker is the only one.
	Claims Claims
	Holder string

	mu      sync.Mutex
	running map[string]*exportRun
	wg      sync.WaitGroup
}

// exportRun is one export being written.
type exportRun struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	// stopped: the export left in_progress (cancelled) while it ran.
	stopped bool
}

func (r *exportRun) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
}

func (r *exportRun) wasStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// NewLogExportWorker needs the read model's exports in progress, the log store and the
// directory the files go to (the HTTP layer's ExportDir, which download reads).
func NewLogExportWorker(d commands.Deps, exports ExportsInProgress, logs LogScanner, dir string) (*LogExportWorker, error) {
	switch {
	case exports == nil:
		return nil, errors.New("workers: the log export worker needs the exports in progress")
	case logs == nil:
		return nil, errors.New("workers: the log export worker needs a log store")
	case dir == "":
		return nil, errors.New("workers: the log export worker needs an export directory")
	}
	complete, err := commands.NewCompleteLogExportHandler(d)
	if err != nil {
		return nil, err
	}
	fail, err := commands.NewFailLogExportHandler(d)
	if err != nil {
		return nil, err
	}
	return &LogExportWorker{d: d, complete: complete, fail: fail, exports: exports, logs: logs, dir: dir,
		running: map[string]*exportRun{}}, nil
}

// completeLogExport and failLogExport are the commands the worker records an export's end with.
type (
	completeLogExport interface {
		Handle(context.Context, commands.CompleteLogExport) (commands.Result, error)
	}
	failLogExport interface {
		Handle(context.Context, commands.FailLogExport) (commands.Result, error)
	}
)

func newLogExport() *domain.LogExport { return &domain.LogExport{} }

// Run makes a pass at once and then every interval until ctx ends, then waits for the runs
// in flight to stop. Runs stopped that way stay in_progress and are resumed by the next start.
func (w *LogExportWorker) Run(ctx context.Context, every time.Duration) error {
	err := commands.RunEvery(ctx, "log export worker", every, w.Tick, w.OnError)
	w.Wait()
	return err
}

// Wait returns once no export runs.
func (w *LogExportWorker) Wait() { w.wg.Wait() }

// Tick makes one pass: it stops the runs of exports that were cancelled, removes partial files
// that no run owns, and starts exports in progress that nothing runs, up to Concurrency. The
// runs go on in the background, under ctx.
func (w *LogExportWorker) Tick(ctx context.Context) error {
	var errs []error
	w.mu.Lock()
	running := make(map[string]*exportRun, len(w.running))
	for id, r := range w.running {
		running[id] = r
	}
	w.mu.Unlock()
	// The stream, not the read model, says whether a run must stop: it is never behind.
	for id, r := range running {
		x, err := commands.Load(ctx, w.d, domain.Stream(domain.LogExportPrefix, id), newLogExport)
		if err != nil {
			errs = append(errs, fmt.Errorf("log export %s: %w", id, err))
			continue
		}
		if x.Status != domain.ExportInProgress {
			r.stop()
		}
	}
	inProgress, err := w.exports.LogExportsInProgress(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	errs = append(errs, w.sweep(inProgress))
	limit := max(w.Concurrency, 1)
	for _, x := range inProgress {
		if w.count() >= limit {
			break
		}
		if w.isRunning(x.ID) {
			continue
		}
		// The read model may be behind a run that has just finished: confirm from the stream.
		cur, err := commands.Load(ctx, w.d, domain.Stream(domain.LogExportPrefix, x.ID), newLogExport)
		if err != nil {
			errs = append(errs, fmt.Errorf("log export %s: %w", x.ID, err))
			continue
		}
		if cur.Status != domain.ExportInProgress {
			continue
		}
		if w.Claims != nil {
			held, err := w.Claims.Claim(ctx, claimItem(x.ID), w.Holder, claimTTL)
			if err != nil {
				errs = append(errs, fmt.Errorf("log export %s: claim: %w", x.ID, err))
				continue
			}
			if !held {
				continue // another instance runs it
			}
		}
		w.start(ctx, *cur)
	}
	return errors.Join(errs...)
}

func (w *LogExportWorker) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
}

func (w *LogExportWorker) isRunning(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running[id] != nil
}

// sweep removes the partial files of exports that are neither running here nor in progress:
// what a crash left of an export cancelled or failed since.
func (w *LogExportWorker) sweep(inProgress []domain.LogExport) error {
	entries, err := os.ReadDir(w.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("log export directory: %w", err)
	}
	live := map[string]bool{}
	for _, x := range inProgress {
		live[x.ID] = true
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, partialSuffix) {
			continue
		}
		id, _, _ := strings.Cut(name, ".")
		if live[id] || w.isRunning(id) {
			continue
		}
		if err := os.Remove(filepath.Join(w.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (w *LogExportWorker) start(ctx context.Context, x domain.LogExport) {
	runCtx, cancel := context.WithCancel(ctx)
	r := &exportRun{cancel: cancel}
	w.mu.Lock()
	w.running[x.ID] = r
	w.mu.Unlock()
	w.wg.Add(1)
	stopRenewing := w.renew(runCtx, x.ID)
	go func() {
		defer w.wg.Done()
		defer func() {
			cancel()
			stopRenewing()
			w.mu.Lock()
			delete(w.running, x.ID)
			w.mu.Unlock()
		}()
		if err := w.export(ctx, runCtx, r, x); err != nil && w.OnError != nil {
			w.OnError(fmt.Errorf("log export %s: %w", x.ID, err))
		}
	}()
}

func claimItem(exportID string) string { return "log_export:" + exportID }

// renew keeps the claim on an export while it runs, and releases it when the run ends (done
// or not: an export left in progress by a shutdown is free for another instance at once). A
// claim that was lost (this instance was too slow to renew) stops the run.
func (w *LogExportWorker) renew(ctx context.Context, id string) (stop func()) {
	if w.Claims == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(claimTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				held, err := w.Claims.Claim(ctx, claimItem(id), w.Holder, claimTTL)
				if err == nil && !held {
					if r := w.run(id); r != nil {
						r.stop()
					}
					if w.OnError != nil {
						w.OnError(fmt.Errorf("log export %s: another instance took it over", id))
					}
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := w.Claims.Release(ctx, claimItem(id), w.Holder); err != nil && w.OnError != nil {
			w.OnError(fmt.Errorf("log export %s: release: %w", id, err))
		}
	}
}

func (w *LogExportWorker) run(id string) *exportRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running[id]
}

// Reasons an export failed, as its readers see them; the details go to OnError.
const (
	reasonReadFailed  = "reading the request logs failed"
	reasonWriteFailed = "writing the export file failed"
)

// errExportFull ends a scan once the export has its page_size rows.
var errExportFull = errors.New("workers: the export has all its rows")

// export writes x's file. ctx is the worker's; runCtx ends as well when x is cancelled.
func (w *LogExportWorker) export(ctx, runCtx context.Context, r *exportRun, x domain.LogExport) error {
	final := x.ID + "." + x.Format
	finalPath := filepath.Join(w.dir, final)
	partPath := finalPath + partialSuffix
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return w.failed(ctx, x, reasonWriteFailed, err)
	}
	f, err := os.OpenFile(partPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return w.failed(ctx, x, reasonWriteFailed, err)
	}
	discard := func() {
		_ = f.Close()
		_ = os.Remove(partPath)
	}
	rows, err := analytics.NewExportWriter(x.Format, x.RequestedData, f)
	if err != nil {
		discard()
		return w.failed(ctx, x, reasonWriteFailed, err)
	}
	filter := analytics.ExportFilter(x, w.Retention)
	skip, limit := x.Filters.Window()
	var written int64
	var writeErr, scanErr error
	// A range that ends before it starts (it began after the export did) holds no row.
	if filter.From.IsZero() || filter.To.IsZero() || filter.From.Before(filter.To) {
		scanErr = w.scan(runCtx, filter, skip, limit, rows, &written, &writeErr)
	}
	if errors.Is(scanErr, errExportFull) {
		scanErr = nil
	}
	switch {
	case ctx.Err() != nil || r.wasStopped():
		// Shut down (the export stays in_progress and resumes) or cancelled: no file.
		discard()
		return nil
	case writeErr != nil:
		discard()
		return w.failed(ctx, x, reasonWriteFailed, writeErr)
	case scanErr != nil:
		discard()
		return w.failed(ctx, x, reasonReadFailed, scanErr)
	}
	if err := finish(rows, f, partPath, finalPath, w.dir); err != nil {
		_ = os.Remove(partPath)
		return w.failed(ctx, x, reasonWriteFailed, err)
	}
	return w.completed(ctx, x, written, rows.Bytes(), final, finalPath)
}

// scan writes the rows of filter, after skipping skip of them and up to limit,
// counting them in written; a write error is kept apart from the store's in writeErr.
func (w *LogExportWorker) scan(ctx context.Context, filter analytics.Filter,
	skip, limit int64, rows analytics.ExportWriter, written *int64, writeErr *error) error {
	return w.logs.ScanLogs(ctx, filter, func(rec analytics.LogRecord) error {
		// Between rows: a cancel or a shutdown stops the export here.
		if err := ctx.Err(); err != nil {
			return err
		}
		if skip > 0 {
			skip--
			return nil
		}
		if *written >= limit {
			return errExportFull
		}
		if err := rows.Write(rec); err != nil {
			*writeErr = err
			return err
		}
		*written++
		return nil
	})
}

// finish makes the partial file durable under its final name: flush, fsync, close, rename,
// and fsync the directory so that the rename itself survives a crash.
func finish(rows analytics.ExportWriter, f *os.File, partPath, finalPath, dir string) error {
	if err := rows.Close(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(partPath, finalPath); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// asExportWorker is the request of the worker's action on x: the system actor of x's
// organisation, with an idempotency key naming the action, so a retried append writes once.
func asExportWorker(ctx context.Context, x domain.LogExport, action string) context.Context {
	key := "logexport-" + action + "-" + x.ID
	return commands.WithRequest(ctx, commands.Request{Actor: domain.System(x.OrganisationID), RequestID: key, IdempotencyKey: key})
}

// completed records the file. If the export was cancelled meanwhile, the cancel wins and the
// file goes.
func (w *LogExportWorker) completed(ctx context.Context, x domain.LogExport, rows, bytes int64, name, path string) error {
	_, err := w.complete.Handle(asExportWorker(ctx, x, "complete"),
		commands.CompleteLogExport{ExportID: x.ID, Rows: rows, Bytes: bytes, FileName: name})
	if domain.ErrorCode(err) == domain.CodeConflict {
		_ = os.Remove(path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("record completion: %w", err)
	}
	return nil
}

// failed records reason on x, unless x has left in_progress meanwhile; cause goes to OnError.
func (w *LogExportWorker) failed(ctx context.Context, x domain.LogExport, reason string, cause error) error {
	_, err := w.fail.Handle(asExportWorker(ctx, x, "fail"), commands.FailLogExport{ExportID: x.ID, Reason: reason})
	if err != nil && domain.ErrorCode(err) != domain.CodeConflict {
		return errors.Join(cause, fmt.Errorf("record failure: %w", err))
	}
	return fmt.Errorf("%s: %w", reason, cause)
}
