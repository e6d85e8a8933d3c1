package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateSavedConfig renames a config, saves a new version of it (Config), or makes it the
// workspace's default or no longer (IsDefault); nil fields stay as they are.
type UpdateSavedConfig struct {
	ConfigID  string
	Name      *string
	Config    []byte
	IsDefault *bool
}

type updateSavedConfigHandler struct {
	d Deps
	u URLChecker
}

// NewUpdateSavedConfigHandler refuses missing dependencies.
func NewUpdateSavedConfigHandler(d Deps, u URLChecker) (updateSavedConfigHandler, error) {
	return updateSavedConfigHandler{d, u}, checkURLDeps(d, u)
}

func (h updateSavedConfigHandler) Handle(ctx context.Context, c UpdateSavedConfig) (Result, error) {
	sc, err := loadSavedConfigFor(ctx, h.d, c.ConfigID, "configs.update")
	if err != nil {
		return Result{}, err
	}
	if c.Name == nil && c.Config == nil && c.IsDefault == nil {
		return Result{}, domain.Invalid("", "nothing to update: give name, config or is_default")
	}
	if err := checkConfigHosts(h.u, c.Config); err != nil {
		return Result{}, err
	}
	if err := checkConfigGuardrails(ctx, h.d, sc.OrganisationID, sc.WorkspaceID, c.Config); err != nil {
		return Result{}, err
	}
	res := Result{ID: c.ConfigID}
	if c.Name != nil || c.Config != nil {
		in := domain.UpdateSavedConfig{Name: c.Name, Config: c.Config, By: actorName(RequestFrom(ctx).Actor)}
		if c.Config != nil {
			in.VersionID = NewID(ctx, "config-version:"+c.ConfigID)
		}
		// Decide once before any write, so that a refused change does not move the default.
		if _, err := sc.Update(in, h.d.Now()); err != nil {
			return Result{}, err
		}
		if res, err = execute(ctx, h.d, domain.Stream(domain.SavedConfigPrefix, c.ConfigID), newSavedConfig,
			func(sc *domain.SavedConfig) ([]domain.Event, error) { return sc.Update(in, h.d.Now()) }); err != nil {
			return Result{}, err
		}
	}
	if c.IsDefault != nil {
		dres, err := setDefaultConfig(ctx, h.d, sc.WorkspaceID, c.ConfigID, *c.IsDefault)
		if err != nil {
			return Result{}, err
		}
		res.Position = max(res.Position, dres.Position)
	}
	res.ID = c.ConfigID
	return res, nil
}
