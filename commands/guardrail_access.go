package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/guardrails"
)

// GuardrailSlugReservation holds guardrail slugs, unique in an organisation
// ("<organisation id>/<slug>") whether the guardrail is the organisation's or a workspace's,
// so that a slug names one guardrail wherever a config or workspace attaches it; a deleted
// guardrail frees its slug.
const GuardrailSlugReservation = "guardrail-slug"

// The specification names no scopes and no security settings for guardrails: they are
// written and read with the configs scopes (configs.create, .read, .list, .update, .delete),
// by the same people as configs are, since configs are what attach them.
const (
	guardrailCreateScope = "configs.create"
	guardrailUpdateScope = "configs.update"
	guardrailDeleteScope = "configs.delete"
)

func newGuardrail() *domain.Guardrail { return &domain.Guardrail{} }

// guardrailWriter checks that the actor may change a guardrail of workspaceID ("" for an
// organisation guardrail) with scope: an organisation guardrail applies wherever a workspace
// attaches it, so it is for organisation admins; a workspace guardrail also for the
// workspace's managers, as its configs are.
func guardrailWriter(actor domain.Actor, workspaceID, scope string) error {
	if workspaceID == "" {
		if !actor.IsOrgAdmin() {
			return forbidden("only organisation owners and admins may change organisation guardrails, with an organisation key")
		}
		return requireScope(actor, scope)
	}
	return requireWorkspaceRole(actor, workspaceID, domain.RoleManager, scope)
}

// loadGuardrailFor loads a live guardrail of the actor's organisation by id that the actor
// may change with scope.
func loadGuardrailFor(ctx context.Context, d Deps, id, scope string) (*domain.Guardrail, error) {
	actor := RequestFrom(ctx).Actor
	g, err := Load(ctx, d, domain.Stream(domain.GuardrailPrefix, id), newGuardrail)
	if err != nil {
		return nil, err
	}
	if !g.Exists() || g.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "guardrail %s not found", id)
	}
	if err := guardrailWriter(actor, g.WorkspaceID, scope); err != nil {
		return nil, err
	}
	return g, nil
}

// guardrailByRef loads the live guardrail of the organisation that ref names: its id, else
// the slug it holds; nil when there is none.
func guardrailByRef(ctx context.Context, d Deps, orgID, ref string) (*domain.Guardrail, error) {
	g, err := Load(ctx, d, domain.Stream(domain.GuardrailPrefix, ref), newGuardrail)
	if err != nil {
		return nil, err
	}
	if g.Exists() && g.OrganisationID == orgID {
		return g, nil
	}
	holder, held, err := slugHolder(ctx, d, GuardrailSlugReservation, orgID+"/"+ref)
	if err != nil || !held {
		return nil, err
	}
	if g, err = Load(ctx, d, domain.Stream(domain.GuardrailPrefix, holder), newGuardrail); err != nil {
		return nil, err
	}
	if !g.Exists() || g.OrganisationID != orgID {
		return nil, nil
	}
	return g, nil
}

// checkGuardrailRefs refuses a guardrail that a config or a workspace's defaults name (refs,
// their params under prefix) when it does not exist in the organisation, is deleted, or
// belongs to a workspace other than workspaceID. detail is the refusal's code (AB16 for
// configs).
func checkGuardrailRefs(ctx context.Context, d Deps, orgID, workspaceID string, refs []domain.ConfigGuardrail, prefix, detail string) error {
	for _, r := range refs {
		g, err := guardrailByRef(ctx, d, orgID, r.Ref)
		if err != nil {
			return err
		}
		p := prefix + r.Param
		switch {
		case g == nil:
			return &domain.Error{Code: domain.CodeInvalid, Detail: detail, Param: p,
				Message: fmt.Sprintf("%s names guardrail %s, which does not exist or was deleted", p, r.Ref)}
		case !g.UsableBy(workspaceID):
			return &domain.Error{Code: domain.CodeInvalid, Detail: detail, Param: p,
				Message: fmt.Sprintf("%s names guardrail %s of another workspace: attach this workspace's guardrails or the organisation's", p, r.Ref)}
		}
	}
	return nil
}

// checkConfigGuardrails refuses a config to be saved in workspaceID that names a guardrail it
// may not use (AB16). A config that does not parse is left to the decision, which says why.
func checkConfigGuardrails(ctx context.Context, d Deps, orgID, workspaceID string, raw []byte) error {
	if raw == nil {
		return nil
	}
	cfg, _, err := domain.ParseSavedConfig(raw)
	if err != nil {
		return nil
	}
	return checkGuardrailRefs(ctx, d, orgID, workspaceID, cfg.Guardrails(), "config.", domain.ConfigErrGuardrails)
}

// CheckValidatorFunc is the guardrail engine's validation as a domain.CheckValidator, as cmd
// wires it: the function answers an error wrapping domain.ErrUnknownCheck for an id that no
// check answers to (guardrails.Registry's Known), else what building the check with those
// parameters answers (its Build). A *guardrails.ParamError becomes the
// *domain.CheckParamError that names the parameter.
type CheckValidatorFunc func(id string, params map[string]any) error

var _ domain.CheckValidator = CheckValidatorFunc(nil)

// Validate calls f and translates the engine's parameter errors.
func (f CheckValidatorFunc) Validate(id string, params map[string]any) error {
	err := f(id, params)
	var paramErr *guardrails.ParamError
	if errors.As(err, &paramErr) {
		return &domain.CheckParamError{Param: paramErr.Param, Message: paramErr.Message}
	}
	return err
}

// EngineChecks validates checks with the guardrail engine: an id the registry does not know
// wraps domain.ErrUnknownCheck; parameters are those the check is configured with (Configure:
// the runner's failOnError and timeout too), so a guardrail saved is one the gateway can run.
func EngineChecks(reg *guardrails.Registry, deps guardrails.Deps) CheckValidatorFunc {
	return func(id string, params map[string]any) error {
		if !reg.Known(id) {
			return fmt.Errorf("%w: %s", domain.ErrUnknownCheck, id)
		}
		_, err := reg.Configure(id, "", params, deps)
		return err
	}
}

// WellFormedChecks accepts every check, whatever its parameters: the domain has already
// checked the form of its id and the bounds of its parameters. It is the validator of an App
// built without one (AppDeps.Checks).
type WellFormedChecks struct{}

var _ domain.CheckValidator = WellFormedChecks{}

// Validate accepts the check.
func (WellFormedChecks) Validate(string, map[string]any) error { return nil }

func checkValidatorDeps(d Deps, v domain.CheckValidator) error {
	if v == nil {
		return errors.New("commands: nil guardrail check validator")
	}
	return d.check()
}
