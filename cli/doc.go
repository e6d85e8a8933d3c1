// Package cli is Causeway's admin command line: the `causeway` subcommands other than serve,
// migrate, replay and version (workspaces, keys, policies, configs, providers, integrations,
// guardrails, logs, analytics, audit, notifications, webhooks, cache, prompts, labels,
// collections, health), for scripting a running
// Causeway. Each subcommand is one or a few calls of the admin API under /v1, authenticated
// with x-gateway-api-key; it prints the API's JSON (-o json) or chosen columns as a table.
//
// It talks to Causeway only over HTTP, as any other client of the admin API does, so it works
// against a remote deployment and cannot bypass the API's authorisation or validation. It must
// never import a package of Causeway's own (no commands/, queries/, projections/, gateway/,
// analytics/, http/) nor any database driver; scripts/boundaries.sh holds it to that.
//
// Exit codes: 0 success, 1 an error (the API's message and code on stderr), 2 a usage error.
// The API key it sends is never printed.
package cli
