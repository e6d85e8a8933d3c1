// Package translate is the shared core of the adapters whose providers speak an API of their
// own (anthropic, gemini). Adapter runs every call of such a provider once: the request's
// translation, the call, a refusal, the bounded answer or the stream's life, and
// pass-through; a Family supplies only what differs (its URL and headers, the translation each
// way, its errors). The OpenAI side of the translation is here too: the request read from its
// Go model (Parse, Walk, Functions), the answer built (Reply, Completion) and the stream's
// chunks (Chunks).
//
// It imports the contract (gateway/providers), domain/, gateway/openai and gateway/sse; never
// a family or all, nor http/, commands/, projections/ or a database driver.
package translate
