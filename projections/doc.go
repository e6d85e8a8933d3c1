// Package projections turns the event stream into read models: named, idempotent handlers fed
// from a subscription to the global stream through a watermill router, each with its own
// checkpoint. PostgreSQL read models write their rows and their checkpoint in one transaction;
// the same handlers feed the in-memory models (embedded mode, and every gateway process's
// routing tables). Request logs are no projection (the event stream does not feed them): they
// are the analytics/ wing's.
//
// It imports domain/ and the eventstore contract, never HTTP.
package projections
