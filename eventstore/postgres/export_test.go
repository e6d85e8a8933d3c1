package postgres

import "context"

// SetBeforeCommit lets the external tests inject delays and failures just before an append
// commits, to exercise the gap-hiding design under out-of-order and rolled-back commits.
func SetBeforeCommit(p *Store, f func(ctx context.Context) error) { p.beforeCommit = f }
