// Package analytics is the request-log wing: the gateway's log record (LogRecord, with what
// decided the request in Provenance), the sink the gateway hands records to (LogSink), the
// Pipeline that batches them into a store and the Spool that keeps them on disk while the
// store is down, the store's contract (Store: the logs, groups, graphs and summary queries,
// their types and their validation), and the writers of log export files (ExportFilter,
// NewExportWriter).
//
// The stores are subpackages, each with its driver: analytics/clickhouse in server mode,
// analytics/sqlite in embedded mode, sharing their SQL through analytics/internal/sqlstore and
// held to one contract suite, analytics/analyticstest. Only cmd/ picks one.
//
// The gateway hands its records to the Pipeline directly, as Go values (the Pipeline is its
// LogSink), not through watermill: a message bus of []byte payloads cost an encoding and a
// decoding of every record on the gateway's processor. The pipeline batches the records into
// the store, spooling them to disk while it is down.
//
// The gateway only publishes to this package and http/ only queries it; the export worker
// (workers/) reads it to write export files. It imports domain/, google/uuid (the ids the
// pipeline gives rows that have none) and the standard library: never a database driver (the
// stores bring theirs), and never gateway/, commands/, projections/ or http/.
package analytics
