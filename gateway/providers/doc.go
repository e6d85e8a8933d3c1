// Package providers is the contract between the gateway and its provider adapters. The gateway
// speaks OpenAI's JSON on both sides; an adapter turns an OpenAI-shaped call into its provider's
// request and its provider's answer (or stream) back into OpenAI's shape.
//
// This package holds what the gateway reads and what every adapter shares: the Provider
// interface and the optional capabilities the gateway checks by type assertion (ChatStreamer,
// Completer, CompletionStreamer, Embedder, Reranker, PassThrougher); Target, Call and its
// overrides, Usage, Response and Stream; the errors of a call (UpstreamError, ConnectionError)
// and the classification of a failure to connect (ClassifyFailure); the Target options; the
// UsageObserver of answers passed through unchanged; the Registry the gateway looks adapters up
// in; and the helpers every adapter uses to send a call and read its answer (NewClient,
// ForwardHeaders, NewPassThroughRequest, ReadAnswer, NewUpstreamError, TransportError).
//
// The adapters are packages of their own, one per provider family: openaicompat (OpenAI and
// the providers that speak its dialect), anthropic, gemini and cohere; anthropic and gemini
// translate over the shared core in translate. all is the default set of every family's
// adapters, which only cmd wires; providertest holds the stand-ins their tests call.
//
// An adapter never reads configuration or databases: a Target carries everything a call needs,
// credentials included. This package imports the standard library and gateway/openai (the Go
// model of the request); it never imports an adapter family, translate or all (they import it),
// nor http/, commands/, projections/ or a database driver.
package providers
