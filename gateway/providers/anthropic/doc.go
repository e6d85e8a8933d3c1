// Package anthropic adapts the Anthropic Messages API (https://docs.anthropic.com/en/api/messages)
// as a translate.Family: OpenAI chat requests become Messages requests, and Messages answers
// and named stream events become chat.completion objects and chunks.
//
// Thinking: the request's thinking object is passed on only when the Target is not strict.
// Then the answer's thinking blocks are exposed in message.content_blocks (every thinking,
// redacted_thinking and text block, in the model's order), and in a stream as
// delta.content_blocks; a client sends them back as assistant content parts of types thinking
// and redacted_thinking, which the provider needs to check their signatures. A strict Target
// drops all of it, so its answers hold only OpenAI's fields.
//
// It imports the contract (gateway/providers), translate, domain/, gateway/openai and
// gateway/sse; never another family or all, nor http/, commands/, projections/ or a database
// driver.
package anthropic
