// Package openai reads and checks the OpenAI-shaped request bodies the gateway accepts: chat
// completions (specification 2.2), text completions (2.4), embeddings and rerank (2.5). It reads
// a body under a size limit, validates every bound of the specification and its Limits table
// (part 8), and in the same pass reads it into one Go model (ChatRequest, CompletionRequest,
// EmbeddingRequest, RerankRequest): what the gateway needs to route, rate-limit and log a
// request, and what a translating adapter needs to build its provider's request. The raw body is
// what gets forwarded to the providers that speak OpenAI's JSON: fields the model does not know
// (provider-specific extras) are kept there, and listed by name in the model's Extra.
//
// A config's override_params are applied to a parsed request by its WithOverrides method: the
// body changes only where overridden, and only the overridden members are read again.
//
// For the answer cache it gives what a request is keyed by (CacheKeyMaterial: the body in
// canonical JSON, without the members that cannot change the answer), rebuilds a streamed
// answer whole from its chunks (StreamAccumulator), and replays a whole answer as the chunks of
// a stream (ReplayStream).
//
// Every refusal is a *domain.Error: CodeInvalid with Param naming the field (OpenAI's notation,
// such as messages[2].content), or CodeTooLarge for a body over the limit. The HTTP layer turns
// them into OpenAI's error shape; this package chooses no status codes.
//
// It imports domain/ and the standard library only; never providers, configuration or storage.
package openai
