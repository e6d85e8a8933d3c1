package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// CreateRateLimitPolicy creates a rate-limit policy in a workspace.
type CreateRateLimitPolicy struct {
	WorkspaceID string
	Name        *string
	Conditions  []domain.Condition
	GroupBy     []domain.GroupBy
	Type        string
	Unit        string
	Value       *float64
}

type createRateLimitPolicyHandler struct{ d Deps }

// NewCreateRateLimitPolicyHandler refuses missing dependencies. Managers of the workspace
// create its policies (inWorkspace).
func NewCreateRateLimitPolicyHandler(d Deps) (Handler[CreateRateLimitPolicy, Result], error) {
	h := createRateLimitPolicyHandler{d}
	return inWorkspace(d, domain.RoleManager, always[CreateRateLimitPolicy]("policies.create"), h.decide), d.check()
}

func (c CreateRateLimitPolicy) workspace() string { return c.WorkspaceID }

func (h createRateLimitPolicyHandler) decide(ctx context.Context, c CreateRateLimitPolicy, ws *domain.Workspace) (Result, error) {
	actor := RequestFrom(ctx).Actor
	id := NewID(ctx, "ratelimitpolicy")
	res, err := execute(ctx, h.d, domain.Stream(domain.RateLimitPolicyPrefix, id), newRateLimitPolicy,
		func(p *domain.RateLimitPolicy) ([]domain.Event, error) {
			return p.Create(domain.CreateRateLimitPolicy{PolicyID: id, OrganisationID: actor.OrganisationID,
				WorkspaceID: ws.ID, Name: c.Name, Conditions: c.Conditions, GroupBy: c.GroupBy, Type: c.Type,
				Unit: c.Unit, Value: c.Value}, h.d.Now())
		})
	res.ID = id
	return res, err
}

func newRateLimitPolicy() *domain.RateLimitPolicy { return &domain.RateLimitPolicy{} }

// loadRateLimitPolicyFor loads a policy the actor may act on with scope: it must exist in the
// actor's organisation and the actor must reach its workspace as a manager.
func loadRateLimitPolicyFor(ctx context.Context, d Deps, id, scope string) (*domain.RateLimitPolicy, error) {
	actor := RequestFrom(ctx).Actor
	p, err := Load(ctx, d, domain.Stream(domain.RateLimitPolicyPrefix, id), newRateLimitPolicy)
	if err != nil {
		return nil, err
	}
	if !p.Exists() || p.OrganisationID != actor.OrganisationID {
		return nil, domain.Errorf(domain.CodeNotFound, "rate limit policy %s not found", id)
	}
	if err := requireWorkspaceRole(actor, p.WorkspaceID, domain.RoleManager, scope); err != nil {
		return nil, err
	}
	return p, nil
}
