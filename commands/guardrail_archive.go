package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ArchiveGuardrail is DELETE on a guardrail: it stops applying and frees its slug. Configs
// and workspaces that still name it are not changed: the gateway finds no guardrail there.
type ArchiveGuardrail struct {
	GuardrailID string
}

type archiveGuardrailHandler struct{ d Deps }

// NewArchiveGuardrailHandler refuses missing dependencies.
func NewArchiveGuardrailHandler(d Deps) (archiveGuardrailHandler, error) {
	return archiveGuardrailHandler{d}, d.check()
}

func (h archiveGuardrailHandler) Handle(ctx context.Context, c ArchiveGuardrail) (Result, error) {
	g, err := loadGuardrailFor(ctx, h.d, c.GuardrailID, guardrailDeleteScope)
	if err != nil {
		return Result{}, err
	}
	by := actorName(RequestFrom(ctx).Actor)
	res, err := execute(ctx, h.d, domain.Stream(domain.GuardrailPrefix, c.GuardrailID), newGuardrail,
		func(g *domain.Guardrail) ([]domain.Event, error) { return g.Archive(by, h.d.Now()) })
	if err != nil {
		return Result{}, err
	}
	if err := release(withoutIdempotency(ctx), h.d, GuardrailSlugReservation, g.OrganisationID+"/"+g.Slug, g.ID); err != nil {
		return Result{}, err
	}
	res.ID = c.GuardrailID
	return res, nil
}
