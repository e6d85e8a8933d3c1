// Package gateway is the data plane: authentication against in-memory routing tables, configs
// (fallback, load balancing, retries), rate limits, provider adapters behind a small interface
// with optional capabilities, streaming, and handing each request's log record to the
// analytics pipeline without waiting. Its hot path does no database I/O.
//
// It imports domain/ and reads projections' in-memory tables; never a database driver.
package gateway
