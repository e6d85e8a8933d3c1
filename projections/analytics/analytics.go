// Package analytics stores the gateway's request logs and answers the analytics queries over
// them: ClickHouse in server mode, SQLite in embedded mode, behind one interface that one
// contract suite holds both to. It imports the gateway's LogRecord and the standard library,
// the database drivers, and nothing of HTTP.
//
// The gateway hands its records to the Pipeline directly, as Go values (the Pipeline is its
// LogSink), not through watermill: a message bus of []byte payloads cost an encoding and a
// decoding of every record on the gateway's processor. The pipeline batches the records into
// the store, spooling them to disk while it is down.
package analytics

import (
	"context"

	"github.com/causeway/causeway/gateway"
)

// Writer stores request log rows. Insert must be idempotent by row id: a batch retried after
// a failure whose outcome is unknown (the spool's redelivery) stores each row once.
type Writer interface {
	Insert(ctx context.Context, rows []gateway.LogRecord) error
}

// PacedWriter is a Writer that can insert a batch a part at a time, calling yield between the
// parts, so that the pipeline can give the processor back to the gateway now and then during
// a large batch. Like Insert it must be idempotent by row id.
type PacedWriter interface {
	InsertPaced(ctx context.Context, rows []gateway.LogRecord, yield func()) error
}
