package analytics

import "context"

// Writer stores request log rows. Insert must be idempotent by row id: a batch retried after
// a failure whose outcome is unknown (the spool's redelivery) stores each row once.
type Writer interface {
	Insert(ctx context.Context, rows []LogRecord) error
}

// PacedWriter is a Writer that can insert a batch a part at a time, calling yield between the
// parts, so that the pipeline can give the processor back to the gateway now and then during
// a large batch. Like Insert it must be idempotent by row id.
type PacedWriter interface {
	InsertPaced(ctx context.Context, rows []LogRecord, yield func()) error
}

// BatchSizer is a Writer that takes batches of another size than the pipeline's default
// (Options.BatchSize).
type BatchSizer interface {
	DefaultBatchSize() int
}
