// Package sqlstore is what the SQL request-log stores (analytics/sqlite, analytics/clickhouse)
// share: the queries of the analytics reads (logs, groups, graphs, summaries) built once over a
// Dialect that each store fills with its spellings, and the encodings of a row's bodies,
// provenance and times.
//
// It imports package analytics (the record and query types) and the standard library only:
// never a database driver (each store brings its own), never a store, and never gateway/,
// commands/, projections/ or http/.
package sqlstore
