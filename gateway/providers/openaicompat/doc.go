// Package openaicompat is the adapter family of OpenAI and of every provider that speaks its
// dialect: Azure OpenAI (deployment-scoped URLs, the key in api-key), Groq, Mistral, Together,
// Fireworks, DeepSeek, OpenRouter, vLLM and Ollama (Names). The body goes out as the client
// sent it, but for the model, the stream flag, stream usage and, for a strict Target, the
// fields OpenAI does not define; the answer comes back unchanged, its usage read on the way.
// What sets one provider apart from OpenAI is its Dialect; Custom serves a dialect under
// another name (Cohere's Compatibility API).
//
// It imports the contract (gateway/providers), domain/, gateway/openai and gateway/sse; never
// another family, translate or all, nor http/, commands/, projections/ or a database driver.
package openaicompat
