package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchiveSavedConfig is DELETE on a config: it stops serving, is no longer its workspace's
// default, and frees its slug.
type ArchiveSavedConfig struct {
	ConfigID string
}

type archiveSavedConfigHandler struct{ d Deps }

// NewArchiveSavedConfigHandler refuses missing dependencies.
func NewArchiveSavedConfigHandler(d Deps) (archiveSavedConfigHandler, error) {
	return archiveSavedConfigHandler{d}, d.check()
}

func (h archiveSavedConfigHandler) Handle(ctx context.Context, c ArchiveSavedConfig) (Result, error) {
	sc, err := loadSavedConfigFor(ctx, h.d, c.ConfigID, "configs.delete")
	if err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.SavedConfigPrefix, c.ConfigID), newSavedConfig,
		func(sc *domain.SavedConfig) ([]domain.Event, error) { return sc.Archive(by, h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	dres, err := setDefaultConfig(ctx, h.d, sc.WorkspaceID, c.ConfigID, false)
	if err != nil {
		return Result{}, err
	}
	res.Position = max(res.Position, dres.Position)
	if err := release(withoutIdempotency(ctx), h.d, ConfigSlugReservation, sc.OrganisationID+"/"+sc.Slug, sc.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.ConfigID
	return res, nil
}
