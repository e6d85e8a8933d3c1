// Package commands holds the control plane's write side: one file per admin command, each a
// command struct, an unexported handler, NewXHandler (which refuses nil dependencies) and
// Handle(ctx, cmd). A handler loads the aggregate's stream, folds it, asks domain/ to decide,
// and appends the resulting events with the exact expected revision, retrying a bounded number
// of times on a concurrency conflict. Authorisation is checked here, against the actor the HTTP
// layer authenticated. Cross-cutting concerns (logging, metrics, actor metadata) wrap handlers
// as decorators.
//
// It imports domain/ and the eventstore contract, never a backend, HTTP or SQL.
package commands
