// Package cohere is Cohere's adapter: rerank on its own v2 API, and chat and embeddings on its
// Compatibility API, which speaks OpenAI's dialect (through an openaicompat adapter) but
// refuses stream_options.
//
// It imports the contract (gateway/providers), gateway/openai and openaicompat; never another
// family, translate or all, nor http/, commands/, projections/ or a database driver.
package cohere
