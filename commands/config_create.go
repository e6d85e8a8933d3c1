package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CreateSavedConfig saves a gateway config in a workspace. Config is its JSON, validated as
// the gateway will run it (domain.ParseSavedConfig: AB error codes); its custom hosts must
// pass the host check, and the guardrails it names must be live guardrails of the
// organisation or of the workspace (AB16). A nil or empty Slug is derived from the name with a suffix. IsDefault
// makes it the workspace's default config.
type CreateSavedConfig struct {
	WorkspaceID string
	Name        string
	Slug        *string
	Config      []byte
	IsDefault   bool
}

type createSavedConfigHandler struct {
	d Deps
	u URLChecker
}

// NewCreateSavedConfigHandler refuses missing dependencies. Managers of the workspace save
// its configs (inWorkspace).
func NewCreateSavedConfigHandler(d Deps, u URLChecker) (Handler[CreateSavedConfig, Result], error) {
	h := createSavedConfigHandler{d, u}
	return inWorkspace(d, domain.RoleManager, always[CreateSavedConfig]("configs.create"), h.decide), checkURLDeps(d, u)
}

func (c CreateSavedConfig) workspace() string { return c.WorkspaceID }

func (h createSavedConfigHandler) decide(ctx context.Context, c CreateSavedConfig, ws *domain.Workspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	wsID := ws.ID
	if err := checkConfigHosts(h.u, c.Config); err != nil {
		return Result{}, err
	}
	if err := checkConfigGuardrails(ctx, h.d, actor.OrganisationID, wsID, c.Config); err != nil {
		return Result{}, err
	}
	now := h.d.Now()
	id := NewID(ctx, "config")
	candidates := slugCandidates(c.Slug, c.Name, "config", id, false)
	spec := domain.CreateSavedConfig{ConfigID: id, OrganisationID: actor.OrganisationID, WorkspaceID: wsID,
		Slug: candidates[0], Name: c.Name, VersionID: NewID(ctx, "config-version:"+id), Config: c.Config, By: actorName(actor)}
	// Decide once before reserving, so that a refused config never holds a slug.
	if _, err := (&domain.SavedConfig{}).Create(spec, now); err != nil {
		return Result{}, err
	}
	slug, err := reserveFirst(ctx, h.d, ConfigSlugReservation, actor.OrganisationID, id, "slug", candidates)
	if err != nil {
		return Result{}, err
	}
	spec.Slug = slug
	res, err := execute(ctx, h.d, domain.Stream(domain.SavedConfigPrefix, id), newSavedConfig,
		func(sc *domain.SavedConfig) ([]domain.Event, error) { return sc.Create(spec, now) })
	if err != nil {
		releaseAll(ctx, h.d, ConfigSlugReservation, map[string]string{actor.OrganisationID + "/" + spec.Slug: id})
		return Result{}, err
	}
	if c.IsDefault {
		dres, err := setDefaultConfig(ctx, h.d, wsID, id, true)
		if err != nil {
			return Result{}, err
		}
		res.Position = max(res.Position, dres.Position)
	}
	res.ID = id
	return res, nil
}

func newSavedConfig() *domain.SavedConfig { return &domain.SavedConfig{} }

// checkConfigHosts runs the host check on every custom_host of a config; a refusal is AB14
// naming the field. A config that does not parse is left to the decision, which says why.
func checkConfigHosts(u URLChecker, raw []byte) error {
	if raw == nil {
		return nil
	}
	cfg, _, err := domain.ParseSavedConfig(raw)
	if err != nil {
		return nil
	}
	for _, h := range cfg.CustomHosts() {
		if err := u.CheckURL(h.URL); err != nil {
			p := "config." + h.Param
			return &domain.Error{Code: domain.CodeInvalid, Detail: domain.ConfigErrCustomHost, Param: p,
				Message: p + " is refused: " + err.Error()}
		}
	}
	return nil
}

// setDefaultConfig makes configID its workspace's default, or (isDefault false) no longer.
func setDefaultConfig(ctx context.Context, d Deps, wsID, configID string, isDefault bool) (Result, error) {
	return execute(ctx, d, domain.Stream(domain.ConfigDefaultPrefix, wsID), func() *domain.ConfigDefault { return &domain.ConfigDefault{} },
		func(def *domain.ConfigDefault) ([]domain.Event, error) {
			return def.Set(wsID, configID, isDefault, d.Now())
		})
}

// loadSavedConfigFor loads a config of the actor's organisation that the actor may act on
// with scope: it must reach the config's workspace as a manager.
func loadSavedConfigFor(ctx context.Context, d Deps, id, scope string) (*domain.SavedConfig, error) {
	actor := RequestFrom(ctx).Actor
	c, err := Load(ctx, d, domain.Stream(domain.SavedConfigPrefix, id), newSavedConfig)
	if err != nil {
		return nil, err
	}
	if !c.Exists() || c.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "config %s not found", id)
	}
	if err := requireWorkspaceRole(actor, c.WorkspaceID, domain.RoleManager, scope); err != nil {
		return nil, err
	}
	return c, nil
}
