// Package openai reads and checks the OpenAI-shaped request bodies the gateway accepts: chat
// completions (specification 2.2), text completions (2.4), embeddings and rerank (2.5). It reads
// a body under a size limit, validates every bound of the specification and its Limits table
// (part 8), and exposes what the gateway needs to route, rate-limit and log a request, while the
// raw body is what gets forwarded: fields it does not know (provider-specific extras) are kept.
//
// Every refusal is a *domain.Error: CodeInvalid with Param naming the field (OpenAI's notation,
// such as messages[2].content), or CodeTooLarge for a body over the limit. The HTTP layer turns
// them into OpenAI's error shape; this package chooses no status codes.
//
// It imports domain/ and the standard library only; never providers, configuration or storage.
package openai
