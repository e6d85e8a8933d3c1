// Package projections turns the event stream into read models: named, idempotent handlers fed
// from a subscription to the global stream through a watermill router (Runner), each with its
// own checkpoint. It holds what every read model shares: the one fold of an event into its
// aggregate and audit record (Fold), the queries over the folded documents (Queries), the read
// interfaces (Reader, ReadModel), the audit log's types and filters, and rebuilds (Rebuild).
// The two read models are its subpackages, each passing the contract suite of
// projections/projectionstest:
//
//   - projections/memory: in memory, the embedded mode's read model and every process's
//     routing tables (authentication and the gateway's index read it without I/O);
//   - projections/postgres: the server mode's read model, its rows and checkpoint written in
//     one transaction.
//
// Every read takes a context and returns an error; a read that fails wraps ErrUnavailable and
// is never "not found". Request logs are no projection (the event stream does not feed them):
// they are the analytics/ wing's.
//
// It imports domain/ and the eventstore contract; never http/, commands/, queries/, gateway/,
// analytics/ or a database driver (only projections/postgres imports pgx).
package projections
