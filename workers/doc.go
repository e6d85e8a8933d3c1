// Package workers holds the background workers that stand where two wings meet: each reads
// one wing and records what it did through commands. LogExportWorker reads the request-log
// wing (analytics: the rows of an export, written by its file writers) and records each
// export's end through commands (CompleteLogExport, FailLogExport); cmd/ wires it.
//
// The key and reset workers stay in commands/: they read only the control plane's own read
// model and act through the unexported core of the commands they carry out.
//
// It imports analytics/ (the record, the store's read interface and the export writers; never
// a store), commands/, domain/ and the standard library: never a database driver, gateway/,
// projections/ or http/. Neither commands/ nor analytics/ imports it or each other.
package workers
