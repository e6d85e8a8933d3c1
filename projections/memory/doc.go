// Package memory is the in-memory read model (projections.ReadModel): the embedded mode's read
// model, rebuilt from the events at every start, and in every serving process the routing
// tables that authentication, idempotency and the gateway read without I/O. It folds events
// with projections.Fold and answers with projections.Queries, as projections/postgres does,
// and passes the same contract suite. AsOf folds the store as it stood at an instant into a
// fresh model.
//
// It imports domain/, the eventstore contract and projections; never http/, commands/,
// queries/, gateway/ or a database driver.
package memory
