// Package analytics stores the gateway's request logs and answers the analytics queries over
// them: ClickHouse in server mode, SQLite in embedded mode, behind one interface that one
// contract suite holds both to. It imports the gateway's LogRecord and the standard library,
// the database drivers, and nothing of HTTP.
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
