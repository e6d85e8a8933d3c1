package analytics

import "context"

// Ping reports whether the database answers, for health.
func (s *SQLite) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Ping reports whether the server answers, for health.
func (c *ClickHouse) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }
