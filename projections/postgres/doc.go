// Package postgres is the PostgreSQL read model (projections.ReadModel) of server mode, shared
// by every process: each aggregate's folded state as a JSON document, the audit log, and the
// checkpoint, written in one transaction per batch (migrations/postgres). It folds events with
// projections.Fold and answers with projections.Queries, as projections/memory does, and
// passes the same contract suite. A read that fails answers an error wrapping
// projections.ErrUnavailable, never "not found". Rebuild, Verify and Swap rebuild it into
// fresh tables beside the live ones (`causeway replay`).
//
// It imports domain/, the eventstore contract, migrations and projections, and pgx; never
// http/, commands/, queries/ or gateway/.
package postgres
