package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// ExhaustWorkspaceBudget records that a workspace's usage reached the credit limit of its
// LimitType budget. Only the system (the gateway's usage accounting) decides it.
type ExhaustWorkspaceBudget struct {
	WorkspaceID  string
	LimitType    string
	CurrentUsage float64
}

type exhaustWorkspaceBudgetHandler struct{ d Deps }

func NewExhaustWorkspaceBudgetHandler(d Deps) (exhaustWorkspaceBudgetHandler, error) {
	return exhaustWorkspaceBudgetHandler{d}, d.check()
}

func (h exhaustWorkspaceBudgetHandler) Handle(ctx context.Context, c ExhaustWorkspaceBudget) (Result, error) {
	if RequestFrom(ctx).Actor.Kind != domain.ActorSystem {
		return Result{}, forbidden("only the gateway's usage accounting exhausts a budget")
	}
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.ExhaustBudget(c.LimitType, c.CurrentUsage, h.d.Now())
	})
}
