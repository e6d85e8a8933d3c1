package commands

import (
	"context"

	"github.com/causeway/causeway/domain"
)

// Handler handles one command C and answers R: what every NewXHandler returns, and what
// decorators wrap.
type Handler[C, R any] interface {
	Handle(ctx context.Context, c C) (R, error)
}

// HandlerFunc is a function as a Handler.
type HandlerFunc[C, R any] func(ctx context.Context, c C) (R, error)

// Handle calls f.
func (f HandlerFunc[C, R]) Handle(ctx context.Context, c C) (R, error) { return f(ctx, c) }

// AsResult returns the result itself. Answers that embed Result (CreatedAPIKey,
// RotatedAPIKey, CreatedInvite, AcceptedInvite) promote it, so a caller reaches the Result of
// any command's answer the same way.
func (r Result) AsResult() Result { return r }

// Decorators hold what every command of a kind does before it decides, so that a handler's
// file holds its decision. Each NewXHandler applies its own, so that no handler exists
// without them; NewApp assembles the handlers.

// authorised refuses, before h reads or decides anything, an actor that allow refuses.
func authorised[C, R any](allow func(domain.Actor) error, h Handler[C, R]) Handler[C, R] {
	return HandlerFunc[C, R](func(ctx context.Context, c C) (R, error) {
		if err := allow(RequestFrom(ctx).Actor); err != nil {
			var zero R
			return zero, err
		}
		return h.Handle(ctx, c)
	})
}

// needs is the rule that an actor passes rule with scope, for authorised.
func needs(rule func(a domain.Actor, scope string) error, scope string) func(domain.Actor) error {
	return func(a domain.Actor) error { return rule(a, scope) }
}

// systemOnly is the rule that only the system acts (workers, usage accounting); anyone else is
// refused with refusal.
func systemOnly(refusal string) func(domain.Actor) error {
	return func(a domain.Actor) error {
		if a.Kind != domain.ActorSystem {
			return forbidden("%s", refusal)
		}
		return nil
	}
}

// workspaceCommand acts in one workspace, which it names: the workspace of the path, or for a
// create the one the body asks for (empty: the key's own).
type workspaceCommand interface {
	workspace() string
}

// withWorkspaceRole refuses, before h reads or decides anything, an actor that does not reach
// the command's workspace with at least min, or lacks scope.
func withWorkspaceRole[C workspaceCommand, R any](min domain.Role, scope string, h Handler[C, R]) Handler[C, R] {
	return HandlerFunc[C, R](func(ctx context.Context, c C) (R, error) {
		if err := requireWorkspaceRole(RequestFrom(ctx).Actor, c.workspace(), min, scope); err != nil {
			var zero R
			return zero, err
		}
		return h.Handle(ctx, c)
	})
}

// inWorkspace is the prelude of a create in a workspace, as a decorator: the workspace is
// settled (workspacePrelude) with the role min and the command's scope, and decide gets it,
// loaded and active.
func inWorkspace[C workspaceCommand, R any](d Deps, min domain.Role, scope func(C) string,
	decide func(ctx context.Context, c C, ws *domain.Workspace) (R, error)) Handler[C, R] {
	return HandlerFunc[C, R](func(ctx context.Context, c C) (R, error) {
		ws, err := workspacePrelude(ctx, d, c.workspace(), min, scope(c))
		if err != nil {
			var zero R
			return zero, err
		}
		return decide(ctx, c, ws)
	})
}

// always is the scope of a command whose scope does not depend on what it asks.
func always[C any](scope string) func(C) string {
	return func(C) string { return scope }
}

// workspacePrelude settles the workspace something is created in: the key's own, or the one
// requested (targetWorkspace); the actor must reach it with at least min and carry scope
// (requireWorkspaceRole); and it must exist in the actor's organisation, active
// (activeWorkspace). Its refusals come in that order.
func workspacePrelude(ctx context.Context, d Deps, requested string, min domain.Role, scope string) (*domain.Workspace, error) {
	actor := RequestFrom(ctx).Actor
	wsID, err := targetWorkspace(actor, requested)
	if err != nil {
		return nil, err
	}
	if err := requireWorkspaceRole(actor, wsID, min, scope); err != nil {
		return nil, err
	}
	return activeWorkspace(ctx, d, actor.OrganisationID, wsID)
}
