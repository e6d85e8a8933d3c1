package projections

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/causeway/causeway/domain"
)

// ErrUnavailable is what a read answers when its read model cannot: its database is
// unreachable or a read failed. It is never "not found": the admin API answers 503.
var ErrUnavailable = errors.New("the read model is unavailable")

// Documents is what a read model's backend gives the shared queries: the aggregates folded
// from the events, by stream prefix and id. In memory fn runs under the model's read lock and
// must copy what it keeps; from PostgreSQL every aggregate is fresh.
type Documents interface {
	// View calls fn with the aggregate of prefix and id, if there is one, and says whether
	// there was; a read that fails answers an error wrapping ErrUnavailable.
	View(ctx context.Context, prefix, id string, fn func(domain.Aggregate)) (bool, error)
	// Scan calls fn with every aggregate of prefix, on the same terms.
	Scan(ctx context.Context, prefix string, fn func(domain.Aggregate)) error
}

// Queries answers every read of the control plane's state over a backend's Documents: one set
// of filters, orders and lookups for both read models (projections/memory and
// projections/postgres), so that they cannot disagree. The audit log is each backend's own.
type Queries struct {
	Docs Documents
}

// get returns a copy of the aggregate of prefix and id.
func get[A any](ctx context.Context, d Documents, prefix, id string) (A, bool, error) {
	var out A
	found := false
	_, err := d.View(ctx, prefix, id, func(agg domain.Aggregate) {
		if a, ok := any(agg).(*A); ok {
			out, found = *a, true
		}
	})
	if err != nil {
		var zero A
		return zero, false, err
	}
	return out, found, nil
}

// all returns copies of every aggregate of prefix that keep says to keep, sorted by less.
func all[A any](ctx context.Context, d Documents, prefix string, keep func(*A) bool, less func(a, b *A) bool) ([]A, error) {
	var out []A
	err := d.Scan(ctx, prefix, func(agg domain.Aggregate) {
		if a, ok := any(agg).(*A); ok && keep(a) {
			out = append(out, *a)
		}
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []A{}
	}
	sort.Slice(out, func(i, j int) bool { return less(&out[i], &out[j]) })
	return out, nil
}

// first returns the first of a list, and false when it is empty.
func first[A any](found []A, err error) (A, bool, error) {
	var zero A
	if err != nil || len(found) == 0 {
		return zero, false, err
	}
	return found[0], true, nil
}

func newestFirst[A any](key func(*A) (time.Time, string)) func(a, b *A) bool {
	return func(a, b *A) bool {
		ta, ia := key(a)
		tb, ib := key(b)
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
		return ia < ib
	}
}
