package queries

import (
	"context"
	"errors"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections"
)

// Events is what the read side reads of the event store: whole streams, for a resource as it
// was and its history. A store that can also be read whole (PastEvents) serves lists as they
// were (PastModel).
type Events interface {
	ReadStream(ctx context.Context, stream string, dir eventstore.Direction, from uint64, max int) ([]eventstore.RecordedEvent, error)
}

// Queries answers the admin API's reads: the present from the read model, the past from the
// event store.
type Queries struct {
	Read     projections.Reader
	Events   Events
	Registry *domain.Registry
}

// errNoStore: a past read needs the event store and the registry that decodes it.
var errNoStore = errors.New("queries: no event store or registry to read the past from")

func (q *Queries) check() error {
	if q == nil || q.Events == nil || q.Registry == nil {
		return errNoStore
	}
	return nil
}
