package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchiveProvider is DELETE on a provider (or virtual key): it stops serving and frees its
// slug in its workspace.
type ArchiveProvider struct {
	VirtualKey bool
	ProviderID string
}

type archiveProviderHandler struct{ d Deps }

// NewArchiveProviderHandler refuses missing dependencies.
func NewArchiveProviderHandler(d Deps) (archiveProviderHandler, error) {
	return archiveProviderHandler{d}, d.check()
}

func (h archiveProviderHandler) Handle(ctx context.Context, c ArchiveProvider) (Result, error) {
	p, err := loadProviderFor(ctx, h.d, c.ProviderID, providerScope(c.VirtualKey, "delete"))
	if err != nil {
		return Result{}, err
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.ProviderPrefix, c.ProviderID), newProvider,
		func(p *domain.Provider) ([]domain.Event, error) { return p.Archive(h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	if err := release(withoutIdempotency(ctx), h.d, ProviderSlugReservation, p.WorkspaceID+"/"+p.Slug, p.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.ProviderID
	return res, nil
}
