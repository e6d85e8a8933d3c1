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

// NewExhaustWorkspaceBudgetHandler refuses missing dependencies. Only the gateway's usage
// accounting exhausts a budget (systemOnly).
func NewExhaustWorkspaceBudgetHandler(d Deps) (Handler[ExhaustWorkspaceBudget, Result], error) {
	return authorised(systemOnly("only the gateway's usage accounting exhausts a budget"), exhaustWorkspaceBudgetHandler{d}), d.check()
}

func (h exhaustWorkspaceBudgetHandler) Handle(ctx context.Context, c ExhaustWorkspaceBudget) (Result, error) {
	return executeOnWorkspace(ctx, h.d, c.WorkspaceID, func(w *domain.Workspace) ([]domain.Event, error) {
		return w.ExhaustBudget(c.LimitType, c.CurrentUsage, h.d.Now())
	})
}
