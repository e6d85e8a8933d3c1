package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// UpdateGuardrail renames a guardrail, or saves a new version of it with new checks or
// actions (each replaces the one in force whole); nil fields stay as they are.
type UpdateGuardrail struct {
	GuardrailID string
	Name        *string
	Checks      []byte
	Actions     []byte
}

type updateGuardrailHandler struct {
	d Deps
	v domain.CheckValidator
}

// NewUpdateGuardrailHandler refuses missing dependencies.
func NewUpdateGuardrailHandler(d Deps, v domain.CheckValidator) (updateGuardrailHandler, error) {
	return updateGuardrailHandler{d, v}, checkValidatorDeps(d, v)
}

func (h updateGuardrailHandler) Handle(ctx context.Context, c UpdateGuardrail) (Result, error) {
	if _, err := loadGuardrailFor(ctx, h.d, c.GuardrailID, guardrailUpdateScope); err != nil {
		return Result{}, err
	}
	in := domain.UpdateGuardrail{Name: c.Name, Checks: c.Checks, Actions: c.Actions, By: actorName(RequestFrom(ctx).Actor)}
	if c.Checks != nil || c.Actions != nil {
		in.VersionID = NewID(ctx, "guardrail-version:"+c.GuardrailID)
	}
	res, err := execute(ctx, h.d, domain.Stream(domain.GuardrailPrefix, c.GuardrailID), newGuardrail,
		func(g *domain.Guardrail) ([]domain.Event, error) { return g.Update(in, h.v, h.d.Now()) })
	res.ID = c.GuardrailID
	return res, err
}
