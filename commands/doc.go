// Package commands holds the control plane's write side: one file per admin command, each a
// command struct, an unexported handler, NewXHandler (which refuses nil dependencies) and
// Handle(ctx, cmd). A handler loads the aggregate's stream, folds it, asks domain/ to decide,
// and appends the resulting events with the exact expected revision, retrying a bounded number
// of times on a concurrency conflict. Authorisation is checked here, against the actor the HTTP
// layer authenticated. Cross-cutting concerns (logging, metrics, actor metadata) wrap handlers
// as decorators.
//
// The key and reset workers are here: time-driven commands of the system actor. The log export
// worker, which also reads the request logs, is in workers/.
//
// It imports domain/ and the eventstore contract: never a backend, gateway/ (nor its provider
// adapters), analytics/, http/ or a database driver (make lint checks it).
package commands
