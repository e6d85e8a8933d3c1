package eventstore

import "context"

// SetBeforeCommit lets the external tests inject delays and failures just before an append
// commits, to exercise the gap-hiding design under out-of-order and rolled-back commits.
func SetBeforeCommit(p *Postgres, f func(ctx context.Context) error) { p.beforeCommit = f }
