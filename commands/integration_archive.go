package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchiveIntegration is DELETE on an integration: it stops serving and frees its slug. Its
// providers stay, and the gateway refuses them while their integration does not serve them.
type ArchiveIntegration struct {
	IntegrationID string
}

type archiveIntegrationHandler struct{ d Deps }

// NewArchiveIntegrationHandler refuses missing dependencies.
func NewArchiveIntegrationHandler(d Deps) (archiveIntegrationHandler, error) {
	return archiveIntegrationHandler{d}, d.check()
}

func (h archiveIntegrationHandler) Handle(ctx context.Context, c ArchiveIntegration) (Result, error) {
	i, err := loadIntegrationFor(ctx, h.d, c.IntegrationID, "integrations.delete")
	if err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.IntegrationPrefix, c.IntegrationID), newIntegration,
		func(i *domain.Integration) ([]domain.Event, error) { return i.Archive(h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	if err := release(withoutIdempotency(ctx), h.d, IntegrationSlugReservation, i.OrganisationID+"/"+i.Slug, i.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.IntegrationID
	return res, nil
}
