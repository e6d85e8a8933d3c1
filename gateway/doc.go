// Package gateway is the data plane: one service (Service) that every inference route goes
// through, chat, completions, embeddings, rerank and pass-through alike. For each request it
// authenticates the key against the routing index, authorises it, checks the rate limits and
// reserves the budgets that apply, resolves the plan (configs, managed providers and their
// sealed credentials, custom hosts through the egress guard), runs it on the provider adapters
// (fallback, load balancing, retries, timeouts), charges what was used, and hands one log
// record, with what decided the request, to the analytics pipeline without waiting.
//
// Its hot path does no database I/O. It reads what it declares: the routing index
// (RoutingIndex, ProviderDirectory; Index builds both from the in-memory read model's fold),
// the usage ledger (UsageLedger: budgets counted in memory, written in batches by package
// ledger), prices (PriceBook) and the log sink (analytics.LogSink); cmd wires them. The
// transport (package http) only turns a request into a Request and implements Reply.
//
// It imports domain/, ledger/ (the contract, no driver), analytics/ (the log record and its
// sink, to publish to; never a store) and its own subpackages, of the provider adapters only
// their contract (gateway/providers; cmd wires the families), and of OpenTelemetry only the
// API (Service.Tracer; cmd wires the SDK and its exporters); never http/, commands/,
// projections/ or a database driver.
package gateway
