package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CreateUsageLimitPolicy creates a usage-limit policy in a workspace.
type CreateUsageLimitPolicy struct {
	WorkspaceID       string
	Name              *string
	Conditions        []domain.Condition
	GroupBy           []domain.GroupBy
	Type              string
	CreditLimit       *float64
	AlertThreshold    *float64
	PeriodicReset     *string
	PeriodicResetDays *int
}

type createUsageLimitPolicyHandler struct{ d Deps }

// NewCreateUsageLimitPolicyHandler refuses missing dependencies. Managers of the workspace
// create its policies (inWorkspace).
func NewCreateUsageLimitPolicyHandler(d Deps) (Handler[CreateUsageLimitPolicy, Result], error) {
	h := createUsageLimitPolicyHandler{d}
	return inWorkspace(d, domain.RoleManager, always[CreateUsageLimitPolicy]("policies.create"), h.decide), d.check()
}

func (c CreateUsageLimitPolicy) workspace() string { return c.WorkspaceID }

func (h createUsageLimitPolicyHandler) decide(ctx context.Context, c CreateUsageLimitPolicy, ws *domain.Workspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	id := NewID(ctx, "usagelimitpolicy")
	res, err := execute(ctx, h.d, domain.Stream(domain.UsageLimitPolicyPrefix, id), newUsageLimitPolicy,
		func(p *domain.UsageLimitPolicy) ([]domain.Event, error) {
			return p.Create(domain.CreateUsageLimitPolicy{PolicyID: id, OrganisationID: actor.OrganisationID,
				WorkspaceID: ws.ID, Name: c.Name, Conditions: c.Conditions, GroupBy: c.GroupBy, Type: c.Type,
				CreditLimit: c.CreditLimit, AlertThreshold: c.AlertThreshold, PeriodicReset: c.PeriodicReset,
				PeriodicResetDays: c.PeriodicResetDays}, h.d.Now())
		})
	res.ID = id
	return res, err
}

func newUsageLimitPolicy() *domain.UsageLimitPolicy { return &domain.UsageLimitPolicy{} }

// loadUsageLimitPolicyFor loads a policy the actor may act on with scope: it must exist in
// the actor's organisation and the actor must reach its workspace as a manager.
func loadUsageLimitPolicyFor(ctx context.Context, d Deps, id, scope string) (*domain.UsageLimitPolicy, error) {
	actor := RequestFrom(ctx).Actor
	p, err := Load(ctx, d, domain.Stream(domain.UsageLimitPolicyPrefix, id), newUsageLimitPolicy)
	if err != nil {
		return nil, err
	}
	if !p.Exists() || p.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "usage limit policy %s not found", id)
	}
	if err := requireWorkspaceRole(actor, p.WorkspaceID, domain.RoleManager, scope); err != nil {
		return nil, err
	}
	return p, nil
}
