// Package commands holds the control plane's write side: one file per admin command, each a
// command struct, an unexported handler that holds the command's decision, and NewXHandler,
// which refuses nil dependencies and returns the handler as a Handler[C, R] with its
// decorators applied. A handler loads the aggregate's stream, folds it, asks domain/ to
// decide, and appends the resulting events with the exact expected revision, retrying a
// bounded number of times on a concurrency conflict (execute).
//
// What every command of a kind does before it decides is a decorator (handler.go), applied by
// its NewXHandler so that no handler exists without it:
//   - authorised: the actor passes a rule (an organisation admin key, a user manager, the
//     system only, a scope) before anything is read;
//   - withWorkspaceRole: the actor reaches the command's workspace with a role and a scope;
//   - inWorkspace: the prelude of a create in a workspace (workspacePrelude): the target
//     workspace settled, the role and scope checked, the workspace loaded and active; the
//     decision gets the workspace.
//
// Authorisation is checked here, against the actor the HTTP layer authenticated (Request, in
// the context). NewApp assembles every handler the admin API serves into an App, once, at
// start: cmd/causeway does it, and so do the tests that build the router.
//
// The key and reset workers are here: time-driven commands of the system actor. The log export
// worker, which also reads the request logs, is in workers/.
//
// It imports domain/ and the eventstore contract: never a backend, gateway/ (nor its provider
// adapters), analytics/, http/, projections/ or a database driver (make lint checks it).
package commands
