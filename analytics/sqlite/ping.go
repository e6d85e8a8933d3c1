package sqlite

import "context"

// Ping reports whether the database answers, for health.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
