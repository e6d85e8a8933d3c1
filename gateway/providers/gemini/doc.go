// Package gemini adapts Google's Gemini API (https://ai.google.dev/api/generate-content), the
// provider "google", as a translate.Family: models.generateContent and
// models.streamGenerateContent with alt=sse. OpenAI chat requests become
// GenerateContentRequests; candidates become choices.
//
// Tool call ids: Gemini names a function call but usually gives it no id, so the adapter makes
// one up. When the call carries a thought signature (thinking models, which refuse a later
// turn whose function calls lack theirs: https://ai.google.dev/gemini-api/docs/thought-signatures),
// the signature rides in the id after "__thought__" and is put back on the functionCall part
// when the client sends the tool call back.
//
// Thinking: the request's thinking object becomes generationConfig.thinkingConfig only when
// the Target is not strict; then thought parts are exposed in message.content_blocks (and
// delta.content_blocks), as for Anthropic. A strict Target drops both.
//
// It imports the contract (gateway/providers), translate, domain/, gateway/openai and
// gateway/sse; never another family or all, nor http/, commands/, projections/ or a database
// driver.
package gemini
